import Glibc
import IconrCore

/// How `interpolate` weighs two stops.
enum Interpolation: Sendable, Equatable {
    case linear
    case exponential(base: Double)
    case cubicBezier(Double, Double, Double, Double)

    /// 0 at `lower`, 1 at `upper`.
    func factor(_ input: Double, lower: Double, upper: Double) -> Double {
        switch self {
        case .linear: return Self.exponential(input, base: 1, lower: lower, upper: upper)
        case .exponential(let base): return Self.exponential(input, base: base, lower: lower, upper: upper)
        case .cubicBezier(let x1, let y1, let x2, let y2):
            let t = Self.exponential(input, base: 1, lower: lower, upper: upper)
            return UnitBezier(x1: x1, y1: y1, x2: x2, y2: y2).solve(t)
        }
    }

    static func exponential(_ input: Double, base: Double, lower: Double, upper: Double) -> Double {
        let difference = upper - lower, progress = input - lower
        if difference == 0 { return 0 }
        if base == 1 { return progress / difference }
        return (pow(base, progress) - 1) / (pow(base, difference) - 1)
    }
}

/// A cubic Bézier easing from (0,0) to (1,1), solved for y at a given x.
struct UnitBezier {
    let cx, bx, ax, cy, by, ay: Double

    init(x1: Double, y1: Double, x2: Double, y2: Double) {
        cx = 3 * x1
        bx = 3 * (x2 - x1) - cx
        ax = 1 - cx - bx
        cy = 3 * y1
        by = 3 * (y2 - y1) - cy
        ay = 1 - cy - by
    }

    private func x(_ t: Double) -> Double { ((ax * t + bx) * t + cx) * t }
    private func y(_ t: Double) -> Double { ((ay * t + by) * t + cy) * t }
    private func slopeX(_ t: Double) -> Double { (3 * ax * t + 2 * bx) * t + cx }

    func solve(_ x: Double, epsilon: Double = 1e-6) -> Double { y(solveCurveX(x, epsilon: epsilon)) }

    private func solveCurveX(_ target: Double, epsilon: Double) -> Double {
        if target < 0 { return 0 }
        if target > 1 { return 1 }
        var t = target
        for _ in 0..<8 {
            let error = x(t) - target
            if abs(error) < epsilon { return t }
            let slope = slopeX(t)
            if abs(slope) < 1e-6 { break }
            t -= error / slope
        }
        var low = 0.0, high = 1.0
        t = target
        for _ in 0..<64 {
            let value = x(t)
            if abs(value - target) < epsilon { break }
            if target > value { low = t } else { high = t }
            t = (high - low) * 0.5 + low
        }
        return t
    }
}

final class InterpolateNode: ExpressionNode {
    enum Space: Sendable { case rgb, hcl, lab }

    let type: StyleType
    let space: Space
    let interpolation: Interpolation
    let input: any ExpressionNode
    let labels: [Double]
    let outputs: [any ExpressionNode]
    let key: String

    init(
        type: StyleType, space: Space, interpolation: Interpolation, input: any ExpressionNode,
        labels: [Double], outputs: [any ExpressionNode], key: String
    ) {
        self.type = type
        self.space = space
        self.interpolation = interpolation
        self.input = input
        self.labels = labels
        self.outputs = outputs
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        if labels.count == 1 { return try outputs[0].evaluate(context) }
        let value = try input.number(context)
        if value <= labels[0] { return try outputs[0].evaluate(context) }
        let last = labels.count - 1
        if value >= labels[last] { return try outputs[last].evaluate(context) }
        if value.isNaN { throw fail("Input is not a number.") }
        let index = stopIndex(labels, value)
        let t = interpolation.factor(value, lower: labels[index], upper: labels[index + 1])
        let lower = try outputs[index].evaluate(context)
        let upper = try outputs[index + 1].evaluate(context)
        return Self.blend(lower, upper, t, space: space)
    }

