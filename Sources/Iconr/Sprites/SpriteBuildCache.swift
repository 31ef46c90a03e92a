/// What a sprite build keeps in the disk cache beside the images, in three levels, each
/// skipping more work: the listing's stamps lead to the inputs' key (`SpriteInputs`' stamp
/// record: no file is read); the inputs' key to the build recorded for them (`SpriteRecord`:
/// nothing is parsed, rendered or composed); the composition key to the sheets
/// (`SheetArchive`: nothing is packed or encoded). Each entry names the key it is stored
/// under and is checked when read. Without a disk cache every lookup misses.
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

    /// The sheets composed before under `compositionKey`.
    func sheets(_ compositionKey: String) -> ComposedSheets? {
        disk?.readBlob(compositionKey).flatMap { SheetArchive.sheets(from: $0, key: compositionKey) }
    }

    /// Keeps composed sheets under their composition key.
    func keep(_ sheets: ComposedSheets, compositionKey: String) {
        disk?.storeBlob(SheetArchive.bytes(of: sheets, key: compositionKey), as: compositionKey)
    }

    /// Waits until the entries written behind are on disk, for the next run to find them.
    func flush() {
        disk?.flush()
    }
}

/// Every sheet of every ratio, and how many sheets each ratio has.
typealias ComposedSheets = (files: [SpriteSheetFile], count: Int)
