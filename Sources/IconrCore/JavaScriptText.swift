/// Numbers and JSON as JavaScript writes them, since the style specification's `to-string`,
/// `concat` and error messages are defined by its JavaScript reference.
extension Double {
    /// `String(number)` in JavaScript: `1`, `0.5`, `1e-7`, `1e+21`, `NaN`, `Infinity`.
    package var javaScriptText: String {
        if isNaN { return "NaN" }
        if isInfinite { return self < 0 ? "-Infinity" : "Infinity" }
        if self == 0 { return "0" }
        if self == rounded(), abs(self) < 1e21 {
            if abs(self) < 1e15 { return String(Int64(self)) }
        }
        // Swift's description is the shortest round-trip form, as JavaScript's is: without an
        // exponent the two agree (the common case, kept fast: style coordinates go through here).
        let plain = String(self)
        if !plain.contains("e") { return plain }
        // With one, take its digits and exponent and place the point as JavaScript does.
        let negative = self < 0
        let text = String(abs(self))
        var mantissa = Substring(text)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = text[..<e]
            exponent = Int(text[text.index(after: e)...]) ?? 0
        }
        var digits = mantissa.filter { $0 != "." }
        let pointIndex =
            mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) } ?? mantissa.count
        var n = pointIndex + exponent  // the decimal point sits after `n` digits
        while digits.hasPrefix("0") && digits.count > 1 {
            digits.removeFirst()
            n -= 1
        }
        while digits.hasSuffix("0") && digits.count > 1 { digits.removeLast() }
        let k = digits.count
        var result: String
        if k <= n && n <= 21 {
            result = digits + String(repeating: "0", count: n - k)
        } else if 0 < n && n <= 21 {
            result = String(digits.prefix(n)) + "." + String(digits.dropFirst(n))
        } else if -6 < n && n <= 0 {
            result = "0." + String(repeating: "0", count: -n) + digits
        } else {
            let e = n - 1
            let sign = e < 0 ? "-" : "+"
            result =
                String(digits.prefix(1)) + (k > 1 ? "." + String(digits.dropFirst()) : "") + "e" + sign + String(abs(e))
        }
        return negative ? "-" + result : result
    }

}

extension String {
    /// JavaScript's `trim()`: Unicode white space and the byte-order mark off both ends.
    package var trimmingJavaScriptWhitespace: String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace || $0 == "\u{FEFF}" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
