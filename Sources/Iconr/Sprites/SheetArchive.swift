import IconrCore

/// Composed sprite sheets as bytes, for the disk cache: a warm rebuild of unchanged icons
/// reads its sheets back instead of packing and encoding them again. Each sheet is a JSON
/// header (ratio, sheet, size, counts, fill), its index JSON (minified, then as written by
/// default) and its PNG, length-prefixed; sealed (`SealedRecordKind`: the `sheets` level of
/// the rebuild ladder) under the composition key it was made for, so an archive planted
/// under another key's name is never served.
enum SheetArchive: RebuildRecord {
    static let kindLine = "iconr sheets 3\n"

    static func sealed(_ sheets: ComposedSheets, key: String) -> [UInt8] {
        var body = RecordWriter()
        func field(_ bytes: [UInt8]) { body.data(bytes) }
        field(Array("\(sheets.count)".utf8))
        for file in sheets.files {
            let header = JSONValue.object([
                "ratio": .number(file.ratio), "sheet": .number(Double(file.sheet)),
                "width": .number(Double(file.size.width)),
                "height": .number(Double(file.size.height)), "ids": .number(Double(file.ids)),
                "images": .number(Double(file.images)),
                "fill": .number(file.fill), "packing": .number(file.packing),
            ])
            field(Array(header.serialized.utf8))
            field(file.json(minified: true))
            field(file.json(minified: false))
            field(file.png)
        }
        return seal(body.bytes, key: key)
    }

    /// The sheets in `bytes`, or nil when they are not a sound archive.
    static func opened(_ bytes: [UInt8], key: String) -> ComposedSheets? {
        // The body is a slice of `bytes` (a sheet archive can be megabytes): hashed in place,
        // and each field copied out once.
        guard let body = open(bytes, key: key) else { return nil }
        var reader = RecordReader(bytes: bytes, offset: body.startIndex)
        func field() -> [UInt8]? { reader.data() }
        guard let countField = field(),
            let count = Int(String(decoding: countField, as: UTF8.self))
        else { return nil }
        var files: [SpriteSheetFile] = []
        while !reader.isAtEnd {
            guard let headerBytes = field(), let indexBytes = field(), let prettyIndex = field(), let png = field(),
                let header = try? JSONValue.parse(headerBytes)
            else { return nil }
            func number(_ key: String) -> Double? {
                if case .number(let value)? = header[key] { return value }
                return nil
            }
            // A count or a size: whole and in range (`Int(_:)` of any other number traps).
            func whole(_ key: String) -> Int? {
                number(key).flatMap { $0 >= 0 && $0 <= Double(Int32.max) ? Int(exactly: $0) : nil }
            }
            guard let ratio = number("ratio"), let sheet = whole("sheet"), let width = whole("width"),
                let height = whole("height"), let ids = whole("ids"), let images = whole("images"),
                let fill = number("fill"), let packing = number("packing")
            else { return nil }
            files.append(
                SpriteSheetFile(
                    ratio: ratio, sheet: sheet, png: png, size: PixelSize(width: width, height: height), ids: ids,
                    images: images, fill: fill, packing: packing, index: (prettyIndex, indexBytes)))
        }
        return (files, count)
    }
}