    static func blend(_ a: StyleValue, _ b: StyleValue, _ t: Double, space: Space) -> StyleValue {
        func mix(_ x: Double, _ y: Double) -> Double { x + t * (y - x) }
        switch (a, b) {
        case (.number(let x), .number(let y)): return .number(mix(x, y))
        case (.color(let x), .color(let y)): return .color(x.interpolated(to: y, t, space: space))
        case (.array(let x), .array(let y)):
            return .array(
                zip(x, y).map { pair in
                    if case .number(let p) = pair.0, case .number(let q) = pair.1 { return .number(mix(p, q)) }
                    return pair.0
                })
        case (.padding(let x), .padding(let y)): return .padding(zip(x, y).map(mix))
        case (.numberArray(let x), .numberArray(let y)):
            return .numberArray(x.count == y.count ? zip(x, y).map(mix) : (t < 0.5 ? x : y))
        case (.colorArray(let x), .colorArray(let y)):
            return .colorArray(zip(x, y).map { $0.interpolated(to: $1, t, space: space) })
        case (.variableAnchorOffsetCollection(let x), .variableAnchorOffsetCollection(let y)):
            var values: [StyleValue] = []
            for (p, q) in zip(x, y) {
                if case .array(let u) = p, case .array(let v) = q {
                    values.append(blend(.array(u), .array(v), t, space: .rgb))
                } else {
                    values.append(p)
                }
            }
            return .variableAnchorOffsetCollection(values)
        default:
            let from = projectionName(a), to = projectionName(b)
            if let from, let to { return .projection(from: from, to: to, transition: t) }
            return t < 0.5 ? a : b
        }
    }

    private static func projectionName(_ value: StyleValue) -> String? {
        if case .string(let name) = value { return name }
        return nil
    }

    var children: [any ExpressionNode] { [input] + outputs }
}

extension StyleColor {
    /// The color at `t` between this and `other`, mixed in sRGB, HCL or CIELAB.
    func interpolated(to other: StyleColor, _ t: Double, space: InterpolateNode.Space) -> StyleColor {
        func mix(_ x: Double, _ y: Double) -> Double { x + t * (y - x) }
        switch space {
        case .rgb:
            return StyleColor(
                red: mix(red, other.red), green: mix(green, other.green), blue: mix(blue, other.blue),
                alpha: mix(alpha, other.alpha))
        case .lab:
            let a = lab, b = other.lab
            return StyleColor(lab: (mix(a.l, b.l), mix(a.a, b.a), mix(a.b, b.b)), alpha: mix(alpha, other.alpha))
        case .hcl:
            let a = hcl, b = other.hcl
            var hue: Double, chroma: Double?
            if !a.h.isNaN && !b.h.isNaN {
                var dh = b.h - a.h
                if b.h > a.h && dh > 180 { dh -= 360 } else if b.h < a.h && a.h - b.h > 180 { dh += 360 }
                hue = a.h + t * dh
            } else if !a.h.isNaN {
                hue = a.h
                if b.l == 1 || b.l == 0 { chroma = a.c }
            } else if !b.h.isNaN {
                hue = b.h
                if a.l == 1 || a.l == 0 { chroma = b.c }
            } else {
                hue = .nan
            }
            let h = hue.isNaN ? 0 : hue * .pi / 180
            let c = chroma ?? mix(a.c, b.c), l = mix(a.l, b.l)
            return StyleColor(lab: (l, cos(h) * c, sin(h) * c), alpha: mix(alpha, other.alpha))
        }
    }

    private static let xn = 0.96422, yn = 1.0, zn = 0.82521
    private static let t0 = 4.0 / 29, t1 = 6.0 / 29, t2 = 3 * t1 * t1, t3 = t1 * t1 * t1

