import Glibc

/// What a file's metadata says of its contents: device, inode, size, and its modification and
/// change times to the nanosecond (the facts git's index trusts). Writing a file changes its
/// change time, which no program can set back (short of setting the system clock back), so a
/// file with the stamp it had was not written since, unless it was written within the clock's
/// granularity of being stamped: `isSettled` tells the stamps that are old enough to rule
/// that out.
package struct FileStamp: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    /// Nanoseconds since the epoch.
    package let modified: Int
    /// Nanoseconds since the epoch.
    package let changed: Int

    /// The stamp of what `stat` or `fstat` said.
    package init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim.nanoseconds
        changed = info.st_ctim.nanoseconds
    }

    /// Whether `info` (from `stat` or `fstat`) is of the same file: its device and inode.
    package func isSameFile(as info: stat) -> Bool {
        device == UInt64(info.st_dev) && inode == UInt64(info.st_ino)
    }

    /// Appends the stamp's 40 bytes (each field little-endian) to `bytes`, for keys.
    package func append(to bytes: inout [UInt8]) {
        func field(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        field(device)
        field(inode)
        field(UInt64(bitPattern: size))
        field(UInt64(bitPattern: Int64(modified)))
        field(UInt64(bitPattern: Int64(changed)))
    }

    /// Whether both times are at least `margin` nanoseconds (2 s: coarse file systems keep
    /// whole seconds, and file times come from a coarse clock) before `now`, nanoseconds
    /// since the epoch (`FileStamp.now`).
    package func isSettled(at now: Int, margin: Int = 2_000_000_000) -> Bool {
        modified <= now - margin && changed <= now - margin
    }

    /// The wall clock, in nanoseconds since the epoch, as file times count.
    package static var now: Int {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return time.nanoseconds
    }
}

extension timespec {
    /// Nanoseconds since the epoch, saturating: a file can carry a time past 2262 (`touch -d
    /// 2300-01-01`), which does not fit, and is then `Int.max` (before 1678, `Int.min`)
    /// instead of an overflow that would trap.
    package var nanoseconds: Int {
        let (seconds, overflow) = tv_sec.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowAgain) = seconds.addingReportingOverflow(tv_nsec)
        guard !overflow, !overflowAgain else { return tv_sec < 0 ? .min : .max }
        return sum
    }
}
