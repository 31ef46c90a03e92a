/// A parameter value that is not a color.
public struct ParameterError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The parameter's name.
    public let name: String
    /// The text given for it.
    public let value: String

    /// `invalid color "x" for parameter "flag_color" (expected ...)`, naming the syntaxes.
    public var description: String {
        "invalid color \"\(value)\" for parameter \"\(name)\" (\(value.isEmpty ? Self.emptyHint : Self.syntaxes))"
    }

    /// The color syntaxes parameters take.
    public static let syntaxes =
        "expected #rrggbb or rrggbb, #rgb, #rrggbbaa, rgb(), rgba(), hsl(), hsla() or a CSS name"
    /// Why a color may arrive empty: a `#` left unencoded in a URL starts its fragment.
    static let emptyHint = "empty: in a URL, \"#\" starts the fragment; write it as %23, or leave it out"
}

/// A parameter name that an icon does not declare.
public struct UnknownParameterError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name given (the first in name order, when several are unknown).
    public let name: String
    /// The icon, by its id.
    public let icon: String
    /// The names the icon declares.
    public let declared: [String]

    /// The error for the first of `unknownNames` (nil when there is none).
    public init?(unknownNames: [String], icon: String, declared: [String]) {
        guard let first = unknownNames.sorted().first else { return nil }
        name = first
        self.icon = icon
        self.declared = declared
    }

    /// `unknown parameter 'flag_colour': icon "flag" declares flag_color (did you mean 'flag_color'?)`.
    public var description: String {
        "unknown parameter '\(name)': icon \"\(icon)\" declares "
            + (declared.isEmpty ? "none" : declared.joined(separator: ", "))
            + didYouMean(name, among: declared)
    }
}

/// Parameter values checked against a template: which default colors become which colors.
public struct ResolvedParameters: Hashable, Sendable {
    /// New color by the RGB of the default it replaces.
    public let replacements: [UInt32: Color]
    /// Values given for names the template does not declare; ignored, as Mapbox does.
    public let unknownNames: [String]
    /// The declared parameters whose value differs from their default, by name, for keys.
    public let effectiveValues: [String: Color]
}

extension SVGTemplate {
    /// Which default colors `params` replace. Names the template does not declare are
    /// ignored and listed in `unknownNames`; when two parameters share a default, the one
    /// declared last wins.
    public func resolve(_ params: IconParameters) -> ResolvedParameters {
        resolve(colors: params.colors)
    }

    /// Like `resolve(_:)`, from the colors by name.
    public func resolve(colors: [String: Color]) -> ResolvedParameters {
        var replacements: [UInt32: Color] = [:]
        var effective: [String: Color] = [:]
        for parameter in parameters {
            guard let color = colors[parameter.name] else { continue }
            replacements[parameter.defaultColor.rgb] = color
            if color != parameter.defaultColor { effective[parameter.name] = color }
        }
        // Replacing a color by the same opaque color changes nothing.
        replacements = replacements.filter { rgb, color in
            color != Color(red: UInt8(rgb >> 16), green: UInt8(rgb >> 8 & 0xFF), blue: UInt8(rgb & 0xFF))
        }
        let declared = Set(parameters.map(\.name))
        return ResolvedParameters(
            replacements: replacements,
            unknownNames: colors.keys.filter { !declared.contains($0) }.sorted(),
            effectiveValues: effective)
    }

    /// The SVG document with `parameters` applied, ready for librsvg.
    public func apply(_ parameters: ResolvedParameters) -> [UInt8] {
        guard !parameters.replacements.isEmpty else { return bytes }
        let replacements = parameters.replacements.mapValues { Array($0.cssString.utf8) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 64)
        var cursor = 0
        for edit in paintEdits where edit.applies(to: replacements) {
            output += bytes[cursor..<edit.range.lowerBound]
            for piece in edit.pieces {
                switch piece {
                case .literal(let text): output += text
                case .color(let rgb, let original): output += replacements[rgb] ?? original
                }
            }
            cursor = edit.range.upperBound
        }
        output += bytes[cursor...]
        return output
    }
}
