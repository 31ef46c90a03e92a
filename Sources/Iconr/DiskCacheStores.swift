import Glibc
import IconrCore
import IconrRender
import IconrSystem

/// What a cache lookup finds: the pixels, and the file in the format asked for when the
/// store keeps files (a pack keeps pixels only).
typealias CacheHit = (file: [UInt8]?, image: RasterImage)

/// One way the disk cache keeps its entries: a file each (`EntryFiles`), a batch's pack
/// (`BatchPack`) or a server's journal (`DiskJournal`). `DiskCache` names the entries, holds
/// the key they are signed under and the space they take; a store finds, proves and keeps
/// them. The cache asks its stores in turn, and the first that keeps an entry's format
/// stores it.
protocol EntryStore: Sendable {
    /// The entry stored under `name` when it is a sound entry of `key` (its image at most
    /// `maxSize`), with the file in `format` when the store keeps files; else nil.
    func entry(named name: String, key: VariantKey, as format: ImageFormat, maxSize: PixelSize) -> CacheHit?
    /// Keeps the variant's entry (in `format`) under `name`; false when this store does not
    /// keep that format, and the next one should.
    func store(_ variant: IconVariant, named name: String, as format: ImageFormat) -> Bool
    /// Keeps the image of an entry a later store found.
    func adopt(_ image: RasterImage, key: VariantKey, named name: String)
    /// Writes what the store held back; returns when it is written.
    func flush()
    /// Forgets what it knew of the files `DiskCache.clear` removed.
    func forget()
}

extension EntryStore {
    func adopt(_ image: RasterImage, key: VariantKey, named name: String) {}
    func flush() {}
    func forget() {}
}

/// Entries in a file each (`CacheEntry`: the PNG with its key and HMAC in a private chunk),
/// `<2 hex>/<64 hex>.<format>` in the cache's folder, spread over 256 subfolders by the
/// name's first two hex digits. A file whose entry is not sound is removed.
struct EntryFiles: EntryStore {
    let folder: String
    let secret: [UInt8]
    let space: CacheSpace

    /// `<2 hex>/<64 hex>.<format>`: one name for every format of a variant, told apart by the extension.
    func path(_ name: String, _ format: ImageFormat) -> String {
        folder + "/" + String(decoding: name.utf8.prefix(2), as: UTF8.self) + "/" + name + "." + format.name
    }

    func entry(named name: String, key: VariantKey, as format: ImageFormat, maxSize: PixelSize) -> CacheHit? {
        let path = path(name, format)
        guard let (entry, modified) = try? FileReader.readWithTime(path, followingLinks: false) else { return nil }
        guard let file = CacheEntry.file(in: entry, as: format, key: key, secret: secret),
            let image = try? format.decode(file, maxSize: maxSize)
        else {
            unlink(path)
            return nil
        }
        CacheSpace.refreshTime(of: path, modified: modified)
        return (file, image)
    }

    func store(_ variant: IconVariant, named name: String, as format: ImageFormat) -> Bool {
        // A variant that cannot be encoded is not stored: a later run renders it again.
        if let file = try? variant.encoded(as: format) { write(file, named: name, key: variant.key, as: format) }
        return true
    }

    /// Writes `file` (in `format`) as the entry of `key` named `name`; a failure to write
    /// only costs a later render.
    func write(_ file: [UInt8], named name: String, key: VariantKey, as format: ImageFormat) {
        guard let entry = CacheEntry.make(file, as: format, key: key, secret: secret) else { return }
        let path = path(name, format)
        if (try? AtomicFile.write(entry, to: path)) == nil {
            // The entry's subfolder may not exist yet.
            mkdir(folder + "/" + String(decoding: name.utf8.prefix(2), as: UTF8.self), 0o755)
            guard (try? AtomicFile.write(entry, to: path)) != nil else { return }
        }
        CacheSpace.markUsed(path)
        space.added(entry.count)
    }
}

