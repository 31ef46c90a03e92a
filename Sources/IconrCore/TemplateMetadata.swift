/// A color parameter declared in a template's Mapbox metadata.
public struct TemplateParameter: Hashable, Sendable {
    /// The name a value is given by (`flag_color`).
    public let name: String
    /// The color the parameter replaces, and the one drawn when no value is given.
    public let defaultColor: Color

    /// A parameter named `name` that replaces `defaultColor`.
    public init(name: String, defaultColor: Color) {
        self.name = name
        self.defaultColor = defaultColor
    }
}

/// A stretchable span `[start, end]` in the icon's user units.
public struct StretchArea: Hashable, Sendable {
    /// Where the span starts.
    public let start: Double
    /// Where it ends (after `start`).
    public let end: Double

    /// The span from `start` to `end`.
    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }

    /// The span in pixels at `factor` pixels per unit.
    public func scaled(by factor: Double) -> StretchArea {
        StretchArea(start: start * factor, end: end * factor)
    }
}

/// Where text goes when the icon is fitted to text, in the icon's user units.
public struct ContentBox: Hashable, Sendable {
    /// The left edge.
    public let left: Double
    /// The top edge.
    public let top: Double
    /// The right edge.
    public let right: Double
    /// The bottom edge.
    public let bottom: Double

    /// The box between the four edges.
    public init(left: Double, top: Double, right: Double, bottom: Double) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
    }

    /// The box in pixels at `factor` pixels per unit.
    public func scaled(by factor: Double) -> ContentBox {
        ContentBox(left: left * factor, top: top * factor, right: right * factor, bottom: bottom * factor)
    }
}

/// Something worth telling the author of a template that does not stop it from rendering.
public struct TemplateWarning: Hashable, Sendable, CustomStringConvertible {
    /// Where in the document.
    public let location: SourceLocation
    /// What to tell the author.
    public let message: String

    /// `line:column: message`.
    public var description: String { "\(location): \(message)" }
}

/// A template that cannot be used: malformed metadata, or a document iconr cannot read.
public struct TemplateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file, when the template came from one.
    public var file: String?
    /// Where in the document, when known.
    public let location: SourceLocation?
    /// What is wrong.
    public let message: String

    /// An error in `file` (if it came from one) at `location`.
    public init(file: String? = nil, location: SourceLocation?, message: String) {
        self.file = file
        self.location = location
        self.message = message
    }

    /// `icons/flag.svg:12:5: m:parameter "flag_color" has an invalid m:value "#12"`
    public var description: String {
        var prefix = file ?? ""
        if let location { prefix += prefix.isEmpty ? "\(location)" : ":\(location)" }
        return prefix.isEmpty ? message : "\(prefix): \(message)"
    }
}
