import Dispatch
import Glibc
import IconrCore
import IconrRender
import IconrSystem
import Synchronization

/// A server's disk-cache entries, appended to a journal instead of a file each: a new file
/// cost a server miss 66-78 us (ext4 making its inode; more soon after many files were
/// deleted), a fifth of the miss. The journal is two pack files (`PackFile`) in `packs/`, a
/// current one and a previous one. Entries are appended to the current one, many in one
/// write; when they would take it past `limit`, it becomes the previous one (the one before
/// is dropped), and an entry read from the previous one is appended again, so what is used
/// stays.
///
/// Where each entry is (its record's place in the file) is kept in memory: read from both
/// files as the server starts (or at the first lookup), and caught up with when a lookup
/// misses and the current file has grown (another server appended to it). A file replaced
/// or removed under it (an eviction, `clear`, another server's turn of the generations) is
/// read again from its start. Every entry is still proven by `PackEntry` (key, size,
/// digest) before it is served. Appends of whole records, at most 1 MiB in one `O_APPEND`
/// write, do not interleave, so servers may share a journal.
///
/// It keeps PNG entries (format 2 of `PackEntry`: the PNG a server answered with), written
/// behind the answers: `store` hands an entry to a writer thread, which appends what waits
/// `delay` after the first (a write for every entry cost a wake-up of that thread for each);
/// `flush` returns when all of it is written.
final class DiskJournal: EntryStore {
    /// One file of the journal, and the records read from it or written to it.
    private struct Generation {
        let path: String
        /// The file the records are in (device and inode); nil before it was read.
        var file: FileStamp?
        /// Where each record is, by `key(of:)` its name (the record says its whole name).
        var records: [UInt64: Range<Int>] = [:]
        /// Where the records read so far end.
        var end = 0

        init(path: String) {
            self.path = path
        }

        /// The first 64 bits of a record's name, 64 hex digits: a key of 8 bytes where the
        /// name took some 100 (110,000 entries fill a 64 MiB file). Nil for most other names.
        static func key(of name: String) -> UInt64? {
            name.utf8.count == 64 ? UInt64(name.prefix(16), radix: 16) : nil
        }

        /// Whether `info` is the file the records are in.
        func describes(_ info: stat) -> Bool {
            file?.isSameFile(as: info) ?? false
        }
    }

    private struct State {
        var loaded = false
        var current: Generation
        var previous: Generation
        /// Entries waiting for the next `flush`: each name, and what makes its bytes then.
        var waiting: [(name: String, make: @Sendable () -> [UInt8]?)] = []
    }

    /// A generation's size past which the next flush turns it into the previous one.
    let limit: Int
    private let state: Locked<State>
    /// Torn or damaged tails found and cut off (a crash mid-append, a full disk).
    private let repairs = Atomic<Int>(0)
    private let secret: [UInt8]
    private let space: CacheSpace
    /// Where the journal is read as the server starts, and written.
    private let writes = DispatchQueue(label: "iconr.disk-cache.writes", qos: .utility)
    /// How long an entry may wait for the next write.
    private let delay: DispatchTimeInterval
    /// The cost (`IconVariant.byteCost`) of the variants waiting to be written.
    private let waitingBytes = Atomic<Int>(0)
    /// Past this many bytes of variants waiting, `store` writes at once.
    private static let waitingLimit = 32 << 20

    /// How many torn or damaged tails were found and cut off since the journal was made.
    var repairCount: Int { repairs.load(ordering: .relaxed) }

    /// A journal of files in `folder` (the cache's `packs`), each at most about `limit`
    /// bytes, of entries signed with `secret`, written `delay` after the first waits; it
    /// starts reading where its records are in the background.
    init(folder: String, limit: Int, secret: [UInt8], space: CacheSpace, delay: DispatchTimeInterval) {
        self.limit = limit
        self.secret = secret
        self.space = space
        self.delay = delay
        // Named as packs are (64 hex digits), so that the cache's eviction, `clear` and
        // statistics count them with the other packs.
        func path(_ generation: String) -> String {
            folder + "/" + SHA256.hex(Array("iconr journal \(generation)".utf8)) + ".pack"
        }
        state = Locked(State(current: Generation(path: path("current")), previous: Generation(path: path("previous"))))
        writes.async { self.load() }
    }

    func entry(named name: String, key: VariantKey, as format: ImageFormat, maxSize: PixelSize) -> CacheHit? {
        // It keeps PNGs only (`store`): an entry in another format is the files'.
        guard format == .png, let (entry, fromPrevious) = storedEntry(name),
            let (png, image) = PackEntry.contents(of: entry, key: key, maxSize: maxSize, secret: secret)
        else { return nil }
        // What is used stays: an entry of the previous generation is written again.
        if fromPrevious { keep(as: name) { Array(entry) } }
        return (png, image)
    }

