import IconrSystem

/// SHA-256 (FIPS 180-4), for content digests that are stable across runs and machines.
/// The toolchain has no crypto module on Linux, and a cache key must never depend on
/// Swift's per-process seeded `Hasher`. Blocks go through the CPU's SHA instructions when it
/// has them (`HardwareSHA256`, six times faster in a release build), else through the Swift
/// code here.
package struct SHA256: Sendable {
    private var h0: UInt32 = 0x6a09e667, h1: UInt32 = 0xbb67ae85, h2: UInt32 = 0x3c6ef372, h3: UInt32 = 0xa54ff53a
    private var h4: UInt32 = 0x510e527f, h5: UInt32 = 0x9b05688c, h6: UInt32 = 0x1f83d9ab, h7: UInt32 = 0x5be0cd19
    /// The bytes of a block not yet complete (`pendingCount` of them).
    private var pending: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var pendingCount = 0
    private var length: UInt64 = 0
    private let usesHardware: Bool

    /// A digest in progress; `usingHardware: false` keeps to the Swift code (for tests).
    package init(usingHardware: Bool = HardwareSHA256.isAvailable) {
        usesHardware = usingHardware && HardwareSHA256.isAvailable
    }

    /// The digest of `bytes` as 64 lowercase hex digits. (Inlinable, as are `hmac` and
    /// `update`: called generically from other modules, each first call made the runtime
    /// build metadata for the sequence's type, 62,000 instructions of a cache hit.)
    @inlinable
    package static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var hasher = SHA256()
        hasher.update(bytes)
        return hexText(hasher.finalize())
    }

    /// HMAC-SHA-256 (RFC 2104) of `message` under `key` (at most 64 bytes): a digest only a
    /// holder of the key can make.
    @inlinable
    package static func hmac<Bytes: Sequence>(key: [UInt8], _ message: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        let padded = key + [UInt8](repeating: 0, count: max(0, 64 - key.count))
        var inner = SHA256()
        inner.update(padded.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(padded.map { $0 ^ 0x5c })
        outer.update(inner.finalize())
        return outer.finalize()
    }

    @inlinable
    package mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            update(UnsafeRawBufferPointer(buffer))
        }
        if handled == nil {
            let array = Array(bytes)
            array.withUnsafeBytes { update($0) }
        }
    }

    @usableFromInline
    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        length &+= UInt64(buffer.count)
        var offset = 0
        if pendingCount > 0 {
            offset = min(64 - pendingCount, buffer.count)
            append(base, count: offset)
            guard pendingCount == 64 else { return }
            let block = pending
            withUnsafeBytes(of: block) { compress($0.baseAddress.unsafelyUnwrapped, count: 1) }
            pendingCount = 0
        }
        let whole = (buffer.count - offset) / 64
        if whole > 0 {
            compress(base + offset, count: whole)
            offset += whole * 64
        }
        append(base + offset, count: buffer.count - offset)
    }

    /// Adds `count` bytes (to at most a whole block) to the pending ones.
    private mutating func append(_ bytes: UnsafeRawPointer, count: Int) {
        let start = pendingCount
        withUnsafeMutableBytes(of: &pending) { block in
            UnsafeMutableRawBufferPointer(rebasing: block[start..<(start + count)]).copyMemory(
                from: UnsafeRawBufferPointer(start: bytes, count: count))
        }
        pendingCount += count
    }

    package consuming func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail:
            (
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let count = pendingCount
        let blocks = count < 56 ? 1 : 2
        let pending = pending
        withUnsafeMutableBytes(of: &tail) { tail in
            withUnsafeBytes(of: pending) {
                UnsafeMutableRawBufferPointer(rebasing: tail[..<count]).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: $0[..<count]))
            }
            tail[count] = 0x80
            tail.storeBytes(of: bitLength.bigEndian, toByteOffset: blocks * 64 - 8, as: UInt64.self)
        }
        let padded = tail
        withUnsafeBytes(of: padded) { tail in compress(tail.baseAddress.unsafelyUnwrapped, count: blocks) }
        var digest = [UInt8](repeating: 0, count: 32)
        for (index, word) in [h0, h1, h2, h3, h4, h5, h6, h7].enumerated() {
            digest[index * 4] = UInt8(truncatingIfNeeded: word >> 24)
            digest[index * 4 + 1] = UInt8(truncatingIfNeeded: word >> 16)
            digest[index * 4 + 2] = UInt8(truncatingIfNeeded: word >> 8)
            digest[index * 4 + 3] = UInt8(truncatingIfNeeded: word)
        }
        return digest
    }

    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// `count` 64-byte blocks at `blocks`.
    private mutating func compress(_ blocks: UnsafeRawPointer, count: Int) {
        guard usesHardware else {
            for index in 0..<count { compress(blocks + index * 64) }
            return
        }
        // Eight words of one type are laid out in order, as the C code reads them.
        var state = (h0, h1, h2, h3, h4, h5, h6, h7)
        withUnsafeMutableBytes(of: &state) { words in
            Self.roundConstants.withUnsafeBufferPointer { constants in
                HardwareSHA256.compress(
                    words.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: UInt32.self), blocks, count: count,
                    constants: constants.baseAddress.unsafelyUnwrapped)
            }
        }
        (h0, h1, h2, h3, h4, h5, h6, h7) = state
    }

    /// One 64-byte block at `block`, in Swift.
    private mutating func compress(_ block: UnsafeRawPointer) {
        @inline(__always) func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
            (value >> count) | (value << (32 - count))
        }
        var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            guard let words = schedule.baseAddress else { return }
            for index in 0..<16 {
                words[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
            }
            for index in 16..<64 {
                let s0 = rotate(words[index - 15], 7) ^ rotate(words[index - 15], 18) ^ (words[index - 15] >> 3)
                let s1 = rotate(words[index - 2], 17) ^ rotate(words[index - 2], 19) ^ (words[index - 2] >> 10)
                words[index] = words[index - 16] &+ s0 &+ words[index - 7] &+ s1
            }
            Self.roundConstants.withUnsafeBufferPointer { buffer in
                guard let constants = buffer.baseAddress else { return }
                for index in 0..<64 {
                    let s1 = rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)
                    let choice = (e & f) ^ (~e & g)
                    let temp1 = h &+ s1 &+ choice &+ constants[index] &+ words[index]
                    let s0 = rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)
                    let majority = (a & b) ^ (a & c) ^ (b & c)
                    let temp2 = s0 &+ majority
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
                }
            }
        }
        h0 &+= a
        h1 &+= b
        h2 &+= c
        h3 &+= d
        h4 &+= e
        h5 &+= f
        h6 &+= g
        h7 &+= h
    }
}
