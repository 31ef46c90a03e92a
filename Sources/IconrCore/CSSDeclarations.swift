/// A `name: value` declaration found in a `style` attribute or a `<style>` sheet.
struct CSSDeclaration {
    /// The property name, lowercased.
    var name: String
    /// The value's bytes, trimmed, without `!important`.
    var valueRange: Range<Int>
}

/// Finds declarations in CSS text without interpreting selectors: iconr rewrites paint
/// values wherever they are declared and lets librsvg's own cascade pick the winner.
enum CSSDeclarations {
    /// Declarations of a `style` attribute: `fill: red; stroke: #000`.
    static func inList(_ bytes: [UInt8], range: Range<Int>? = nil) -> [CSSDeclaration] {
        let range = range ?? 0..<bytes.count
        var result: [CSSDeclaration] = []
        var start = range.lowerBound
        var index = range.lowerBound
        var parenthesisDepth = 0
        while index <= range.upperBound {
            if index == range.upperBound {
                if let declaration = parse(bytes, start..<index) { result.append(declaration) }
                break
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "/"), index + 1 < range.upperBound, bytes[index + 1] == UInt8(ascii: "*") {
                index = endOfComment(bytes, from: index, limit: range.upperBound)
                continue
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                index = endOfString(bytes, from: index, limit: range.upperBound)
                continue
            }
            if byte == UInt8(ascii: "(") { parenthesisDepth += 1 }
            if byte == UInt8(ascii: ")") { parenthesisDepth = max(0, parenthesisDepth - 1) }
            if byte == UInt8(ascii: ";"), parenthesisDepth == 0 {
                if let declaration = parse(bytes, start..<index) { result.append(declaration) }
                start = index + 1
            }
            index += 1
        }
        return result
    }

    /// Declarations in every rule of a style sheet, including rules nested in `@media` and
    /// similar blocks.
    static func inStylesheet(_ bytes: [UInt8]) -> [CSSDeclaration] {
        var result: [CSSDeclaration] = []
        var index = 0
        var preludeStart = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                index = endOfComment(bytes, from: index, limit: bytes.count)
                continue
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                index = endOfString(bytes, from: index, limit: bytes.count)
                continue
            }
            switch byte {
            case UInt8(ascii: "{"):
                let prelude = String(decoding: bytes[preludeStart..<index], as: UTF8.self)
                    .trimmingASCIIWhitespace.lowercased()
                if isGroupingRule(prelude) {
                    index += 1
                } else {
                    let end = endOfBlock(bytes, from: index)
                    result += inList(bytes, range: (index + 1)..<max(index + 1, end - 1))
                    index = end
                }
                preludeStart = index
            case UInt8(ascii: "}"), UInt8(ascii: ";"):
                index += 1
                preludeStart = index
            default:
                index += 1
            }
        }
        return result
    }

    private static func isGroupingRule(_ prelude: String) -> Bool {
        ["@media", "@supports", "@document", "@layer", "@container"].contains { prelude.hasPrefix($0) }
    }

    private static func parse(_ bytes: [UInt8], _ range: Range<Int>) -> CSSDeclaration? {
        guard let colon = bytes[range].firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = String(decoding: bytes[range.lowerBound..<colon], as: UTF8.self)
            .trimmingASCIIWhitespace.lowercased()
        var value = trimmed(bytes, (colon + 1)..<range.upperBound)
        if let bang = bytes[value].lastIndex(of: UInt8(ascii: "!")),
            String(decoding: bytes[(bang + 1)..<value.upperBound], as: UTF8.self)
                .trimmingASCIIWhitespace.lowercased() == "important"
        {
            value = trimmed(bytes, value.lowerBound..<bang)
        }
        guard !name.isEmpty else { return nil }
        return CSSDeclaration(name: name, valueRange: value)
    }

    static func trimmed(_ bytes: [UInt8], _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, isSpace(bytes[lower]) { lower += 1 }
        while upper > lower, isSpace(bytes[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C
    }

    private static func endOfComment(_ bytes: [UInt8], from start: Int, limit: Int) -> Int {
        var index = start + 2
        while index + 1 < limit {
            if bytes[index] == UInt8(ascii: "*"), bytes[index + 1] == UInt8(ascii: "/") { return index + 2 }
            index += 1
        }
        return limit
    }

    private static func endOfString(_ bytes: [UInt8], from start: Int, limit: Int) -> Int {
        let quote = bytes[start]
        var index = start + 1
        while index < limit {
            if bytes[index] == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if bytes[index] == quote { return index + 1 }
            index += 1
        }
        return limit
    }

    /// The index just past the `}` that closes the block opened at `start`.
    private static func endOfBlock(_ bytes: [UInt8], from start: Int) -> Int {
        var depth = 0
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                index = endOfComment(bytes, from: index, limit: bytes.count)
                continue
            }
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                index = endOfString(bytes, from: index, limit: bytes.count)
                continue
            }
            if byte == UInt8(ascii: "{") { depth += 1 }
            if byte == UInt8(ascii: "}") {
                depth -= 1
                if depth == 0 { return index + 1 }
            }
            index += 1
        }
        return bytes.count + 1
    }
}
