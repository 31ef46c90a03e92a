import Dispatch
import Glibc
import IconrCore
import IconrRender
import IconrSystem
import Synchronization

/// Rendered icons on disk (PNG files, one per variant and `ImageFormat`), content-addressed:
/// an entry's name is the SHA-256 of its variant key together with iconr's version and the
/// rasterizer's identity (`Rasterizer.identity`), so a new version of either never serves
/// old pixels. Files are written atomically (temporary file + rename), so any number
/// of processes can share a directory.
///
/// An entry proves what it is: it is the PNG with one private chunk (`icKy`, see
/// `CacheEntry`) holding the variant key and the SHA-256 of the key and the PNG. An entry
/// whose key or digest does not match (a PNG of another variant planted or swapped in, a
/// truncated or flipped file), or whose header claims more pixels than the size limit, is a
/// miss: removed and rendered again, never served. Past `byteLimit`, the least recently used
/// files (by modification time, refreshed by a hit when a minute old) go. Maintenance
/// (`clear`, eviction, statistics) never follows a symbolic link and only ever removes
/// regular files named as entries are, in the cache's own folders. Composed sprite sheets
/// (`SheetArchive`) and the records of whole sprite builds (`SpriteRecord`) are kept as
/// blobs in `sheets/` (`readBlob`, `storeBlob`).
///
/// Single entries live in one file each, spread over 256 subfolders by their first two hex
/// digits. A batch job (a sprite build) names a batch instead: its entries are read from and
/// written to one pack file, `packs/<batch>.pack`, because creating hundreds of small files
/// cost a cold Maki sprite build more than rendering it (and up to 10 times more on a busy
/// ext4). A pack holds pixels, not PNGs (`PackEntry`): a sprite build needs nothing else,
/// and encoding Temaki's 1,078 images cost its cold build about 45 ms of CPU. A server
/// (`writesInBackground`) appends its entries to a journal of two packs (`DiskJournal`)
/// behind its answers, and reads single entries too.
public final class DiskCache: Sendable {
    /// The cache folder.
    public let directory: String
    /// Disk space the entries may take, counted in the blocks they use (a 1 KiB entry takes
    /// 4 KiB, which also bounds how many files there are); past it the least recently used go.
    public let byteLimit: Int
    private let entries: String
    /// Bytes of files as last counted plus what this process wrote since; nil until counted.
    private let knownBytes = Locked<Int?>(nil)
    /// Whether an eviction is running: writes past the limit then leave it to that one
    /// (each used to scan the whole cache again).
    private let evicting = Atomic<Bool>(false)
    /// Where evictions run, one at a time: off the writing thread when `evictsInBackground`.
    private let evictions = DispatchQueue(label: "iconr.disk-cache.eviction", qos: .utility)
    private let evictsInBackground: Bool
    /// Torn or damaged journal tails found and cut off (each once), for the server's metrics.
    package var journalRepairs: Int { journal?.repairCount ?? 0 }
    /// Where the journal is written, when `writesInBackground`.
    private let writes = DispatchQueue(label: "iconr.disk-cache.writes", qos: .utility)
    /// A server's entries (`writesInBackground`).
    private let journal: DiskJournal?
    /// How long an entry may wait for the journal's next write (20 ms): a write for every
    /// entry cost a wake-up of the writing thread for each.
    private let journalDelay: DispatchTimeInterval
    /// The cost (`IconVariant.byteCost`) of the variants waiting to be written.
    private let waitingBytes = Atomic<Int>(0)
    /// Past this many bytes of variants waiting, `store` writes at once.
    private static let waitingLimit = 32 << 20
    private let scans = Atomic<Int>(0)
    private let batch: Batch?
    /// The cache's own key (the file `key` beside `entries-v1`, mode 0600, made with the cache): entries carry an
    /// HMAC under it, so that a planted entry with a digest anyone can compute is not served.
    private let secret: [UInt8]

    /// Uses (and creates) `directory`. With a `batch` name, entries come from and go to that
    /// batch's pack: `store` keeps them in memory, and `flush()` writes the pack with every
    /// entry this run read or stored. `evictsInBackground` (a long-lived process, a server):
    /// the write that crosses the limit does not wait for the eviction; else it runs it, so
    /// that a short process does not exit with the eviction undone. `writesInBackground` (a
    /// server): `store` hands the entry to the journal, which a writer thread appends to disk
    /// within 20 ms, so that a miss's answer does not wait for the file system
    /// (`finishWriting()` waits for the writes).
    public convenience init(
        directory: String, byteLimit: Int = 256 << 20, batch: String? = nil, evictsInBackground: Bool = false,
        writesInBackground: Bool = false
    ) throws(IconrError) {
        try self.init(
            directory: directory, byteLimit: byteLimit, batch: batch, evictsInBackground: evictsInBackground,
            writesInBackground: writesInBackground, journalDelay: .milliseconds(20))
    }

