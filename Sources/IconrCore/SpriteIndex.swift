/// One image of a sprite index (`sprite.json`), in sheet pixels at the sheet's ratio.
public struct SpriteIndexEntry: Hashable, Sendable {
    /// Where the image is in its sheet, in sheet pixels.
    public var rect: PixelRect
    /// The sheet's pixel ratio (2 for `@2x` sheets).
    public var pixelRatio: Double
    /// Whether the image is a signed distance field (drawn in any color by the renderer).
    public var sdf: Bool
    /// Where text goes when the icon is fitted to text, in image pixels.
    public var content: ContentBox?
    /// The horizontal spans that stretch, in image pixels.
    public var stretchX: [StretchArea]
    /// The vertical spans that stretch, in image pixels.
    public var stretchY: [StretchArea]
    /// MapLibre's `textFitWidth` / `textFitHeight`: `stretchOrShrink`, `stretchOnly` or `proportional`.
    public var textFitWidth: String?
    /// MapLibre's `textFitHeight`: `stretchOrShrink`, `stretchOnly` or `proportional`.
    public var textFitHeight: String?
    /// spritezero's text placeholder box (`mapbox-text-placeholder`).
    public var placeholder: ContentBox?
    /// spritezero's `visible` flag, when an icon sets it.
    public var visible: Bool?

    /// Appends the entry as the index writes it: MapLibre's keys in sorted order, absent
    /// ones left out, numbers as `JSONValue` writes them (`", "` and `": "` unless `minified`).
    /// Written directly, not through a `JSONValue`: building one per image was a tenth of a
    /// rebuild's CPU time (Temaki, one icon changed).
    package func writeJSON(to bytes: inout [UInt8], minified: Bool) {
        var first = true
        func key(_ name: StaticString) {
            if !first { bytes += minified ? [0x2C] : [0x2C, 0x20] }
            first = false
            bytes.append(0x22)
            bytes += UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            bytes += minified ? [0x22, 0x3A] : [0x22, 0x3A, 0x20]
        }
        func number(_ value: Double) { bytes += (value.isFinite ? value.javaScriptText : "null").utf8 }
        func numbers(_ values: [Double]) {
            bytes.append(0x5B)
            for (index, value) in values.enumerated() {
                if index > 0 { bytes += minified ? [0x2C] : [0x2C, 0x20] }
                number(value)
            }
            bytes.append(0x5D)
        }
        func spans(_ name: StaticString, _ areas: [StretchArea]) {
            guard !areas.isEmpty else { return }
            key(name)
            bytes.append(0x5B)
            for (index, area) in areas.enumerated() {
                if index > 0 { bytes += minified ? [0x2C] : [0x2C, 0x20] }
                numbers([area.start, area.end])
            }
            bytes.append(0x5D)
        }
        bytes.append(0x7B)
        if let content {
            key("content")
            numbers([content.left, content.top, content.right, content.bottom])
        }
        key("height")
        number(Double(rect.height))
        key("pixelRatio")
        number(pixelRatio)
        if let placeholder {
            key("placeholder")
            numbers([placeholder.left, placeholder.top, placeholder.right, placeholder.bottom])
        }
        if sdf {
            key("sdf")
            bytes += "true".utf8
        }
        spans("stretchX", stretchX)
        spans("stretchY", stretchY)
        if let textFitHeight {
            key("textFitHeight")
            bytes += JSONValue.quoted(textFitHeight).utf8
        }
        if let textFitWidth {
            key("textFitWidth")
            bytes += JSONValue.quoted(textFitWidth).utf8
        }
        if let visible {
            key("visible")
            bytes += (visible ? "true" : "false").utf8
        }
        key("width")
        number(Double(rect.width))
        key("x")
        number(Double(rect.x))
        key("y")
        number(Double(rect.y))
        bytes.append(0x7D)
    }

    /// The values MapLibre accepts for `textFitWidth` and `textFitHeight`.
    public static let textFitValues = ["stretchOrShrink", "stretchOnly", "proportional"]

    /// An entry; metadata not given is left out of the index.
    public init(
        rect: PixelRect, pixelRatio: Double, sdf: Bool = false, content: ContentBox? = nil,
        stretchX: [StretchArea] = [], stretchY: [StretchArea] = [], textFitWidth: String? = nil,
        textFitHeight: String? = nil, placeholder: ContentBox? = nil, visible: Bool? = nil
    ) {
        self.rect = rect
        self.pixelRatio = pixelRatio
        self.sdf = sdf
        self.content = content
        self.stretchX = stretchX
        self.stretchY = stretchY
        self.textFitWidth = textFitWidth
        self.textFitHeight = textFitHeight
        self.placeholder = placeholder
        self.visible = visible
    }

    /// The entry with each piece of metadata that does not fit the image left out, and why
    /// (as spritezero checks: areas positive, ordered, not overlapping, inside the image).
    public func validated() -> (entry: SpriteIndexEntry, problems: [String]) {
        var entry = self
        var problems: [String] = []
        while let problem = entry.metadataProblem {
            problems.append(problem)
            // Leave out the first field that fails, then look again.
            var probe = entry
            probe.stretchX = []
            if probe.metadataProblem != problem {
                entry.stretchX = []
                continue
            }
            probe = entry
            probe.stretchY = []
            if probe.metadataProblem != problem {
                entry.stretchY = []
                continue
            }
            probe = entry
            probe.content = nil
            if probe.metadataProblem != problem {
                entry.content = nil
                continue
            }
            probe = entry
            probe.placeholder = nil
            if probe.metadataProblem != problem {
                entry.placeholder = nil
                continue
            }
            entry.textFitWidth =
                SpriteIndexEntry.textFitValues.contains(entry.textFitWidth ?? "") ? entry.textFitWidth : nil
            entry.textFitHeight =
                SpriteIndexEntry.textFitValues.contains(entry.textFitHeight ?? "") ? entry.textFitHeight : nil
            if entry.metadataProblem == problem { break }
        }
        return (entry, problems)
    }

