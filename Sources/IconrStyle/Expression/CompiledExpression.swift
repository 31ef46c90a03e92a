import IconrCore

/// What a style property accepts, as the specification's `v8.json` describes it: the part
/// the expression compiler needs.
public struct PropertySpecification: Sendable {
    /// `number`, `string`, `color`, `boolean`, `enum`, `array`, `formatted`, `resolvedImage`, ...
    public var type: String
    /// The item type of an `array` property.
    public var value: String?
    /// The length of an `array` property with a fixed one.
    public var length: Int?
    /// `data-driven`, `cross-faded-data-driven`, `data-constant`, `constant`, ...
    public var propertyType: String
    /// `zoom`, `feature`, `feature-state`, ...
    public var parameters: [String]
    /// Whether the property can be interpolated (zoom curves allowed).
    public var interpolated: Bool
    /// The property's default value.
    public var defaultValue: JSONValue?
    /// The values of an `enum` property.
    public var enumValues: [String]
    /// Whether strings may hold legacy `{token}` references (`icon-image`, `text-field`).
    public var tokens: Bool
    /// Whether `["zoom"]` may stand anywhere, not only as the input of a top-level curve: a
    /// layer's `filter`, which renderers evaluate at whole tile zooms.
    public var zoomAnywhere = false

    /// A specification with the given fields; the defaults are a data-driven, interpolatable property.
    public init(
        type: String, value: String? = nil, length: Int? = nil, propertyType: String = "data-driven",
        parameters: [String] = ["zoom", "feature"], interpolated: Bool = true,
        defaultValue: JSONValue? = nil, enumValues: [String] = [], tokens: Bool = false
    ) {
        self.type = type
        self.value = value
        self.length = length
        self.propertyType = propertyType
        self.parameters = parameters
        self.interpolated = interpolated
        self.defaultValue = defaultValue
        self.enumValues = enumValues
        self.tokens = tokens
    }

    /// A specification as the test suite writes it (`{"type": ..., "property-type": ...,
    /// "expression": {"interpolated": ..., "parameters": [...]}}`); missing parts default to a
    /// data-driven, interpolatable property of any type.
    public init(json: JSONValue?) {
        let json = json ?? .object([:])
        type = json["type"]?.stringValue ?? ""
        value = json["value"]?.stringValue
        if case .number(let n)? = json["length"] { length = Int(exactly: n) }
        propertyType = json["property-type"]?.stringValue ?? "data-driven"
        if let expression = json["expression"] {
            parameters = expression["parameters"]?.arrayValue?.compactMap(\.stringValue) ?? []
            interpolated = expression["interpolated"] == .bool(true)
        } else {
            parameters = ["zoom", "feature"]
            interpolated = true
        }
        defaultValue = json["default"]
        tokens = json["tokens"] == .bool(true)
        switch json["values"] {
        case .object(let values)?: enumValues = values.keys.sorted()
        case .array(let values)?: enumValues = values.compactMap(\.stringValue)
        default: enumValues = []
        }
    }

    /// The type an expression for this property must produce.
    var expectedType: StyleType? {
        let types: [String: StyleType] = [
            "color": .color, "string": .string, "number": .number, "enum": .string, "boolean": .boolean,
            "formatted": .formatted, "padding": .padding, "numberArray": .numberArray, "colorArray": .colorArray,
            "projectionDefinition": .projectionDefinition, "resolvedImage": .resolvedImage,
            "variableAnchorOffsetCollection": .variableAnchorOffsetCollection,
        ]
        if type == "array" { return .array(value.flatMap { types[$0] } ?? .value, count: length) }
        return types[type]
    }
}

/// A style expression parsed and type-checked against its property: evaluate it per zoom
/// and feature. The one engine behind `iconr sprite --style`, `iconr expression` and the
/// library's style lookups.
public struct CompiledExpression: Sendable {
    /// How the value varies: not at all, by feature, by zoom, or by both.
    public enum Kind: String, Sendable {
        case constant, source, camera, composite
    }

    /// How the value varies (decides whether it needs a zoom, a feature, or both).
    public let kind: Kind
    /// The type of the values it produces.
    public let type: StyleType
    /// The zoom stops of the top-level zoom curve (empty when the value is zoom-constant).
    public let zoomStops: [Double]
    let root: any ExpressionNode
    let globalState: [String: StyleValue]

