/// An attribute as written in a start tag: its qualified name and the raw bytes between
/// its quotes. `XMLScanner.value(of:)` expands references, only for the attributes read.
struct XMLAttribute {
    var name: String
    var valueRange: Range<Int>
    /// The raw text held a reference (`&amp;`, `&#35;`, ...), so raw and decoded offsets differ.
    var hasReferences: Bool
    var offset: Int
}

struct XMLStartTag {
    var name: String
    var attributes: [XMLAttribute]
    var isSelfClosing: Bool
    /// Where a new attribute can be inserted: just after the last attribute.
    var attributeInsertionPoint: Int
    var offset: Int

    func attribute(_ name: String) -> XMLAttribute? { attributes.first { $0.name == name } }
}

enum XMLEvent {
    case start(XMLStartTag)
    case end(name: String, offset: Int)
    /// Character data; `isCDATA` when it came from a CDATA section (raw equals decoded).
    case text(range: Range<Int>, isCDATA: Bool)
}

struct XMLSyntaxError: Error {
    var message: String
    var offset: Int
}

/// A small, position-keeping XML tokenizer. It exists because iconr edits paint values in
/// place in the original bytes, which needs the byte range of every attribute value;
/// whole-document validation is librsvg's (libxml2's) job and happens before this runs.
struct XMLScanner {
    private let bytes: [UInt8]
    private var position = 0
    /// General entities declared in the DOCTYPE's internal subset.
    private(set) var entities: [String: String] = [:]
    /// Bytes that entity references may still expand to, shared by copies of the scanner.
    private let expansion: ExpansionBudget

    /// `expansionLimit` bounds the bytes all entity references of the document expand to
    /// together (by default 1 MiB plus 10 times the document, at most 64 MiB, in the spirit
    /// of libxml2's amplification limit): a "billion laughs" document fails at once instead
    /// of taking minutes and gigabytes.
    init(_ bytes: [UInt8], expansionLimit: Int? = nil) {
        self.bytes = bytes
        expansion = ExpansionBudget(remaining: expansionLimit ?? min(64 << 20, (1 << 20) + 10 * bytes.count))
    }

