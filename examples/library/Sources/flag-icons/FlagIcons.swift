import Foundation
import Iconr

/// `flag-icons [ICONS-DIR] [OUT-DIR]`: renders the flag of ICONS-DIR (default: iconr's bundled
/// icons) in three colors at 2x into OUT-DIR (default: .), and prints each file with its size.
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
        } catch {
            // An IconrError (or a failed write) describes itself in one line naming the file.
            print("error: \(error)")
            exit(1)
        }
    }
}
