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
///
/// The cache is a facade: it names the entries, holds the key they are signed under, and
/// counts and evicts the space they take (`CacheSpace`); its stores (`EntryStore`: the
/// batch's pack or the journal, then the entry files) find and keep them.
public final class DiskCache: Sendable {
    /// The cache folder.
    public let directory: String
    /// Disk space the entries may take, counted in the blocks they use (a 1 KiB entry takes
    /// 4 KiB, which also bounds how many files there are); past it the least recently used go.
    public var byteLimit: Int { space.byteLimit }
    private let space: CacheSpace
    /// The stores, in the order they are asked: a batch's pack or a server's journal, then
    /// `files`.
    private let stores: [any EntryStore]
    private let files: EntryFiles
    /// A server's entries (`writesInBackground`).
    private let journal: DiskJournal?
    /// The cache's own key (the file `key` beside `entries-v1`, mode 0600, made with the cache): entries carry an
    /// HMAC under it, so that a planted entry with a digest anyone can compute is not served.
    private let secret: [UInt8]

    /// Uses (and creates) `directory`. With a `batch` name, entries come from and go to that
    /// batch's pack: `store` keeps them in memory, and `flush()` writes the pack with every
    /// entry this run read or stored. `evictsInBackground` (a long-lived process, a server):
    /// the write that crosses the limit does not wait for the eviction; else it runs it, so
    /// that a short process does not exit with the eviction undone. `writesInBackground` (a
    /// server): `store` hands the entry to the journal, which a writer thread appends to disk
    /// within 20 ms, so that a miss's answer does not wait for the file system (`flush()`
    /// waits for the writes).
    public convenience init(
        directory: String, byteLimit: Int = 256 << 20, batch: String? = nil, evictsInBackground: Bool = false,
        writesInBackground: Bool = false
    ) throws(IconrError) {
        try self.init(
            directory: directory, byteLimit: byteLimit, batch: batch, evictsInBackground: evictsInBackground,
            writesInBackground: writesInBackground, journalDelay: .milliseconds(20))
    }

