import IconrCore

/// The style specification's test-suite record of an expression: how it compiled and what
/// it gave for each input. `iconr expression` prints it; the conformance tests compare it.
package enum ExpressionReport {
    /// Compiles `expression` for `specification` and evaluates it for each
    /// `[globals, feature]` input (`{"zoom": 5}`, `{"properties": {...}, "id": ..., "geometry": ...}`).
    package static func make(
        expression: JSONValue, specification: PropertySpecification,
        inputs: [JSONValue], globalState: [String: StyleValue] = [:]
    ) -> JSONValue {
        let compiled: CompiledExpression
        switch CompiledExpression.compile(expression, specification: specification, globalState: globalState) {
        case .failure(let failure):
            return .object([
                "compiled": .object([
                    "result": .string("error"),
                    "errors": .array(
                        failure.errors.map { .object(["key": .string($0.key), "error": .string($0.message)]) }),
                ])
            ])
        case .success(let value): compiled = value
        }
        var outputs: [JSONValue] = []
        for input in inputs {
            let pair = input.arrayValue ?? []
            let context = evaluationContext(
                globals: pair.first ?? .object([:]), feature: pair.count > 1 ? pair[1] : .object([:]))
            switch Result(catching: { () throws(ExpressionEvaluationError) in try compiled.evaluate(context) }) {
            case .success(let value):
                if case .color(let color) = value {
                    outputs.append(.array(color.premultiplied.map(JSONValue.number)))
                } else {
                    outputs.append(value.json)
                }
            case .failure(let failure):
                outputs.append(
                    .object(["error": .string("layers[0].paint.some-property\(failure.key): \(failure.message)")]))
            }
        }
        return .object([
            "compiled": .object([
                "result": .string("success"),
                "isFeatureConstant": .bool(compiled.isFeatureConstant),
                "isZoomConstant": .bool(compiled.isZoomConstant),
                "type": .string(compiled.type.description),
            ]),
            "outputs": .array(outputs),
        ])
    }

    /// The evaluation context of one test-suite input.
    package static func evaluationContext(globals: JSONValue, feature: JSONValue) -> EvaluationContext {
        var context = EvaluationContext()
        if case .number(let zoom)? = globals["zoom"] { context.zoom = zoom }
        if case .number(let density)? = globals["heatmapDensity"] { context.heatmapDensity = density }
        if case .number(let elevation)? = globals["elevation"] { context.elevation = elevation }
        if case .number(let progress)? = globals["lineProgress"] { context.lineProgress = progress }
        if let images = globals["availableImages"]?.arrayValue {
            context.availableImages = Set(images.compactMap(\.stringValue))
        }
        if let state = globals["globalState"]?.objectValue { context.globalState = state.mapValues(StyleValue.init) }
        // A tile address: zoom 0-30 and whole x, y within it; anything else is no tile.
        if let id = globals["canonicalID"], case .number(let z)? = id["z"], case .number(let x)? = id["x"],
            case .number(let y)? = id["y"],
            let zoom = Int(exactly: z), (0...30).contains(zoom), let column = Int(exactly: x),
            let row = Int(exactly: y),
            (0..<(1 << zoom)).contains(column), (0..<(1 << zoom)).contains(row)
        {
            context.canonical = (zoom, column, row)
        }
        let geometry = feature["geometry"].flatMap(GeoJSONGeometry.init)
        context.feature = ExpressionFeature(
            properties: (feature["properties"]?.objectValue ?? [:]).mapValues(StyleValue.init),
            id: feature["id"].map(StyleValue.init),
            geometryType: feature["geometry"]?["type"]?.stringValue,
            geometry: context.canonical == nil ? nil : geometry)
        if let state = feature["featureState"]?.objectValue { context.featureState = state.mapValues(StyleValue.init) }
        return context
    }
}
