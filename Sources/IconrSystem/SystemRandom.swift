import CSystem
import Glibc

/// Secret bytes from the kernel's random source (`getrandom`), for keys nobody may guess
/// (the disk cache's key, which signs what it stores).
package enum SystemRandom {
    /// `count` random bytes (at most 256, one call's guarantee), or the error of `getrandom`.
    package static func bytes(_ count: Int) throws(SystemError) -> [UInt8] {
        precondition(count >= 0 && count <= 256, "getrandom returns at most 256 bytes at once")
        var bytes = [UInt8](repeating: 0, count: count)
        let got = retryingInterrupted { bytes.withUnsafeMutableBytes { CSystem_random_bytes($0.baseAddress, count) } }
        guard got == count else { throw SystemError("getrandom") }
        return bytes
    }
}
