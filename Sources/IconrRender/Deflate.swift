import CPNG
import Dispatch
import IconrCore
import IconrSystem

/// zlib streams made and read by libdeflate in one call: the sheets' image data
/// (`PNGEncoder`) and the sprite cache's large pack entries; and gzip members for HTTP.
package enum Deflate {
    /// libdeflate compressors not in use, by level. Each is reused: making one clears its
    /// hash tables, which cost more than deflating a small image (a cold Maki build spent
    /// 24 ms of CPU in libdeflate with a new one per image, 20 ms reusing them).
    private static let idleCompressors = Locked<[Int32: [Compressor]]>([:])

    /// A libdeflate compressor, owned by one thread at a time.
    private struct Compressor: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// `data` as one zlib stream at `level` (1 fastest to 12).
    package static func zlib(_ data: [UInt8], level: Int32) throws(RenderError) -> [UInt8] {
        try compressed(data, level: level, what: "the image", bound: libdeflate_zlib_compress_bound) {
            libdeflate_zlib_compress($0, $1, $2, $3, $4)
        }
    }

    /// `data` as one gzip member at `level` (1 fastest to 12): HTTP bodies sent with
    /// `Content-Encoding: gzip`.
    package static func gzip(_ data: [UInt8], level: Int32) throws(RenderError) -> [UInt8] {
        try compressed(data, level: level, what: "the body", bound: libdeflate_gzip_compress_bound) {
            libdeflate_gzip_compress($0, $1, $2, $3, $4)
        }
    }

    /// `data` compressed in one call of `compress` (a libdeflate format's), into at most
    /// `bound` bytes; `what` names it in the error.
    private static func compressed(
        _ data: [UInt8], level: Int32, what: String, bound: (OpaquePointer, Int) -> Int,
        compress: (OpaquePointer, UnsafeRawPointer?, Int, UnsafeMutableRawPointer?, Int) -> Int
    ) throws(RenderError) -> [UInt8] {
        let output = try withCompressor(level: level) { compressor in
            let limit = bound(compressor, data.count)
            return data.withUnsafeBufferPointer { input in
                [UInt8](unsafeUninitializedCapacity: limit) { output, count in
                    count = compress(compressor, input.baseAddress, input.count, output.baseAddress, limit)
                }
            }
        }
        guard !output.isEmpty else { throw .encodingFailed("libdeflate could not compress \(what)") }
        return output
    }

    /// The fewest raw bytes per band of `zlibInBands`. A band starts afresh, its matches cannot
    /// reach into the band before: on Temaki's sheets at level 7, bands of 256 KiB cost
    /// 0.26-0.3% more bytes than one stream (128 KiB: 0.67%, 64 KiB: 1.25%).
    package static let bandSize = 256 << 10

    /// Raw bytes per band for `count` bytes: `bandSize`, or an eighth of the data when that
    /// is more. RGBA sheets lose more at each band's start: openstreetmap-carto's 10 MB 1x
    /// sheet came out 2.7% larger in 256 KiB bands than in one stream, 0.4% in 8 bands.
    package static func bandSize(for count: Int) -> Int {
        max(bandSize, (count + 7) / 8)
    }

    /// `data` as one zlib stream at `level`, deflated in bands (`bandSize(for:)`) on every core
    /// and joined (data of one band or less: `zlib(_:level:)`). Bands whose bytes the record that
    /// `memo` keeps under `name` has deflated before are taken from it, so an image that
    /// changed in a few rows (one icon of a sheet redrawn) deflates only the bands those rows
    /// fall in; the record is then replaced by this encoding's. The same data always gives
    /// the same stream, with or without a record. `deflated` counts the bands not taken
    /// from the record.
    package static func zlibInBands(
        _ data: [UInt8], level: Int32, memo: DeflateMemo?, name: String
    ) throws(RenderError) -> (stream: [UInt8], deflated: Int) {
        let bandSize = bandSize(for: data.count)
        guard data.count > bandSize else { return (try zlib(data, level: level), 1) }
        let key = "deflate bands \(level) \(data.count) \(name)"
        let known = memo?.read(key).flatMap { BandRecord(bytes: $0, key: key) }?.bands ?? [:]
        let bandCount = (data.count + bandSize - 1) / bandSize
        let bands = Locked<[Result<(digest: [UInt8], stream: [UInt8], reused: Bool), RenderError>?]>(
            Array(repeating: nil, count: bandCount))
        data.withUnsafeBufferPointer { buffer in
            // Read only, by every thread, while `data` is alive.
            nonisolated(unsafe) let whole = buffer
            DispatchQueue.concurrentPerform(iterations: bandCount) { band in
                let piece = UnsafeBufferPointer(
                    rebasing: whole[band * bandSize..<min(whole.count, (band + 1) * bandSize)])
                var hasher = SHA256()
                hasher.update(piece)
                let digest = hasher.finalize()
                let result = Result { () throws(RenderError) -> (digest: [UInt8], stream: [UInt8], reused: Bool) in
                    if let stream = known[digest] { return (digest, stream, true) }
                    return (digest, try joinableBand(piece, level: level), false)
                }
                bands.withLock { $0[band] = result }
            }
        }
        var stream: [UInt8] = [0x78, 0xDA]
        var record: [(digest: [UInt8], stream: [UInt8])] = []
        var deflated = 0
        for band in bands.withLock({ $0 }) {
            switch band {
            case .success(let band)?:
                stream += band.stream
                record.append((band.digest, band.stream))
                deflated += band.reused ? 0 : 1
            case .failure(let error)?: throw error
            case nil: throw .encodingFailed("a band of the image was not compressed")
            }
        }
        if let memo, deflated > 0 { memo.keep(key, BandRecord.bytes(of: record, key: key)) }
        // An empty final block (fixed codes, BFINAL set), then Adler-32 of the whole.
        stream += [0x03, 0x00]
        stream += adler32Trailer(of: data)
        // Bands from a record are checked as a whole (1-2 ms for a 2x sheet): one that does
        // not give back the data is never written, the bands are all deflated again.
        if deflated < bandCount, inflate(stream[...], count: data.count) != data {
            let keepOnly = memo.map { DeflateMemo(read: { _ in nil }, keep: $0.keep) }
            return try zlibInBands(data, level: level, memo: keepOnly, name: name)
        }
        return (stream, deflated)
    }

    /// `piece` as raw deflate blocks that end on a byte boundary without a final block
    /// (checked by inflating them), for more blocks to follow.
    private static func joinableBand(_ piece: UnsafeBufferPointer<UInt8>, level: Int32) throws(RenderError) -> [UInt8] {
        var band = try withCompressor(level: level) { compressor in
            let bound = libdeflate_deflate_compress_bound(compressor, piece.count)
            return [UInt8](unsafeUninitializedCapacity: bound) { output, count in
                count = libdeflate_deflate_compress(
                    compressor, piece.baseAddress, piece.count, output.baseAddress, bound)
            }
        }
        let unused = band.withUnsafeMutableBufferPointer {
            CPNG_open_last_block($0.baseAddress, $0.count, piece.baseAddress, piece.count)
        }
        guard !band.isEmpty, unused >= 0 else {
            throw .encodingFailed("libdeflate could not compress a band of the image")
        }
        appendEmptyStoredBlock(to: &band, usedBits: unused == 0 ? 0 : 8 - Int(unused))
        return band
    }

    /// The Adler-32 of `data`, big-endian: what ends a zlib stream.
    private static func adler32Trailer(of data: [UInt8]) -> [UInt8] {
        let checksum = data.withUnsafeBufferPointer { buffer in
            var sum = adler32(0, nil, 0)
            var offset = 0
            while offset < buffer.count {
                let count = min(buffer.count - offset, 1 << 30)
                sum = adler32(sum, buffer.baseAddress.map { $0 + offset }, uInt(count))
                offset += count
            }
            return UInt32(truncatingIfNeeded: sum)
        }
        return withUnsafeBytes(of: checksum.bigEndian, Array.init)
    }

    /// Ends raw deflate blocks whose last byte holds `usedBits` bits (0: none, a new byte
    /// is next) with an empty stored block that is not final, so that they end on a byte
    /// boundary and blocks made apart can follow: BFINAL 0 and BTYPE 00 in the next three
    /// bits, then to the byte boundary, then LEN 0 and NLEN 0xFFFF.
    private static func appendEmptyStoredBlock(to bytes: inout [UInt8], usedBits: Int) {
        var used = usedBits
        for _ in 0..<3 {
            if used == 0 { bytes.append(0) }
            used = (used + 1) & 7
        }
        bytes += [0x00, 0x00, 0xFF, 0xFF]
    }

    /// Runs `body` with a compressor of `level` taken from the idle ones (or made).
    private static func withCompressor<T>(
        level: Int32, _ body: (OpaquePointer) -> T
    ) throws(RenderError) -> T {
        guard
            let compressor = idleCompressors.withLock({ $0[level]?.popLast() })?.pointer
                ?? libdeflate_alloc_compressor(level)
        else {
            throw .encodingFailed("libdeflate cannot make a compressor (out of memory)")
        }
        defer { idleCompressors.withLock { $0[level, default: []].append(Compressor(pointer: compressor)) } }
        return body(compressor)
    }

    /// The `count` bytes that the zlib stream `bytes` inflates to, or nil when it is not a
    /// sound stream of exactly that many.
    package static func inflate(_ bytes: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var succeeded = false
        let inflated = bytes.withUnsafeBufferPointer { input in
            [UInt8](unsafeUninitializedCapacity: count) { output, written in
                succeeded =
                    libdeflate_zlib_decompress(
                        decompressor, input.baseAddress, input.count, output.baseAddress, count, nil)
                    == LIBDEFLATE_SUCCESS
                written = succeeded ? count : 0
            }
        }
        return succeeded ? inflated : nil
    }
}