    /// `init(directory:byteLimit:batch:evictsInBackground:writesInBackground:)` whose journal
    /// writes within `journalDelay` of an entry (tests wait for `flush()` instead).
    package init(
        directory: String, byteLimit: Int, batch: String? = nil, evictsInBackground: Bool = false,
        writesInBackground: Bool, journalDelay: DispatchTimeInterval
    ) throws(IconrError) {
        self.directory = directory
        let entries = directory + "/entries-v1"
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
        let secret = try Self.secret(in: directory)
        let space = CacheSpace.shared(folder: entries, byteLimit: byteLimit, evictsInBackground: evictsInBackground)
        self.secret = secret
        self.space = space
        files = EntryFiles(folder: entries, secret: secret, space: space)
        // A pack may take a quarter of the cache (64 MiB by default), and so may each of
        // the journal's two.
        let batch = batch.map {
            BatchPack(
                path: entries + "/packs/" + SHA256.hex(Array($0.utf8)) + ".pack", limit: byteLimit / 4,
                secret: secret, space: space)
        }
        journal =
            writesInBackground
            ? DiskJournal(
                folder: entries + "/packs", limit: byteLimit / 4, secret: secret, space: space, delay: journalDelay)
            : nil
        var stores: [any EntryStore] = []
        if let batch { stores.append(batch) }
        if let journal { stores.append(journal) }
        self.stores = stores + [files]
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
    /// `maxSize`, checked before its pixels are allocated). The stores before the one that
    /// found it keep it too (a batch's pack holds every entry its run used).
    public func read(
        _ key: VariantKey, as format: ImageFormat = .png, maxSize: PixelSize = RenderLimits.default.maxSize
    ) -> (file: [UInt8]?, image: RasterImage)? {
        let name = entryName(key)
        for (index, store) in stores.enumerated() {
            guard let hit = store.entry(named: name, key: key, as: format, maxSize: maxSize) else { continue }
            for earlier in stores[..<index] { earlier.adopt(hit.image, key: key, named: name) }
            return hit
        }
        return nil
    }

    /// Stores the variant: its file in `format` in a file of its own now, its pixels in the
    /// batch's pack at `flush()`, or its PNG in the journal behind the answer.
    public func store(_ variant: IconVariant, as format: ImageFormat = .png) {
        let name = entryName(variant.key)
        for store in stores where store.store(variant, named: name, as: format) { return }
    }

    /// Writes what the stores held back: the batch's pack, with every entry read or stored
    /// since the last flush (a run that read none appends what it stored), and the
    /// journal's waiting entries; returns when they are written.
    public func flush() {
        for store in stores { store.flush() }
    }

    /// Stores `file` (in `format`) for `key` in a file of its own; a failure to write only
    /// costs a later render.
    package func write(_ file: [UInt8], for key: VariantKey, as format: ImageFormat = .png) {
        files.write(file, named: entryName(key), key: key, as: format)
    }

    /// Where the entry of `key` in `format` is (or would be) stored in a file of its own.
    package func entryPath(for key: VariantKey, as format: ImageFormat = .png) -> String {
        files.path(entryName(key), format)
    }

    private func entryName(_ key: VariantKey) -> String {
        SHA256.hex(Array("iconr \(IconrVersion.string) \(Rasterizer.identity) \(key.identity)".utf8))
    }

    /// The bytes stored under `name` (64 hex digits) with `storeBlob`, or nil (also for any
    /// other name: a name never leads out of the cache, and for a file that does not end in
    /// the HMAC of its bytes under this cache's key: one planted, or another cache's).
    func readBlob(_ name: String) -> [UInt8]? {
        guard CacheSpace.isDigest(name.utf8) else { return nil }
        let path = space.folder + "/sheets/" + name + ".sheets"
        guard case (var bytes, let modified)? = try? FileReader.readWithTime(path, followingLinks: false),
            bytes.count >= Self.blobMACLength,
            SHA256.hmac(key: secret, bytes.dropLast(Self.blobMACLength)).elementsEqual(
                bytes.suffix(Self.blobMACLength))
        else { return nil }
        // The MAC off (the buffer is this function's alone: no copy).
        bytes.removeLast(Self.blobMACLength)
        CacheSpace.refreshTime(of: path, modified: modified)
        return bytes
    }

    /// Stores `bytes` under `name` (sheets, build records), followed by their HMAC-SHA-256
    /// under the cache's key, as entries carry theirs; a failure only costs a later build.
    func storeBlob(_ bytes: [UInt8], as name: String) {
        guard CacheSpace.isDigest(name.utf8) else { return }
        mkdir(space.folder + "/sheets", 0o755)
        let path = space.folder + "/sheets/" + name + ".sheets"
        var sealed = bytes
        sealed += SHA256.hmac(key: secret, bytes)
        guard (try? AtomicFile.write(sealed, to: path)) != nil else { return }
        CacheSpace.markUsed(path)
        space.added(sealed.count)
    }

    /// The bytes of the HMAC that ends every blob.
    static let blobMACLength = 32

    /// How many entries the directory holds now (a pack's records each count), and the disk
    /// space they take.
    public func statistics() -> (entries: Int, bytes: Int) {
        space.statistics()
    }

    /// Removes every entry.
    public func clear() {
        space.clear()
        for store in stores { store.forget() }
    }

    /// Torn or damaged journal tails found and cut off (each once), for the server's metrics.
    package var journalRepairs: Int { journal?.repairCount ?? 0 }

    /// How many times evictions listed the whole cache (once per eviction pass).
    package var evictionScans: Int { space.evictionScans }

    /// Returns when no background eviction is running (tests read the cache's size after it).
    package func finishEvicting() {
        space.finishEvicting()
    }
}
