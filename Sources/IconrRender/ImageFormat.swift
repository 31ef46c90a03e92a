import CPNG
import IconrCore

/// A file format icons are delivered in: how a raster becomes its bytes and back, and how a
/// cache entry carries a note (its key and signature) inside a file that stays valid. PNG
/// is the one iconr ships; a second format is a value of its own (an encoder behind its C
/// library, a `static let`) added to `all`, and the disk cache and the server's icon route
/// follow it.
public struct ImageFormat: Hashable, Sendable, CustomStringConvertible {
    /// The file extension, without the dot (`png`); also the format's name in URLs and cache files.
    public let name: String
    /// The Content-Type it is served as (`image/png`).
    public let mediaType: String
    private let encoder: @Sendable (RasterImage) throws(RenderError) -> [UInt8]
    private let decoder: @Sendable ([UInt8], PixelSize) throws(RenderError) -> RasterImage
    private let noteWriter: @Sendable ([UInt8], [UInt8]) -> [UInt8]?
    private let noteReader: @Sendable ([UInt8], Int) -> (note: ArraySlice<UInt8>, file: [UInt8])?

    /// Every format iconr delivers, PNG first.
    public static let all: [ImageFormat] = [.png]

    /// The format whose extension is `name` (`png`), or nil.
    public static func named(_ name: String) -> ImageFormat? {
        all.first { $0.name == name }
    }

    /// The format's name (`png`).
    public var description: String { name }

    /// The bytes of a file of `image`.
    /// - Throws: `RenderError.encodingFailed` or `.outOfMemory`.
    public func encode(_ image: RasterImage) throws(RenderError) -> [UInt8] {
        try encoder(image)
    }

    /// The straight RGBA pixels of the file `bytes`, refusing (before allocating them) an
    /// image wider or taller than `maxSize`.
    public func decode(_ bytes: [UInt8], maxSize: PixelSize) throws(RenderError) -> RasterImage {
        try decoder(bytes, maxSize)
    }

    /// `file` with `note` inside it where readers of the format pass over it; nil when
    /// `file` is not one this format wrote.
    package func adding(note: [UInt8], to file: [UInt8]) -> [UInt8]? {
        noteWriter(note, file)
    }

    /// The note of `noteLength` bytes that `adding(note:to:)` put into `entry`, and the file
    /// without it; nil when `entry` holds no note of that length.
    package func note(in entry: [UInt8], noteLength: Int) -> (note: ArraySlice<UInt8>, file: [UInt8])? {
        noteReader(entry, noteLength)
    }

    /// Formats are told apart by their names.
    public static func == (lhs: ImageFormat, rhs: ImageFormat) -> Bool { lhs.name == rhs.name }

    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension ImageFormat {
    /// PNG: straight RGBA, unfiltered, deflated by libdeflate at level 6 (`PNGEncoder.encode`,
    /// the fast path for single icons; sprite sheets use `PNGEncoder.encodeSmallest`); read by
    /// libpng. A note is a private ancillary chunk, `icKy`, right before `IEND`: the file is
    /// still a PNG any viewer opens.
    public static let png = ImageFormat(
        name: "png", mediaType: "image/png",
        encoder: { image throws(RenderError) in try PNGEncoder.encode(image, compressionLevel: 6) },
        decoder: { bytes, maxSize throws(RenderError) in try PNGDecoder.decode(bytes, maxSize: maxSize) },
        noteWriter: PNGNote.add, noteReader: PNGNote.find)
}

/// The `icKy` chunk that carries a cache entry's note in a PNG.
private enum PNGNote {
    static let chunkType = Array("icKy".utf8)

    static func add(_ note: [UInt8], to png: [UInt8]) -> [UInt8]? {
        // IEND is the last 12 bytes of every PNG `PNGEncoder` (and libpng) writes.
        guard png.count >= 20, png.suffix(8).prefix(4).elementsEqual("IEND".utf8) else { return nil }
        let end = png.count - 12
        var chunk: [UInt8] = []
        chunk.reserveCapacity(note.count + 12)
        withUnsafeBytes(of: UInt32(note.count).bigEndian) { chunk += $0 }
        let typed = chunkType + note
        chunk += typed
        let crc = typed.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: crc32(0, $0.baseAddress, uInt($0.count))) }
        withUnsafeBytes(of: crc.bigEndian) { chunk += $0 }
        return Array(png[..<end]) + chunk + Array(png[end...])
    }

    static func find(in entry: [UInt8], noteLength: Int) -> (note: ArraySlice<UInt8>, file: [UInt8])? {
        // The chunk stands right before IEND: found from the end.
        guard noteLength >= 0, entry.count >= 8 + 12 + 12 + noteLength else { return nil }
        let end = entry.count - 12
        let start = end - 12 - noteLength
        guard start >= 8 else { return nil }
        let header = entry[start..<(start + 8)]
        guard header.prefix(4).reduce(0, { $0 << 8 | Int($1) }) == noteLength, header.suffix(4).elementsEqual(chunkType)
        else { return nil }
        return (entry[(start + 8)..<(start + 8 + noteLength)], Array(entry[..<start]) + Array(entry[end...]))
    }
}