    mutating func next() throws(XMLSyntaxError) -> XMLEvent? {
        while position < bytes.count {
            if bytes[position] != UInt8(ascii: "<") {
                let start = position
                while position < bytes.count, bytes[position] != UInt8(ascii: "<") { position += 1 }
                return .text(range: start..<position, isCDATA: false)
            }
            if hasPrefix("<!--") {
                try skip(past: "-->", what: "comment")
            } else if hasPrefix("<![CDATA[") {
                let start = position + 9
                try skip(past: "]]>", what: "CDATA section")
                return .text(range: start..<(position - 3), isCDATA: true)
            } else if hasPrefix("<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if hasPrefix("<!DOCTYPE") {
                try scanDoctype()
            } else if hasPrefix("</") {
                let offset = position
                position += 2
                let name = scanName()
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
                    throw XMLSyntaxError(message: "expected '>' to close end tag </\(name)>", offset: position)
                }
                position += 1
                return .end(name: name, offset: offset)
            } else {
                return .start(try scanStartTag())
            }
        }
        return nil
    }

    /// The attribute's value with references expanded.
    func value(of attribute: XMLAttribute) throws(XMLSyntaxError) -> String {
        try decode(attribute.valueRange)
    }

    /// Expands character and entity references in raw text.
    func decode(_ range: Range<Int>) throws(XMLSyntaxError) -> String {
        let raw = String(decoding: bytes[range], as: UTF8.self)
        guard bytes[range].contains(UInt8(ascii: "&")) else { return raw }
        return try expandReferences(raw, depth: 0, offset: range.lowerBound)
    }

    private func expandReferences(_ text: String, depth: Int, offset: Int) throws(XMLSyntaxError) -> String {
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            guard let semi = rest[amp...].firstIndex(of: ";") else { break }
            let name = rest[rest.index(after: amp)..<semi]
            rest = rest[rest.index(after: semi)...]
            result += try expandReference(String(name), depth: depth, offset: offset) ?? "&\(name);"
        }
        return result + rest
    }

    private func expandReference(_ name: String, depth: Int, offset: Int) throws(XMLSyntaxError) -> String? {
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default: break
        }
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            return UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
        }
        if name.hasPrefix("#") {
            return UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init).map { String(Character($0)) }
        }
        // Bounded in depth and in total size, so that nested entity definitions cannot blow up.
        guard depth < 4, let value = entities[name] else { return nil }
        guard expansion.spend(value.utf8.count) else {
            throw XMLSyntaxError(
                message: "entity references expand to more than \(expansion.limit) bytes "
                    + "(an entity expansion attack?)", offset: offset)
        }
        return try expandReferences(value, depth: depth + 1, offset: offset)
    }

    private mutating func scanStartTag() throws(XMLSyntaxError) -> XMLStartTag {
        let offset = position
        position += 1
        let name = scanName()
        guard !name.isEmpty else {
            throw XMLSyntaxError(message: "expected an element name after '<'", offset: position)
        }
        var attributes: [XMLAttribute] = []
        var insertionPoint = position
        while true {
            skipSpace()
            guard position < bytes.count else {
                throw XMLSyntaxError(message: "unterminated start tag <\(name)>", offset: offset)
            }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                return XMLStartTag(
                    name: name, attributes: attributes, isSelfClosing: false,
                    attributeInsertionPoint: insertionPoint, offset: offset)
            }
            if hasPrefix("/>") {
                position += 2
                return XMLStartTag(
                    name: name, attributes: attributes, isSelfClosing: true,
                    attributeInsertionPoint: insertionPoint, offset: offset)
            }
            let attributeOffset = position
            let attributeName = scanName()
            guard !attributeName.isEmpty else {
                throw XMLSyntaxError(message: "unexpected character in start tag <\(name)>", offset: position)
            }
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                throw XMLSyntaxError(message: "attribute \(attributeName) has no value", offset: position)
            }
            position += 1
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
            else {
                throw XMLSyntaxError(message: "attribute \(attributeName) value is not quoted", offset: position)
            }
            let quote = bytes[position]
            let valueStart = position + 1
            guard let valueEnd = bytes[valueStart...].firstIndex(of: quote) else {
                throw XMLSyntaxError(message: "unterminated value of attribute \(attributeName)", offset: position)
            }
            position = valueEnd + 1
            insertionPoint = position
            let range = valueStart..<valueEnd
            let hasReferences = bytes[range].contains(UInt8(ascii: "&"))
            attributes.append(
                XMLAttribute(
                    name: attributeName, valueRange: range,
                    hasReferences: hasReferences, offset: attributeOffset))
        }
    }

    /// Reads `<!DOCTYPE ...>`, keeping simple internal `<!ENTITY name "value">` declarations.
    private mutating func scanDoctype() throws(XMLSyntaxError) {
        let start = position
        var bracketDepth = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "["), bracketDepth == 0 {
                bracketDepth = 1
            } else if byte == UInt8(ascii: "]") {
                bracketDepth = 0
            } else if hasPrefix("<!ENTITY") {
                scanEntityDeclaration()
                continue
            } else if hasPrefix("<!--") {
                try skip(past: "-->", what: "comment")
                continue
            } else if byte == UInt8(ascii: ">"), bracketDepth == 0 {
                position += 1
                return
            }
            position += 1
        }
        throw XMLSyntaxError(message: "unterminated DOCTYPE", offset: start)
    }

    private mutating func scanEntityDeclaration() {
        position += 8
        skipSpace()
        let isParameterEntity = position < bytes.count && bytes[position] == UInt8(ascii: "%")
        let name = scanName()
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") {
            let quote = bytes[position]
            if let end = bytes[(position + 1)...].firstIndex(of: quote) {
                if !isParameterEntity, !name.isEmpty {
                    entities[name] = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
                }
                position = end + 1
            }
        }
        while position < bytes.count, bytes[position] != UInt8(ascii: ">") { position += 1 }
        position += 1
    }

    private mutating func skip(past terminator: String, what: String) throws(XMLSyntaxError) {
        let start = position
        let pattern = Array(terminator.utf8)
        var index = position
        while index + pattern.count <= bytes.count {
            if bytes[index] == pattern[0], bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                position = index + pattern.count
                return
            }
            index += 1
        }
        throw XMLSyntaxError(message: "unterminated \(what)", offset: start)
    }

    private func hasPrefix(_ prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        return prefix.withUTF8Buffer { bytes[position..<(position + count)].elementsEqual($0) }
    }

    private mutating func skipSpace() {
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
    }

    private mutating func scanName() -> String {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if Self.isSpace(byte) || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
                || byte == UInt8(ascii: "<") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
            {
                break
            }
            position += 1
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// What is left of a document's entity expansion limit (a class, so that copies of a
/// scanner spend from one budget).
private final class ExpansionBudget {
    let limit: Int
    private var remaining: Int

    init(remaining: Int) {
        limit = remaining
        self.remaining = remaining
    }

    /// Takes `bytes` from the budget; false when they are more than is left.
    func spend(_ bytes: Int) -> Bool {
        guard bytes <= remaining else { return false }
        remaining -= bytes
        return true
    }
}
