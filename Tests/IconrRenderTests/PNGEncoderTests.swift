import CPNG
import Glibc
import IconrCore
import IconrSystem
import Testing

@testable import IconrRender

/// Sheets in libdeflate's bands (and with `--optimize` at its highest levels): what they
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
        // Against one unfiltered stream at the same level (`encode`): bands cost at most 1%.
        let single = try PNGEncoder.encode(original, compressionLevel: 7)
        if colors > 256 {
            #expect(Double(png.count) <= Double(single.count) * 1.01, "\(png.count) vs \(single.count) bytes")
        }
        // libdeflate's level 10 takes seconds on the 35 MB sheet: checked on the others.
        if width * height < 3000 * 2900 { try checkOptimized(original, png) }
        let pngcheck = "/usr/bin/pngcheck"
        if access(pngcheck, X_OK) == 0 {
            let path = "/tmp/iconr-pieces-\(getpid())-\(width)x\(height)-\(colors).png"
            try AtomicFile.write(png, to: path)
            defer { unlink(path) }
            #expect(system("\(pngcheck) -q \(path) > /dev/null") == 0, "pngcheck rejects it")
        }
    }

    /// `--optimize`: the same pixels in fewer bytes (at least 1% fewer on a palette sheet of noise).
    private func checkOptimized(_ original: RasterImage, _ png: [UInt8]) throws {
        let optimized = try PNGEncoder.encodeSmallest(original, optimize: true)
        #expect(try PNGDecoder.decode(optimized) == PNGDecoder.decode(png))
        #expect(optimized.count < png.count, "\(optimized.count) vs \(png.count) bytes")
        if png[25] == 3 {
            #expect(Double(optimized.count) <= Double(png.count) * 0.99, "\(optimized.count) vs \(png.count) bytes")
        }
    }
}

/// Sheet data deflated in bands, and bands taken from the record an earlier encoding kept.
@Suite struct BandedDeflateTests {
    /// A memo over a dictionary, counting what it is asked.
    final class Records: Sendable {
        let stored = Locked<[String: [UInt8]]>([:])
        var memo: DeflateMemo {
            DeflateMemo(
                read: { key in self.stored.withLock { $0[key] } },
                keep: { key, bytes in self.stored.withLock { $0[key] = bytes } })
        }
    }

