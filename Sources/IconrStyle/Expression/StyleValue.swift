import IconrCore

/// A value a style expression produces or reads: JSON's kinds plus the specification's own
/// (colors, collators, formatted text, images, paddings, ...).
public enum StyleValue: Sendable, Equatable {
    case null
    case boolean(Bool)
    case number(Double)
    case string(String)
    case color(StyleColor)
    case array([StyleValue])
    case object([String: StyleValue])
    case collator(StyleCollator)
    case formatted(FormattedText)
    case image(ResolvedImage)
    case padding([Double])
    case numberArray([Double])
    case colorArray([StyleColor])
    case variableAnchorOffsetCollection([StyleValue])
    /// A projection transition (`interpolate` between two projections).
    case projection(from: String, to: String, transition: Double)

    /// The value of a JSON document (style literals, feature properties).
    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .boolean(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(StyleValue.init))
        case .object(let object): self = .object(object.mapValues(StyleValue.init))
        }
    }

    /// The specification's `typeof`: arrays carry their item type when all items share one.
    public var type: StyleType {
        switch self {
        case .null: return .null
        case .boolean: return .boolean
        case .number: return .number
        case .string: return .string
        case .color: return .color
        case .object: return .object
        case .collator: return .collator
        case .formatted: return .formatted
        case .image: return .resolvedImage
        case .padding: return .padding
        case .numberArray: return .numberArray
        case .colorArray: return .colorArray
        case .variableAnchorOffsetCollection: return .variableAnchorOffsetCollection
        case .projection: return .projectionDefinition
        case .array(let items):
            var itemType: StyleType?
            for item in items {
                let type = item.type
                // Nested arrays never share a type (the reference compares type objects).
                if case .array = type {
                    itemType = .value
                    break
                }
                if itemType == nil {
                    itemType = type
                } else if itemType != type {
                    itemType = .value
                    break
                }
            }
            return .array(itemType ?? .value, count: items.count)
        }
    }

    /// The specification's `to-string`: null is empty, numbers as JavaScript prints them,
    /// colors as `rgba(r,g,b,a)`, arrays and objects as JSON.
    public var text: String {
        switch self {
        case .null: return ""
        case .boolean(let value): return value ? "true" : "false"
        case .number(let value): return value.javaScriptText
        case .string(let value): return value
        case .color(let color): return color.text
        case .formatted(let formatted): return formatted.sections.map(\.text).joined()
        case .image(let image): return image.name
        case .padding(let values): return "[" + values.map(\.javaScriptText).joined(separator: ",") + "]"
        default: return jsonText
        }
    }

    /// JSON text as JavaScript's `JSON.stringify` writes it (object keys sorted here).
    public var jsonText: String { json.serialized }

    /// The value as JSON, in the shapes the specification's test suite records.
    public var json: JSONValue {
        switch self {
        case .null: return .null
        case .boolean(let value): return .bool(value)
        case .number(let value): return value.isFinite ? .number(value) : .null
        case .string(let value): return .string(value)
        case .color(let color): return color.json
        case .array(let items): return .array(items.map(\.json))
        case .object(let object): return .object(object.mapValues(\.json))
        case .collator(let collator): return .object(["locale": collator.locale.map(JSONValue.string) ?? .null])
        case .formatted(let formatted):
            return .object([
                "sections": .array(
                    formatted.sections.map { section in
                        .object([
                            "text": .string(section.text),
                            "image": section.image.map { StyleValue.image($0).json } ?? .null,
                            "scale": section.scale.map(JSONValue.number) ?? .null,
                            "fontStack": section.fontStack.map(JSONValue.string) ?? .null,
                            "textColor": section.textColor?.json ?? .null,
                            "verticalAlign": section.verticalAlign.map(JSONValue.string) ?? .null,
                        ])
                    })
            ])
        case .image(let image):
            var object: [String: JSONValue] = ["name": .string(image.name), "available": .bool(image.available)]
            if !image.params.isEmpty {
                object["params"] = .object(image.params.mapValues { StyleValue.color($0).json })
            }
            return .object(object)
        case .padding(let values), .numberArray(let values):
            return .object(["values": .array(values.map(JSONValue.number))])
        case .colorArray(let colors): return .object(["values": .array(colors.map(\.json))])
        case .variableAnchorOffsetCollection(let values): return .object(["values": .array(values.map(\.json))])
        case .projection(let from, let to, let transition):
            return .object(["from": .string(from), "to": .string(to), "transition": .number(transition)])
        }
    }

    /// JavaScript truthiness, which `to-boolean`, `case` and `all` use.
    var isTruthy: Bool {
        switch self {
        case .null: return false
        case .boolean(let value): return value
        case .number(let value): return value != 0 && !value.isNaN
        case .string(let value): return !value.isEmpty
        default: return true
        }
    }

    /// JavaScript's `===` for the kinds `==` compares (others are never equal).
    func strictlyEquals(_ other: StyleValue) -> Bool {
        switch (self, other) {
        case (.null, .null): return true
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        default: return false
        }
    }
}

