/// Stretch areas and the content box from spritezero's element-id convention, for icon sets
/// (Maki-style) that mark them with shapes instead of Mapbox metadata: the box of an element
/// `mapbox-stretch` is a stretch area on both axes, `mapbox-stretch-x` and `mapbox-stretch-y`
/// on one, and `mapbox-content` the content box; any may end in `-N`.
package enum LegacyAreas {
    enum Kind { case stretch, stretchX, stretchY, content, placeholder }

    static func kind(of id: String) -> Kind? {
        var name = Substring(id)
        if let dash = name.lastIndex(of: "-"), !name[name.index(after: dash)...].isEmpty,
            name[name.index(after: dash)...].allSatisfy(\.isNumber)
        {
            name = name[..<dash]
        }
        switch name {
        case "mapbox-stretch": return .stretch
        case "mapbox-stretch-x": return .stretchX
        case "mapbox-stretch-y": return .stretchY
        case "mapbox-content": return .content
        case "mapbox-text-placeholder": return .placeholder
        default: return nil
        }
    }

    /// The areas from element boxes (`x`, `y`, `width`, `height` by id, in the icon's pixels
    /// at scale 1), sorted by start, and what was wrong with the rest (as spritezero checks):
    /// an element of `ids` that has no box or an empty one (hidden, or no geometry), and a
    /// stretch area that overlaps an earlier one on its axis, are left out with a problem each.
    package static func areas(
        ids: [String], boxes: [String: (x: Double, y: Double, width: Double, height: Double)]
    )
        -> (
            stretchX: [StretchArea], stretchY: [StretchArea], content: ContentBox?, placeholder: ContentBox?,
            problems: [String]
        )
    {
        var stretchX: [StretchArea] = [], stretchY: [StretchArea] = []
        var content: ContentBox?, placeholder: ContentBox?
        var problems: [String] = []
        for id in Set(ids).sorted() {
            guard let box = boxes[id], box.width > 0, box.height > 0 else {
                problems.append("element \"\(id)\" draws nothing (hidden, or no geometry): its area is left out")
                continue
            }
            let horizontal = StretchArea(start: box.x, end: box.x + box.width)
            let vertical = StretchArea(start: box.y, end: box.y + box.height)
            switch kind(of: id) {
            case .stretch:
                stretchX.append(horizontal)
                stretchY.append(vertical)
            case .stretchX: stretchX.append(horizontal)
            case .stretchY: stretchY.append(vertical)
            case .content:
                content = ContentBox(left: box.x, top: box.y, right: box.x + box.width, bottom: box.y + box.height)
            case .placeholder:
                placeholder = ContentBox(left: box.x, top: box.y, right: box.x + box.width, bottom: box.y + box.height)
            case nil: break
            }
        }
        func separate(_ areas: [StretchArea], axis: String) -> [StretchArea] {
            var kept: [StretchArea] = []
            for area in areas.sorted(by: { $0.start < $1.start }) {
                if let last = kept.last, area.start < last.end {
                    problems.append(
                        "stretch \(axis) area [\(area.start.shortText), \(area.end.shortText)] overlaps "
                            + "[\(last.start.shortText), \(last.end.shortText)]: it is left out")
                } else {
                    kept.append(area)
                }
            }
            return kept
        }
        return (separate(stretchX, axis: "x"), separate(stretchY, axis: "y"), content, placeholder, problems)
    }
}
