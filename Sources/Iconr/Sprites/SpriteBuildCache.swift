import IconrCore
import IconrRender

/// A record kind a level of the rebuild ladder keeps: how its value is sealed under the key
/// it is stored under, and opened again (nil for a damaged record, one of another kind, or
/// one planted under another key: `SealedRecordKind.open`).
protocol RebuildRecord: SealedRecordKind {
    associatedtype Value
    static func sealed(_ value: Value, key: String) -> [UInt8]
    static func opened(_ bytes: [UInt8], key: String) -> Value?
}

/// One level of the rebuild ladder: records of one kind, kept in the disk cache under the
/// level's key. Without a disk cache every lookup misses.
struct RebuildLevel<Record: RebuildRecord>: Sendable {
    let disk: DiskCache?

    /// The value recorded under `key`, when its record is sound.
    func lookup(_ key: String) -> Record.Value? {
        disk?.readBlob(key).flatMap { Record.opened($0, key: key) }
    }

    /// Records `value` under `key`, for a later build; a failure only costs that build.
    func record(_ value: Record.Value, under key: String) {
        disk?.storeBlob(Record.sealed(value, key: key), as: key)
    }
}

/// What a sprite build keeps in the disk cache beside its images: the rebuild ladder, its
/// levels in the order a build asks them, each skipping more work than the ones after it
/// (ARCHITECTURE.md's table: level, key, what it skips, which test proves it).
///
/// 1. `stamps`: the listing's stamps lead to the inputs' key (no file is read);
/// 2. `builds`: the inputs' key to the build recorded for them (nothing is parsed, rendered
///    or composed);
/// 3. `sets`: what the last build of this set of icons made of each icon (only icons whose
///    files changed are drawn);
/// 4. `sheets`: the composition key to the sheets (nothing is packed or encoded);
/// 5. `packings`: the layouts' key to their packing (nothing is packed; the last sheets are
///    patched when they can be);
///
/// and each sheet's deflated bands (`deflateMemo`: only bands whose pixels changed are
/// deflated again).
struct SpriteBuildCache: Sendable {
    let disk: DiskCache?

    var stamps: RebuildLevel<StampRecord> { RebuildLevel(disk: disk) }
    var builds: RebuildLevel<SpriteRecord> { RebuildLevel(disk: disk) }
    var sets: RebuildLevel<SpriteSetRecord> { RebuildLevel(disk: disk) }
    var sheets: RebuildLevel<SheetArchive> { RebuildLevel(disk: disk) }
    var packings: RebuildLevel<PackingArchive> { RebuildLevel(disk: disk) }

    /// The build recorded under `inputsKey` and its sheets, when its references still lead to
    /// the same files and its sheets' archive is sound.
    func recordedBuild(_ inputsKey: String) -> (record: SpriteRecord, sheets: ComposedSheets)? {
        guard let record = builds.lookup(inputsKey), record.isCurrent,
            let sheets = sheets.lookup(record.sheetsKey)
        else { return nil }
        return (record, sheets)
    }

    /// Where sheet encodings keep their deflated bands, under the digest of the encoder's key
    /// (nil without a disk cache).
    var deflateMemo: DeflateMemo? {
        guard let disk else { return nil }
        return DeflateMemo(
            read: { disk.readBlob(SHA256.hex($0.utf8)) }, keep: { disk.storeBlob($1, as: SHA256.hex($0.utf8)) })
    }

    /// Waits until the entries written behind are on disk, for the next run to find them.
    func flush() {
        disk?.flush()
    }
}

/// Every sheet of every ratio, and how many sheets each ratio has.
typealias ComposedSheets = (files: [SpriteSheetFile], count: Int)

extension SpriteRecord: RebuildRecord {
    static func sealed(_ record: SpriteRecord, key: String) -> [UInt8] { record.bytes(key: key) }
    static func opened(_ bytes: [UInt8], key: String) -> SpriteRecord? { SpriteRecord(bytes: bytes, key: key) }
}

extension SpriteSetRecord: RebuildRecord {
    static func sealed(_ record: SpriteSetRecord, key: String) -> [UInt8] { record.bytes(key: key) }
    static func opened(_ bytes: [UInt8], key: String) -> SpriteSetRecord? { SpriteSetRecord(bytes: bytes, key: key) }
}
