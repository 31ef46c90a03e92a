import IconrCore

/// A parse or type error, with where in the expression it is (`[1][2]`).
public struct ExpressionParsingError: Error, Sendable, Equatable {
    /// Where in the expression (`[1][2]`; empty: the whole).
    public var key: String
    /// The error, in the specification's words.
    public var message: String
}

/// Why an expression could not be compiled: every error found, in order.
public struct ExpressionCompileError: Error, Sendable, Equatable {
    /// The errors, in the order the compiler found them.
    public var errors: [ExpressionParsingError]
}

/// The state of parsing at one point of an expression tree: where it is, what type is
/// expected there, the `let` bindings in scope, and the errors found so far (shared).
final class ParsingContext {
    final class Errors {
        var items: [ExpressionParsingError] = []
    }

    final class Scope {
        let parent: Scope?
        let bindings: [String: any ExpressionNode]

        init(parent: Scope?, bindings: [String: any ExpressionNode]) {
            self.parent = parent
            self.bindings = bindings
        }

        func lookup(_ name: String) -> (any ExpressionNode)? { bindings[name] ?? parent?.lookup(name) }
    }

    enum Annotation { case assert, coerce, omit }

    /// Deeper expressions are refused, so that parsing and evaluation stay within the stack.
    static let maximumDepth = 1_000

    /// Where this is in the expression: `[2][1]`, or `[2].params.fill` inside image options.
    let key: String
    let depth: Int
    let scope: Scope?
    let errors: Errors
    let expectedType: StyleType?

    init(
        key: String = "", depth: Int = 0, expectedType: StyleType? = nil, scope: Scope? = nil, errors: Errors = Errors()
    ) {
        self.key = key
        self.depth = depth
        self.scope = scope
        self.errors = errors
        self.expectedType = expectedType
    }

    /// A context for the argument at `index`, expecting `expected`, with `bindings` added.
    func child(
        _ index: Int, expected: StyleType? = nil, bindings: [(String, any ExpressionNode)]? = nil
    ) -> ParsingContext {
        let scope =
            bindings.map { list in
                Scope(parent: self.scope, bindings: Dictionary(list, uniquingKeysWith: { _, last in last }))
            } ?? self.scope
        return ParsingContext(
            key: key + "[\(index)]", depth: depth + 1, expectedType: expected, scope: scope, errors: errors)
    }

    /// A context for a named member of an options object (`.params.fill`).
    func member(_ path: String, expected: StyleType? = nil) -> ParsingContext {
        ParsingContext(key: key + "." + path, depth: depth + 1, expectedType: expected, scope: scope, errors: errors)
    }

    /// The same place with no expected type and errors of its own (to try an overload).
    func fresh() -> ParsingContext {
        ParsingContext(key: key, depth: depth, expectedType: nil, scope: scope, errors: Errors())
    }

    func error(_ message: String, _ keys: Int...) {
        errors.items.append(ExpressionParsingError(key: key + keys.map { "[\($0)]" }.joined(), message: message))
    }

    /// Records and returns the mismatch when `actual` cannot stand where `expected` is asked.
    @discardableResult
    func checkSubtype(_ expected: StyleType, _ actual: StyleType) -> String? {
        let mismatch = expected.mismatch(actual)
        if let mismatch { error(mismatch) }
        return mismatch
    }

    /// Parses `json` (nil: a missing value) as the argument at `index` (nil: here).
    func parse(
        _ json: JSONValue?, index: Int? = nil, expected: StyleType? = nil,
        bindings: [(String, any ExpressionNode)]? = nil, annotation: Annotation? = nil
    ) -> (any ExpressionNode)? {
        if let index, index != 0 {
            return child(index, expected: expected, bindings: bindings).parseHere(json, annotation: annotation)
        }
        return parseHere(json, annotation: annotation)
    }

