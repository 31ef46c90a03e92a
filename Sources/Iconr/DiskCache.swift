import Dispatch
import Glibc
import IconrRender

/// Rendered PNGs on disk, content-addressed: an entry's name is the SHA-256 of its variant
/// key together with iconr's and librsvg's versions, so a new version of either never
/// serves old pixels. Files are written atomically (temporary file + rename), so any number
/// of processes can share a directory. A truncated or corrupted entry fails its PNG decode
/// (chunk CRCs, zlib checksum) and is a miss, never served. Past `byteLimit`, the least
/// recently used files (by modification time, refreshed by a hit when a minute old) go.
///
/// Single entries live in one file each, spread over 256 subfolders by their first two hex
/// digits. A batch job (a sprite build) names a batch instead: its entries are read from and
/// written to one pack file, `packs/<batch>.pack`, because creating hundreds of small files
/// cost a cold Maki sprite build more than rendering it (and up to 10 times more on a busy
/// ext4).
public final class DiskCache: Sendable {
    public let directory: String
    public let byteLimit: Int
    private let entries: String
    /// Bytes of files as last counted plus what this process wrote since; nil until counted.
    private let knownBytes = Locked<Int?>(nil)
    private let batch: Batch?

    /// Uses (and creates) `directory`. With a `batch` name, entries come from and go to that
    /// batch's pack: `store` hands them to a background thread and returns at once, and
    /// `flush()` writes the pack with every entry this run read or stored.
    public init(directory: String, byteLimit: Int = 256 << 20, batch: String? = nil) throws(IconrError) {
        self.directory = directory
        self.byteLimit = byteLimit
        let entries = directory + "/entries-v1"
        self.entries = entries
        self.batch = batch.map { Batch(path: entries + "/packs/" + SHA256.hex(Array($0.utf8)) + ".pack") }
        for path in [directory, entries, entries + "/packs"] {
            guard FileReader.makeFolder(path) else {
                throw IconrError.io("cannot create the cache directory: \(String(cString: strerror(errno)))", file: path)
            }
        }
    }

    /// `$XDG_CACHE_HOME/iconr`, else `~/.cache/iconr`.
    public static var defaultDirectory: String {
        if let xdg = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") { return xdg + "/iconr" }
        let home = getenv("HOME").map { String(cString: $0) } ?? "."
        return home + "/.cache/iconr"
    }

    /// The PNG and its pixels for `key`, or nil when there is no sound entry.
    public func read(_ key: VariantKey) -> (png: [UInt8], image: RasterImage)? {
        let name = entryName(key)
        if let batch, let png = batch.stored(name), let image = try? PNGDecoder.decode(png) {
            batch.keep(png, as: name)
            return (png, image)
        }
        let path = entryPath(name)
        guard let (png, modified) = try? FileReader.readWithTime(path) else { return nil }
        guard let image = try? PNGDecoder.decode(png) else {
            unlink(path)
            return nil
        }
        // Refresh the modification time, the recency eviction goes by, at most once a minute:
        // the inode write cost a hit 10-20 us (about a third of it).
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        if now.tv_sec * 1_000_000_000 + now.tv_nsec - modified > 60_000_000_000 { utimensat(AT_FDCWD, path, nil, 0) }
        batch?.keep(png, as: name)
        return (png, image)
    }

    /// Stores the variant's PNG: in its own file now, or in the batch's pack at `flush()`.
    public func store(_ variant: IconVariant) {
        if let batch {
            batch.encodeBehind(variant, as: entryName(variant.key))
        } else {
            write(variant.png, for: variant.key)
        }
    }

    /// Writes the batch's pack: every entry read or stored since the cache was made.
    public func flush() {
        guard let batch, let pack = batch.pack() else { return }
        guard (try? AtomicFile.write(pack, to: batch.path)) != nil else { return }
        counted(adding: pack.count)
    }

    /// Stores `png` for `key` in a file of its own; a failure to write only costs a later render.
    public func write(_ png: [UInt8], for key: VariantKey) {
        let path = entryPath(entryName(key))
        if (try? AtomicFile.write(png, to: path)) == nil {
            // The entry's subfolder may not exist yet.
            mkdir(String(path[..<path.lastIndex(of: "/")!]), 0o755)
            guard (try? AtomicFile.write(png, to: path)) != nil else { return }
        }
        counted(adding: png.count)
    }