    /// `init(directory:byteLimit:batch:evictsInBackground:writesInBackground:)` whose journal
    /// writes within `journalDelay` of an entry (tests wait for `finishWriting()` instead).
    package init(
        directory: String, byteLimit: Int, batch: String? = nil, evictsInBackground: Bool = false,
        writesInBackground: Bool, journalDelay: DispatchTimeInterval
    ) throws(IconrError) {
        self.directory = directory
        self.journalDelay = journalDelay
        self.byteLimit = byteLimit
        self.evictsInBackground = evictsInBackground
        let entries = directory + "/entries-v1"
        self.entries = entries
        // A pack may take a quarter of the cache (64 MiB by default), and so may each of
        // the journal's two.
        self.batch = batch.map {
            Batch(path: entries + "/packs/" + SHA256.hex(Array($0.utf8)) + ".pack", limit: byteLimit / 4)
        }
        let journal = writesInBackground ? DiskJournal(folder: entries + "/packs", limit: byteLimit / 4) : nil
        self.journal = journal
        // The folders exist unless the cache is new: one `stat` of the innermost says so,
        // where making each (`mkdir`, then `stat`) took a cache hit six system calls.
        if !FileReader.isFolder(entries + "/packs") {
            for path in [directory, entries, entries + "/packs"] {
                do {
                    try FileReader.makeFolder(path)
                } catch {
                    throw IconrError.folder(path: path, problem: .cannotCreate(purpose: "the cache directory", error))
                }
            }
        }
        secret = try Self.secret(in: directory)
        if let journal { writes.async { journal.load() } }
    }

    /// The 32 random bytes of `folder/key`, made (written aside, then linked in, so that
    /// processes starting together agree on one) when there is none.
    private static func secret(in folder: String) throws(IconrError) -> [UInt8] {
        let path = folder + "/key"
        func existing() -> [UInt8]? {
            guard let bytes = try? FileReader.read(path, followingLinks: false), bytes.count == 32 else { return nil }
            return bytes
        }
        if let bytes = existing() { return bytes }
        let bytes: [UInt8]
        do {
            bytes = try SystemRandom.bytes(32)
        } catch {
            throw IconrError.folder(path: path, problem: .cannotCreate(purpose: "the cache key", error))
        }
        AtomicFile.create(bytes, at: path, permissions: 0o600)
        // Ours, or the one another process linked in first; a damaged one is made anew.
        if let bytes = existing() { return bytes }
        unlink(path)
        if let bytes = existing() { return bytes }
        throw IconrError.folder(path: path, problem: .cannotCreate(purpose: "the cache key", SystemError("link")))
    }

    /// `$XDG_CACHE_HOME/iconr`, else `~/.cache/iconr`.
    public static var defaultDirectory: String {
        if let xdg = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") { return xdg + "/iconr" }
        let home = getenv("HOME").map { String(cString: $0) } ?? "."
        return home + "/.cache/iconr"
    }

    /// The pixels for `key`, with the file in `format` when the entry is one (a pack holds
    /// pixels only), or nil when there is no sound entry of that key (whose image is at most
    /// `maxSize`, checked before its pixels are allocated).
    public func read(
        _ key: VariantKey, as format: ImageFormat = .png, maxSize: PixelSize = RenderLimits.default.maxSize
    ) -> (file: [UInt8]?, image: RasterImage)? {
        let name = entryName(key)
        if let journal, let (entry, fromPrevious) = journal.entry(name),
            let (png, image) = PackEntry.contents(of: entry, key: key, maxSize: maxSize, secret: secret)
        {
            if fromPrevious { keepInJournal(name) { Array(entry) } }
            return (png, image)
        }
        if let batch, let entry = batch.stored(name) {
            if let image = PackEntry.image(of: entry, key: key, maxSize: maxSize, secret: secret) {
                batch.keep(.encoded(entry), as: name)
                return (nil, image)
            }
        }
        let path = entryPath(name, format)
        guard let (entry, modified) = try? FileReader.readWithTime(path, followingLinks: false) else { return nil }
        guard let file = CacheEntry.file(in: entry, as: format, key: key, secret: secret),
            let image = try? format.decode(file, maxSize: maxSize)
        else {
            unlink(path)
            return nil
        }
        refreshTime(of: path, modified: modified)
        batch?.keep(PackEntry.kept(image, key: key, secret: secret), as: name)
        return (file, image)
    }

