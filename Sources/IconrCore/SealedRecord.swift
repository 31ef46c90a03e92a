/// A kind of record the disk cache keeps (sprite builds, their sheets and packings, deflated
/// bands), all framed one way: the kind's line with its version (`iconr sheets 3\n`), the
/// SHA-256 of the rest in hex, then the key the record is stored under (length-prefixed) and
/// the kind's own body. `open` checks the kind, the digest and the key, so a damaged record,
/// one of another kind or version, and one planted under another key's name are never read:
/// that is decided here, once, for every kind.
package protocol SealedRecordKind {
    /// The kind's first line, with its version: `iconr sheets 3\n`. A new body layout takes a
    /// new version, so that records of the old one are not read as the new.
    static var kindLine: String { get }
}

extension SealedRecordKind {
    /// `body` as a record of this kind stored under `key`.
    package static func seal(_ body: [UInt8], key: String) -> [UInt8] {
        var rest = RecordWriter()
        rest.bytes.reserveCapacity(body.count + key.utf8.count + 4)
        rest.string(key)
        rest.bytes += body
        return Array(kindLine.utf8) + Array(SHA256.hex(rest.bytes).utf8) + rest.bytes
    }

    /// The body of `bytes` when they are a sound record of this kind stored under `key`, as a
    /// slice of `bytes` (its indices are `bytes`'); nil otherwise.
    package static func open(_ bytes: [UInt8], key: String) -> ArraySlice<UInt8>? {
        let head = Array(kindLine.utf8)
        let start = head.count + 64
        guard bytes.starts(with: head), bytes.count >= start,
            bytes[head.count..<start].elementsEqual(SHA256.hex(bytes[start...]).utf8)
        else { return nil }
        var reader = RecordReader(bytes: bytes, offset: start)
        guard reader.string() == key else { return nil }
        return bytes[reader.offset...]
    }
}

/// Writes a record's fields: counts and lengths as 32 bits, numbers as their 64 bits, all
/// little-endian; strings and data length-prefixed.
package struct RecordWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func count(_ value: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { bytes += $0 }
    }

    package mutating func string(_ text: String) {
        count(text.utf8.count)
        bytes += text.utf8
    }

    package mutating func data(_ value: [UInt8]) {
        count(value.count)
        bytes += value
    }

    package mutating func number(_ value: Double) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 }
    }

    package mutating func flag(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }
}

/// Reads what `RecordWriter` wrote, from `offset` in `bytes`; every read is nil past the end
/// or on a value out of range.
package struct RecordReader {
    package let bytes: [UInt8]
    package var offset: Int

    package init(bytes: [UInt8], offset: Int) {
        self.bytes = bytes
        self.offset = offset
    }

    package var isAtEnd: Bool { offset == bytes.count }

    /// The next `length` bytes.
    package mutating func take(_ length: Int) -> ArraySlice<UInt8>? {
        guard length >= 0, length <= bytes.count - offset else { return nil }
        defer { offset += length }
        return bytes[offset..<offset + length]
    }

    /// A 32-bit number below 2^31.
    package mutating func integer() -> Int? {
        guard let field = take(4) else { return nil }
        let value = field.reversed().reduce(0) { $0 << 8 | Int($1) }
        return value < 1 << 31 ? value : nil
    }

    /// A 32-bit number, at most the bytes left (a count of what follows, or a length).
    package mutating func count() -> Int? {
        integer().flatMap { $0 <= bytes.count - offset ? $0 : nil }
    }

    package mutating func string() -> String? {
        data().map { String(decoding: $0, as: UTF8.self) }
    }

    /// Length-prefixed bytes, as a slice of `bytes` (a sheet's PNG is copied once, by its reader).
    package mutating func slice() -> ArraySlice<UInt8>? {
        count().flatMap { take($0) }
    }

    package mutating func data() -> [UInt8]? {
        slice().map { Array($0) }
    }

    package mutating func number() -> Double? {
        take(8).map { Double(bitPattern: $0.reversed().reduce(0) { $0 << 8 | UInt64($1) }) }
    }

    package mutating func flag() -> Bool? {
        switch take(1)?.first {
        case 0?: false
        case 1?: true
        default: nil
        }
    }
}