    var lab: (l: Double, a: Double, b: Double) {
        func linear(_ x: Double) -> Double { x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4) }
        func f(_ t: Double) -> Double { t > Self.t3 ? pow(t, 1.0 / 3) : t / Self.t2 + Self.t0 }
        let r = linear(red), g = linear(green), b = linear(blue)
        let y = f((0.2225045 * r + 0.7168786 * g + 0.0606169 * b) / Self.yn)
        var x = y, z = y
        if !(r == g && g == b) {
            x = f((0.4360747 * r + 0.3850649 * g + 0.1430804 * b) / Self.xn)
            z = f((0.0139322 * r + 0.0971045 * g + 0.7141733 * b) / Self.zn)
        }
        let l = 116 * y - 16
        return (l < 0 ? 0 : l, 500 * (x - y), 200 * (y - z))
    }

    var hcl: (h: Double, c: Double, l: Double) {
        let (l, a, b) = lab
        let c = (a * a + b * b).squareRoot()
        var h = Double.nan
        if (c * 10000).javaScriptRounded != 0 {
            h = (atan2(b, a) * 180 / .pi).truncatingRemainder(dividingBy: 360)
            if h < 0 { h += 360 }
        }
        return (h, c, l)
    }

    init(lab: (l: Double, a: Double, b: Double), alpha: Double) {
        func f(_ t: Double) -> Double { t > Self.t1 ? t * t * t : Self.t2 * (t - Self.t0) }
        func gamma(_ x: Double) -> Double {
            let v = x <= 0.00304 ? 12.92 * x : 1.055 * pow(x, 1 / 2.4) - 0.055
            return v < 0 ? 0 : v > 1 ? 1 : v
        }
        var y = (lab.l + 16) / 116
        var x = lab.a.isNaN ? y : y + lab.a / 500
        var z = lab.b.isNaN ? y : y - lab.b / 200
        y = Self.yn * f(y)
        x = Self.xn * f(x)
        z = Self.zn * f(z)
        self.init(
            red: gamma(3.1338561 * x - 1.6168667 * y - 0.4906146 * z),
            green: gamma(-0.9787684 * x + 1.9161415 * y + 0.033454 * z),
            blue: gamma(0.0719453 * x - 0.2289914 * y + 1.4052427 * z), alpha: alpha)
    }
}

/// `==`, `!=`, `<`, `>`, `<=`, `>=`, optionally with a collator.
final class ComparisonNode: ExpressionNode {
    let op: String
    let lhs: any ExpressionNode
    let rhs: any ExpressionNode
    let collator: (any ExpressionNode)?
    let key: String
    var type: StyleType { .boolean }
    private var isOrdering: Bool { op != "==" && op != "!=" }
    private var hasUntypedArgument: Bool { lhs.type == .value || rhs.type == .value }

    init(op: String, lhs: any ExpressionNode, rhs: any ExpressionNode, collator: (any ExpressionNode)?, key: String) {
        self.op = op
        self.lhs = lhs
        self.rhs = rhs
        self.collator = collator
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        let a = try lhs.evaluate(context), b = try rhs.evaluate(context)
        if isOrdering && hasUntypedArgument {
            let left = a.type.kind, right = b.type.kind
            if left != right || !(left == "string" || left == "number") {
                throw fail(
                    "Expected arguments for \"\(op)\" to be (string, string) or (number, number), but found (\(left), \(right)) instead."
                )
            }
        }
        if let collator, case .collator(let rules) = try collator.evaluate(context),
            case .string(let x) = a, case .string(let y) = b
        {
            let order = rules.compare(x, y)
            return .boolean(Self.holds(op, order: order))
        }
        switch op {
        case "==": return .boolean(a.strictlyEquals(b))
        case "!=": return .boolean(!a.strictlyEquals(b))
        default:
            switch (a, b) {
            case (.number(let x), .number(let y)):
                if x.isNaN || y.isNaN { return .boolean(false) }
                return .boolean(Self.holds(op, order: x < y ? -1 : x > y ? 1 : 0))
            case (.string(let x), .string(let y)):
                // JavaScript compares strings by UTF-16 code units.
                let order = x == y ? 0 : (x.utf16.lexicographicallyPrecedes(y.utf16) ? -1 : 1)
                return .boolean(Self.holds(op, order: order))
            default:
                return .boolean(false)
            }
        }
    }

