import Glibc
import IconrCore
import IconrRender
import IconrSystem

// The formats of what the disk cache stores: single entries (a file with its note), pack
// entries (pixels), and pack files (records of entries). `DiskCache` and its stores read and
// write them; nothing here touches a file but `PackFile`'s readers.

/// The bytes of a cache entry: the file (a PNG) with a note inside it where the format's
/// readers pass over it (`ImageFormat.adding(note:to:)`; in a PNG, a private `icKy` chunk
/// before `IEND`). The note holds the variant key's identity, a NUL, and the HMAC-SHA-256
/// (hex) under the cache's key of the identity and the file without the note. The entry is
/// still a file any viewer opens; a reader gets back the file only when the key and the
/// digest match.
enum CacheEntry {
    static func make(_ file: [UInt8], as format: ImageFormat, key: VariantKey, secret: [UInt8]) -> [UInt8]? {
        let identity = Array(key.identity.utf8)
        return format.adding(note: identity + [0] + Array(hexDigest(identity + file, secret: secret).utf8), to: file)
    }

    /// The file inside `entry` when it is an entry of `key` and its digest matches; else nil.
    static func file(in entry: [UInt8], as format: ImageFormat, key: VariantKey, secret: [UInt8]) -> [UInt8]? {
        let identity = Array(key.identity.utf8)
        guard let (note, file) = format.note(in: entry, noteLength: identity.count + 1 + 64),
            note.prefix(identity.count).elementsEqual(identity), note[note.startIndex + identity.count] == 0,
            note.suffix(64).elementsEqual(hexDigest(identity + file, secret: secret).utf8)
        else { return nil }
        return file
    }

    private static func hexDigest(_ bytes: [UInt8], secret: [UInt8]) -> String {
        hexText(SHA256.hmac(key: secret, bytes))
    }
}

/// A pack's entry: the variant key's identity, a NUL, the width and height (little-endian
/// 32-bit), a format byte, the straight RGBA pixels (format 0) or, for images of more than
/// `rawLimit` bytes, a zlib stream of them at libdeflate's fastest level (format 1), or the
/// image's PNG file (format 2, a server's journal, which answers with it), and the
/// HMAC-SHA-256 under the cache's key of all that before it. Served only when the identity is the key's, the size is
/// within the limit, the digest holds and the pixels come out at exactly the size's length.
/// A small icon is stored as it is, a copy and a digest (PNG-encoding every image cost a
/// cold Temaki build about 45 ms of CPU, some 40 us an image); a large one deflated
/// (openstreetmap-carto's 1024 x 1024 patterns would otherwise fill a pack with 4 MiB each).
enum PackEntry {
    /// Pixel bytes stored as they are, at most (a 128 x 128 icon).
    static let rawLimit = 64 << 10

    static func make(_ image: RasterImage, key: VariantKey, secret: [UInt8]) -> [UInt8] {
        var entry: [UInt8] = []
        append(image, identity: key.identity, secret: secret, to: &entry)
        return entry
    }

    /// What a batch keeps of an image until it writes its pack: the image itself (its pixels
    /// shared with the renderer's, not copied: a pack of 50,000 icons was as large as all of
    /// them) when it is stored raw, else its entry, deflated now, on the rendering thread.
    static func kept(_ image: RasterImage, key: VariantKey, secret: [UInt8]) -> KeptEntry {
        image.pixels.count > rawLimit
            ? .encoded(make(image, key: key, secret: secret)[...]) : .image(image, identity: key.identity)
    }

    /// Appends the entry of `image`, the variant whose key has `identity`, to `bytes`.
    static func append(_ image: RasterImage, identity: String, secret: [UInt8], to bytes: inout [UInt8]) {
        let deflated = image.pixels.count > rawLimit ? try? Deflate.zlib(image.pixels, level: 1) : nil
        append(
            deflated ?? image.pixels, format: deflated == nil ? 0 : 1, size: image.size, identity: identity,
            secret: secret, to: &bytes)
    }

