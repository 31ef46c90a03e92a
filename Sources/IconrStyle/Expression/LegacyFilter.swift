import IconrCore

/// Filters in the legacy form (`["==", "class", "park"]`, `["in", "$type", "Point"]`,
/// `["!has", "name"]`), rewritten as expressions; expression filters are kept as they are.
enum LegacyFilter {
    static func convert(_ filter: JSONValue) -> JSONValue {
        isExpression(filter) ? filter : legacy(filter)
    }

    /// The specification's test of which form a filter is in.
    static func isExpression(_ filter: JSONValue) -> Bool {
        if case .bool = filter { return true }
        guard case .array(let items) = filter, case .string(let op)? = items.first else { return false }
        switch op {
        case "has": return items.count >= 2 && items[1] != .string("$id") && items[1] != .string("$type")
        case "in": return items.count >= 3 && (items[1].stringValue == nil || items[2].arrayValue != nil)
        case "!in", "!has", "none": return false
        case "==", "!=", ">", ">=", "<", "<=":
            return items.count != 3 || items[1].arrayValue != nil || items[2].arrayValue != nil
        case "any", "all":
            return items.dropFirst().allSatisfy { item in
                if case .bool = item { return true }
                return isExpression(item)
            }
        default: return true
        }
    }

    private static func legacy(_ filter: JSONValue) -> JSONValue {
        guard case .array(let items) = filter, case .string(let op)? = items.first else { return .bool(true) }
        if items.count <= 1 { return .bool(op != "any") }
        func negate(_ value: JSONValue) -> JSONValue { .array([.string("!"), value]) }
        let rest = Array(items.dropFirst())
        switch op {
        case "==", "<", ">", "<=", ">=": return comparison(items[1], items.count > 2 ? items[2] : .null, op)
        case "!=": return negate(comparison(items[1], items.count > 2 ? items[2] : .null, "=="))
        case "any": return .array([.string("any")] + rest.map(legacy))
        case "all": return .array([.string("all")] + rest.map(legacy))
        case "none": return .array([.string("all")] + rest.map { negate(legacy($0)) })
        case "in": return membership(items[1], Array(items.dropFirst(2)))
        case "!in": return negate(membership(items[1], Array(items.dropFirst(2))))
        case "has": return has(items[1])
        case "!has": return negate(has(items[1]))
        default: return .bool(true)
        }
    }

    private static func lookup(_ key: JSONValue) -> JSONValue {
        switch key.stringValue {
        case "$type": .array([.string("geometry-type")])
        case "$id": .array([.string("id")])
        default: .array([.string("get"), key])
        }
    }

    /// Legacy comparisons are false (not errors) when the types differ.
    private static func comparison(_ key: JSONValue, _ value: JSONValue, _ op: String) -> JSONValue {
        let left = lookup(key)
        let right =
            value.javaScriptTypeName == "object" && value != .null
            ? JSONValue.array([.string("literal"), value]) : value
        if op == "==" { return .array([.string("=="), left, right]) }
        let type: String =
            switch value {
            case .number: "number"
            case .string: "string"
            case .bool: "boolean"
            default: "null"
            }
        return .array([
            .string("all"), .array([.string("=="), .array([.string("typeof"), left]), .string(type)]),
            .array([.string(op), left, right]),
        ])
    }

    private static func membership(_ key: JSONValue, _ values: [JSONValue]) -> JSONValue {
        if values.isEmpty { return .bool(false) }
        let left = lookup(key)
        return .array([.string("any")] + values.map { .array([.string("=="), left, $0]) })
    }

    private static func has(_ key: JSONValue) -> JSONValue {
        switch key.stringValue {
        case "$type": .bool(true)
        case "$id": .array([.string("!="), .array([.string("id")]), .null])
        default: .array([.string("has"), key])
        }
    }
}