    private func parseHere(_ json: JSONValue?, annotation: Annotation?) -> (any ExpressionNode)? {
        guard let json else {
            error("'undefined' value invalid. Use null instead.")
            return nil
        }
        if depth > Self.maximumDepth {
            error("Expressions may be nested at most \(Self.maximumDepth) deep.")
            return nil
        }
        let items: [JSONValue]
        switch json {
        case .null, .string, .bool, .number: items = [.string("literal"), json]
        case .array(let array): items = array
        case .object:
            error("Bare objects invalid. Use [\"literal\", {...}] instead.")
            return nil
        }
        guard let first = items.first else {
            error("Expected an array with at least one element. If you wanted a literal array, use [\"literal\", []].")
            return nil
        }
        guard case .string(let op) = first else {
            error(
                "Expression name must be a string, but found \(first.javaScriptTypeName) instead. If you wanted a literal array, use [\"literal\", [...]].",
                0)
            return nil
        }
        let parsed: (any ExpressionNode)?
        if let special = SpecialForms.parsers[op] {
            parsed = special(items, self)
        } else if CompoundExpressions.definitions[op] != nil {
            parsed = CompoundExpressions.parse(items, self)
        } else {
            error("Unknown expression \"\(op)\". If you wanted a literal array, use [\"literal\", [...]].", 0)
            return nil
        }
        guard var node = parsed else { return nil }
        if let expected = expectedType {
            let actual = node.type
            let kind = expected.kind
            if ["string", "number", "boolean", "object", "array"].contains(kind) && actual == .value {
                node = annotate(node, expected, annotation ?? .assert)
            } else if (kind == "projectionDefinition" && ["string", "array", "value"].contains(actual.kind))
                || (["color", "formatted", "resolvedImage"].contains(kind)
                    && ["value", "string"].contains(actual.kind))
                || (["padding", "numberArray"].contains(kind) && ["value", "number", "array"].contains(actual.kind))
                || (kind == "colorArray" && ["value", "string", "array"].contains(actual.kind))
                || (kind == "variableAnchorOffsetCollection" && ["value", "array"].contains(actual.kind))
            {
                node = annotate(node, expected, annotation ?? .coerce)
            } else if checkSubtype(expected, actual) != nil {
                return nil
            }
        }
        // An expression of literals is evaluated now (images wait for the style's image list).
        if !(node is LiteralNode), node.type != .resolvedImage, ExpressionAnalysis.isConstant(node) {
            switch Result(catching: { () throws(ExpressionEvaluationError) in try node.evaluate(EvaluationContext()) })
            {
            case .success(let value): node = LiteralNode(type: node.type, value: value, key: key)
            case .failure(let failure):
                error(failure.message)
                return nil
            }
        }
        return node
    }

    private func annotate(_ node: any ExpressionNode, _ type: StyleType, _ annotation: Annotation) -> any ExpressionNode
    {
        switch annotation {
        case .assert: AssertionNode(type: type, arguments: [node], key: key)
        case .coerce: CoercionNode(type: type, arguments: [node], key: key)
        case .omit: node
        }
    }
}

/// Questions about a parsed expression: does it read the feature, the zoom, ...
enum ExpressionAnalysis {
    static func isConstant(_ node: any ExpressionNode) -> Bool {
        if let variable = node as? VarNode { return isConstant(variable.bound) }
        if let compound = node as? CompoundNode, compound.name == "error" { return false }
        if node is CollatorNode || node is WithinNode || node is DistanceNode || node is GlobalStateNode
            || node is ConfigNode
        {
            return false
        }
        let annotation = node is CoercionNode || node is AssertionNode
        for child in node.children {
            if annotation ? !isConstant(child) : !(child is LiteralNode) { return false }
        }
        return isFeatureConstant(node)
            && isGlobalPropertyConstant(
                node,
                ["zoom", "heatmap-density", "elevation", "line-progress", "accumulated", "is-supported-script"]
                    + CompoundExpressions.mapboxEnvironmentOperators)
    }

    static func isFeatureConstant(_ node: any ExpressionNode) -> Bool {
        if let compound = node as? CompoundNode {
            switch compound.name {
            case "get", "has": if compound.arguments.count == 1 { return false }
            case "feature-state", "properties", "geometry-type", "id": return false
            default: if compound.name.hasPrefix("filter-") { return false }
            }
        }
        if node is WithinNode || node is DistanceNode { return false }
        return node.children.allSatisfy(isFeatureConstant)
    }

    static func isGlobalPropertyConstant(_ node: any ExpressionNode, _ names: [String]) -> Bool {
        if let compound = node as? CompoundNode, names.contains(compound.name) { return false }
        return node.children.allSatisfy { isGlobalPropertyConstant($0, names) }
    }
}
