import Glibc
import Iconr

/// A one-line progress bar on stderr, drawn only when stderr is a terminal.
final class ProgressBar: Sendable {
    private let label: String
    private let isTerminal = isatty(2) == 1
    private let lastDrawn = Locked(-1)

    init(label: String) {
        self.label = label
    }

    func update(_ done: Int, of total: Int) {
        guard isTerminal, total > 0 else { return }
        let width = 30
        let filled = done * width / total
        // Redraw only when the bar moves, so a fast run does not flood the terminal.
        guard lastDrawn.withLock({ drawn in
            defer { drawn = max(drawn, filled * 1000 + done * 1000 / total) }
            return filled * 1000 + done * 1000 / total > drawn
        }) else { return }
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = "\r\(label) [\(bar)] \(done)/\(total)"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    func finish() {
        guard isTerminal, lastDrawn.withLock({ $0 }) >= 0 else { return }
        _ = "\r\u{1B}[K".withCString { write(2, $0, strlen($0)) }
    }
}
