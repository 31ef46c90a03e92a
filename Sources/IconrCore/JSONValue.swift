/// A JSON value as style documents and GeoJSON hold it.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses JSON text (RFC 8259), in one pass and with arrays and objects nested at most
    /// `JSONParser.maxDepth` deep: a 15 MB style with 100,000 features takes a fraction of a
    /// second (JSONDecoder took seconds, most of it building the errors of failed tries).
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes)
        return try parser.document()
    }

    /// The member `key` of an object; nil for anything else or a missing key.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string, when this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, when this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// How `text(_:)` lays JSON out.
    public enum Layout: Sendable {
        /// No spaces or newlines: `{"a":[1,2]}` (styles, HTTP bodies).
        case minified
        /// Each member of the outer object on a line of its own, written with spaces:
        /// `{\n  "a": {"x": 1, "y": [1, 2]}\n}` (the readable sprite index).
        case memberPerLine
        /// Every array element and object member on its own line, two spaces a level
        /// (`--json` reports).
        case indented
    }

    /// Minified JSON text (`text(.minified)`).
    public var serialized: String { text(.minified) }

    /// JSON text with object keys sorted, so equal values always write the same bytes;
    /// numbers as JavaScript's `JSON.stringify` writes them (`1e-7`, a non-finite one as null),
    /// as the renderers that read styles do. No newline at the end.
    public func text(_ layout: Layout) -> String {
        var text = ""
        write(to: &text, layout: layout, depth: 0)
        return text
    }

    private func write(to text: inout String, layout: Layout, depth: Int) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .number(let value): text += value.isFinite ? value.javaScriptText : "null"
        case .string(let value): Self.writeQuoted(value, to: &text)
        case .array(let values):
            writeMembers(values.map { (nil, $0) }, ofObject: false, to: &text, layout: layout, depth: depth)
        case .object(let object):
            let members = object.sorted { $0.key < $1.key }.map { (Optional($0.key), $0.value) }
            writeMembers(members, ofObject: true, to: &text, layout: layout, depth: depth)
        }
    }

    private func writeMembers(
        _ members: [(key: String?, value: JSONValue)], ofObject isObject: Bool, to text: inout String,
        layout: Layout, depth: Int
    ) {
        text += isObject ? "{" : "["
        guard !members.isEmpty else { return text += isObject ? "}" : "]" }
        let onLines = layout == .indented || (layout == .memberPerLine && depth == 0 && isObject)
        let indent = onLines ? "\n" + String(repeating: "  ", count: depth + 1) : ""
        let separator = onLines ? "," : layout == .minified ? "," : ", "
        for (index, member) in members.enumerated() {
            if index > 0 { text += separator }
            text += indent
            if let key = member.key {
                Self.writeQuoted(key, to: &text)
                text += layout == .minified ? ":" : ": "
            }
            member.value.write(to: &text, layout: layout, depth: depth + 1)
        }
        if onLines { text += "\n" + String(repeating: "  ", count: depth) }
        text += isObject ? "}" : "]"
    }

    /// `string` as a JSON string literal, quotes included.
    package static func quoted(_ string: String) -> String {
        var text = ""
        writeQuoted(string, to: &text)
        return text
    }

    private static func writeQuoted(_ string: String, to text: inout String) {
        text += "\""
        // Most strings (ids, keys) need no escape: appended whole.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += string
            return text += "\""
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }
}

/// Why JSON text could not be parsed, and where (1-based line and column).
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong (`expected ',' or ']' in an array`).
    public let message: String
    /// The 1-based line it was found on.
    public let line: Int
    /// The 1-based column (in bytes) it was found at.
    public let column: Int

    /// `invalid JSON at line 1, column 3: ...`.
    public var description: String { "invalid JSON at line \(line), column \(column): \(message)" }
}

/// A recursive descent parser over UTF-8 bytes.
struct JSONParser {
    /// Deeper nesting is an error, not a stack overflow.
    static let maxDepth = 1000

    private let bytes: [UInt8]
    private var position = 0
    private var depth = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func document() throws(JSONSyntaxError) -> JSONValue {
        // A UTF-8 byte order mark is tolerated, as most parsers do.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        let value = try self.value()
        skipSpace()
        guard position == bytes.count else { throw error("unexpected text after the JSON value") }
        return value
    }

