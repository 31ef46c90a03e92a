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
