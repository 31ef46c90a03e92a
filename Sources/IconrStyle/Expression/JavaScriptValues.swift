import IconrCore

/// What the style specification's JavaScript reference does with numbers and JSON values
/// beyond writing them (`javaScriptText`, in IconrCore beside JSON).
extension Double {
    /// `Math.round`: halves go up (towards +infinity).
    var javaScriptRounded: Double { (self + 0.5).rounded(.down) }
}

extension JSONValue {
    /// JavaScript's `typeof` for a JSON value: `number`, `string`, `boolean`, `object`.
    var javaScriptTypeName: String {
        switch self {
        case .number: return "number"
        case .string: return "string"
        case .bool: return "boolean"
        case .null, .array, .object: return "object"
        }
    }

    /// What the style specification's validation calls the kind of this value (its
    /// `getType`): `null`, `array`, `object`, `string`, `number` or `boolean`.
    var specificationTypeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
