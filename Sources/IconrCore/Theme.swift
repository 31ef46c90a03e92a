/// A recoloring of a whole icon set, for one flavor of a basemap (a dark map's white icons, a
/// black and white map's gray ones): every paint color an icon declares (presentation
/// attributes, `style` attributes, `<style>` sheets, and the initial black of `fill`, `color`
/// and `stop-color`) becomes the theme's color for it. It works on icons with and without
/// parameters; for those with, a parameter's default becomes the theme's value for it (or
/// its mapped color), and the parameter still replaces it.
///
/// How a color maps, in order: `paint` (every paint that color, its alpha kept); else the
/// first of `colors` whose `from` is within `tolerance` of it (each channel, 0-255); then
/// `adjustments` (lightness inverted, hue, saturation, gamma, contrast, brightness, tint);
/// then `grayscale` (its luminance, Rec. 709 weights on sRGB, as CSS `grayscale(1)`). A color
/// no rule reaches stays. `rules` give icons whose ids match a glob a theme of their own.
public struct Theme: Hashable, Sendable {
    /// One mapping of `colors`.
    public struct Mapping: Hashable, Sendable {
        /// The color (within `tolerance`) this mapping applies to.
        public var from: Color
        /// The color it becomes (its alpha times the paint's own).
        public var to: Color

        /// `from` becomes `to`.
        public init(from: Color, to: Color) {
            self.from = from
            self.to = to
        }
    }

    /// The theme's name: outputs are named by it (`sprite-dark.json`).
    public var name: String
    /// Colors mapped to colors, the first match winning.
    public var colors: [Mapping] = []
    /// How far (in each channel, 0-255) a paint may be from a mapping's `from`.
    public var tolerance = 0
    /// One color for every paint, alpha kept.
    public var paint: Color?
    /// Gray by luminance, after `colors`.
    public var grayscale = false
    /// The values of parameters (by name) for icons that declare them.
    public var params: [String: Color] = [:]
    /// Lightness, hue, saturation, gamma, contrast, brightness and tint, after `colors`.
    public var adjustments = ColorAdjustments()
    /// A halo baked around the icons drawn in the theme (a light ring for a dark map); nil for none.
    public var halo: Halo?
    /// Themes for some icons, by a glob on their ids (`*` any run, `?` one character; a
    /// folder's icons are `folder/*`): the first that matches an icon is its theme.
    public var rules: [(icons: String, theme: Theme)] = []

    /// Themes of one name and the same rules are one theme.
    public static func == (a: Theme, b: Theme) -> Bool {
        a.name == b.name && a.rulesKey == b.rulesKey
    }