    func store(_ variant: IconVariant, named name: String, as format: ImageFormat) -> Bool {
        guard format == .png else { return false }
        let cost = variant.byteCost, secret = secret
        waitingBytes.add(cost, ordering: .relaxed)
        keep(as: name) {
            defer { self.waitingBytes.subtract(cost, ordering: .relaxed) }
            guard let png = try? variant.encoded(as: .png) else { return nil }
            return PackEntry.make(png: png, size: variant.size, identity: variant.key.identity, secret: secret)
        }
        if waitingBytes.load(ordering: .relaxed) > Self.waitingLimit { flush() }
        return true
    }

    func flush() {
        writes.sync { write() }
    }

    /// Appends what waits, and counts what that added and dropped.
    private func write() {
        let (appended, dropped) = appendWaiting()
        if dropped > 0 { space.dropped(dropped) }
        if appended > 0 { space.added(appended) }
    }

    /// Holds the entry `make` will make (nil: none) for the next write, due `delay` after
    /// the first entry waiting.
    private func keep(as name: String, make: @escaping @Sendable () -> [UInt8]?) {
        let first = state.withLock { state in
            state.waiting.append((name, make))
            return state.waiting.count == 1
        }
        if first { writes.asyncAfter(deadline: .now() + delay) { self.write() } }
    }

    /// The entry stored under `name`, or nil; `fromPrevious` when it came from the previous
    /// generation.
    private func storedEntry(_ name: String) -> (bytes: ArraySlice<UInt8>, fromPrevious: Bool)? {
        guard let key = Generation.key(of: name) else { return nil }
        typealias Place = (path: String, file: FileStamp?, range: Range<Int>)
        let (current, previous) = state.withLock { state -> (Place?, Place?) in
            if !state.loaded {
                load(&state)
            } else if state.current.records[key] == nil, state.previous.records[key] == nil {
                catchUp(&state.current)
            }
            func place(in generation: Generation) -> Place? {
                generation.records[key].map { (generation.path, generation.file, $0) }
            }
            return (place(in: state.current), place(in: state.previous))
        }
        if let current, let bytes = Self.record(named: name, at: current.range, of: current.file, at: current.path) {
            return (bytes, false)
        }
        if let previous, let bytes = Self.record(named: name, at: previous.range, of: previous.file, at: previous.path)
        {
            return (bytes, true)
        }
        return nil
    }

    /// Reads where the records of both files are, unless that was done: a server does it
    /// as it starts, so that its first lookups need not (a 64 MiB file takes some 100 ms).
    private func load() {
        state.withLock { state in
            if !state.loaded { load(&state) }
        }
    }

    private func load(_ state: inout State) {
        state.loaded = true
        catchUp(&state.previous)
        catchUp(&state.current)
    }

    /// Makes the waiting entries and appends them to the current file, first turning it
    /// into the previous one when they would take it past `limit`; the bytes appended, and
    /// the disk space of the file the turn dropped. A failure only costs later renders.
    private func appendWaiting() -> (appended: Int, dropped: Int) {
        let waiting = state.withLock { state in
            defer { state.waiting = [] }
            return state.waiting
        }.compactMap { name, make in make().map { (name: name, entry: $0) } }
        guard !waiting.isEmpty else { return (0, 0) }
        return state.withLock { state in
            guard var file = open(&state.current) else { return (0, 0) }
            defer { try? file.descriptor.close() }
            var dropped = 0
            let bytes = waiting.reduce(0) { $0 + 8 + $1.name.utf8.count + $1.entry.count }
            if file.size > PackFile.header.count, file.size + bytes > limit {
                var old = stat()
                if lstat(state.previous.path, &old) == 0, (old.st_mode & S_IFMT) == S_IFREG {
                    dropped = Int(old.st_blocks) * 512
                }
                guard rename(state.current.path, state.previous.path) == 0 else { return (0, 0) }
                state.previous.records = state.current.records
                state.previous.file = state.current.file
                state.previous.end = state.current.end
                state.current = Generation(path: state.current.path)
                try? file.descriptor.close()
                guard let new = open(&state.current) else { return (0, dropped) }
                file = new
            }
            var appended = 0, index = 0
            // The file's lock while appending: another server that reads a record not yet
            // whole then knows it for an append in progress, not a tear (`catchUp`).
            file.descriptor.lock(exclusive: true)
            defer { file.descriptor.unlock() }
            // Whole records, in writes of at most 1 MiB (a larger record alone).
            while index < waiting.count {
                var chunk: [UInt8] = []
                var places: [(String, Range<Int>)] = []
                while index < waiting.count {
                    let (name, entry) = waiting[index]
                    guard chunk.isEmpty || chunk.count + 8 + name.utf8.count + entry.count <= 1 << 20 else { break }
                    let start = chunk.count
                    PackFile.appendRecordHead(name: name, entryLength: entry.count, to: &chunk)
                    chunk += entry
                    places.append((name, start..<chunk.count))
                    index += 1
                }
                guard (try? file.descriptor.writeAll(chunk)) != nil else { break }
                // With O_APPEND the offset is now the file's end, past this write, wherever
                // other servers' writes put it.
                let end = Int(lseek(file.descriptor.rawValue, 0, SEEK_CUR))
                let start = end - chunk.count
                guard start >= PackFile.header.count else { break }
                for (name, range) in places {
                    guard let key = Generation.key(of: name) else { continue }
                    state.current.records[key] = (start + range.lowerBound)..<(start + range.upperBound)
                }
                // Another server's records before these are read when a lookup misses.
                if start == state.current.end { state.current.end = end }
                appended += chunk.count
            }
            return (appended, dropped)
        }
    }

