import IconrCore

/// A runtime failure of an expression for one feature, with where in the expression it
/// happened (`[2]`: the third element of the outer array).
public struct ExpressionEvaluationError: Error, Sendable, Equatable {
    /// Where in the expression it failed (`[2]`, `[1][3]`).
    public var key: String
    /// What failed, in the specification's words.
    public var message: String
}

/// A feature as expressions see it.
public struct ExpressionFeature: Sendable {
    /// Its properties, as `get` and `has` read them.
    public var properties: [String: StyleValue]
    /// Its id (`id`), if it has one.
    public var id: StyleValue?
    /// `Point`, `LineString`, `Polygon`, or their `Multi` forms.
    public var geometryType: String?
    /// Its geometry, for `within` and `distance`.
    public var geometry: GeoJSONGeometry?

    /// A feature; its geometry type comes from `geometry` when not given.
    public init(
        properties: [String: StyleValue] = [:], id: StyleValue? = nil, geometryType: String? = nil,
        geometry: GeoJSONGeometry? = nil
    ) {
        self.properties = properties
        self.id = id
        self.geometryType = geometryType ?? geometry?.typeName
        self.geometry = geometry
    }
}

/// The camera and environment of a Mapbox GL JS v3 map, which MapLibre has no expressions
/// for: a style rewritten for MapLibre takes these values in their place.
public struct MapboxEnvironment: Sendable, Equatable {
    /// The camera's pitch in degrees (`["pitch"]`); 0 looks straight down.
    public var pitch: Double = 0
    /// A symbol's distance from the map's center (`["distance-from-center"]`); 0 at the center.
    public var distanceFromCenter: Double = 0
    /// The worldview (`["worldview"]`), an ISO country code; Mapbox's default is "US".
    public var worldview = "US"
    /// The lights' brightness, 0-1 (`["measure-light", "brightness"]`).
    public var lightBrightness: Double = LightPreset.day.brightness

    /// Mapbox's defaults: no pitch, at the center, US worldview, daylight.
    public init() {}
}

/// The light presets of Mapbox Standard, by the brightness `measure-light` reports for them.
public enum LightPreset: String, CaseIterable, Sendable {
    case day, dawn, dusk, night

    /// The brightness `["measure-light", "brightness"]` gives under the preset's lights.
    public var brightness: Double {
        switch self {
        case .day: 0.8
        case .dawn: 0.5
        case .dusk: 0.35
        case .night: 0.1
        }
    }
}

/// What an expression is evaluated against: the camera, the feature, its state, the style's
/// images and global state.
public struct EvaluationContext: Sendable {
    /// The zoom `["zoom"]` reads; nil outside zoom-dependent evaluation.
    public var zoom: Double?
    /// The heatmap density `["heatmap-density"]` reads.
    public var heatmapDensity: Double?
    /// The terrain elevation `["elevation"]` reads (Mapbox).
    public var elevation: Double?
    /// The position along a line `["line-progress"]` reads.
    public var lineProgress: Double?
    /// The clustered value `["accumulated"]` reads.
    public var accumulated: StyleValue?
    /// The feature being styled, if any.
    public var feature: ExpressionFeature?
    /// The feature's state, as `feature-state` reads it.
    public var featureState: [String: StyleValue] = [:]
    /// Image names the style has; nil when unknown (then `imageExists` decides, or every
    /// image counts as available).
    public var availableImages: Set<String>?
    /// Whether an image exists, when the names are not listed (an icon folder).
    public var imageExists: (@Sendable (String) -> Bool)?
    /// The style's global state, as `global-state` reads it.
    public var globalState: [String: StyleValue] = [:]
    /// Mapbox `config` options: the style's `schema` defaults, with any overrides.
    public var config: [String: StyleValue] = [:]
    /// The `config` values that are expressions, compiled (`ConfigNode.compiled`); one not
    /// here is compiled when read.
    public var configExpressions: [String: CompiledExpression] = [:]
    /// The tile `within` and `distance` measure in (z, x, y); nil outside tiles.
    public var canonical: (z: Int, x: Int, y: Int)?
    /// What Mapbox GL JS v3's `pitch`, `distance-from-center`, `worldview` and
    /// `measure-light` read.
    public var mapbox = MapboxEnvironment()

