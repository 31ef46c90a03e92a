import Glibc
import IconrCore
import IconrRender
import IconrSystem
import Testing

/// Sheets in one libdeflate stream (and with `--optimize` in Zopfli pieces): what they
/// decode to, and what an RGBA sheet costs in bytes next to libpng's stream.
@Suite struct PNGEncoderTests {
    /// A `width` x `height` image of stripes and noise: at most `colors` distinct colors
    /// (a palette sheet at 256 or fewer), seeded.
    private func image(width: Int, height: Int, colors: Int) -> RasterImage {
        var state: UInt64 = 0x1234_5678
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                // Runs of one color, as icons in a sheet have, with some noise between.
                let color = ((x / 7 + y / 5) % 3 == 0 ? Int(state >> 33) : (x / 16 + y / 16)) % colors
                let base = (y * width + x) * 4
                pixels[base] = UInt8(color * 37 & 0xFF)
                pixels[base + 1] = UInt8(color * 91 & 0xFF)
                pixels[base + 2] = UInt8(color * 13 & 0xFF)
                pixels[base + 3] = color % 5 == 0 ? 0 : 255
            }
        }
        return RasterImage(size: PixelSize(width: width, height: height), pixels: pixels)
    }

    /// A damaged PNG is refused, not decoded to other pixels, and one past the size limit
    /// is refused by its header.
    @Test(arguments: [(1, 1, 100_000), (37, 23, 100_000), (700, 600, 200)])
    func damagedOrTooLargeSheetsAreRefused(width: Int, height: Int, colors: Int) throws {
        let original = image(width: width, height: height, colors: colors)
        let png = try PNGEncoder.encodeSmallest(original)
        #expect(try PNGDecoder.decode(png).size == original.size)
        var damaged = png
        damaged[damaged.count / 2] ^= 0x10
        #expect(throws: RenderError.self) { try PNGDecoder.decode(damaged) }
        #expect(throws: RenderError.self) {
            try PNGDecoder.decode(png, maxSize: PixelSize(width: width - 1, height: height))
        }
    }

    @Test(arguments: [(200, 64, 16), (1400, 1100, 200), (1400, 1100, 100_000), (3000, 2900, 200)])
    func sheetsDecodeToThePixels(width: Int, height: Int, colors: Int) throws {
        let original = image(width: width, height: height, colors: colors)
        let png = try PNGEncoder.encodeSmallest(original)
        let decoded = try PNGDecoder.decode(png)
        #expect(decoded.size == original.size)
        // Fully transparent pixels may come back with other color bytes; the rest exactly.
        let differing = (0..<(width * height)).filter { index in
            let a = original.pixels[index * 4 + 3]
            return a != decoded.pixels[index * 4 + 3]
                || (a != 0 && original.pixels[index * 4..<index * 4 + 3] != decoded.pixels[index * 4..<index * 4 + 3])
        }
        #expect(differing.isEmpty, "\(differing.count) pixels differ")
        #expect(try PNGEncoder.encodeSmallest(original) == png, "the same pixels give the same bytes")
        // A large palette sheet is one stream in one IDAT chunk (libpng writes 8 KiB ones).
        let idats = (0..<(png.count - 4)).filter { png[$0..<$0 + 4].elementsEqual("IDAT".utf8) }.count
        #expect(colors > 256 || width * height < 1 << 20 || idats == 1, "\(idats) IDAT chunks")
        // Against libpng's unfiltered zlib stream at the same level: at most 1% larger.
        let single = try PNGEncoder.encode(original, compressionLevel: 7)
        if colors > 256 {
            #expect(Double(png.count) <= Double(single.count) * 1.01, "\(png.count) vs \(single.count) bytes")
        }
        // Zopfli takes tens of seconds on the 8.7 MB sheet in pieces: checked on the others.
        if width * height < 3000 * 2900 { try checkOptimized(original, png) }
        let pngcheck = "/usr/bin/pngcheck"
        if access(pngcheck, X_OK) == 0 {
            let path = "/tmp/iconr-pieces-\(getpid())-\(width)x\(height)-\(colors).png"
            try AtomicFile.write(png, to: path)
            defer { unlink(path) }
            #expect(system("\(pngcheck) -q \(path) > /dev/null") == 0, "pngcheck rejects it")
        }
    }

    /// `--optimize`'s Zopfli pieces: the same pixels in fewer bytes. Needs libzopfli1 (CI
    /// installs it); skipped with a line saying so elsewhere.
    private func checkOptimized(_ original: RasterImage, _ png: [UInt8]) throws {
        let inCI = getenv("CI").map { String(cString: $0) == "true" } ?? false
        guard dlopen("libzopfli.so.1", RTLD_NOW) != nil || inCI else {
            print("skipped: the --optimize check needs libzopfli1 (apt-get install libzopfli1)")
            return
        }
        let optimized = try PNGEncoder.encodeSmallest(original, optimize: true)
        #expect(try PNGDecoder.decode(optimized) == PNGDecoder.decode(png))
        #expect(optimized.count < png.count, "\(optimized.count) vs \(png.count) bytes")
    }
}