    /// Hashes the name and the rules, as `==` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(rulesKey)
    }

    /// The theme of the icon `id`: the first rule's whose glob matches it, else this one.
    public func theme(forIcon id: String) -> Theme {
        rules.first { SpriteID.matches(id, pattern: $0.icons) }?.theme ?? self
    }

    /// A theme named `name` that changes nothing until its rules are set.
    public init(name: String) {
        self.name = name
    }

    /// The names of the built-in themes.
    public static let builtInNames = ["grayscale"]

    /// The built-in themes, by name: `grayscale`.
    public static func builtIn(_ name: String) -> Theme? {
        guard name == "grayscale" else { return nil }
        var theme = Theme(name: name)
        theme.grayscale = true
        return theme
    }

    /// The theme a JSON file defines: `{"name": "dark", "colors": {"#000000": "#ffffff"},
    /// "tolerance": 8, "paint": "#777777", "grayscale": true, "params": {"flag_color": "#fff"}}`
    /// (every member optional; `name` defaults to `fallbackName`, the file's name).
    public init(json bytes: [UInt8], fallbackName: String) throws(ThemeError) {
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw ThemeError(message: "not a JSON theme: \(error)")
        }
        guard case .object(let members) = json else { throw ThemeError(message: "expected a JSON object") }
        let known = Set(
            ["name", "colors", "tolerance", "paint", "grayscale", "params", "halo", "rules"] + ColorAdjustments.members)
        if let unknown = members.keys.filter({ !known.contains($0) }).sorted().first {
            throw ThemeError(
                message: "unknown member \"\(unknown)\"" + didYouMean(unknown, among: known.sorted())
                    + " (a theme has name, colors, tolerance, paint, grayscale, params, "
                    + ColorAdjustments.members.joined(separator: ", ") + ", halo, rules)")
        }
        func color(_ value: JSONValue, _ place: String) throws(ThemeError) -> Color {
            guard let text = value.stringValue, let color = Color(css: text) else {
                throw ThemeError(
                    message: "\(place): expected a color (#rrggbb, rgb(), a CSS name), found \(value.serialized)")
            }
            return color
        }
        self.init(name: members["name"]?.stringValue ?? fallbackName)
        guard Self.isValidName(name) else {
            throw ThemeError(
                message: "name \"\(name)\": a letter, then letters, digits, '-' and '_' (it names files)")
        }
        if let colors = members["colors"] {
            guard case .object(let pairs) = colors else { throw ThemeError(message: "colors: expected an object") }
            var spelled: [Color: String] = [:]
            for (from, to) in pairs.sorted(by: { $0.key < $1.key }) {
                let mapping = Mapping(
                    from: try color(.string(from), "colors \"\(from)\""), to: try color(to, "colors.\(from)"))
                // Two spellings of one color (`#000` and `black`) mapped apart: which wins would
                // be the order of the file's keys.
                if let other = spelled[mapping.from],
                    self.colors.first(where: { $0.from == mapping.from })?.to != mapping.to
                {
                    throw ThemeError(
                        message:
                            "colors \"\(other)\" and \"\(from)\" are one color, \(mapping.from.hexString), mapped to two"
                    )
                }
                spelled[mapping.from] = from
                self.colors.append(mapping)
            }
        }
        if let tolerance = members["tolerance"] {
            guard case .number(let value) = tolerance, value >= 0, value <= 255, value == value.rounded() else {
                throw ThemeError(
                    message: "tolerance: expected a whole number from 0 to 255, found \(tolerance.serialized)")
            }
            self.tolerance = Int(value)
        }
        if let paint = members["paint"] { self.paint = try color(paint, "paint") }
        if let grayscale = members["grayscale"] {
            guard case .bool(let value) = grayscale else {
                throw ThemeError(message: "grayscale: expected true or false")
            }
            self.grayscale = value
        }
        adjustments = try ColorAdjustments(members: members)
        if let halo = members["halo"] {
            guard let text = halo.stringValue, let parsed = Halo(parsing: text) else {
                throw ThemeError(
                    message: "halo: expected \"W[,COLOR[,BLUR]]\" (a width and a blur from 0 to 32 px, a color), "
                        + "found \(halo.serialized)")
            }
            self.halo = parsed
        }
        if let rules = members["rules"] {
            guard case .array(let list) = rules else {
                throw ThemeError(message: #"rules: expected an array of {"icons": a glob, ...theme members}"#)
            }
            for (index, rule) in list.enumerated() {
                guard case .object(var fields) = rule, let icons = fields.removeValue(forKey: "icons")?.stringValue,
                    fields["rules"] == nil, fields["name"] == nil
                else {
                    throw ThemeError(
                        message: "rules[\(index)]: expected {\"icons\": a glob, ...theme members but name and rules}")
                }
                do {
                    let theme = try Theme(json: Array(JSONValue.object(fields).serialized.utf8), fallbackName: name)
                    self.rules.append((icons, theme))
                } catch {
                    throw ThemeError(message: "rules[\(index)]: \(error.message)")
                }
            }
        }
        if let params = members["params"] {
            guard case .object(let values) = params else { throw ThemeError(message: "params: expected an object") }
            for (name, value) in values { self.params[name] = try color(value, "params.\(name)") }
        }
    }

    /// Whether `name` can name a theme's files: a letter, then letters, digits, `-` and `_`,
    /// 64 at most (`sprite-2` is a sprite's second sheet, so no theme starts with a digit).
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, (first | 0x20) >= 0x61, (first | 0x20) <= 0x7A else { return false }
        return name.utf8.count <= 64
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// The color a paint of `color` becomes (its alpha kept, times the rule's own).
    public func map(_ color: Color) -> Color {
        func keepingAlpha(_ mapped: Color) -> Color {
            Color(red: mapped.red, green: mapped.green, blue: mapped.blue, alpha: mapped.alpha * color.alpha)
        }
        if let paint { return keepingAlpha(paint) }
        var result = color
        if let mapping = colors.first(where: { mapping in
            max(
                abs(Int(mapping.from.red) - Int(color.red)), abs(Int(mapping.from.green) - Int(color.green)),
                abs(Int(mapping.from.blue) - Int(color.blue))) <= tolerance
        }) {
            result = keepingAlpha(mapping.to)
        }
        result = adjustments.apply(result)
        if grayscale {
            let luminance = 0.2126 * Double(result.red) + 0.7152 * Double(result.green) + 0.0722 * Double(result.blue)
            let gray = UInt8(min(max(luminance.rounded(), 0), 255))
            result = Color(red: gray, green: gray, blue: gray, alpha: result.alpha)
        }
        return result
    }

    /// The distinct paint colors `template` declares (the initial black where a paint is not
    /// declared included), by RGB.
    public static func paints(of template: SVGTemplate) -> Set<UInt32> {
        var colors: Set<UInt32> = []
        for edit in template.paintEdits {
            for case .color(let rgb, _) in edit.pieces { colors.insert(rgb) }
        }
        return colors
    }

    /// `template`'s document with the theme applied: every paint color it declares mapped,
    /// and each parameter's default (its `m:value` and the paints it replaces) set to the
    /// theme's value for it, or its mapped color, so that parameters still work.
    ///
    /// With `given` (a variant's parameter values by name), the paints a given parameter binds
    /// in `template` (those of its default color there, as Mapbox matches them) take its value
    /// as it is, and every other paint is the theme's: after a theme, paints that were apart
    /// may share a color, so a parameter is applied to the template before the theme, never
    /// matched against the themed document.
    public func apply(to template: SVGTemplate, given: [String: Color] = [:]) -> [UInt8] {
        var defaults: [UInt32: Color] = [:]
        var givenPaints: Set<UInt32> = []
        var output: [UInt8] = []
        output.reserveCapacity(template.bytes.count + 64)
        var rewrites: [(range: Range<Int>, text: [UInt8])] = []
        for (index, parameter) in template.parameters.enumerated() {
            let value = params[parameter.name] ?? map(parameter.defaultColor)
            if let color = given[parameter.name] {
                defaults[parameter.defaultColor.rgb] = color
                givenPaints.insert(parameter.defaultColor.rgb)
            } else {
                defaults[parameter.defaultColor.rgb] = value
                givenPaints.remove(parameter.defaultColor.rgb)
            }
            if template.parameterValueRanges.indices.contains(index) {
                rewrites.append((template.parameterValueRanges[index], Array(value.cssString.utf8)))
            }
        }
        for edit in template.paintEdits {
            var text: [UInt8] = []
            for piece in edit.pieces {
                switch piece {
                case .literal(let bytes): text += bytes
                case .color(let rgb, let original):
                    // The paint as declared (black for an initial value), with its alpha.
                    let declared =
                        original.isEmpty ? Color.black : Color(css: String(decoding: original, as: UTF8.self)) ?? .black
                    // A given parameter replaces the paint's color as a whole, as `SVGTemplate.apply` does.
                    let mapped =
                        givenPaints.contains(rgb)
                        ? defaults[rgb] ?? declared
                        : defaults[rgb].map { value in
                            Color(
                                red: value.red, green: value.green, blue: value.blue,
                                alpha: value.alpha * declared.alpha)
                        } ?? map(declared)
                    text += mapped == declared && !original.isEmpty ? original : Array(mapped.cssString.utf8)
                }
            }
            rewrites.append((edit.range, text))
        }
        var cursor = 0
        for rewrite in rewrites.sorted(by: { $0.range.lowerBound < $1.range.lowerBound }) {
            guard rewrite.range.lowerBound >= cursor else { continue }
            output += template.bytes[cursor..<rewrite.range.lowerBound]
            output += rewrite.text
            cursor = rewrite.range.upperBound
        }
        output += template.bytes[cursor...]
        return output
    }

    /// A digest of the rules (not the name), for cache keys: equal rules draw equal icons.
    public var rulesKey: String {
        var text = "tolerance=\(tolerance);grayscale=\(grayscale);paint=\(paint?.hexString ?? "-");"
        text += colors.map { "\($0.from.hexString)>\($0.to.hexString)" }.joined(separator: ",") + ";"
        text += params.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.hexString)" }.joined(separator: ",")
        text += ";" + adjustments.keyText + (halo?.keyText ?? "")
        text += rules.map { ";rule \($0.icons)=\($0.theme.rulesKey)" }.joined()
        return String(SHA256.hex(Array(text.utf8)).prefix(16))
    }
}

/// A theme file iconr cannot use.
public struct ThemeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public let message: String

    /// An error that says `message`.
    public init(message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