    private static func holds(_ op: String, order: Int) -> Bool {
        switch op {
        case "==": order == 0
        case "!=": order != 0
        case "<": order < 0
        case ">": order > 0
        case "<=": order <= 0
        default: order >= 0
        }
    }

    var children: [any ExpressionNode] { [lhs, rhs] + (collator.map { [$0] } ?? []) }
}

final class CollatorNode: ExpressionNode {
    let caseSensitive: any ExpressionNode
    let diacriticSensitive: any ExpressionNode
    let locale: (any ExpressionNode)?
    let key: String
    var type: StyleType { .collator }

    init(
        caseSensitive: any ExpressionNode, diacriticSensitive: any ExpressionNode, locale: (any ExpressionNode)?,
        key: String
    ) {
        self.caseSensitive = caseSensitive
        self.diacriticSensitive = diacriticSensitive
        self.locale = locale
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        .collator(
            StyleCollator(
                caseSensitive: try caseSensitive.evaluate(context).isTruthy,
                diacriticSensitive: try diacriticSensitive.evaluate(context).isTruthy,
                locale: try locale?.string(context)))
    }

    var children: [any ExpressionNode] { [caseSensitive, diacriticSensitive] + (locale.map { [$0] } ?? []) }
}

final class FormatNode: ExpressionNode {
    struct Section: Sendable {
        var content: any ExpressionNode
        var scale: (any ExpressionNode)?
        var font: (any ExpressionNode)?
        var textColor: (any ExpressionNode)?
        var verticalAlign: (any ExpressionNode)?

        var nodes: [any ExpressionNode] { [content] + [scale, font, textColor, verticalAlign].compactMap { $0 } }
    }

    let sections: [Section]
    let key: String
    var type: StyleType { .formatted }

    init(sections: [Section], key: String) {
        self.sections = sections
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        var result: [FormattedText.Section] = []
        for section in sections {
            let content = try section.content.evaluate(context)
            let align = try section.verticalAlign.map { node throws(ExpressionEvaluationError) in
                try node.string(context)
            }
            if case .image(let image) = content {
                result.append(.init(text: "", image: image, verticalAlign: align))
                continue
            }
            var font: String?
            if let node = section.font, case .array(let names) = try node.evaluate(context) {
                font = names.map(\.text).joined(separator: ",")
            }
            var color: StyleColor?
            if let node = section.textColor, case .color(let value) = try node.evaluate(context) { color = value }
            let scale = try section.scale.map { node throws(ExpressionEvaluationError) in try node.number(context) }
            result.append(
                .init(text: content.text, scale: scale, fontStack: font, textColor: color, verticalAlign: align))
        }
        return .formatted(FormattedText(sections: result))
    }

    var children: [any ExpressionNode] { sections.flatMap(\.nodes) }
}

final class NumberFormatNode: ExpressionNode {
    let number: any ExpressionNode
    let locale: (any ExpressionNode)?
    let currency: (any ExpressionNode)?
    let unit: (any ExpressionNode)?
    let minFractionDigits: (any ExpressionNode)?
    let maxFractionDigits: (any ExpressionNode)?
    let key: String
    var type: StyleType { .string }

    init(
        number: any ExpressionNode, locale: (any ExpressionNode)?, currency: (any ExpressionNode)?,
        unit: (any ExpressionNode)?,
        minFractionDigits: (any ExpressionNode)?, maxFractionDigits: (any ExpressionNode)?, key: String
    ) {
        self.number = number
        self.locale = locale
        self.currency = currency
        self.unit = unit
        self.minFractionDigits = minFractionDigits
        self.maxFractionDigits = maxFractionDigits
        self.key = key
    }

