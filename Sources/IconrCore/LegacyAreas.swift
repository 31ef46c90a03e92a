/// Stretch areas and the content box from spritezero's element-id convention, for icon sets
/// (Maki-style) that mark them with shapes instead of Mapbox metadata: the box of an element
/// `mapbox-stretch` is a stretch area on both axes, `mapbox-stretch-x` and `mapbox-stretch-y`
/// on one, and `mapbox-content` the content box; any may end in `-N`.
public enum LegacyAreas {
    enum Kind { case stretch, stretchX, stretchY, content }

    static func kind(of id: String) -> Kind? {
        var name = Substring(id)
        if let dash = name.lastIndex(of: "-"), !name[name.index(after: dash)...].isEmpty,
           name[name.index(after: dash)...].allSatisfy(\.isNumber) {
            name = name[..<dash]
        }
        switch name {
        case "mapbox-stretch": return .stretch
        case "mapbox-stretch-x": return .stretchX
        case "mapbox-stretch-y": return .stretchY
        case "mapbox-content": return .content
        default: return nil
        }
    }

    /// The areas from element boxes (`x`, `y`, `width`, `height` by id, in the icon's pixels
    /// at scale 1), sorted by start.
    public static func areas(boxes: [String: (x: Double, y: Double, width: Double, height: Double)])
        -> (stretchX: [StretchArea], stretchY: [StretchArea], content: ContentBox?) {
        var stretchX: [StretchArea] = [], stretchY: [StretchArea] = []
        var content: ContentBox?
        for id in boxes.keys.sorted() {
            let box = boxes[id]!
            let horizontal = StretchArea(start: box.x, end: box.x + box.width)
            let vertical = StretchArea(start: box.y, end: box.y + box.height)
            switch kind(of: id) {
            case .stretch: stretchX.append(horizontal); stretchY.append(vertical)
            case .stretchX: stretchX.append(horizontal)
            case .stretchY: stretchY.append(vertical)
            case .content: content = ContentBox(left: box.x, top: box.y, right: box.x + box.width, bottom: box.y + box.height)
            case nil: break
            }
        }
        return (stretchX.sorted { $0.start < $1.start }, stretchY.sorted { $0.start < $1.start }, content)
    }
}