    /// Why the metadata does not fit the image, or nil: stretch areas and the content box
    /// must be ordered and lie inside the image.
    public var metadataProblem: String? {
        let width = Double(rect.width), height = Double(rect.height)
        for (axis, areas, limit) in [("stretchX", stretchX, width), ("stretchY", stretchY, height)] {
            var previousEnd = 0.0
            for area in areas {
                guard area.start >= previousEnd, area.end > area.start, area.end <= limit + 1e-9 else {
                    return "\(axis) [\(area.start.shortText), \(area.end.shortText)] is not ordered inside the "
                        + "\(rect.width)x\(rect.height) image"
                }
                previousEnd = area.end
            }
        }
        for (name, box) in [("content", content), ("placeholder", placeholder)] {
            guard let box,
                !(box.left >= 0 && box.top >= 0 && box.right <= width + 1e-9
                    && box.bottom <= height + 1e-9 && box.left <= box.right && box.top <= box.bottom)
            else { continue }
            return
                "\(name) [\(box.left.shortText), \(box.top.shortText), \(box.right.shortText), \(box.bottom.shortText)] "
                + "is not inside the \(rect.width)x\(rect.height) image"
        }
        for (name, value) in [("textFitWidth", textFitWidth), ("textFitHeight", textFitHeight)] {
            if let value, !Self.textFitValues.contains(value) {
                return "\(name) \"\(value)\" is not one of \(Self.textFitValues.joined(separator: ", "))"
            }
        }
        return nil
    }
}

extension SpriteIndexEntry {
    /// The entry one image has in index JSON (`writeJSON`); nil when `json` is not one, or
    /// its rectangle is not of whole numbers.
    package init?(json value: JSONValue) {
        func number(_ key: String) -> Double? {
            if case .number(let number)? = value[key] { return number }
            return nil
        }
        func whole(_ key: String) -> Int? {
            guard let number = number(key), abs(number) < 1e9 else { return nil }
            return Int(exactly: number)
        }
        func numbers(_ json: JSONValue?) -> [Double]? {
            json?.arrayValue?.compactMap { if case .number(let number) = $0 { number } else { nil } }
        }
        func box(_ key: String) -> ContentBox? {
            guard let values = numbers(value[key]), values.count == 4 else { return nil }
            return ContentBox(left: values[0], top: values[1], right: values[2], bottom: values[3])
        }
        func spans(_ key: String) -> [StretchArea] {
            (value[key]?.arrayValue ?? []).compactMap { numbers($0) }.filter { $0.count == 2 }
                .map { StretchArea(start: $0[0], end: $0[1]) }
        }
        func flag(_ key: String) -> Bool? {
            if case .bool(let flag)? = value[key] { return flag }
            return nil
        }
        guard let x = whole("x"), let y = whole("y"), let width = whole("width"), let height = whole("height"),
            let ratio = number("pixelRatio")
        else { return nil }
        self.init(
            rect: PixelRect(x: x, y: y, width: width, height: height), pixelRatio: ratio,
            sdf: flag("sdf") ?? false, content: box("content"), stretchX: spans("stretchX"),
            stretchY: spans("stretchY"),
            textFitWidth: value["textFitWidth"]?.stringValue, textFitHeight: value["textFitHeight"]?.stringValue,
            placeholder: box("placeholder"), visible: flag("visible"))
    }
}

/// Writes sprite index JSON the same way every time: ids sorted, keys sorted, numbers in
/// their shortest form. Readable (one image a line) or minified.
package enum SpriteIndex {
    package static func json(_ entries: [String: SpriteIndexEntry], minified: Bool) -> [UInt8] {
        guard !entries.isEmpty else { return Array((minified ? "{}" : "{}\n").utf8) }
        var bytes: [UInt8] = [0x7B]
        bytes.reserveCapacity(entries.count * 80)
        for (index, id) in entries.keys.sorted().enumerated() {
            if index > 0 { bytes.append(0x2C) }
            if !minified { bytes += [0x0A, 0x20, 0x20] }
            bytes += JSONValue.quoted(id).utf8
            bytes += minified ? [0x3A] : [0x3A, 0x20]
            entries[id]?.writeJSON(to: &bytes, minified: minified)
        }
        bytes += minified ? [0x7D] : [0x0A, 0x7D, 0x0A]
        return bytes
    }

    /// The entries of index JSON as `json(_:minified:)` writes it; nil when it is not one.
    package static func entries(fromJSON bytes: [UInt8]) -> [String: SpriteIndexEntry]? {
        guard let object = (try? JSONValue.parse(bytes))?.objectValue else { return nil }
        var entries: [String: SpriteIndexEntry] = [:]
        for (id, value) in object {
            guard let entry = SpriteIndexEntry(json: value) else { return nil }
            entries[id] = entry
        }
        return entries
    }
}
