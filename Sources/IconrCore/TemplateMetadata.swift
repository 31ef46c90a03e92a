/// A color parameter declared in a template's Mapbox metadata.
public struct TemplateParameter: Hashable, Sendable {
    public let name: String
    /// The color the parameter replaces, and the one drawn when no value is given.
    public let defaultColor: Color

    public init(name: String, defaultColor: Color) {
        self.name = name
        self.defaultColor = defaultColor
    }
}

/// A stretchable span `[start, end]` in the icon's user units.
public struct StretchArea: Hashable, Sendable {
    public let start: Double
    public let end: Double

    public init(start: Double, end: Double) {
        self.start = start
        self.end = end
    }

    public func scaled(by factor: Double) -> StretchArea {
        StretchArea(start: start * factor, end: end * factor)
    }
}

/// Where text goes when the icon is fitted to text, in the icon's user units.
public struct ContentBox: Hashable, Sendable {
    public let left: Double
    public let top: Double
    public let right: Double
    public let bottom: Double

    public init(left: Double, top: Double, right: Double, bottom: Double) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
    }

    public func scaled(by factor: Double) -> ContentBox {
        ContentBox(left: left * factor, top: top * factor, right: right * factor, bottom: bottom * factor)
    }
}

/// Something worth telling the author of a template that does not stop it from rendering.
public struct TemplateWarning: Hashable, Sendable, CustomStringConvertible {
    public let location: SourceLocation
    public let message: String

    public var description: String { "\(location): \(message)" }
}

/// A template that cannot be used: malformed metadata, or a document iconr cannot read.
public struct TemplateError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file, when the template came from one.
    public var file: String?
    public let location: SourceLocation?
    public let message: String

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
