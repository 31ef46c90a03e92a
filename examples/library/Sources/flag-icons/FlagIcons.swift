import Foundation
import Iconr
import IconrStyle

/// `flag-icons [ICONS-DIR] [OUT-DIR]`: renders the flag of ICONS-DIR (default: iconr's bundled
/// icons) in three colors at 2x into OUT-DIR (default: .), then the flag a style layer shows
/// for a feature whose `flagColor` is gold, and prints each file with its size.
@main
struct FlagIcons {
    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        let icons = arguments.first ?? "../../icons"
        let output = arguments.dropFirst().first ?? "."
        let library = IconLibrary(directory: icons)
        do {
            for color in ["#800080", "teal", "ff8000"] {
                let flag = try await library.icon(named: "flag", params: ["flag_color": color], scale: 2)
                let path = "\(output)/flag-\(color.filter { $0.isLetter || $0.isNumber })@2x.png"
                try Data(flag.png).write(to: URL(fileURLWithPath: path))
                print("\(path) \(flag.size) at \(flag.pixelRatio)x")
            }
            // The style engine (the IconrStyle product): the color comes from the feature.
            let style = """
                {"version": 8, "sources": {}, "layers": [{"id": "flags", "type": "symbol", "layout": {
                  "icon-image": ["image", "flag", {"params": {"flag_color": ["get", "flagColor"]}}]}}]}
                """
            let layers = try StyleDocument(bytes: Array(style.utf8), file: "style.json").layers
            let feature = ExpressionFeature(properties: ["flagColor": .string("gold")])
            if let layer = layers.first,
                let flag = try library.icon(for: feature, layer: layer, zoom: 14, pixelRatio: 2)
            {
                let path = "\(output)/flag-from-style@2x.png"
                try Data(flag.png).write(to: URL(fileURLWithPath: path))
                print("\(path) \(flag.key) \(flag.size) at \(flag.pixelRatio)x")
            }
        } catch {
            // An IconrError (or a failed write) describes itself in one line naming the file.
            print("error: \(error)")
            exit(1)
        }
    }
}