    /// Whether every feature gets the same value.
    public var isFeatureConstant: Bool { kind == .constant || kind == .camera }
    /// Whether the value is the same at every zoom.
    public var isZoomConstant: Bool { kind == .constant || kind == .source }

    /// Parses `json` (an expression, a legacy function or a constant) for a property.
    public static func compile(
        _ json: JSONValue, specification: PropertySpecification,
        globalState: [String: StyleValue] = [:]
    ) -> Result<CompiledExpression, ExpressionCompileError> {
        let expression = LegacyFunction.isFunction(json) ? LegacyFunction.convert(json, specification) : json
        let context = ParsingContext(expectedType: specification.expectedType)
        guard let root = context.parse(expression, annotation: specification.type == "string" ? .coerce : nil) else {
            return .failure(ExpressionCompileError(errors: context.errors.items))
        }
        func failure(_ message: String) -> Result<CompiledExpression, ExpressionCompileError> {
            .failure(ExpressionCompileError(errors: [ExpressionParsingError(key: "", message: message)]))
        }
        let featureConstant = ExpressionAnalysis.isFeatureConstant(root)
        if !featureConstant && !["data-driven", "cross-faded-data-driven"].contains(specification.propertyType) {
            return failure("data expressions not supported")
        }
        let zoomConstant = ExpressionAnalysis.isGlobalPropertyConstant(root, ["zoom"])
        if !zoomConstant && !specification.parameters.contains("zoom") {
            return failure("zoom expressions not supported")
        }
        let curve = specification.zoomAnywhere ? .none : ZoomCurve.find(root)
        var stops: [Double] = []
        switch curve {
        case .none:
            if !zoomConstant && !specification.zoomAnywhere {
                return failure(
                    "\"zoom\" expression may only be used as input to a top-level \"step\" or \"interpolate\" expression."
                )
            }
        case .error(let message): return failure(message)
        case .curve(let node):
            if node is InterpolateNode && !specification.interpolated {
                return failure("\"interpolate\" expressions cannot be used with this property")
            }
            stops = (node as? StepNode)?.labels ?? (node as? InterpolateNode)?.labels ?? []
        }
        let kind: Kind =
            switch (featureConstant, stops.isEmpty && zoomConstant) {
            case (true, true): .constant
            case (false, true): .source
            case (true, false): .camera
            case (false, false): .composite
            }
        return .success(
            CompiledExpression(kind: kind, type: root.type, zoomStops: stops, root: root, globalState: globalState))
    }

    /// The value for one feature at one zoom; a runtime failure is thrown with its key.
    public func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        guard context.globalState.isEmpty, !globalState.isEmpty else { return try root.evaluate(context) }
        var context = context
        context.globalState = globalState
        return try root.evaluate(context)
    }
}

/// The top-level `step` or `interpolate` on `["zoom"]`, which zoom-dependent values must use.
enum ZoomCurve {
    case none
    case curve(any ExpressionNode)
    case error(String)

    static func find(_ node: any ExpressionNode) -> ZoomCurve {
        var result = ZoomCurve.none
        if let letNode = node as? LetNode {
            result = find(letNode.result)
        } else if let coalesce = node as? CoalesceNode {
            for argument in coalesce.arguments {
                result = find(argument)
                if case .none = result { continue }
                break
            }
        } else if let input = (node as? StepNode)?.input ?? (node as? InterpolateNode)?.input,
            let compound = input as? CompoundNode, compound.name == "zoom"
        {
            result = .curve(node)
        }
        if case .error = result { return result }
        for child in node.children {
            let childResult = find(child)
            switch (childResult, result) {
            case (.error, _): result = childResult
            case (.curve, .none):
                result = .error(
                    "\"zoom\" expression may only be used as input to a top-level \"step\" or \"interpolate\" expression."
                )
            case (.curve(let a), .curve(let b)) where a !== b:
                result = .error(
                    "Only one zoom-based \"step\" or \"interpolate\" subexpression may be used in an expression.")
            default: break
            }
        }
        return result
    }
}
