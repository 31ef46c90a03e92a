import IconrCore
import IconrRender

/// What a sprite build keeps in the disk cache beside the images, in four levels, each
/// skipping more work: the listing's stamps lead to the inputs' key (`SpriteInputs`' stamp
/// record: no file is read); the inputs' key to the build recorded for them (`SpriteRecord`:
/// nothing is parsed, rendered or composed); the composition key to the sheets
/// (`SheetArchive`: nothing is packed or encoded); and, for images that changed but kept
/// their sizes, the layouts' key to their packing (`PackingArchive`: nothing is packed).
/// Beside them, what the last build of each set of icons made of each icon (`SpriteSetRecord`:
/// only icons whose files changed are drawn, into the last sheets), and each sheet's deflated
/// bands (`DeflateMemo`: only bands whose pixels changed are deflated again). Each entry names
/// the key it is stored under and is checked when read. Without a disk cache every lookup
/// misses.
struct SpriteBuildCache: Sendable {
    let disk: DiskCache?

    /// The inputs' key kept under the listing's `stampKey`.
    func inputsKey(stampKey: String) -> String? {
        disk?.readBlob(stampKey).flatMap { SpriteInputs.key(inStampRecord: $0, stampKey: stampKey) }
    }

    /// Keeps the inputs' key under the stamps the listing saw before the files were read: a
    /// file written since has other stamps, and is read again next time.
    func keep(inputsKey: String, stampKey: String) {
        disk?.storeBlob(SpriteInputs.stampRecord(stampKey: stampKey, key: inputsKey), as: stampKey)
    }

    /// The build recorded under `inputsKey` and its sheets, when its references still lead to
    /// the same files and its sheets' archive is sound.
    func recordedBuild(_ inputsKey: String) -> (record: SpriteRecord, sheets: ComposedSheets)? {
        guard let record = disk?.readBlob(inputsKey).flatMap({ SpriteRecord(bytes: $0, key: inputsKey) }),
            record.isCurrent, let sheets = sheets(record.sheetsKey)
        else { return nil }
        return (record, sheets)
    }

    /// Keeps a whole build's record under its inputs' key.
    func keep(_ record: SpriteRecord, inputsKey: String) {
        disk?.storeBlob(record.bytes(key: inputsKey), as: inputsKey)
    }

    /// What the last build of the set `setKey` (`SpriteSetRecord.key`) made of each icon.
    func setRecord(_ setKey: String) -> SpriteSetRecord? {
        disk?.readBlob(setKey).flatMap { SpriteSetRecord(bytes: $0, key: setKey) }
    }

    /// Keeps what a build of the set `setKey` made of each icon, for the next build of it.
    func keep(_ record: SpriteSetRecord, setKey: String) {
        disk?.storeBlob(record.bytes(key: setKey), as: setKey)
    }

    /// The sheets composed before under `compositionKey`.
    func sheets(_ compositionKey: String) -> ComposedSheets? {
        disk?.readBlob(compositionKey).flatMap { SheetArchive.sheets(from: $0, key: compositionKey) }
    }

    /// Keeps composed sheets under their composition key.
    func keep(_ sheets: ComposedSheets, compositionKey: String) {
        disk?.storeBlob(SheetArchive.bytes(of: sheets, key: compositionKey), as: compositionKey)
    }

    /// The packing found before for the layouts named by `layoutsKey`.
    func packing(_ layoutsKey: String) -> Packing? {
        disk?.readBlob(layoutsKey).flatMap { PackingArchive.packing(from: $0, key: layoutsKey) }
    }

    /// Keeps a packing under its layouts' key.
    func keep(_ packing: Packing, layoutsKey: String) {
        disk?.storeBlob(PackingArchive.bytes(of: packing, key: layoutsKey), as: layoutsKey)
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
