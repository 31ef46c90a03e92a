import Dispatch
import Glibc
import IconrRender

/// Rendered PNGs on disk, content-addressed: an entry's file name is the SHA-256 of its
/// variant key together with iconr's and librsvg's versions, so a new version of either
/// never serves old pixels. Entries are written atomically (temporary file + rename), so any
/// number of processes can share a directory. A truncated or corrupted entry fails its PNG
/// decode (chunk CRCs, zlib checksum), is deleted and reported as a miss. Past `byteLimit`,
/// the least recently used entries (by modification time, refreshed on every hit) go.
/// Entries spread over 256 subfolders by their first two hex digits: concurrent writers
/// into one folder queue on its lock (measured: an eighth of a cold sprite build).
public final class DiskCache: Sendable {
    public let directory: String
    public let byteLimit: Int
    private let entries: String
    /// Bytes of entries as last counted plus what this process wrote since; nil until counted.
    private let knownBytes = Locked<Int?>(nil)
    /// The one thread that writes entries, when writing behind.
    private let writer: DispatchQueue?

    /// Uses (and creates) `directory`. With `writesBehind`, `store` hands entries to one
    /// background thread and returns at once, and `flush()` waits for them: a batch job
    /// (a sprite build) then renders on every core while the entries are encoded and written.
    public init(directory: String, byteLimit: Int = 256 << 20, writesBehind: Bool = false) throws(IconrError) {
        self.directory = directory
        self.byteLimit = byteLimit
        writer = writesBehind ? DispatchQueue(label: "iconr.disk-cache.writer") : nil
        entries = directory + "/entries-v1"
        for path in [directory, entries] {
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
        let path = entryPath(key)
        guard let png = try? FileReader.read(path) else { return nil }
        guard let image = try? PNGDecoder.decode(png) else {
            unlink(path)
            return nil
        }
        // Refresh the modification time: it is the recency eviction goes by.
        utimensat(AT_FDCWD, path, nil, 0)
        return (png, image)
    }

    /// Stores the variant's PNG, now or (writing behind) soon.
    public func store(_ variant: IconVariant) {
        if let writer {
            writer.async { self.write(variant.png, for: variant.key) }
        } else {
            write(variant.png, for: variant.key)
        }
    }

    /// Waits until every entry handed to `store` is written.
    public func flush() {
        writer?.sync {}
    }

    /// Stores `png` for `key`; a failure to write only costs a later render.
    public func write(_ png: [UInt8], for key: VariantKey) {
        let path = entryPath(key)
        if (try? AtomicFile.write(png, to: path)) == nil {
            // The entry's subfolder may not exist yet.
            mkdir(String(path[..<path.lastIndex(of: "/")!]), 0o755)
            guard (try? AtomicFile.write(png, to: path)) != nil else { return }
        }
        let total = knownBytes.withLock { known -> Int in
            let total = (known ?? countBytes()) + png.count
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

    func entryPath(_ key: VariantKey) -> String {
        let name = SHA256.hex(Array("iconr \(IconrVersion.string) librsvg \(Rasterizer.librsvgVersion) \(key.identity)".utf8))
        return entries + "/" + name.prefix(2) + "/" + name + ".png"
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
        for folder in FileReader.names(in: entries) where folder.count == 2 {
            for name in FileReader.names(in: entries + "/" + folder) where name.hasSuffix(".png") {
                let path = entries + "/" + folder + "/" + name
                var info = stat()
                guard stat(path, &info) == 0 else { continue }
                files.append((path, Int(info.st_size), info.st_mtim.tv_sec * 1_000_000_000 + info.st_mtim.tv_nsec))
            }
        }
        return files
    }
}
