import CSystem

/// SHA-256's compression function with the CPU's SHA extensions (`SHA256` in IconrCore
/// uses it when the CPU has them, and its own Swift code otherwise).
package enum HardwareSHA256 {
    /// Whether this CPU has the SHA extensions (and SSE4.1), checked once.
    package static let isAvailable = CSystem_has_sha_extensions() != 0

    /// Runs `count` 64-byte blocks at `blocks` through the compression of `state` (the eight
    /// words a to h), with SHA-256's 64 round `constants`. Only when `isAvailable`.
    package static func compress(
        _ state: UnsafeMutablePointer<UInt32>, _ blocks: UnsafeRawPointer, count: Int,
        constants: UnsafePointer<UInt32>
    ) {
        CSystem_sha256_blocks(state, blocks.assumingMemoryBound(to: UInt8.self), count, constants)
    }
}
