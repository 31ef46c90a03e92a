/// A 1-based line and column in a source file, for messages people read.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    /// The 1-based line.
    public var line: Int
    /// The 1-based column.
    public var column: Int

    /// The place at `line`, `column`.
    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    /// `line:column`.
    public var description: String { "\(line):\(column)" }
}

/// Maps byte offsets of a document to lines and columns.
struct LineTable {
    private let lineStarts: [Int]

    init(_ bytes: [UInt8]) {
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            starts.append(offset + 1)
        }
        lineStarts = starts
    }

    func location(of offset: Int) -> SourceLocation {
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        return SourceLocation(line: low + 1, column: offset - lineStarts[low] + 1)
    }
}
