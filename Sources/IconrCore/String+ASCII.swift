extension StringProtocol {
    /// The text without leading and trailing ASCII white space. Cheaper than Foundation's
    /// `trimmingCharacters(in:)`, which matters on the per-attribute path of template parsing.
    var trimmingASCIIWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        let substring = self[...]
        guard let first = substring.firstIndex(where: { !isSpace($0) }),
            let last = substring.lastIndex(where: { !isSpace($0) })
        else { return Substring() }
        return Substring(substring[first...last])
    }
}

extension Array where Element: Equatable {
    /// The first offset at or after `start` where `target` (not empty) begins, or nil: in
    /// bytes, or in scalars (the style expression `index-of`). The standard library's
    /// `firstRange(of:)`, `contains(_:)` and `split(separator:)` for a string live in
    /// _StringProcessing, whose regex engine they link into iconr: 3,100 relocations on 12
    /// pages that every start of the command line wrote.
    @inlinable
    package func firstOffset(of target: [Element], from start: Int = 0) -> Int? {
        guard let first = target.first, start >= 0, target.count <= count else { return nil }
        var offset = start
        while offset <= count - target.count {
            if self[offset] == first, self[offset..<offset + target.count].elementsEqual(target) { return offset }
            offset += 1
        }
        return nil
    }
}

extension String {
    /// Whether `text` occurs in this string, compared as UTF-8: always at whole scalars.
    package func containsUTF8(_ text: String) -> Bool {
        text.isEmpty || Array(utf8).firstOffset(of: Array(text.utf8)) != nil
    }

    /// The pieces between occurrences of `separator` (not empty), empty ones kept, matched as
    /// UTF-8: scalar by scalar, as JavaScript's `split` matches code units, not by Character.
    package func splitUTF8(separator: String) -> [String] {
        let bytes = Array(utf8), target = Array(separator.utf8)
        var pieces: [String] = [], start = 0
        while let found = bytes.firstOffset(of: target, from: start) {
            pieces.append(String(decoding: bytes[start..<found], as: UTF8.self))
            start = found + target.count
        }
        pieces.append(String(decoding: bytes[start...], as: UTF8.self))
        return pieces
    }
}
