import IconrCore

/// The type of a style expression, as the style specification's type checker knows it.
public indirect enum StyleType: Hashable, Sendable, CustomStringConvertible {
    case null
    case number
    case string
    case boolean
    case color
    case object
    case value
    case error
    case collator
    case formatted
    case resolvedImage
    case padding
    case numberArray
    case colorArray
    case variableAnchorOffsetCollection
    case projectionDefinition
    /// `array<itemType, count>`; `count` nil for any length.
    case array(StyleType, count: Int? = nil)

    /// The specification's spelling: `number`, `array<string>`, `array<number, 2>`, `array`.
    public var description: String {
        switch self {
        case .array(let item, let count):
            if let count { return "array<\(item), \(count)>" }
            return item == .value ? "array" : "array<\(item)>"
        case .null: return "null"
        case .number: return "number"
        case .string: return "string"
        case .boolean: return "boolean"
        case .color: return "color"
        case .object: return "object"
        case .value: return "value"
        case .error: return "error"
        case .collator: return "collator"
        case .formatted: return "formatted"
        case .resolvedImage: return "resolvedImage"
        case .padding: return "padding"
        case .numberArray: return "numberArray"
        case .colorArray: return "colorArray"
        case .variableAnchorOffsetCollection: return "variableAnchorOffsetCollection"
        case .projectionDefinition: return "projectionDefinition"
        }
    }

    /// The kind without array details, for the checks that compare only kinds.
    var kind: String {
        if case .array = self { return "array" }
        return description
    }

    /// The types a `value` may hold.
    private static let valueMembers: [StyleType] = [
        .null, .number, .string, .boolean, .color, .projectionDefinition, .formatted, .object,
        .array(.value), .padding, .numberArray, .colorArray, .resolvedImage, .variableAnchorOffsetCollection,
    ]

    /// Nil when a value of type `actual` may be used where `self` is expected, else the
    /// specification's message (`Expected number but found string instead.`).
    public func mismatch(_ actual: StyleType) -> String? {
        if actual == .error { return nil }
        switch self {
        case .array(let item, let count):
            if case .array(let actualItem, let actualCount) = actual,
                (actualCount == 0 && actualItem == .value) || item.mismatch(actualItem) == nil,
                count == nil || count == actualCount
            {
                return nil
            }
        case .value:
            if actual == .value || Self.valueMembers.contains(where: { $0.mismatch(actual) == nil }) { return nil }
        default:
            if kind == actual.kind { return nil }
        }
        return "Expected \(self) but found \(actual) instead."
    }
}