    private mutating func value() throws(JSONSyntaxError) -> JSONValue {
        skipSpace()
        guard position < bytes.count else { throw error("unexpected end of the text") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character \(Self.shown(bytes[position]))")
        }
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        position += 1
        var object: [String: JSONValue] = [:]
        skipSpace()
        if peek(UInt8(ascii: "}")) {
            position += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipSpace()
            guard peek(UInt8(ascii: "\"")) else { throw error("expected a string key") }
            let key = try string()
            skipSpace()
            guard peek(UInt8(ascii: ":")) else { throw error("expected ':' after a key") }
            position += 1
            object[key] = try value()
            skipSpace()
            if peek(UInt8(ascii: ",")) {
                position += 1
                continue
            }
            guard peek(UInt8(ascii: "}")) else { throw error("expected ',' or '}' in an object") }
            position += 1
            depth -= 1
            return .object(object)
        }
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        position += 1
        var array: [JSONValue] = []
        skipSpace()
        if peek(UInt8(ascii: "]")) {
            position += 1
            depth -= 1
            return .array(array)
        }
        while true {
            array.append(try value())
            skipSpace()
            if peek(UInt8(ascii: ",")) {
                position += 1
                continue
            }
            guard peek(UInt8(ascii: "]")) else { throw error("expected ',' or ']' in an array") }
            position += 1
            depth -= 1
            return .array(array)
        }
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw error("arrays and objects nested more than \(Self.maxDepth) deep") }
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        position += 1
        let start = position
        // The common case: no escapes, so the bytes are the string.
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\") {
            guard bytes[position] >= 0x20 else { throw error("a control character in a string") }
            position += 1
        }
        guard position < bytes.count else { throw error("unterminated string") }
        var scalars = [UInt8](bytes[start..<position])
        while bytes[position] != UInt8(ascii: "\"") {
            if bytes[position] == UInt8(ascii: "\\") {
                position += 1
                guard position < bytes.count else { throw error("unterminated string") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code), bytes[position...].starts(with: Array("\\u".utf8)) {
                        position += 2
                        let low = try hex4()
                        if (0xDC00...0xDFFF).contains(low) {
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            scalars += Array("\u{FFFD}".utf8)
                            code = low
                        }
                    }
                    let scalar = Unicode.Scalar(code) ?? "\u{FFFD}"
                    scalars += Array(String(Character(scalar)).utf8)
                default: throw error("invalid escape \\\(Self.shown(escape))")
                }
            } else {
                guard bytes[position] >= 0x20 else { throw error("a control character in a string") }
                scalars.append(bytes[position])
                position += 1
            }
            guard position < bytes.count else { throw error("unterminated string") }
        }
        position += 1
        return String(decoding: scalars, as: UTF8.self)
    }

    private mutating func hex4() throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= bytes.count,
            let code = UInt32(String(decoding: bytes[position..<(position + 4)], as: UTF8.self), radix: 16)
        else { throw error("expected 4 hex digits after \\u") }
        position += 4
        return code
    }

    private mutating func number() throws(JSONSyntaxError) -> Double {
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            return position - first
        }
        if peek(UInt8(ascii: "-")) { position += 1 }
        if peek(UInt8(ascii: "0")) { position += 1 } else if digits() == 0 { throw error("expected a digit") }
        if peek(UInt8(ascii: ".")) {
            position += 1
            guard digits() > 0 else { throw error("expected a digit after '.'") }
        }
        if peek(UInt8(ascii: "e")) || peek(UInt8(ascii: "E")) {
            position += 1
            if peek(UInt8(ascii: "+")) || peek(UInt8(ascii: "-")) { position += 1 }
            guard digits() > 0 else { throw error("expected a digit in the exponent") }
        }
        guard let value = Double(String(decoding: bytes[start..<position], as: UTF8.self)), value.isFinite else {
            throw error("a number out of range")
        }
        return value
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count,
            word.withUTF8Buffer({ bytes[position..<(position + count)].elementsEqual($0) })
        else {
            throw error("unexpected character \(Self.shown(bytes[position]))")
        }
        position += count
    }

    private func peek(_ byte: UInt8) -> Bool {
        position < bytes.count && bytes[position] == byte
    }

    private mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private static func shown(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16, uppercase: true)
    }

    private func error(_ message: String) -> JSONSyntaxError {
        let before = bytes[..<min(position, bytes.count)]
        let line = before.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let column = position - (before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0) + 1
        return JSONSyntaxError(message: message, line: line, column: column)
    }
}
