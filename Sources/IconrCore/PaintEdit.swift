/// A place in a template's bytes where a paint color is declared (or, for an initial
/// value, could be declared), which a parameter may rewrite.
struct PaintEdit: Sendable {
    enum Piece: Sendable {
        case literal([UInt8])
        /// A color that a parameter with this default RGB replaces; `original` is what is
        /// written when no parameter applies.
        case color(rgb: UInt32, original: [UInt8])
    }

    /// The bytes this edit replaces; empty for an insertion.
    var range: Range<Int>
    var pieces: [Piece]
    /// The element and paint a user stylesheet would set instead (`SVGTemplate.Restyling`):
    /// a presentation attribute's color, or an initial value; nil for other edits.
    var target: RestyleTarget?

    func applies(to replacements: [UInt32: [UInt8]]) -> Bool {
        pieces.contains { piece in
            if case .color(let rgb, _) = piece { return replacements[rgb] != nil }
            return false
        }
    }
}

/// Where a user stylesheet rule would set a paint: the element (by its attribute insertion
/// point, where its marker goes), the property, and the attribute's value in the template's
/// bytes (nil for an initial value, black).
struct RestyleTarget: Sendable {
    var element: Int
    var property: PaintProperty
    var value: Range<Int>?
}

/// The paint properties a parameter reaches. `color` is among them because `currentColor`
/// resolves to it.
enum PaintProperty: String, CaseIterable {
    case fill, stroke, stopColor = "stop-color", color

    init?(name: String) {
        self.init(rawValue: name)
    }
}

extension PaintEdit {
    /// The color part of a paint value: the whole value (`#000`, `black`), or the fallback
    /// of a paint server reference (`url(#g) black`). Ranges are in `bytes`.
    static func colorToken(in bytes: [UInt8], value range: Range<Int>) -> (range: Range<Int>, color: Color)? {
        let text = String(decoding: bytes[range], as: UTF8.self)
        if text.lowercased().hasPrefix("url(") {
            guard let close = bytes[range].firstIndex(of: UInt8(ascii: ")")) else { return nil }
            let fallback = CSSDeclarations.trimmed(bytes, (close + 1)..<range.upperBound)
            guard !fallback.isEmpty,
                let color = Color(css: String(decoding: bytes[fallback], as: UTF8.self))
            else { return nil }
            return (fallback, color)
        }
        guard let color = Color(css: text) else { return nil }
        return (range, color)
    }

    /// Edits for a stretch of text whose raw bytes equal its decoded bytes: each color
    /// token is replaced in place.
    static func inPlace(tokens: [(range: Range<Int>, color: Color)], raw: [UInt8], offset: Int) -> [PaintEdit] {
        tokens.map { token in
            PaintEdit(
                range: (token.range.lowerBound + offset)..<(token.range.upperBound + offset),
                pieces: [.color(rgb: token.color.rgb, original: Array(raw[token.range]))])
        }
    }

    /// One edit that rewrites a whole stretch of text holding character references: the
    /// decoded text is written back escaped, with its color tokens replaceable.
    static func rewritingWhole(
        rawRange: Range<Int>, decoded: [UInt8], tokens: [(range: Range<Int>, color: Color)],
        escape: (ArraySlice<UInt8>) -> [UInt8]
    ) -> PaintEdit? {
        guard !tokens.isEmpty else { return nil }
        var pieces: [Piece] = []
        var cursor = 0
        for token in tokens.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            pieces.append(.literal(escape(decoded[cursor..<token.range.lowerBound])))
            pieces.append(.color(rgb: token.color.rgb, original: escape(decoded[token.range])))
            cursor = token.range.upperBound
        }
        pieces.append(.literal(escape(decoded[cursor...])))
        return PaintEdit(range: rawRange, pieces: pieces)
    }

    /// An attribute `name="…"` inserted where the property would otherwise take its
    /// initial value, black.
    static func insertion(of property: PaintProperty, at offset: Int) -> PaintEdit {
        PaintEdit(
            range: offset..<offset,
            pieces: [
                .literal(Array(" \(property.rawValue)=\"".utf8)),
                .color(rgb: Color.black.rgb, original: []),
                .literal([UInt8(ascii: "\"")]),
            ],
            target: RestyleTarget(element: offset, property: property, value: nil))
    }
}

/// Escapes text for an XML attribute value quoted with `quote`, or for character data.
func xmlEscaped(_ text: ArraySlice<UInt8>, quote: UInt8?) -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(text.count)
    for byte in text {
        switch byte {
        case UInt8(ascii: "&"): result += Array("&amp;".utf8)
        case UInt8(ascii: "<"): result += Array("&lt;".utf8)
        case UInt8(ascii: ">") where quote == nil: result += Array("&gt;".utf8)
        case UInt8(ascii: "\"") where quote == UInt8(ascii: "\""): result += Array("&quot;".utf8)
        case UInt8(ascii: "'") where quote == UInt8(ascii: "'"): result += Array("&apos;".utf8)
        default: result.append(byte)
        }
    }
    return result
}