    /// The bytes stored under `name` (64 hex digits) with `storeBlob`, or nil (also for any
    /// other name: a name never leads out of the cache).
    func readBlob(_ name: String) -> [UInt8]? {
        guard Self.isDigest(name.utf8) else { return nil }
        let path = entries + "/sheets/" + name + ".sheets"
        guard let (bytes, modified) = try? FileReader.readWithTime(path, followingLinks: false) else { return nil }
        refreshTime(of: path, modified: modified)
        return bytes
    }

    /// Refreshes the modification time, the recency eviction goes by, at most once a minute:
    /// the inode write cost a hit 10-20 us (about a third of it).
    private func refreshTime(of path: String, modified: Int) {
        let now = FileStamp.now
        // A time in the future (a clock set back, `touch -d 2300-01-01`) is refreshed too.
        if modified < now - 60_000_000_000 || modified > now { markUsed(path) }
    }

    /// Sets the file's modification time to the clock's, to the nanosecond. The file system
    /// stamps files from a coarse clock (one 4 ms tick), so entries written within one tick
    /// tied, and an eviction could take the newest of them.
    private func markUsed(_ path: String) {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var times = [time, time]
        utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
    }

    /// Stores `bytes` under `name` (sheets, build records); a failure only costs a later build.
    func storeBlob(_ bytes: [UInt8], as name: String) {
        guard Self.isDigest(name.utf8) else { return }
        mkdir(entries + "/sheets", 0o755)
        let path = entries + "/sheets/" + name + ".sheets"
        guard (try? AtomicFile.write(bytes, to: path)) != nil else { return }
        markUsed(path)
        counted(adding: bytes.count)
    }

    /// Stores the variant: its file in `format` in a file of its own now, or its pixels in
    /// the batch's pack at `flush()`.
    public func store(_ variant: IconVariant, as format: ImageFormat = .png) {
        if let batch {
            batch.keep(PackEntry.kept(variant.image, key: variant.key, secret: secret), as: entryName(variant.key))
            return
        }
        guard journal != nil, format == .png else { return writeEntry(of: variant, as: format) }
        let cost = variant.byteCost, secret = secret
        waitingBytes.add(cost, ordering: .relaxed)
        keepInJournal(entryName(variant.key)) {
            defer { self.waitingBytes.subtract(cost, ordering: .relaxed) }
            guard let png = try? variant.encoded(as: .png) else { return nil }
            return PackEntry.make(png: png, size: variant.size, identity: variant.key.identity, secret: secret)
        }
        if waitingBytes.load(ordering: .relaxed) > Self.waitingLimit { finishWriting() }
    }

    /// Has the journal append the entry `make` makes at its next write, due `journalDelay`
    /// after the first entry waiting.
    private func keepInJournal(_ name: String, make: @escaping @Sendable () -> [UInt8]?) {
        guard let journal, journal.keep(as: name, make: make) else { return }
        writes.asyncAfter(deadline: .now() + journalDelay) { self.writeJournal() }
    }

    private func writeJournal() {
        guard let journal else { return }
        let (appended, dropped) = journal.flush()
        if dropped > 0 { knownBytes.withLock { known in known = known.map { max(0, $0 - dropped) } } }
        if appended > 0 { counted(adding: appended) }
    }

    /// Returns when every entry `store` handed to the writer thread is written.
    package func finishWriting() {
        writes.sync { writeJournal() }
    }

    private func writeEntry(of variant: IconVariant, as format: ImageFormat) {
        // A variant that cannot be encoded is not stored: a later run renders it again.
        if let file = try? variant.encoded(as: format) { write(file, for: variant.key, as: format) }
    }

    /// Writes the batch's pack: every entry read or stored since the cache was made (a run
    /// that read none appends what it stored, `Batch.append`).
    public func flush() {
        guard let batch else { return }
        if let appended = batch.append(secret: secret) {
            markUsed(batch.path)
            counted(adding: appended)
            return
        }
        guard let pack = batch.pack(secret: secret) else { return }
        guard (try? AtomicFile.write(pieces: pack.pieces, to: batch.path)) != nil else { return }
        markUsed(batch.path)
        counted(adding: pack.count)
    }