    /// `Intl.NumberFormat` for what styles ask of it: digits grouped by thousands (`,` in
    /// English, `.` in German), fraction digits, a currency or a unit.
    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        let value = try number.number(context)
        let locale = try locale?.string(context) ?? "en-US"
        let currency = try currency?.string(context).uppercased()
        let unit = try unit?.string(context)
        // Digits as Intl takes them, 0 to 20 (NaN or out of range: the nearest bound).
        func digits(_ value: Double) -> Int { value.isNaN ? 0 : Int(min(max(value, 0), 20)) }
        let minimum = try minFractionDigits.map { node throws(ExpressionEvaluationError) in
            digits(try node.number(context))
        }
        let maximum = try maxFractionDigits.map { node throws(ExpressionEvaluationError) in
            digits(try node.number(context))
        }
        if !value.isFinite { return .string(value.javaScriptText) }
        let currencyDigits = currency.map { ["JPY", "KRW", "ISK", "CLP", "VND"].contains($0) ? 0 : 2 }
        let lowerBound = min(max(minimum ?? currencyDigits ?? 0, 0), 20)
        let upperBound = min(max(maximum ?? currencyDigits ?? max(3, lowerBound), lowerBound), 20)
        let (integer, fraction) = Self.decimal(abs(value), maxFraction: upperBound, minFraction: lowerBound)
        let german = locale.hasPrefix("de")
        var grouped = "", rest = integer
        while rest.count > 3 {
            grouped = (german ? "." : ",") + String(rest.suffix(3)) + grouped
            rest.removeLast(3)
        }
        grouped = rest + grouped + (fraction.isEmpty ? "" : (german ? "," : ".") + fraction)
        let sign = value < 0 && (Double(integer + "." + fraction) ?? 0) != 0 ? "-" : ""
        if let currency {
            let symbol =
                ["USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "CN¥", "INR": "₹"][currency] ?? currency
            return .string(german ? sign + grouped + "\u{A0}" + symbol : sign + symbol + grouped)
        }
        if let unit {
            let symbols = [
                "meter": " m", "kilometer": " km", "centimeter": " cm", "millimeter": " mm", "mile": " mi",
                "foot": " ft", "inch": " in", "yard": " yd", "celsius": "°C", "fahrenheit": "°F",
                "kilogram": " kg", "gram": " g", "byte": " byte", "kilobyte": " kB", "megabyte": " MB",
                "gigabyte": " GB", "percent": "%", "second": " sec", "minute": " min", "hour": " hr",
                "kilometer-per-hour": " km/h", "mile-per-hour": " mph", "liter": " L", "degree": " deg",
            ]
            return .string(sign + grouped + (symbols[unit] ?? " " + unit))
        }
        return .string(sign + grouped)
    }

    /// The decimal digits of `value` (its shortest round-trip form), rounded half up to
    /// `maxFraction` digits, trailing zeros kept down to `minFraction`.
    static func decimal(_ value: Double, maxFraction: Int, minFraction: Int) -> (String, String) {
        var text = value.javaScriptText
        var exponent = 0
        if let e = text.firstIndex(of: "e") {
            exponent = Int(text[text.index(after: e)...]) ?? 0
            text = String(text[..<e])
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var digits = Array(parts[0] + (parts.count > 1 ? parts[1] : ""))
        var point = parts[0].count + exponent
        if point < 0 {
            digits = Array(repeating: "0", count: -point) + digits
            point = 0
        }
        if point > digits.count { digits += Array(repeating: "0", count: point - digits.count) }
        let keep = point + maxFraction
        if keep < digits.count {
            let roundUp = digits[keep] >= "5"
            digits = Array(digits[..<keep])
            if roundUp {
                var index = digits.count - 1
                while index >= 0 {
                    if digits[index] == "9" {
                        digits[index] = "0"
                        index -= 1
                    } else {
                        digits[index] = Character(String((digits[index].wholeNumberValue ?? 0) + 1))
                        break
                    }
                }
                if index < 0 {
                    digits.insert("1", at: 0)
                    point += 1
                }
            }
        }
        var integer = String(digits[..<point]), fraction = String(digits[point...])
        while fraction.count > minFraction && fraction.hasSuffix("0") { fraction.removeLast() }
        while fraction.count < minFraction { fraction += "0" }
        if integer.isEmpty { integer = "0" }
        while integer.count > 1 && integer.hasPrefix("0") { integer.removeFirst() }
        return (integer, fraction)
    }

    var children: [any ExpressionNode] {
        [number] + [locale, currency, unit, minFractionDigits, maxFractionDigits].compactMap { $0 }
    }
}

/// `image`: a named image, and (Mapbox vector icons) the colors of its parameters.
final class ImageNode: ExpressionNode {
    let name: any ExpressionNode
    let params: [(name: String, value: any ExpressionNode)]
    /// Mapbox's second image: the partner `icon-image` cross-fades to.
    let secondary: ImageNode?
    /// Mapbox's `{"iconset": {"id": ...}}`: the image is that iconset's, not the sprite's.
    let iconset: String?
    let key: String
    var type: StyleType { .resolvedImage }

