import Dispatch
import Glibc
import IconrCore
import IconrRender
import IconrSystem
import Synchronization

/// The disk space a cache's files take, and their eviction: the stores report what they
/// write (`added`) and drop (`dropped`); past `byteLimit`, the least recently used files (by
/// modification time) go until 90% of it is left. Listing, eviction, statistics and `clear`
/// never follow a symbolic link and only ever touch regular files named as the cache names
/// its files, in its own folders. The caches of one process on one folder (a server's icons
/// and each of its sprites) share one space (`shared`): one count, one limit, one eviction.
final class CacheSpace: Sendable {
    /// The space of every folder a cache of this process uses, while one does.
    private static let spaces = Locked<[SpaceKey: WeakSpace]>([:])

    private struct SpaceKey: Hashable {
        let folder: String
        let byteLimit: Int
        let evictsInBackground: Bool
    }

    private final class WeakSpace: @unchecked Sendable {
        weak var space: CacheSpace?
        init(_ space: CacheSpace) { self.space = space }
    }

    /// The space of `folder` that this process's caches with this limit share: made for
    /// the first, the same object for the others while one of them is in use.
    static func shared(folder: String, byteLimit: Int, evictsInBackground: Bool) -> CacheSpace {
        let key = SpaceKey(folder: folder, byteLimit: byteLimit, evictsInBackground: evictsInBackground)
        return spaces.withLock { spaces in
            if let space = spaces[key]?.space { return space }
            spaces = spaces.filter { $0.value.space != nil }
            let space = CacheSpace(folder: folder, byteLimit: byteLimit, evictsInBackground: evictsInBackground)
            spaces[key] = WeakSpace(space)
            return space
        }
    }

    /// The folder of the cache's files (`<cache>/entries-v1`).
    let folder: String
    let byteLimit: Int
    /// Bytes of files as last counted plus what this process wrote since; nil until counted.
    private let knownBytes = Locked<Int?>(nil)
    /// Whether an eviction is running: writes past the limit then leave it to that one
    /// (each used to scan the whole cache again).
    private let evicting = Atomic<Bool>(false)
    /// Where evictions run, one at a time: off the writing thread when `evictsInBackground`.
    private let evictions = DispatchQueue(label: "iconr.disk-cache.eviction", qos: .utility)
    private let evictsInBackground: Bool
    private let scans = Atomic<Int>(0)

    init(folder: String, byteLimit: Int, evictsInBackground: Bool) {
        self.folder = folder
        self.byteLimit = byteLimit
        self.evictsInBackground = evictsInBackground
    }

    /// Adds a file of `bytes` to the known total (in whole 4 KiB blocks, as the disk holds
    /// it), and past the limit starts an eviction unless one is running (in the background
    /// with `evictsInBackground`).
    func added(_ bytes: Int) {
        let blocks = (bytes + 4095) / 4096 * 4096
        let total = knownBytes.withLock { known -> Int in
            let total = (known ?? countBytes()) + blocks
            known = total
            return total
        }
        guard total > byteLimit,
            evicting.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged
        else { return }
        let eviction: @Sendable () -> Void = {
            // Writes while it ran may have crossed the limit again: they left it to this one.
            while self.evict(), (self.knownBytes.withLock { $0 } ?? 0) > self.byteLimit {}
            self.evicting.store(false, ordering: .releasing)
        }
        if evictsInBackground { evictions.async(execute: eviction) } else { evictions.sync(execute: eviction) }
    }

    /// Takes a removed file's `bytes` of disk space off the known total.
    func dropped(_ bytes: Int) {
        knownBytes.withLock { known in known = known.map { max(0, $0 - bytes) } }
    }

    /// How many times evictions listed the whole cache (once per eviction pass).
    var evictionScans: Int { scans.load(ordering: .relaxed) }

    /// Returns when no background eviction is running.
    func finishEvicting() {
        evictions.sync {}
    }