    /// A context at `zoom` for `feature`; set the other fields as needed.
    public init(zoom: Double? = nil, feature: ExpressionFeature? = nil) {
        self.zoom = zoom
        self.feature = feature
    }

    var properties: [String: StyleValue] { feature?.properties ?? [:] }

    func isAvailable(_ image: String) -> Bool {
        if let availableImages { return availableImages.contains(image) }
        return imageExists?(image) ?? true
    }
}

/// One node of a parsed expression. Nodes are immutable; `key` is where the node is in the
/// expression's JSON, for error messages.
protocol ExpressionNode: AnyObject, Sendable {
    var type: StyleType { get }
    var key: String { get }
    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue
    var children: [any ExpressionNode] { get }
}

extension ExpressionNode {
    func fail(_ message: String) -> ExpressionEvaluationError {
        ExpressionEvaluationError(key: key, message: message)
    }

    func number(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> Double {
        if case .number(let value) = try evaluate(context) { return value }
        return .nan
    }

    func string(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> String {
        switch try evaluate(context) {
        case .string(let value): return value
        case let other: return other.text
        }
    }
}

final class LiteralNode: ExpressionNode {
    let type: StyleType
    let value: StyleValue
    let key: String

    init(type: StyleType, value: StyleValue, key: String) {
        self.type = type
        self.value = value
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) -> StyleValue { value }
    var children: [any ExpressionNode] { [] }
}

/// `string`, `number`, `boolean`, `object`, `array`: the first argument of the type, or an error.
final class AssertionNode: ExpressionNode {
    let type: StyleType
    let arguments: [any ExpressionNode]
    let key: String

    init(type: StyleType, arguments: [any ExpressionNode], key: String) {
        self.type = type
        self.arguments = arguments
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        var last = StyleValue.null
        for argument in arguments {
            last = try argument.evaluate(context)
            if type.mismatch(last.type) == nil { return last }
        }
        throw fail("Expected value to be of type \(type), but found \(last.type) instead.")
    }

    var children: [any ExpressionNode] { arguments }
}

final class LetNode: ExpressionNode {
    let bindings: [(name: String, value: any ExpressionNode)]
    let result: any ExpressionNode
    let key: String
    var type: StyleType { result.type }

    init(bindings: [(name: String, value: any ExpressionNode)], result: any ExpressionNode, key: String) {
        self.bindings = bindings
        self.result = result
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        try result.evaluate(context)
    }

    var children: [any ExpressionNode] { bindings.map(\.value) + [result] }
}

final class VarNode: ExpressionNode {
    let name: String
    let bound: any ExpressionNode
    let key: String
    var type: StyleType { bound.type }

    init(name: String, bound: any ExpressionNode, key: String) {
        self.name = name
        self.bound = bound
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        try bound.evaluate(context)
    }

    var children: [any ExpressionNode] { [] }
}

final class AtNode: ExpressionNode {
    let type: StyleType
    let index: any ExpressionNode
    let input: any ExpressionNode
    let key: String

    init(type: StyleType, index: any ExpressionNode, input: any ExpressionNode, key: String) {
        self.type = type
        self.index = index
        self.input = input
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        let index = try index.number(context)
        guard case .array(let items) = try input.evaluate(context) else { return .null }
        if index < 0 { throw fail("Array index out of bounds: \(index.javaScriptText) < 0.") }
        if index >= Double(items.count) {
            throw fail("Array index out of bounds: \(index.javaScriptText) > \(items.count - 1).")
        }
        if index != index.rounded(.down) {
            throw fail("Array index must be an integer, but found \(index.javaScriptText) instead.")
        }
        return items[Int(index)]
    }

    var children: [any ExpressionNode] { [index, input] }
}

/// `in` and `index-of`: a needle in an array or a string.
final class SearchNode: ExpressionNode {
    let returnsIndex: Bool
    let needle: any ExpressionNode
    let haystack: any ExpressionNode
    let fromIndex: (any ExpressionNode)?
    let key: String
    var type: StyleType { returnsIndex ? .number : .boolean }

    init(
        returnsIndex: Bool, needle: any ExpressionNode, haystack: any ExpressionNode,
        fromIndex: (any ExpressionNode)?, key: String
    ) {
        self.returnsIndex = returnsIndex
        self.needle = needle
        self.haystack = haystack
        self.fromIndex = fromIndex
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        let needle = try needle.evaluate(context)
        let haystack = try haystack.evaluate(context)
        if !returnsIndex && !haystack.isTruthy { return .boolean(false) }
        switch needle {
        case .boolean, .string, .number, .null: break
        default:
            throw fail(
                "Expected first argument to be of type boolean, string, number or null, but found \(needle.type) instead."
            )
        }
        var start = 0.0
        if let fromIndex { start = try fromIndex.number(context) }
        switch haystack {
        case .string(let text):
            guard case .string(let word) = needle else {
                // JavaScript searches for the needle's text (`null`, `true`, `1`).
                let word = needle == .null ? "null" : needle.text
                return result(Self.index(of: word, in: text, from: start))
            }
            return result(Self.index(of: word, in: text, from: start))
        case .array(let items):
            var from = start.isNaN ? 0 : Int(max(min(start, Double(items.count)), -Double(items.count)))
            if from < 0 { from += items.count }
            let found = items[from...].firstIndex { $0.strictlyEquals(needle) }
            return result(found ?? -1)
        default:
            throw fail("Expected second argument to be of type array or string, but found \(haystack.type) instead.")
        }
    }

    private func result(_ index: Int) -> StyleValue {
        returnsIndex ? .number(Double(index)) : .boolean(index >= 0)
    }

    /// The code point index of `word` in `text` at or after the code point `start`, or -1.
    static func index(of word: String, in text: String, from start: Double) -> Int {
        let scalars = Array(text.unicodeScalars), target = Array(word.unicodeScalars)
        let first = start.isNaN ? 0 : Int(max(0, min(start, Double(scalars.count))))
        if target.isEmpty { return first }
        return scalars.firstOffset(of: target, from: first) ?? -1
    }

    var children: [any ExpressionNode] { [needle, haystack] + (fromIndex.map { [$0] } ?? []) }
}

final class SliceNode: ExpressionNode {
    let type: StyleType
    let input: any ExpressionNode
    let begin: any ExpressionNode
    let end: (any ExpressionNode)?
    let key: String

    init(type: StyleType, input: any ExpressionNode, begin: any ExpressionNode, end: (any ExpressionNode)?, key: String)
    {
        self.type = type
        self.input = input
        self.begin = begin
        self.end = end
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        let input = try input.evaluate(context)
        let begin = try begin.number(context)
        let end = try end?.number(context)
        func bounds(_ count: Int) -> Range<Int> {
            func clamp(_ value: Double) -> Int {
                if value.isNaN { return 0 }
                let index =
                    value < 0
                    ? max(Double(count) + value.rounded(.towardZero), 0)
                    : min(value.rounded(.towardZero), Double(count))
                return Int(index)
            }
            let lower = clamp(begin), upper = end.map(clamp) ?? count
            return lower..<max(lower, upper)
        }
        switch input {
        case .string(let text):
            let scalars = Array(text.unicodeScalars)
            var result = String.UnicodeScalarView()
            result.append(contentsOf: scalars[bounds(scalars.count)])
            return .string(String(result))
        case .array(let items):
            return .array(Array(items[bounds(items.count)]))
        default:
            throw fail("Expected first argument to be of type array or string, but found \(input.type) instead.")
        }
    }

    var children: [any ExpressionNode] { [input, begin] + (end.map { [$0] } ?? []) }
}

final class LengthNode: ExpressionNode {
    let input: any ExpressionNode
    let key: String
    var type: StyleType { .number }

    init(input: any ExpressionNode, key: String) {
        self.input = input
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        switch try input.evaluate(context) {
        case .string(let text): return .number(Double(text.unicodeScalars.count))
        case .array(let items): return .number(Double(items.count))
        case let other:
            throw fail("Expected value to be of type string or array, but found \(other.type) instead.")
        }
    }

    var children: [any ExpressionNode] { [input] }
}

/// A `match` label: the specification allows integers and strings.
enum MatchLabel: Hashable, Sendable {
    case number(Double)
    case string(String)
}

final class MatchNode: ExpressionNode {
    let type: StyleType
    let inputType: StyleType
    let input: any ExpressionNode
    let cases: [MatchLabel: Int]
    let outputs: [any ExpressionNode]
    let otherwise: any ExpressionNode
    let key: String

    init(
        type: StyleType, inputType: StyleType, input: any ExpressionNode, cases: [MatchLabel: Int],
        outputs: [any ExpressionNode], otherwise: any ExpressionNode, key: String
    ) {
        self.type = type
        self.inputType = inputType
        self.input = input
        self.cases = cases
        self.outputs = outputs
        self.otherwise = otherwise
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        let value = try input.evaluate(context)
        let label: MatchLabel? =
            switch value {
            case .number(let number) where inputType == .number: .number(number)
            case .string(let text) where inputType == .string: .string(text)
            default: nil
            }
        if let label, let index = cases[label] { return try outputs[index].evaluate(context) }
        return try otherwise.evaluate(context)
    }

    var children: [any ExpressionNode] { [input] + outputs + [otherwise] }
}

final class CaseNode: ExpressionNode {
    let type: StyleType
    let branches: [(test: any ExpressionNode, output: any ExpressionNode)]
    let otherwise: any ExpressionNode
    let key: String

    init(
        type: StyleType, branches: [(test: any ExpressionNode, output: any ExpressionNode)],
        otherwise: any ExpressionNode, key: String
    ) {
        self.type = type
        self.branches = branches
        self.otherwise = otherwise
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        for branch in branches where try branch.test.evaluate(context).isTruthy {
            return try branch.output.evaluate(context)
        }
        return try otherwise.evaluate(context)
    }

    var children: [any ExpressionNode] { branches.flatMap { [$0.test, $0.output] } + [otherwise] }
}

final class CoalesceNode: ExpressionNode {
    let type: StyleType
    let arguments: [any ExpressionNode]
    let key: String

    init(type: StyleType, arguments: [any ExpressionNode], key: String) {
        self.type = type
        self.arguments = arguments
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        var requestedImage: ResolvedImage?
        for (index, argument) in arguments.enumerated() {
            var result = try argument.evaluate(context)
            // An image the style lacks is skipped; if none is there, the first one asked
            // for is the result (so that renderers can ask for it).
            if case .image(let image) = result, !image.available {
                if requestedImage == nil { requestedImage = image }
                result = index == arguments.count - 1 ? .image(requestedImage ?? image) : .null
            }
            if result != .null { return result }
        }
        return .null
    }

    var children: [any ExpressionNode] { arguments }
}

/// The stop at or below `value` in ascending `labels` (binary search).
func stopIndex(_ labels: [Double], _ value: Double) -> Int {
    var lower = 0, upper = labels.count - 1
    while lower <= upper {
        let middle = (lower + upper) / 2
        let current = labels[middle], next = middle + 1 < labels.count ? labels[middle + 1] : .infinity
        if current <= value {
            if middle == labels.count - 1 || value < next { return middle }
            lower = middle + 1
        } else if current > value {
            upper = middle - 1
        } else {
            break
        }
    }
    return 0
}

final class StepNode: ExpressionNode {
    let type: StyleType
    let input: any ExpressionNode
    let labels: [Double]
    let outputs: [any ExpressionNode]
    let key: String

    init(type: StyleType, input: any ExpressionNode, labels: [Double], outputs: [any ExpressionNode], key: String) {
        self.type = type
        self.input = input
        self.labels = labels
        self.outputs = outputs
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        if labels.count == 1 { return try outputs[0].evaluate(context) }
        let value = try input.number(context)
        if value <= labels[0] { return try outputs[0].evaluate(context) }
        if value >= labels[labels.count - 1] { return try outputs[labels.count - 1].evaluate(context) }
        if value.isNaN { throw fail("Input is not a number.") }
        return try outputs[stopIndex(labels, value)].evaluate(context)
    }

    var children: [any ExpressionNode] { [input] + outputs }
}