/// Where `Deflate.zlibInBands` keeps the bands of an image between encodings (a sprite
/// build's disk cache): bytes read and kept under a key. A record that is lost or damaged
/// only costs the time to deflate its bands again.
public struct DeflateMemo: Sendable {
    let read: @Sendable (String) -> [UInt8]?
    let keep: @Sendable (String, [UInt8]) -> Void

    /// A memo that reads and keeps records through these closures.
    public init(read: @escaping @Sendable (String) -> [UInt8]?, keep: @escaping @Sendable (String, [UInt8]) -> Void) {
        self.read = read
        self.keep = keep
    }
}

/// The bands of one encoding as bytes, sealed (`SealedRecordKind`) under the key they were
/// made for: each band's SHA-256 of its data, its length (32 bits, little-endian) and its
/// deflated bytes.
struct BandRecord: SealedRecordKind {
    static let kindLine = "iconr bands 2\n"

    /// Deflated bands by the digest of their data.
    let bands: [[UInt8]: [UInt8]]

    /// The record in `bytes`, or nil when they are not a sound record made for `key`.
    init?(bytes: [UInt8], key: String) {
        guard let body = Self.open(bytes, key: key) else { return nil }
        var offset = body.startIndex
        var bands: [[UInt8]: [UInt8]] = [:]
        while offset < bytes.count {
            guard bytes.count - offset >= 36 else { return nil }
            let digest = Array(bytes[offset..<offset + 32])
            let length = bytes[offset + 32..<offset + 36].reversed().reduce(0) { $0 << 8 | Int($1) }
            offset += 36
            guard length <= bytes.count - offset else { return nil }
            bands[digest] = Array(bytes[offset..<offset + length])
            offset += length
        }
        self.bands = bands
    }

    static func bytes(of bands: [(digest: [UInt8], stream: [UInt8])], key: String) -> [UInt8] {
        var payload: [UInt8] = []
        var written = Set<[UInt8]>()
        for band in bands where written.insert(band.digest).inserted {
            payload += band.digest
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: band.stream.count).littleEndian) { payload += $0 }
            payload += band.stream
        }
        return seal(payload, key: key)
    }
}