    /// The entry of a variant of `size` whose PNG is `png`, the variant whose key has `identity`.
    static func make(png: [UInt8], size: PixelSize, identity: String, secret: [UInt8]) -> [UInt8] {
        var entry: [UInt8] = []
        append(png, format: 2, size: size, identity: identity, secret: secret, to: &entry)
        return entry
    }

    private static func append(
        _ payload: [UInt8], format: UInt8, size: PixelSize, identity: String, secret: [UInt8],
        to bytes: inout [UInt8]
    ) {
        let start = bytes.count
        // Room for this entry alone: a deflated image's entry is kept at its own size.
        bytes.reserveCapacity(start + length(identity: identity, payload: payload.count))
        bytes += identity.utf8
        bytes.append(0)
        for side in [size.width, size.height] {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: side).littleEndian) { bytes += $0 }
        }
        bytes.append(format)
        bytes += payload
        bytes += SHA256.hmac(key: secret, bytes[start...])
    }

    /// The length of an entry of `payload` bytes: the identity, a NUL, the size, the format
    /// byte, the payload and the HMAC.
    static func length(identity: String, payload: Int) -> Int {
        identity.utf8.count + 10 + payload + 32
    }

    /// The image inside `entry` when it is a sound entry of `key` at most `maxSize`; else nil.
    static func image(
        of entry: ArraySlice<UInt8>, key: VariantKey, maxSize: PixelSize, secret: [UInt8]
    ) -> RasterImage? {
        contents(of: entry, key: key, maxSize: maxSize, secret: secret)?.image
    }

    /// The image inside `entry`, and its PNG when the entry holds one, when it is a sound
    /// entry of `key` at most `maxSize`; else nil.
    static func contents(
        of entry: ArraySlice<UInt8>, key: VariantKey, maxSize: PixelSize, secret: [UInt8]
    ) -> (png: [UInt8]?, image: RasterImage)? {
        // Offsets below are from the entry's start (a slice of a pack keeps the pack's indices).
        let start = entry.startIndex, end = entry.endIndex
        let identity = key.identity.utf8
        let header = identity.count + 10
        guard entry.count >= header + 32, entry.starts(with: identity), entry[start + identity.count] == 0 else {
            return nil
        }
        func side(_ offset: Int) -> Int { PackFile.littleEndian32(entry[(start + offset)..<(start + offset + 4)]) }
        let size = PixelSize(width: side(identity.count + 1), height: side(identity.count + 5))
        guard size.width <= maxSize.width, size.height <= maxSize.height else { return nil }
        guard SHA256.hmac(key: secret, entry[..<(end - 32)]).elementsEqual(entry[(end - 32)...]) else { return nil }
        let payload = entry[(start + header)..<(end - 32)], count = size.width * size.height * 4
        switch entry[start + header - 1] {
        case 0 where payload.count == count: return (nil, RasterImage(size: size, pixels: Array(payload)))
        case 1: return Deflate.inflate(payload, count: count).map { (nil, RasterImage(size: size, pixels: $0)) }
        case 2:
            let png = Array(payload)
            guard let image = try? ImageFormat.png.decode(png, maxSize: maxSize), image.size == size else {
                return nil
            }
            return (png, image)
        default: return nil
        }
    }
}

/// What a batch keeps for its pack: an entry's bytes (read from the pack, or made), or an
/// image (and its variant key's identity) to write as an entry when the pack is written.
enum KeptEntry: Sendable {
    case encoded(ArraySlice<UInt8>)
    case image(RasterImage, identity: String)

    /// The length of its entry.
    var length: Int {
        switch self {
        case .encoded(let entry): entry.count
        // Kept as images only when stored raw (`PackEntry.kept`).
        case .image(let image, let identity): PackEntry.length(identity: identity, payload: image.pixels.count)
        }
    }
}

