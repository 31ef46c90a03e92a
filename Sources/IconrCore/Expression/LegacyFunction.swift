/// Legacy property functions (`{"stops": [...], "property": ..., "type": ...}`), converted
/// to the expressions they mean.
enum LegacyFunction {
    static func isFunction(_ json: JSONValue) -> Bool {
        if case .object = json { return true }
        return false
    }

    static func convert(_ json: JSONValue, _ specification: PropertySpecification) -> JSONValue {
        json
    }
}
