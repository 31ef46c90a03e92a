import CSystem

/// The C library's allocator (glibc's malloc).
package enum Allocator {
    /// Gives the pages that freed memory left in every thread's arena back to the system
    /// (`malloc_trim`): after a burst of work whose temporaries are all freed, so that the
    /// process does not keep its peak.
    package static func returnFreedMemory() {
        _ = malloc_trim(0)
    }
}
