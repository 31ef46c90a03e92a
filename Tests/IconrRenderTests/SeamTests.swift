import Glibc
import IconrCore
import IconrRender
import Testing

/// The two seams a second backend or format plugs into: `SVGBackend` (whose identity every
/// cache key holds) and `ImageFormat` (how a raster becomes a file, and how a cache entry's
/// note rides inside one).
@Suite struct SeamTests {
    private let image = RasterImage(
        size: PixelSize(width: 3, height: 2),
        pixels: [255, 0, 0, 255, 0, 255, 0, 128, 0, 0, 255, 0, 9, 9, 9, 9, 200, 100, 50, 255, 1, 2, 3, 4])

    /// Formats are found by the extension URLs and cache files use; PNG round-trips exactly
    /// (straight alpha: a transparent pixel keeps its color).
    @Test func formatsAreNamedByTheirExtension() throws {
        #expect(ImageFormat.named("png") == .png)
        #expect(ImageFormat.named("PNG") == nil && ImageFormat.named("webp") == nil && ImageFormat.named("") == nil)
        #expect(ImageFormat.all.first == .png)
        #expect(ImageFormat.png.mediaType == "image/png")
        let file = try ImageFormat.png.encode(image)
        #expect(try ImageFormat.png.decode(file, maxSize: image.size) == image)
        #expect(throws: RenderError.self) {
            try ImageFormat.png.decode(file, maxSize: PixelSize(width: 2, height: 2))
        }
    }

    /// A note goes inside the file where readers pass over it: the file still decodes to the
    /// same pixels, and the note and the file come back out exactly; a note of another
    /// length, or a file the format did not write, gives nothing.
    @Test func aNoteRidesInsideAFileThatStaysValid() throws {
        let file = try ImageFormat.png.encode(image)
        let note = Array("flag?flag_color=#ff0000@2x\u{0}".utf8) + [UInt8](repeating: 0x61, count: 64)
        let entry = try #require(ImageFormat.png.adding(note: note, to: file))
        #expect(entry.count == file.count + note.count + 12)
        #expect(
            try ImageFormat.png.decode(entry, maxSize: image.size) == ImageFormat.png.decode(file, maxSize: image.size))
        let found = try #require(ImageFormat.png.note(in: entry, noteLength: note.count))
        #expect(Array(found.note) == note && found.file == file)
        #expect(ImageFormat.png.note(in: entry, noteLength: note.count - 1) == nil)
        #expect(ImageFormat.png.note(in: file, noteLength: note.count) == nil)
        #expect(ImageFormat.png.adding(note: note, to: Array("not a png at all, twenty+".utf8)) == nil)
    }

    /// The backend in use names itself and the library file it found (its real name, size
    /// and time), without loading it: that text is what keeps one backend's (or version's)
    /// pixels out of another's cache.
    @Test func theBackendsIdentityNamesItsLibraryFile() {
        let fields = Rasterizer.identity.split(separator: " ")
        #expect(fields.count == 4 && fields[0] == "librsvg", "\(Rasterizer.identity)")
        #expect(fields.count > 1 && fields[1].hasPrefix("librsvg-2.so.2"), "\(Rasterizer.identity)")
        #expect(fields.count > 2 && (Int(fields[2]) ?? 0) > 0, "the file's size: \(Rasterizer.identity)")
        // The name is the file the soname's links lead to, as `realpath` would find it.
        if let real = realpath("/usr/lib/x86_64-linux-gnu/librsvg-2.so.2", nil) {
            defer { free(real) }
            let name = String(cString: real).split(separator: "/").last
            #expect(fields.count > 1 && fields[1] == name, "\(Rasterizer.identity)")
        }
    }

}
