/// A paint edit that a user stylesheet on the loaded template can make instead of a new
/// document: a presentation attribute's color, or an initial value an attribute would be
/// inserted for (see `SVGTemplate.Restyling`).
struct RestyleEdit: Sendable {
    /// The element's attribute insertion point: where its marker goes, and what names it.
    var element: Int
    var property: PaintProperty
    /// The default color a parameter replaces.
    var rgb: UInt32
    /// The value as declared (`black`, the initial value, for an insertion), and the range
    /// of its color in it.
    var value: [UInt8]
    var token: Range<Int>
}

extension RestyleEdit {
    /// A property left at its initial value, black, where an attribute would be inserted.
    static func initialValue(of property: PaintProperty, element: Int) -> RestyleEdit {
        RestyleEdit(
            element: element, property: property, rgb: Color.black.rgb, value: Array("black".utf8), token: 0..<5)
    }
}

extension SVGTemplate {
    /// The template with a marker attribute (`data-iconr="N"`) on each element whose paint a
    /// parameter reaches, and the user stylesheet that gives those paints a variant's
    /// colors: librsvg loads the marked document once and draws every variant after
    /// `rsvg_handle_set_stylesheet`, instead of parsing a new document per variant (the
    /// flag: 58 us against 127 us a render, in C).
    ///
    /// Only where that is exact: each rule is `!important` in the user origin, which wins
    /// over every author declaration, so it must replace only what the rewritten attribute
    /// would have decided. That holds when the edited paints are presentation attributes (or
    /// initial values) that nothing else overrides: no `<style>` sheet or `xml-stylesheet`,
    /// no `style` attribute declaring a paint property, no character references or `url()`
    /// in an edited value, no other file drawn, no `data-iconr` attribute of the document's
    /// own. Other templates are rewritten (`apply`) as before. A stylesheet sets every edited
    /// paint, the defaults included, since librsvg keeps what an earlier one set.
    public struct Restyling: Sendable {
        /// The marked document, for librsvg.
        public let bytes: [UInt8]
        /// The edits a parameter reaches, with their markers.
        let rules: [(marker: Int, edit: RestyleEdit)]

        /// The user stylesheet for `parameters`: every edited paint, replaced or as declared.
        public func stylesheet(_ parameters: ResolvedParameters) -> [UInt8] {
            var css: [UInt8] = []
            css.reserveCapacity(rules.count * 48)
            for (marker, edit) in rules {
                css += Array("[data-iconr=\"\(marker)\"]{\(edit.property.rawValue):".utf8)
                if let color = parameters.replacements[edit.rgb] {
                    css += edit.value[..<edit.token.lowerBound]
                    css += Array(color.cssString.utf8)
                    css += edit.value[edit.token.upperBound...]
                } else {
                    css += edit.value
                }
                css += Array(" !important}\n".utf8)
            }
            return css
        }
    }

    /// The restyling of this template, or nil when its parameters must be applied by
    /// rewriting it (see `Restyling`), or it has none.
    public var restyling: Restyling? {
        guard let edits = restyleEdits, !parameters.isEmpty, externalReferences.isEmpty else { return nil }
        let defaults = Set(parameters.map(\.defaultColor.rgb))
        let live = edits.filter { defaults.contains($0.rgb) }
        guard !live.isEmpty else { return nil }
        let elements = Array(Set(live.map(\.element))).sorted()
        let markers = Dictionary(uniqueKeysWithValues: elements.enumerated().map { ($1, $0) })
        var marked: [UInt8] = []
        marked.reserveCapacity(bytes.count + elements.count * 20)
        var cursor = 0
        for (marker, element) in elements.enumerated() {
            marked += bytes[cursor..<element]
            marked += Array(" data-iconr=\"\(marker)\"".utf8)
            cursor = element
        }
        marked += bytes[cursor...]
        return Restyling(bytes: marked, rules: live.compactMap { edit in markers[edit.element].map { ($0, edit) } })
    }
}
