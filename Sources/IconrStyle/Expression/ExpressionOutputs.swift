import IconrCore

/// The values an expression can produce when the feature is not known: the literal
/// outputs of its branches (`match`, `case`, `step`, `coalesce`, ...), every `concat` of
/// its parts' values (a name built from a class and a rating), each `image` with every
/// combination of its parameters' literal colors. Where a value comes from data, it is
/// left out and its place named in `open`.
enum ExpressionOutputs {
    struct Outputs {
        var values: [StyleValue] = []
        /// Keys (`[2].params.fill`) of values that come from feature data.
        var open: Set<String> = []
    }

    /// At most this many combinations of one image's parameters are enumerated, and this
    /// many values in all: past them the rest counts as open (bounded work for any style).
    static let maximumCombinations = 1_024
    static let maximumValues = 20_000

    static func enumerate(_ node: any ExpressionNode, context: EvaluationContext) -> Outputs {
        var outputs = Outputs()
        collect(node, context, into: &outputs)
        var seen = Set<String>()
        outputs.values = outputs.values.filter { seen.insert($0.jsonText).inserted }
        return outputs
    }

    /// The largest `icon-size` at a tile zoom for features not known: the exact value where it
    /// does not depend on data, else the largest of its literal outputs (1 when none).
    static func largestSize(_ size: CompiledExpression?, tileZoom: Double, context: EvaluationContext) -> Double {
        guard let size else { return 1 }
        if size.isFeatureConstant {
            var featureless = context
            return size.rasterSize(tileZoom: tileZoom, in: &featureless)
        }
        var zoomContext = context
        zoomContext.zoom = tileZoom
        let numbers = enumerate(size.root, context: zoomContext).values.compactMap { value -> Double? in
            if case .number(let n) = value, n.isFinite { return n }
            return nil
        }
        return numbers.max() ?? 1
    }

    private static func collect(_ node: any ExpressionNode, _ context: EvaluationContext, into outputs: inout Outputs) {
        // What does not read the feature has one value here.
        if ExpressionAnalysis.isFeatureConstant(node) {
            if let value = try? node.evaluate(context) { outputs.values.append(value) }
            return
        }
        switch node {
        case let match as MatchNode:
            for output in match.outputs + [match.otherwise] { collect(output, context, into: &outputs) }
        case let node as CaseNode:
            for output in node.branches.map(\.output) + [node.otherwise] { collect(output, context, into: &outputs) }
        case let step as StepNode:
            for output in step.outputs { collect(output, context, into: &outputs) }
        case let interpolate as InterpolateNode where interpolate.type == .number:
            // Linear and exponential curves reach their extremes at stops.
            for output in interpolate.outputs { collect(output, context, into: &outputs) }
        case let coalesce as CoalesceNode:
            for argument in coalesce.arguments { collect(argument, context, into: &outputs) }
        case let concat as CompoundNode where concat.name == "concat":
            // Every combination of its parts' values (a name built from a class and a rank).
            var texts = [""]
            for argument in concat.arguments {
                var part = Outputs()
                collect(argument, context, into: &part)
                outputs.open.formUnion(part.open)
                guard part.open.isEmpty else { return }
                let values = Set(part.values.map(\.text)).sorted()
                guard texts.count * values.count <= maximumValues else {
                    outputs.open.insert(concat.key + " (more than \(maximumValues) values)")
                    return
                }
                texts = texts.flatMap { text in values.map { text + $0 } }
            }
            outputs.values += texts.map(StyleValue.string)
        case let letNode as LetNode:
            collect(letNode.result, context, into: &outputs)
        case let variable as VarNode:
            collect(variable.bound, context, into: &outputs)
        case let coercion as CoercionNode:
            var inner = Outputs()
            for argument in coercion.arguments { collect(argument, context, into: &inner) }
            outputs.open.formUnion(inner.open)
            for value in inner.values {
                let literal = LiteralNode(type: .value, value: value, key: coercion.key)
                let converted = CoercionNode(type: coercion.type, arguments: [literal], key: coercion.key)
                if let result = try? converted.evaluate(context) { outputs.values.append(result) }
            }
        case let assertion as AssertionNode:
            var inner = Outputs()
            for argument in assertion.arguments { collect(argument, context, into: &inner) }
            outputs.open.formUnion(inner.open)
            outputs.values += inner.values.filter { assertion.type.mismatch($0.type) == nil }
        case let image as ImageNode:
            collectImage(image, context, into: &outputs)
        default:
            outputs.open.insert(node.key)
        }
    }

    private static func collectImage(_ image: ImageNode, _ context: EvaluationContext, into outputs: inout Outputs) {
        var names = Outputs()
        collect(image.name, context, into: &names)
        outputs.open.formUnion(names.open)
        // Each parameter: its literal colors, and (when data may give any) none, the default.
        var choices: [(name: String, colors: [StyleColor?])] = []
        for param in image.params {
            var values = Outputs()
            collect(param.value, context, into: &values)
            var colors: [StyleColor?] = values.values.compactMap { value in
                if case .color(let color) = value { return color }
                return nil
            }
            if !values.open.isEmpty {
                outputs.open.insert(param.value.key)
                colors.append(nil)
            }
            if colors.isEmpty { colors = [nil] }
            choices.append((param.name, colors))
        }
        var combinations: [[String: StyleColor]] = [[:]]
        for choice in choices {
            var next: [[String: StyleColor]] = []
            for combination in combinations {
                for color in choice.colors {
                    var params = combination
                    params[choice.name] = color
                    next.append(params)
                    if next.count >= maximumCombinations { break }
                }
            }
            combinations = next
        }
        for name in names.values {
            let text = name.text + (image.iconset.map { ImageNode.iconsetSeparator + $0 } ?? "")
            guard !name.text.isEmpty else { continue }
            for params in combinations {
                guard outputs.values.count < maximumValues else {
                    outputs.open.insert(image.key + " (more than \(maximumValues) values)")
                    return
                }
                outputs.values.append(
                    .image(ResolvedImage(name: text, available: context.isAvailable(text), params: params)))
            }
        }
    }
}
