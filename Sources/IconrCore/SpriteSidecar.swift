/// Index metadata given in a JSON file beside an icon (`flag.json` for `flag.svg`), in the
/// icon's units at 1x like its SVG metadata: `content`, `stretchX`, `stretchY`,
/// `placeholder`, `textFitWidth`, `textFitHeight`, `sdf`, `visible`. What it gives replaces
/// what the SVG says.
package struct SpriteSidecar: Hashable, Sendable {
    package var content: ContentBox?
    package var stretchX: [StretchArea]?
    package var stretchY: [StretchArea]?
    package var placeholder: ContentBox?
    package var textFitWidth: String?
    package var textFitHeight: String?
    package var sdf: Bool?
    package var visible: Bool?
    /// Keys it has that mean nothing here (a warning each).
    package var unknownKeys: [String] = []

    /// Parses the file's text; the error names the key and what was expected.
    package init(json bytes: [UInt8]) throws(SidecarError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw SidecarError(message: error.description)
        }
        guard let object = value.objectValue else {
            throw SidecarError(message: "expected a JSON object of index keys")
        }
        func number(_ value: JSONValue, _ key: String) throws(SidecarError) -> Double {
            guard case .number(let number) = value, number.isFinite, number >= 0 else {
                throw SidecarError(message: "\(key): expected numbers >= 0")
            }
            return number
        }
        func box(_ key: String) throws(SidecarError) -> ContentBox? {
            guard let value = object[key] else { return nil }
            guard let items = value.arrayValue, items.count == 4 else {
                throw SidecarError(message: "\(key): expected [left, top, right, bottom]")
            }
            let numbers = try items.map { item throws(SidecarError) in try number(item, key) }
            return ContentBox(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
        }
        func spans(_ key: String) throws(SidecarError) -> [StretchArea]? {
            guard let value = object[key] else { return nil }
            guard let items = value.arrayValue else {
                throw SidecarError(message: "\(key): expected [[start, end], ...]")
            }
            return try items.map { item throws(SidecarError) in
                guard let pair = item.arrayValue, pair.count == 2 else {
                    throw SidecarError(message: "\(key): expected [[start, end], ...]")
                }
                return StretchArea(start: try number(pair[0], key), end: try number(pair[1], key))
            }
        }
        func flag(_ key: String) throws(SidecarError) -> Bool? {
            guard let value = object[key] else { return nil }
            guard case .bool(let flag) = value else { throw SidecarError(message: "\(key): expected true or false") }
            return flag
        }
        func fit(_ key: String) throws(SidecarError) -> String? {
            guard let value = object[key] else { return nil }
            guard let text = value.stringValue, SpriteIndexEntry.textFitValues.contains(text) else {
                throw SidecarError(
                    message: "\(key): expected one of \(SpriteIndexEntry.textFitValues.joined(separator: ", "))")
            }
            return text
        }
        content = try box("content")
        placeholder = try box("placeholder")
        stretchX = try spans("stretchX")
        stretchY = try spans("stretchY")
        textFitWidth = try fit("textFitWidth")
        textFitHeight = try fit("textFitHeight")
        sdf = try flag("sdf")
        visible = try flag("visible")
        let known: Set = [
            "content", "placeholder", "stretchX", "stretchY", "textFitWidth", "textFitHeight", "sdf", "visible",
        ]
        unknownKeys = object.keys.filter { !known.contains($0) }.sorted()
    }
}

/// Why a sidecar file could not be used.
package struct SidecarError: Error, Hashable, Sendable, CustomStringConvertible {
    package let message: String
    package var description: String { message }

    package init(message: String) {
        self.message = message
    }
}