extension StyleColor {
    /// `rgba(r,g,b,a)` with channels rounded to 0...255, as `to-string` writes colors.
    public var text: String {
        let channels = [red, green, blue].map { ($0 * 255).javaScriptRounded.javaScriptText }
        return "rgba(\(channels.joined(separator: ",")),\(alpha.javaScriptText))"
    }

    var json: JSONValue {
        let values = premultiplied
        return .object([
            "r": .number(values[0]), "g": .number(values[1]), "b": .number(values[2]), "a": .number(values[3]),
        ])
    }
}

/// How strings compare: the `collator` expression's options.
public struct StyleCollator: Sendable, Hashable {
    /// Whether `A` and `a` differ.
    public var caseSensitive: Bool
    /// Whether `e` and `é` differ.
    public var diacriticSensitive: Bool
    /// The requested BCP 47 locale (iconr compares with root rules whatever it is).
    public var locale: String?

    /// The locale this collator compares in: the requested one's language, or `en`.
    var resolvedLocale: String {
        guard let locale, !locale.isEmpty else { return "en" }
        return locale
    }

    /// -1, 0 or 1 as the strings order in the root collation's three levels: letters
    /// (accents and case ignored), then accents, then case (lowercase first), each level
    /// only when the options ask for it.
    func compare(_ a: String, _ b: String) -> Int {
        func order<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x > y ? 1 : 0 }
        func scalars(_ text: String) -> [UInt32] { text.unicodeScalars.map(\.value) }
        let base = order(Self.removingDiacritics(a).lowercased(), Self.removingDiacritics(b).lowercased())
        if base != 0 { return base }
        if diacriticSensitive {
            let accents =
                scalars(a.lowercased()).lexicographicallyPrecedes(scalars(b.lowercased()))
                ? -1
                : (a.lowercased() == b.lowercased() ? 0 : 1)
            if accents != 0 { return accents }
        }
        if caseSensitive {
            // Lowercase sorts before uppercase.
            let x = scalars(Self.removingDiacritics(a)), y = scalars(Self.removingDiacritics(b))
            if x != y { return x.lexicographicallyPrecedes(y) ? 1 : -1 }
        }
        return 0
    }

    /// Latin letters without their accents (U+00C0...U+024F), and combining marks dropped.
    static func removingDiacritics(_ text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where !(0x0300...0x036F).contains(scalar.value) {
            scalars.append(accentFree[scalar.value] ?? scalar)
        }
        return String(scalars)
    }

    private static let accentFree: [UInt32: Unicode.Scalar] = {
        let accented: [UInt32] = [
            0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB, 0xCC, 0xCD, 0xCE, 0xCF, 0xD1, 0xD2, 0xD3,
            0xD4, 0xD5, 0xD6, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD, 0xE0, 0xE1, 0xE2, 0xE3, 0xE4, 0xE5, 0xE7, 0xE8, 0xE9, 0xEA,
            0xEB, 0xEC, 0xED, 0xEE, 0xEF, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFF, 0x100,
            0x101, 0x102, 0x103, 0x104, 0x105, 0x106, 0x107, 0x108, 0x109, 0x10A, 0x10B, 0x10C, 0x10D, 0x10E, 0x10F,
            0x112, 0x113, 0x114, 0x115, 0x116, 0x117, 0x118, 0x119, 0x11A, 0x11B, 0x11C, 0x11D, 0x11E, 0x11F, 0x120,
            0x121, 0x122, 0x123, 0x124, 0x125, 0x128, 0x129, 0x12A, 0x12B, 0x12C, 0x12D, 0x12E, 0x12F, 0x130, 0x134,
            0x135, 0x136, 0x137, 0x139, 0x13A, 0x13B, 0x13C, 0x13D, 0x13E, 0x143, 0x144, 0x145, 0x146, 0x147, 0x148,
            0x14C, 0x14D, 0x14E, 0x14F, 0x150, 0x151, 0x154, 0x155, 0x156, 0x157, 0x158, 0x159, 0x15A, 0x15B, 0x15C,
            0x15D, 0x15E, 0x15F, 0x160, 0x161, 0x162, 0x163, 0x164, 0x165, 0x168, 0x169, 0x16A, 0x16B, 0x16C, 0x16D,
            0x16E, 0x16F, 0x170, 0x171, 0x172, 0x173, 0x174, 0x175, 0x176, 0x177, 0x178, 0x179, 0x17A, 0x17B, 0x17C,
            0x17D, 0x17E, 0x1A0, 0x1A1, 0x1AF, 0x1B0, 0x1CD, 0x1CE, 0x1CF, 0x1D0, 0x1D1, 0x1D2, 0x1D3, 0x1D4, 0x1D5,
            0x1D6, 0x1D7, 0x1D8, 0x1D9, 0x1DA, 0x1DB, 0x1DC, 0x1DE, 0x1DF, 0x1E0, 0x1E1, 0x1E6, 0x1E7, 0x1E8, 0x1E9,
            0x1EA, 0x1EB, 0x1EC, 0x1ED, 0x1F0, 0x1F4, 0x1F5, 0x1F8, 0x1F9, 0x1FA, 0x1FB, 0x200, 0x201, 0x202, 0x203,
            0x204, 0x205, 0x206, 0x207, 0x208, 0x209, 0x20A, 0x20B, 0x20C, 0x20D, 0x20E, 0x20F, 0x210, 0x211, 0x212,
            0x213, 0x214, 0x215, 0x216, 0x217, 0x218, 0x219, 0x21A, 0x21B, 0x21E, 0x21F, 0x226, 0x227, 0x228, 0x229,
            0x22A, 0x22B, 0x22C, 0x22D, 0x22E, 0x22F, 0x230, 0x231, 0x232, 0x233,
        ]
        let bases = Array(
            "AAAAAACEEEEIIIINOOOOOUUUUYaaaaaaceeeeiiiinooooouuuuyyAaAaAaCcCcCcCcDdEeEeEeEeEeGgGgGgGgHhIiIiIiIiIJjKkLlLlLlNnNnNnOoOoOoRrRrRrSsSsSsSsTtTtUuUuUuUuUuUuWwYyYZzZzZzOoUuAaIiOoUuUuUuUuUuAaAaGgKkOoOojGgNnAaAaAaEeEeIiIiOoOoRrRrUuUuSsTtHhAaEeOoOoOoOoYy"
                .unicodeScalars)
        return Dictionary(uniqueKeysWithValues: zip(accented, bases))
    }()
}