    /// Adds `bytes` to the known total, and evicts past the limit.
    private func counted(adding bytes: Int) {
        let total = knownBytes.withLock { known -> Int in
            let total = (known ?? countBytes()) + bytes
            known = total
            return total
        }
        if total > byteLimit { evict() }
    }

    /// How many entries and bytes the directory holds now.
    public func statistics() -> (entries: Int, bytes: Int) {
        let files = listEntries()
        return (files.count, files.reduce(0) { $0 + $1.size })
    }

    /// Removes every entry.
    public func clear() {
        for file in listEntries() { unlink(file.path) }
        knownBytes.withLock { $0 = 0 }
    }

    private func entryName(_ key: VariantKey) -> String {
        SHA256.hex(Array("iconr \(IconrVersion.string) librsvg \(Rasterizer.librsvgVersion) \(key.identity)".utf8))
    }

    private func entryPath(_ name: String) -> String {
        entries + "/" + name.prefix(2) + "/" + name + ".png"
    }

    /// Deletes least recently used entries until the total is at most 90% of the limit.
    private func evict() {
        var files = listEntries().sorted { $0.modified < $1.modified }
        var total = files.reduce(0) { $0 + $1.size }
        while total > byteLimit * 9 / 10, !files.isEmpty {
            let oldest = files.removeFirst()
            unlink(oldest.path)
            total -= oldest.size
        }
        knownBytes.withLock { $0 = total }
    }

    private func countBytes() -> Int {
        listEntries().reduce(0) { $0 + $1.size }
    }

    private func listEntries() -> [(path: String, size: Int, modified: Int)] {
        var files: [(String, Int, Int)] = []
        for folder in FileReader.names(in: entries) where folder.count == 2 || folder == "packs" {
            for name in FileReader.names(in: entries + "/" + folder) where name.hasSuffix(".png") || name.hasSuffix(".pack") {
                let path = entries + "/" + folder + "/" + name
                var info = stat()
                guard stat(path, &info) == 0 else { continue }
                files.append((path, Int(info.st_size), info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec))
            }
        }
        return files
    }
}

/// One batch's pack: entries as `name length, name, PNG length, PNG` records after a
/// header, little-endian 32-bit lengths. A damaged pack loses the entries past the damage;
/// each PNG is still decoded in full before it is served.
private final class Batch: Sendable {
    let path: String
    private static let header = Array("iconr pack 1\n".utf8)
    /// The pack as read (loaded at the first lookup), and the entries of this run.
    private let state = Locked<(stored: [String: [UInt8]]?, kept: [String: [UInt8]])>((nil, [:]))
    /// Encodes stored variants' PNGs while the build renders.
    private let encoder = DispatchQueue(label: "iconr.disk-cache.pack")

    init(path: String) {
        self.path = path
    }

    func stored(_ name: String) -> [UInt8]? {
        state.withLock { state in
            if state.stored == nil { state.stored = (try? FileReader.read(path)).map { Self.entries(of: $0) } ?? [:] }
            return state.stored?[name]
        }
    }

    func keep(_ png: [UInt8], as name: String) {
        state.withLock { $0.kept[name] = png }
    }

    func encodeBehind(_ variant: IconVariant, as name: String) {
        encoder.async { self.keep(variant.png, as: name) }
    }

    /// The pack of this run's entries, sorted by name; nil when there are none.
    func pack() -> [UInt8]? {
        encoder.sync {}
        let kept = state.withLock { $0.kept }
        guard !kept.isEmpty else { return nil }
        var bytes = Self.header
        for (name, png) in kept.sorted(by: { $0.key < $1.key }) {
            for field in [Array(name.utf8), png] {
                withUnsafeBytes(of: UInt32(field.count).littleEndian) { bytes += $0 }
                bytes += field
            }
        }
        return bytes
    }

    private static func entries(of pack: [UInt8]) -> [String: [UInt8]] {
        guard pack.starts(with: header) else { return [:] }
        var entries: [String: [UInt8]] = [:]
        var offset = header.count
        func field() -> ArraySlice<UInt8>? {
            guard offset + 4 <= pack.count else { return nil }
            let length = pack[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            guard length <= pack.count - offset - 4 else { return nil }
            defer { offset += 4 + length }
            return pack[(offset + 4)..<(offset + 4 + length)]
        }
        while let name = field(), let png = field() {
            entries[String(decoding: name, as: UTF8.self)] = Array(png)
        }
        return entries
    }
}