    /// Runs of bytes with noise, seeded: about what a palette sheet's scanlines hold.
    private func data(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return index % 64 < 40 ? UInt8(index / 4096 % 7) : UInt8(truncatingIfNeeded: state >> 59)
        }
    }

    @Test(arguments: [1, 1000, Deflate.bandSize, Deflate.bandSize + 1, 3 * Deflate.bandSize + 12_345])
    func bandsInflateToTheData(count: Int) throws {
        let bytes = data(count: count, seed: UInt64(count))
        let (stream, deflated) = try Deflate.zlibInBands(bytes, level: 7, memo: nil, name: "test")
        #expect(Deflate.inflate(stream[...], count: count) == bytes)
        #expect(deflated == max(1, (count + Deflate.bandSize - 1) / Deflate.bandSize))
        // One stream only for data of one band; more costs less than 1% in bytes.
        let whole = try Deflate.zlib(bytes, level: 7)
        #expect(count > Deflate.bandSize || stream == whole)
        #expect(Double(stream.count) <= Double(whole.count) * 1.01 + 16, "\(stream.count) vs \(whole.count)")
    }

    /// Past 2 MiB, the data is cut into 8 bands, not into 256 KiB ones.
    @Test func largeDataGoesInEightBands() throws {
        let bytes = data(count: 3 << 20, seed: 3)
        #expect(Deflate.bandSize(for: bytes.count) == (3 << 20) / 8)
        let (stream, deflated) = try Deflate.zlibInBands(bytes, level: 7, memo: nil, name: "test")
        #expect(deflated == 8)
        #expect(Deflate.inflate(stream[...], count: bytes.count) == bytes)
    }

    @Test func onlyChangedBandsAreDeflatedAgain() throws {
        let records = Records()
        var bytes = data(count: 4 * Deflate.bandSize + 999, seed: 7)
        let first = try Deflate.zlibInBands(bytes, level: 7, memo: records.memo, name: "sheet")
        #expect(first.deflated == 5)
        let again = try Deflate.zlibInBands(bytes, level: 7, memo: records.memo, name: "sheet")
        #expect(again.deflated == 0 && again.stream == first.stream)
        // A change inside the third band: that band alone, and the same bytes as without a memo.
        bytes[2 * Deflate.bandSize + 100] ^= 0x55
        let changed = try Deflate.zlibInBands(bytes, level: 7, memo: records.memo, name: "sheet")
        #expect(changed.deflated == 1)
        #expect(changed.stream == (try Deflate.zlibInBands(bytes, level: 7, memo: nil, name: "sheet")).stream)
        #expect(Deflate.inflate(changed.stream[...], count: bytes.count) == bytes)
        // Another name finds no record.
        #expect(try Deflate.zlibInBands(bytes, level: 7, memo: records.memo, name: "other").deflated == 5)
    }

    /// A damaged record is not used: every band is deflated again, and the stream is sound.
    @Test(arguments: ["flip a bit", "truncate", "swap bands"])
    func aDamagedRecordCostsOnlyTime(damage: String) throws {
        let records = Records()
        let bytes = data(count: 3 * Deflate.bandSize, seed: 11)
        let cold = try Deflate.zlibInBands(bytes, level: 7, memo: records.memo, name: "sheet")
        try records.stored.withLock { stored in
            for (key, var record) in stored {
                switch damage {
                case "flip a bit": record[record.count - 40] ^= 0x04
                case "truncate": record.removeLast(100)
                default:
                    // The first two bands' streams swapped under their digests and the record
                    // sealed again: sound as a record, wrong as data. (The body: per band a
                    // digest, a 32-bit little-endian length and the stream.)
                    let body = try #require(BandRecord.open(record, key: key))
                    var offset = body.startIndex
                    var bands: [(digest: [UInt8], stream: [UInt8])] = []
                    while offset < record.count {
                        let length = record[offset + 32..<offset + 36].reversed().reduce(0) { $0 << 8 | Int($1) }
                        bands.append(
                            (Array(record[offset..<offset + 32]), Array(record[offset + 36..<offset + 36 + length])))
                        offset += 36 + length
                    }
                    #expect(bands.count == 3)
                    (bands[0].stream, bands[1].stream) = (bands[1].stream, bands[0].stream)
                    var payload: [UInt8] = []
                    for band in bands {
                        payload += band.digest
                        withUnsafeBytes(of: UInt32(band.stream.count).littleEndian) { payload += $0 }
                        payload += band.stream
                    }
                    record = BandRecord.seal(payload, key: key)
                }
                stored[key] = record
            }
        }
        let rebuilt = try Deflate.zlibInBands(bytes, level: 7, memo: records.memo, name: "sheet")
        #expect(rebuilt.stream == cold.stream && rebuilt.deflated == 3)
        #expect(Deflate.inflate(rebuilt.stream[...], count: bytes.count) == bytes)
    }
}

/// Palette sheets read back from their PNG and patched.
extension PNGEncoderTests {
    /// `image` with `patch` drawn over it at (`x`, `y`).
    private func drawing(_ patch: RasterImage, over image: RasterImage, x: Int, y: Int) -> RasterImage {
        var pixels = image.pixels
        for row in 0..<patch.size.height {
            let target = ((y + row) * image.size.width + x) * 4
            pixels.replaceSubrange(
                target..<target + patch.size.width * 4,
                with: patch.pixels[row * patch.size.width * 4..<(row + 1) * patch.size.width * 4])
        }
        return RasterImage(size: image.size, pixels: pixels)
    }