/// Text with per-section styles, the `format` expression's result.
public struct FormattedText: Sendable, Equatable {
    /// A run of text (or an image) with its own style.
    public struct Section: Sendable, Equatable {
        /// The text; empty for an image section.
        public var text: String
        /// The image shown instead of text, if any.
        public var image: ResolvedImage?
        /// The `font-scale` of the section.
        public var scale: Double?
        /// The `text-font` of the section, comma-joined.
        public var fontStack: String?
        /// The `text-color` of the section.
        public var textColor: StyleColor?
        /// The `vertical-align` of the section (`bottom`, `center`, `top`).
        public var verticalAlign: String?
    }

    /// The sections in order.
    public var sections: [Section]

    init(plain text: String) {
        sections = [Section(text: text)]
    }

    init(sections: [Section]) {
        self.sections = sections
    }
}

/// An image an expression names, whether the style has it, and (Mapbox vector icons) the
/// colors its parameters are to take.
public struct ResolvedImage: Sendable, Hashable {
    /// The image's name (sprite id or icon name).
    public var name: String
    /// Whether the style has an image of that name.
    public var available: Bool
    /// The colors of the icon's parameters, by name (Mapbox `image` with `params`).
    public var params: [String: StyleColor]

    /// An image reference; unavailable and without params unless given.
    public init(name: String, available: Bool = false, params: [String: StyleColor] = [:]) {
        self.name = name
        self.available = available
        self.params = params
    }
}