    /// How many entries the folder holds now (a pack's records each count), and the disk
    /// space they take.
    func statistics() -> (entries: Int, bytes: Int) {
        let files = listFiles()
        let entries = files.reduce(0) { count, file in
            count + (file.name.hasSuffix(".pack") ? PackFile.recordCount(at: file.folder + "/" + file.name) : 1)
        }
        return (entries, files.reduce(0) { $0 + $1.size })
    }

    /// Removes every file.
    func clear() {
        for file in listFiles() { file.remove() }
        knownBytes.withLock { $0 = 0 }
    }

    /// Deletes least recently used files until the total is at most 90% of the limit;
    /// whether it deleted any.
    private func evict() -> Bool {
        scans.add(1, ordering: .relaxed)
        var files = listFiles().sorted { $0.modified < $1.modified }
        let listed = files.reduce(0) { $0 + $1.size }
        var total = listed
        while total > byteLimit * 9 / 10, !files.isEmpty {
            let oldest = files.removeFirst()
            oldest.remove()
            total -= oldest.size
        }
        let removed = listed - total
        // Nothing removed: the listing is the count. Else what was written since the listing
        // stays counted.
        knownBytes.withLock { known in known = removed == 0 ? listed : max(0, (known ?? listed) - removed) }
        return removed > 0
    }

    private func countBytes() -> Int {
        listFiles().reduce(0) { $0 + $1.size }
    }

    /// The cache's files: regular files named `<64 hex>.<format>` (`.png`) in folders named
    /// by two hex digits, `<64 hex>.pack` in `packs` and `<64 hex>.sheets` in `sheets`, found
    /// without following a symbolic link (a linked folder or file is passed over, so nothing
    /// outside the cache is ever touched).
    private func listFiles() -> [CacheFile] {
        var files: [CacheFile] = []
        for subfolder in FileReader.names(in: folder) {
            let suffixes: [String]
            if subfolder == "packs" {
                suffixes = [".pack"]
            } else if subfolder == "sheets" {
                suffixes = [".sheets"]
            } else if subfolder.utf8.count == 2, subfolder.utf8.allSatisfy(Self.isHexDigit) {
                suffixes = ImageFormat.all.map { "." + $0.name }
            } else {
                continue
            }
            let path = folder + "/" + subfolder
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            for name in FileReader.names(in: path) {
                guard let suffix = suffixes.first(where: name.hasSuffix),
                    Self.isDigest(name.utf8.dropLast(suffix.utf8.count))
                else { continue }
                var info = stat()
                guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG
                else { continue }
                files.append(
                    CacheFile(
                        folder: path, name: name, size: Int(info.st_blocks) * 512,
                        modified: info.st_mtim.nanoseconds))
            }
        }
        return files
    }

    /// Refreshes the modification time, the recency eviction goes by, at most once a minute:
    /// the inode write cost a hit 10-20 us (about a third of it).
    static func refreshTime(of path: String, modified: Int) {
        let now = FileStamp.now
        // A time in the future (a clock set back, `touch -d 2300-01-01`) is refreshed too.
        if modified < now - 60_000_000_000 || modified > now { markUsed(path) }
    }

    /// Sets the file's modification time to the clock's, to the nanosecond. The file system
    /// stamps files from a coarse clock (one 4 ms tick), so entries written within one tick
    /// tied, and an eviction could take the newest of them.
    static func markUsed(_ path: String) {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var times = [time, time]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }

    /// Whether `name` is 64 lowercase hex digits, as entry, pack and blob names are.
    static func isDigest<Name: Collection<UInt8>>(_ name: Name) -> Bool {
        name.count == 64 && name.allSatisfy(isHexDigit)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

/// One file found by `CacheSpace.listFiles`.
private struct CacheFile {
    let folder: String
    let name: String
    let size: Int
    let modified: Int

    /// Removes the file, if it is still a regular file in a folder that is not a link.
    func remove() {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var info = stat()
        guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            return
        }
        unlinkat(descriptor, name, 0)
    }
}
