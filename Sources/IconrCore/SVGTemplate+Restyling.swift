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
    package struct Restyling: Sendable {
        /// One edited paint: its element's marker and property, the default color a
        /// parameter replaces, and the value as declared with the range of that color in it.
        struct Rule: Sendable {
            var marker: Int
            var property: PaintProperty
            var rgb: UInt32
            var value: [UInt8]
            var token: Range<Int>
        }

        /// The marked document, for librsvg.
        package let bytes: [UInt8]
        let rules: [Rule]

        /// The user stylesheet for `parameters`: every edited paint, replaced or as declared.
        package func stylesheet(_ parameters: ResolvedParameters) -> [UInt8] {
            var css: [UInt8] = []
            css.reserveCapacity(rules.count * 48)
            for rule in rules {
                css += Array("[data-iconr=\"\(rule.marker)\"]{\(rule.property.rawValue):".utf8)
                if let color = parameters.replacements[rule.rgb] {
                    css += rule.value[..<rule.token.lowerBound]
                    css += Array(color.cssString.utf8)
                    css += rule.value[rule.token.upperBound...]
                } else {
                    css += rule.value
                }
                css += Array(" !important}\n".utf8)
            }
            return css
        }
    }

    /// The restyling of this template, or nil when its parameters must be applied by
    /// rewriting it (see `Restyling`), or it has none. Worked out when asked (a render), not
    /// while scanning: a cache hit never pays for it.
    package var restyling: Restyling? {
        guard !restylingBlocked, !parameters.isEmpty, externalReferences.isEmpty else { return nil }
        // Not `firstRange(of:)`: it cost 1.4 million instructions a search here, most of them
        // the Swift runtime making its searcher's types.
        let declaredElsewhere = [Array("<?xml-stylesheet".utf8), Array("data-iconr".utf8)].contains {
            bytes.firstOffset(of: $0) != nil
        }
        guard !declaredElsewhere else { return nil }
        let defaults = Set(parameters.map(\.defaultColor.rgb))
        var live: [(element: Int, rule: Restyling.Rule)] = []
        for edit in paintEdits {
            let colors = edit.pieces.compactMap { piece -> UInt32? in
                if case .color(let rgb, _) = piece { return rgb }
                return nil
            }
            guard colors.contains(where: defaults.contains) else { continue }
            // Every edit a parameter reaches must be one a rule can make.
            guard let target = edit.target, colors.count == 1 else { return nil }
            var rule = Restyling.Rule(
                marker: 0, property: target.property, rgb: colors[0], value: Array("black".utf8), token: 0..<5)
            if let valueRange = target.value {
                rule.value = Array(bytes[valueRange])
                rule.token =
                    (edit.range.lowerBound - valueRange.lowerBound)..<(edit.range.upperBound - valueRange.lowerBound)
                // A color that is not the whole value (a paint server's fallback) is rewritten.
                guard rule.token == CSSDeclarations.trimmed(rule.value, 0..<rule.value.count) else { return nil }
            }
            live.append((target.element, rule))
        }
        guard !live.isEmpty else { return nil }
        let elements = Array(Set(live.map(\.element))).sorted()
        var markers: [Int: Int] = [:]
        var marked: [UInt8] = []
        marked.reserveCapacity(bytes.count + elements.count * 20)
        var cursor = 0
        for (marker, element) in elements.enumerated() {
            markers[element] = marker
            marked += bytes[cursor..<element]
            marked += Array(" data-iconr=\"\(marker)\"".utf8)
            cursor = element
        }
        marked += bytes[cursor...]
        return Restyling(
            bytes: marked,
            rules: live.map { element, rule in
                var rule = rule
                rule.marker = markers[element] ?? 0
                return rule
            })
    }
}