    /// What joins an image's name and its iconset in the image's id, as in Mapbox (U+001F).
    static let iconsetSeparator = "\u{1F}"

    init(
        name: any ExpressionNode, params: [(name: String, value: any ExpressionNode)], secondary: ImageNode?,
        iconset: String? = nil, key: String
    ) {
        self.name = name
        self.params = params
        self.secondary = secondary
        self.iconset = iconset
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        let name = try name.string(context) + (iconset.map { Self.iconsetSeparator + $0 } ?? "")
        var colors: [String: StyleColor] = [:]
        for param in params {
            // A value from data that is no color is dropped: the parameter's default shows.
            let value = Result { () throws(ExpressionEvaluationError) in try param.value.evaluate(context) }
            if case .success(.color(let color)) = value { colors[param.name] = color }
        }
        // With a cross-fade partner, the image is there only when both are (as Mapbox has it).
        var available = context.isAvailable(name)
        if let secondary, case .image(let partner) = try secondary.evaluate(context) {
            available = available && partner.available
        }
        return .image(ResolvedImage(name: name, available: available, params: colors))
    }

    var children: [any ExpressionNode] { [name] + params.map(\.value) + (secondary.map { [$0] } ?? []) }
}

/// Mapbox's `config`: an option of the style, its schema default unless overridden.
final class ConfigNode: ExpressionNode {
    let option: String
    let key: String
    var type: StyleType { .value }

    init(option: String, key: String) {
        self.option = option
        self.key = key
    }

    /// The option's value; a default written as an expression (Mapbox allows one that reads
    /// the feature) is evaluated for the feature at hand, without the option itself in scope.
    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        guard let value = context.config[option] else { return .null }
        guard let compiled = context.configExpressions[option] ?? Self.compiled(value) else { return value }
        var inner = context
        inner.config[option] = nil
        inner.configExpressions[option] = nil
        return try compiled.evaluate(inner)
    }

    /// A config value written as an expression, compiled; nil for a plain value.
    static func compiled(_ value: StyleValue) -> CompiledExpression? {
        guard case .array(let items) = value, case .string(let op)? = items.first, CompoundExpressions.isOperator(op),
            case .success(let compiled) = CompiledExpression.compile(
                value.json, specification: PropertySpecification(type: ""))
        else { return nil }
        return compiled
    }
    var children: [any ExpressionNode] { [] }
}

final class GlobalStateNode: ExpressionNode {
    let property: String
    let key: String
    var type: StyleType { .value }

    init(property: String, key: String) {
        self.property = property
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) -> StyleValue { context.globalState[property] ?? .null }
    var children: [any ExpressionNode] { [] }
}

/// `semiliteral`: an array or object whose members are expressions.
final class SemiliteralNode: ExpressionNode {
    let type: StyleType
    let items: [any ExpressionNode]
    let names: [String]?
    let key: String

    init(type: StyleType, items: [any ExpressionNode], names: [String]?, key: String) {
        self.type = type
        self.items = items
        self.names = names
        self.key = key
    }

    func evaluate(_ context: EvaluationContext) throws(ExpressionEvaluationError) -> StyleValue {
        var values: [StyleValue] = []
        for item in items { values.append(try item.evaluate(context)) }
        guard let names else { return .array(values) }
        return .object(Dictionary(zip(names, values), uniquingKeysWith: { first, _ in first }))
    }

    var children: [any ExpressionNode] { items }
}