    /// Stores `file` (in `format`) for `key` in a file of its own; a failure to write only
    /// costs a later render.
    package func write(_ file: [UInt8], for key: VariantKey, as format: ImageFormat = .png) {
        let name = entryName(key)
        guard let entry = CacheEntry.make(file, as: format, key: key, secret: secret) else { return }
        let path = entryPath(name, format)
        if (try? AtomicFile.write(entry, to: path)) == nil {
            // The entry's subfolder may not exist yet.
            mkdir(entries + "/" + String(decoding: name.utf8.prefix(2), as: UTF8.self), 0o755)
            guard (try? AtomicFile.write(entry, to: path)) != nil else { return }
        }
        markUsed(path)
        counted(adding: entry.count)
    }

    /// Adds a file of `bytes` to the known total (in whole 4 KiB blocks, as the disk holds
    /// it), and past the limit starts an eviction unless one is running (in the background
    /// with `evictsInBackground`).
    private func counted(adding bytes: Int) {
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

    /// How many times evictions listed the whole cache (once per eviction pass).
    package var evictionScans: Int { scans.load(ordering: .relaxed) }

    /// Returns when no background eviction is running (tests read the cache's size after it).
    package func finishEvicting() {
        evictions.sync {}
    }

    /// How many entries the directory holds now (a pack's records each count), and the disk
    /// space they take.
    public func statistics() -> (entries: Int, bytes: Int) {
        let files = listEntries()
        let entries = files.reduce(0) { count, file in
            count + (file.name.hasSuffix(".pack") ? PackFile.recordCount(at: file.folder + "/" + file.name) : 1)
        }
        return (entries, files.reduce(0) { $0 + $1.size })
    }

    /// Removes every entry.
    public func clear() {
        for file in listEntries() { file.remove() }
        journal?.forget()
        knownBytes.withLock { $0 = 0 }
    }

    private func entryName(_ key: VariantKey) -> String {
        SHA256.hex(Array("iconr \(IconrVersion.string) \(Rasterizer.identity) \(key.identity)".utf8))
    }

    /// Where the entry of `key` in `format` is (or would be) stored in a file of its own.
    package func entryPath(for key: VariantKey, as format: ImageFormat = .png) -> String {
        entryPath(entryName(key), format)
    }

    /// `<2 hex>/<64 hex>.<format>`: one name for every format of a variant, told apart by the extension.
    private func entryPath(_ name: String, _ format: ImageFormat) -> String {
        entries + "/" + String(decoding: name.utf8.prefix(2), as: UTF8.self) + "/" + name + "." + format.name
    }

    /// Deletes least recently used entries until the total is at most 90% of the limit;
    /// whether it deleted any.
    private func evict() -> Bool {
        scans.add(1, ordering: .relaxed)
        var files = listEntries().sorted { $0.modified < $1.modified }
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
        listEntries().reduce(0) { $0 + $1.size }
    }

    /// The cache's entry files: regular files named `<64 hex>.<format>` (`.png`) in folders
    /// named by two hex digits, `<64 hex>.pack` in `packs` and `<64 hex>.sheets` in `sheets`,
    /// found without following a symbolic link (a linked folder or file is passed over, so
    /// nothing outside the cache is ever touched).
    private func listEntries() -> [EntryFile] {
        var files: [EntryFile] = []
        for folder in FileReader.names(in: entries) {
            let suffixes: [String]
            if folder == "packs" {
                suffixes = [".pack"]
            } else if folder == "sheets" {
                suffixes = [".sheets"]
            } else if folder.utf8.count == 2, folder.utf8.allSatisfy(Self.isHexDigit) {
                suffixes = ImageFormat.all.map { "." + $0.name }
            } else {
                continue
            }
            let path = entries + "/" + folder
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
                    EntryFile(
                        folder: path, name: name, size: Int(info.st_blocks) * 512,
                        modified: info.st_mtim.nanoseconds))
            }
        }
        return files
    }

    /// Whether `name` is 64 lowercase hex digits, as entry, pack and blob names are.
    static func isDigest<Name: Collection<UInt8>>(_ name: Name) -> Bool {
        name.count == 64 && name.allSatisfy(isHexDigit)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

/// One entry file found by `DiskCache.listEntries`.
private struct EntryFile {
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

/// One batch's pack: entries (`PackEntry`) as `name length, name, entry length, entry`
/// records after a header, little-endian 32-bit lengths. A damaged pack loses the entries
/// past the damage; each entry is still checked against its key and digest before it is
/// served.
/// The pack written holds this run's entries, then the older ones it read (most recent
/// first), up to `limit` bytes: builds of other folders and ratios share it.
private final class Batch: Sendable {
    let path: String
    let limit: Int
    /// The pack as read (loaded at the first lookup: its entries are slices of the one
    /// buffer read) with its names in their order, and the entries of this run.
    private let state = Locked<
        (stored: [String: ArraySlice<UInt8>]?, order: [String], kept: [String: KeptEntry])
    >((nil, [], [:]))

    init(path: String, limit: Int) {
        self.path = path
        self.limit = limit
    }

    func stored(_ name: String) -> ArraySlice<UInt8>? {
        state.withLock { state in
            load(&state)
            return state.stored?[name]
        }
    }

    private func load(
        _ state: inout (stored: [String: ArraySlice<UInt8>]?, order: [String], kept: [String: KeptEntry])
    ) {
        guard state.stored == nil else { return }
        // A pack holds at least this run's entries, past `limit` if they are more (50,000
        // images: 122 MB): it is read up to the whole cache's size.
        let records =
            (try? FileReader.read(path, followingLinks: false, maxSize: max(FileReader.maxSize, 4 * limit)))
            .map { PackFile.records(in: $0) } ?? []
        state.stored = Dictionary(records, uniquingKeysWith: { first, _ in first })
        state.order = records.map(\.name)
    }

    func keep(_ entry: KeptEntry, as name: String) {
        state.withLock { $0.kept[name] = entry }
    }

    /// Appends this run's entries to the pack on disk without reading it, when this run
    /// looked nothing up in it (a sprite rebuild that drew only the icons that changed:
    /// rewriting Temaki's 5.8 MB pack for their two images was a fifth of that rebuild). Only
    /// onto a regular file that starts as a pack, within `limit`, in one write of at most 1
    /// MiB (so that processes appending at once do not interleave); the bytes appended, else
    /// nil (then `pack` rewrites it whole).
    func append(secret: [UInt8]) -> Int? {
        let kept = state.withLock { $0.stored == nil ? $0.kept : [:] }
        guard !kept.isEmpty else { return nil }
        let records = kept.sorted(by: { $0.key < $1.key }).map { (name: $0.key, entry: $0.value) }
        guard records.reduce(0, { $0 + 8 + $1.name.utf8.count + $1.entry.length }) <= 1 << 20 else { return nil }
        let bytes = Array(PackPieces(header: [], records: records, secret: secret).joined())
        guard let file = try? FileDescriptor.open(path, O_RDWR | O_APPEND | O_NOFOLLOW) else { return nil }
        defer { try? file.close() }
        var status = stat()
        guard fstat(file.rawValue, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
            Int(status.st_size) + bytes.count <= limit, PackFile.startsAsPack(file),
            (try? file.writeAll(bytes)) != nil
        else { return nil }
        return bytes.count
    }

    /// The pack of this run's entries, sorted by name, then the older ones in their order
    /// up to `limit` bytes (`count` bytes in all, made as `pieces`); nil when this run has
    /// none. Images kept as they are become entries signed with `secret` as the pieces are
    /// made, a few at a time: the pack of 50,000 icons was as large as they are.
    func pack(secret: [UInt8]) -> (pieces: PackPieces, count: Int)? {
        let (stored, order, kept) = state.withLock { state in
            load(&state)
            return (state.stored ?? [:], state.order, state.kept)
        }
        guard !kept.isEmpty else { return nil }
        var records = kept.sorted(by: { $0.key < $1.key }).map { (name: $0.key, entry: $0.value) }
        var total = PackFile.header.count + records.reduce(0) { $0 + 8 + $1.name.utf8.count + $1.entry.length }
        for name in order where kept[name] == nil {
            guard let entry = stored[name], total + entry.count + name.utf8.count + 8 <= limit else { continue }
            records.append((name, .encoded(entry)))
            total += entry.count + name.utf8.count + 8
        }
        return (PackPieces(header: PackFile.header, records: records, secret: secret), total)
    }
}
