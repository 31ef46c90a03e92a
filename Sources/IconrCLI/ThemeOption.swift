import Iconr
import IconrCore

/// `--theme FILE|NAME`: a theme (`Theme`) from a JSON file, or a built-in one by name.
enum ThemeOption {
    /// The option, repeatable where a command makes one output per theme.
    static func spec(repeatable: Bool, help: String) -> OptionSpec {
        OptionSpec(
            names: ["--theme"], valueName: "FILE|NAME", help: help, isRepeatable: repeatable,
            values: Theme.builtInNames)
    }

    /// The themes `values` name: `grayscale`, or a JSON file (named by its `name`, else by
    /// the file's name). Two of one name are an error: their outputs would collide.
    static func read(_ values: [String]) throws -> [Theme] {
        var themes: [Theme] = []
        for value in values {
            if let theme = Theme.builtIn(value) {
                themes.append(theme)
                continue
            }
            let bytes = try IconrError.reading(value)
            let file = value.split(separator: "/").last.map(String.init) ?? value
            let name = file.hasSuffix(".json") ? String(file.dropLast(5)) : file
            do {
                themes.append(try Theme(json: bytes, fallbackName: name))
            } catch {
                throw ThemeError(message: "\(value): \(error.message)")
            }
        }
        var seen = Set<String>()
        for theme in themes where !seen.insert(theme.name).inserted {
            throw ThemeError(message: "two themes are named \"\(theme.name)\": their outputs would be the same files")
        }
        return themes
    }
}