    /// Forgets the records of both files: they were removed (`DiskCache.clear`). Entries
    /// waiting are still written.
    func forget() {
        state.withLock { state in
            state.current = Generation(path: state.current.path)
            state.previous = Generation(path: state.previous.path)
        }
    }

    /// Opens the generation's file to append, making it (with the pack header) when there
    /// is none; when it is not the file its records are in, they are read from it.
    private func open(_ generation: inout Generation) -> (descriptor: FileDescriptor, size: Int)? {
        let opened = try? FileDescriptor.open(generation.path, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK)
        guard let descriptor = opened ?? Self.make(generation.path) else { return nil }
        var info = stat()
        guard fstat(descriptor.rawValue, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
            PackFile.startsAsPack(descriptor)
        else {
            try? descriptor.close()
            return nil
        }
        if !generation.describes(info) { catchUp(&generation) }
        return (descriptor, Int(info.st_size))
    }

    /// Makes the file at `path` holding the pack header (`AtomicFile.create`: of two servers
    /// making it at once, both append to one) and opens it to append.
    private static func make(_ path: String) -> FileDescriptor? {
        AtomicFile.create(PackFile.header, at: path, permissions: 0o644)
        return try? FileDescriptor.open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK)
    }

    /// Reads the records the generation's file holds past those read before, or all of
    /// them when it is another file than before (none when there is no file). A tail that
    /// is not whole records is another server's append in progress while that server holds
    /// the file's lock (`appendWaiting`): it is left to be read again at the next miss. With
    /// the lock free it is a tear (a crash mid-append, a full disk), cut off once, here: the
    /// records before it are kept, reading goes on past it from the next append, and no
    /// later lookup reads it again (it read the journal from the tear to its end on every
    /// miss). Records after damage in the middle are lost with it: it is a cache.
    private func catchUp(_ generation: inout Generation) {
        var info = stat()
        guard lstat(generation.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            generation = Generation(path: generation.path)
            return
        }
        if generation.describes(info), Int(info.st_size) <= generation.end { return }
        guard let descriptor = try? FileDescriptor.open(generation.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else {
            return
        }
        defer { try? descriptor.close() }
        guard fstat(descriptor.rawValue, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        if !generation.describes(info) {
            generation = Generation(path: generation.path)
            generation.file = FileStamp(info)
        }
        var size = Int(info.st_size)
        var offset = generation.end
        if offset == 0 {
            guard PackFile.startsAsPack(descriptor) else { return }
            offset = PackFile.header.count
        }
        // In pieces of 4 MiB (or of the one record that is larger), so that a journal of any
        // size is read in bounded memory.
        var piece = 4 << 20
        while offset < size {
            guard let bytes = try? descriptor.read(upTo: min(piece, size - offset), at: offset) else { break }
            let (records, end) = PackFile.records(in: bytes, from: 0)
            for (name, entry) in records {
                guard let key = Generation.key(of: name) else { continue }
                // A record runs from its head (the name's length) to its entry's end.
                generation.records[key] = (offset + entry.startIndex - 8 - name.utf8.count)..<(offset + entry.endIndex)
            }
            if end == 0 {
                // Not one whole record: a larger one, or the file ends within it.
                if bytes.count < size - offset, piece < 256 << 20 {
                    piece *= 2
                    continue
                }
                switch descriptor.lock(exclusive: false, waiting: false) {
                case .heldByAnother:
                    // Being appended: read from here at the next miss.
                    generation.end = offset
                    return
                case .taken:
                    // No append runs now: the rest of the record, if it came, is here.
                    defer { descriptor.unlock() }
                    if fstat(descriptor.rawValue, &info) == 0, Int(info.st_size) > size {
                        size = Int(info.st_size)
                        continue
                    }
                case .unavailable: break
                }
                repairs.add(1, ordering: .relaxed)
                offset = size
                break
            }
            offset += end
        }
        generation.end = offset
    }

    /// The entry of the record at `range` of the file at `path`, when that is still `file`
    /// and the record is named `name`.
    private static func record(
        named name: String, at range: Range<Int>, of file: FileStamp?, at path: String
    ) -> ArraySlice<UInt8>? {
        guard let file, let descriptor = try? FileDescriptor.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK) else {
            return nil
        }
        defer { try? descriptor.close() }
        var info = stat()
        guard fstat(descriptor.rawValue, &info) == 0, file.isSameFile(as: info),
            let bytes = try? descriptor.read(upTo: range.count, at: range.lowerBound),
            let (recorded, entry) = PackFile.records(in: bytes, from: 0).records.first, recorded == name
        else { return nil }
        return entry
    }
}