/// One batch's pack (`PackFile`): its entries (`PackEntry`, pixels) are read from the pack
/// and kept in memory, with every entry a later store found, until `flush` writes the pack.
/// A damaged pack loses the entries past the damage; each entry is still checked against
/// its key and digest before it is served. The pack written holds this run's entries, then
/// the older ones it read (most recent first), up to `limit` bytes: builds of other folders
/// and ratios share it.
final class BatchPack: EntryStore {
    let path: String
    let limit: Int
    private let secret: [UInt8]
    private let space: CacheSpace
    /// The pack as read (loaded at the first lookup: its entries are slices of the one
    /// buffer read) with its names in their order, and the entries of this run.
    private let state = Locked<
        (stored: [String: ArraySlice<UInt8>]?, order: [String], kept: [String: KeptEntry])
    >((nil, [], [:]))

    init(path: String, limit: Int, secret: [UInt8], space: CacheSpace) {
        self.path = path
        self.limit = limit
        self.secret = secret
        self.space = space
    }

    func entry(named name: String, key: VariantKey, as format: ImageFormat, maxSize: PixelSize) -> CacheHit? {
        let stored = state.withLock { state in
            load(&state)
            return state.stored?[name]
        }
        guard let stored, let image = PackEntry.image(of: stored, key: key, maxSize: maxSize, secret: secret) else {
            return nil
        }
        keep(.encoded(stored), as: name)
        return (nil, image)
    }

    func store(_ variant: IconVariant, named name: String, as format: ImageFormat) -> Bool {
        adopt(variant.image, key: variant.key, named: name)
        return true
    }

    func adopt(_ image: RasterImage, key: VariantKey, named name: String) {
        keep(PackEntry.kept(image, key: key, secret: secret), as: name)
    }

    private func keep(_ entry: KeptEntry, as name: String) {
        state.withLock { $0.kept[name] = entry }
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

    /// Writes what this run added to the pack: its new entries appended (a rebuild after one
    /// icon changed writes that icon's images, not the whole pack), or, past `limit` or 1 MiB
    /// at once, the pack rewritten with every entry this run read or stored. A run ends here:
    /// the next (a server's next build of the sprite) starts from the pack on disk, so that a
    /// long-lived process neither holds nor writes the entries of every build it made (a
    /// served folder edited 25 times grew its pack from 13 to 179 MB and the server from 59
    /// to 229 MB).
    func flush() {
        defer { state.withLock { $0 = (nil, [], [:]) } }
        let (kept, stored) = state.withLock { ($0.kept, $0.stored) }
        guard !kept.isEmpty else { return }
        // What this run read from the pack is there already.
        let new = kept.filter { stored?[$0.key] == nil }
        if new.isEmpty {
            CacheSpace.markUsed(path)
            return
        }
        if let appended = append(new) {
            CacheSpace.markUsed(path)
            space.added(appended)
            return
        }
        guard let pack = pack() else { return }
        // The pack it replaces leaves the count (it was counted when written).
        var old = stat()
        let replaced = lstat(path, &old) == 0 && (old.st_mode & S_IFMT) == S_IFREG ? Int(old.st_blocks) * 512 : 0
        guard (try? AtomicFile.write(pieces: pack.pieces, to: path)) != nil else { return }
        CacheSpace.markUsed(path)
        space.dropped(replaced)
        space.added(pack.count)
    }

    /// Appends `entries` to the pack on disk without reading it (rewriting Temaki's 5.8 MB
    /// pack for a rebuild's two new images was a fifth of that rebuild). Only onto a regular
    /// file that starts as a pack, within `limit`, in one write of at most 1 MiB (so that
    /// processes appending at once do not interleave); the bytes appended, else nil (then
    /// `pack` rewrites it whole).
    private func append(_ entries: [String: KeptEntry]) -> Int? {
        let records = entries.sorted(by: { $0.key < $1.key }).map { (name: $0.key, entry: $0.value) }
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
    private func pack() -> (pieces: PackPieces, count: Int)? {
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