/// A pack's bytes in pieces of about 1 MiB: the header, then each record (`name length,
/// name, entry length, entry`), an image's entry made as its piece is.
struct PackPieces: Sequence, IteratorProtocol {
    private let header: [UInt8]
    private let records: [(name: String, entry: KeptEntry)]
    private let secret: [UInt8]
    private var record = 0
    private var headerDone = false

    init(header: [UInt8], records: [(name: String, entry: KeptEntry)], secret: [UInt8]) {
        self.header = header
        self.records = records
        self.secret = secret
    }

    mutating func next() -> [UInt8]? {
        guard record < records.count || !headerDone else { return nil }
        var piece: [UInt8] = headerDone ? [] : header
        headerDone = true
        piece.reserveCapacity(1 << 20 + 4096)
        while record < records.count, piece.count < 1 << 20 {
            let (name, entry) = records[record]
            record += 1
            PackFile.appendRecordHead(name: name, entryLength: entry.length, to: &piece)
            switch entry {
            case .encoded(let entry): piece += entry
            case .image(let image, let identity):
                PackEntry.append(image, identity: identity, secret: secret, to: &piece)
            }
        }
        return piece
    }
}

/// The pack file format: a header, then records of `name length, name, entry length, entry`
/// (little-endian 32-bit lengths). Sprite builds' packs (`BatchPack`) and a server's journal
/// (`DiskJournal`) are both written in it.
enum PackFile {
    static let header = Array("iconr pack 3\n".utf8)

    /// Appends a record's lengths and name to `bytes`; its entry's `entryLength` bytes follow.
    static func appendRecordHead(name: String, entryLength: Int, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: UInt32(name.utf8.count).littleEndian) { bytes += $0 }
        bytes += name.utf8
        withUnsafeBytes(of: UInt32(entryLength).littleEndian) { bytes += $0 }
    }

    /// The little-endian 32-bit number `bytes` (4 of them) hold: a record's length, a side
    /// of an entry's image.
    static func littleEndian32(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// Whether the open file starts with the pack header.
    static func startsAsPack(_ file: FileDescriptor) -> Bool {
        (try? file.read(upTo: header.count, at: 0)) == header
    }

    /// How many whole records the pack at `path` holds (its lengths read, not its entries).
    static func recordCount(at path: String) -> Int {
        guard let file = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else { return 0 }
        defer { try? file.close() }
        var info = stat()
        guard fstat(file.rawValue, &info) == 0, startsAsPack(file) else { return 0 }
        var offset = header.count, count = 0
        func skipField() -> Bool {
            guard let length = try? file.read(upTo: 4, at: offset), length.count == 4 else { return false }
            let next = offset + 4 + littleEndian32(length[...])
            guard next <= Int(info.st_size) else { return false }
            offset = next
            return true
        }
        while skipField(), skipField() { count += 1 }
        return count
    }

    /// The records of `pack`, each entry a slice of it (its indices are offsets in the
    /// file); none when it does not start as a pack, and none past a damaged one.
    static func records(in pack: [UInt8]) -> [(name: String, entry: ArraySlice<UInt8>)] {
        guard pack.starts(with: header) else { return [] }
        return records(in: pack, from: header.count).records
    }

    /// The whole records in `bytes` from `offset` on (a pack's, past its header), and where
    /// the last of them ends.
    static func records(
        in bytes: [UInt8], from offset: Int
    ) -> (records: [(name: String, entry: ArraySlice<UInt8>)], end: Int) {
        var records: [(name: String, entry: ArraySlice<UInt8>)] = []
        var offset = offset, end = offset
        func field() -> ArraySlice<UInt8>? {
            guard offset + 4 <= bytes.count else { return nil }
            let length = littleEndian32(bytes[offset..<offset + 4])
            guard length <= bytes.count - offset - 4 else { return nil }
            defer { offset += 4 + length }
            return bytes[(offset + 4)..<(offset + 4 + length)]
        }
        while let name = field(), let entry = field() {
            records.append((String(decoding: name, as: UTF8.self), entry))
            end = offset
        }
        return (records, end)
    }
}