    /// A palette sheet read back from its PNG, with images drawn into it, encodes to the
    /// bytes `encodeSmallest` makes of the same pixels: when the patch's colors are in the
    /// palette, when it brings new ones or takes some away (the palette made again), and with
    /// a memo of the last encoding's bands.
    @Test(arguments: [(60, 40, 12), (700, 600, 200)])
    func aPaletteSheetPatchedEncodesAsAWholeOne(width: Int, height: Int, colors: Int) throws {
        let sheet = image(width: width, height: height, colors: colors)
        let png = try PNGEncoder.encodeSmallest(sheet)
        var patched = try #require(PaletteImage(png: png), "a palette sheet")
        #expect(patched.size == sheet.size)
        #expect(try patched.encoded(optimize: false, memo: nil) == png, "read back, the same bytes")
        let memo = BandedDeflateTests.Records().memo
        _ = try PNGEncoder.encodeSmallest(sheet, memo: memo)
        var expected = sheet
        let patches = [
            // Colors the sheet has (a piece of itself, elsewhere).
            (image(width: 9, height: 7, colors: colors), 3, 2),
            // Colors it has not: the palette gains them.
            (
                RasterImage(size: PixelSize(width: 5, height: 4), pixels: (0..<20).flatMap { [UInt8($0), 1, 2, 200] }),
                20, 11
            ),
            // One color over everything that had some: colors go.
            (
                RasterImage(
                    size: PixelSize(width: width / 2, height: height),
                    pixels: Array(repeating: [UInt8]([9, 9, 9, 255]), count: width / 2 * height).flatMap { $0 }), 0, 0
            ),
        ]
        for (patch, x, y) in patches {
            let drawn = patched.draw(patch, x: x, y: y)
            #expect(drawn)
            expected = drawing(patch, over: expected, x: x, y: y)
            let whole = try PNGEncoder.encodeSmallest(expected)
            #expect(try patched.encoded(optimize: false, memo: memo) == whole)
            #expect(
                try patched.encoded(optimize: true, memo: nil)
                    == (try PNGEncoder.encodeSmallest(expected, optimize: true)))
            #expect(try PNGDecoder.decode(whole) == expected)
        }
    }

    /// What `PNGEncoder` writes unfiltered reads back as exactly the pixels encoded, in every
    /// color type it writes (gray, gray and alpha, RGB, RGBA, palette), as libpng reads them;
    /// a PNG with filtered rows is left to libpng.
    @Test func unfilteredPNGsReadBackExactly() throws {
        let size = PixelSize(width: 37, height: 23)
        let count = size.width * size.height
        func value(_ index: Int, _ salt: Int) -> UInt8 { UInt8((index * 37 + salt * 101) % 256) }
        let palette = PaletteImage.ordered(
            (0..<20).map { UInt32($0) << 24 | 0x3344_00 | UInt32($0 % 3 == 0 ? 128 : 255) })
        let cases: [(String, Samples, [UInt8])] = [
            (
                "gray", Samples(colorType: PNG_COLOR_TYPE_GRAY, channels: 1, rows: (0..<count).map { value($0, 1) }),
                (0..<count).flatMap { [value($0, 1), value($0, 1), value($0, 1), 255] }
            ),
            (
                "gray and alpha",
                Samples(
                    colorType: PNG_COLOR_TYPE_GRAY_ALPHA, channels: 2,
                    rows: (0..<count).flatMap { [value($0, 1), value($0, 2)] }),
                (0..<count).flatMap { [value($0, 1), value($0, 1), value($0, 1), value($0, 2)] }
            ),
            (
                "RGB",
                Samples(
                    colorType: PNG_COLOR_TYPE_RGB, channels: 3,
                    rows: (0..<count).flatMap { [value($0, 1), value($0, 2), value($0, 3)] }),
                (0..<count).flatMap { [value($0, 1), value($0, 2), value($0, 3), 255] }
            ),
            (
                "RGBA",
                Samples(
                    colorType: PNG_COLOR_TYPE_RGB_ALPHA, channels: 4,
                    rows: (0..<count).flatMap { [value($0, 1), value($0, 2), value($0, 3), value($0, 4)] }),
                (0..<count).flatMap { [value($0, 1), value($0, 2), value($0, 3), value($0, 4)] }
            ),
            (
                "palette", Samples(paletteOf: palette, rows: (0..<count).map { UInt8($0 % 20) }),
                (0..<count).flatMap { index -> [UInt8] in
                    let color = palette[index % 20]
                    return [
                        UInt8(color >> 24), UInt8(color >> 16 & 0xFF), UInt8(color >> 8 & 0xFF), UInt8(color & 0xFF),
                    ]
                }
            ),
        ]
        for (name, samples, pixels) in cases {
            let png = try PNGEncoder.encodeUnfiltered(samples, size, level: 6, memo: nil)
            let expected = RasterImage(size: size, pixels: pixels)
            #expect(UnfilteredPNG(png: png)?.rgba == expected, "\(name)")
            #expect(try PNGDecoder.decode(png) == expected, "\(name), as libpng reads it")
        }
        // A smooth gradient, which adaptive filters win: not read here, but by libpng.
        var gradient = [UInt8](repeating: 255, count: 300 * 200 * 4)
        for y in 0..<200 {
            for x in 0..<300 {
                let base = (y * 300 + x) * 4
                gradient[base] = UInt8(x * 255 / 299)
                gradient[base + 1] = UInt8(y)
                gradient[base + 2] = UInt8((x + y) / 2)
            }
        }
        let photo = RasterImage(size: PixelSize(width: 300, height: 200), pixels: gradient)
        let filtered = try PNGEncoder.encodeSmallest(photo)
        #expect(UnfilteredPNG(png: filtered) == nil)
        #expect(try PNGDecoder.decode(filtered) == photo)
        #expect(UnfilteredPNG(png: try PNGEncoder.encode(photo))?.rgba == photo, "a single icon's encoding")
        #expect(UnfilteredPNG(png: Array(try PNGEncoder.encode(photo).dropLast(12))) == nil, "no IEND")
    }

    /// What a palette sheet cannot take is refused, the sheet unchanged: an image past its
    /// edge, or one that would bring it past 256 colors. What is not a palette PNG as
    /// `PNGEncoder` writes it (RGBA, damaged, filtered rows) is not read.
    @Test func aPaletteSheetRefusesWhatItCannotHold() throws {
        let sheet = image(width: 40, height: 30, colors: 200)
        let png = try PNGEncoder.encodeSmallest(sheet)
        var palette = try #require(PaletteImage(png: png))
        let small = image(width: 8, height: 8, colors: 5)
        let pastTheEdge = palette.draw(small, x: 35, y: 0), aboveTheTop = palette.draw(small, x: 0, y: -1)
        #expect(!pastTheEdge && !aboveTheTop)
        let many = RasterImage(
            size: PixelSize(width: 20, height: 20),
            pixels: (0..<400).flatMap { [UInt8($0 % 256), UInt8($0 / 256), 77, 255] })
        let tooMany = palette.draw(many, x: 0, y: 0)
        #expect(!tooMany, "400 new colors")
        #expect(try palette.encoded(optimize: false, memo: nil) == png, "unchanged")
        let manyColors = try PNGEncoder.encodeSmallest(image(width: 300, height: 200, colors: 100_000))
        #expect(PaletteImage(png: manyColors) == nil)
        #expect(PaletteImage(png: try PNGEncoder.encode(sheet)) == nil, "RGBA")
        // A header larger than allowed is refused before anything is inflated.
        #expect(PaletteImage(png: png, maxSize: PixelSize(width: 40, height: 29)) == nil, "taller than allowed")
        #expect(UnfilteredPNG(png: png, maxSize: PixelSize(width: 39, height: 30)) == nil, "wider than allowed")
        #expect(UnfilteredPNG(png: png, maxSize: sheet.size) != nil)
        // The bytes of the palette and its alpha: damaged, they give other colors, not other indexes.
        var paletteBytes: [Range<Int>] = []
        for type in ["PLTE", "tRNS"] {
            guard let at = (8..<png.count - 4).first(where: { png[$0..<$0 + 4].elementsEqual(type.utf8) }) else {
                continue
            }
            let length = png[at - 4..<at].reduce(0) { $0 << 8 | Int($1) }
            paletteBytes.append(at + 4..<at + 4 + length)
        }
        #expect(paletteBytes.count == 2)
        var readDamaged = 0
        for index in stride(from: 8, to: png.count, by: max(1, png.count / 200)) {
            var damaged = png
            damaged[index] ^= 0x41
            guard let read = PaletteImage(png: damaged) else { continue }
            readDamaged += 1
            // Read all the same: a byte it passes over (a CRC), or a color of the palette.
            let pixels = try PNGDecoder.decode(try read.encoded(optimize: false, memo: nil))
            #expect(pixels == sheet || paletteBytes.contains { $0.contains(index) }, "byte \(index)")
        }
        #expect(readDamaged > 0, "a damaged CRC is passed over")
        #expect(PaletteImage(png: Array(png.dropLast(20))) == nil, "no IEND")
    }
}
