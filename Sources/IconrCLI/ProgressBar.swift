import Glibc
import Iconr
import IconrCore
import IconrSystem

/// A one-line progress bar on the console's messages (stderr), drawn only when that is a
/// terminal.
final class ProgressBar: Sendable {
    private let label: String
    private let descriptor: FileDescriptor
    private let isTerminal: Bool
    private let lastDrawn = Locked(-1)

    init(label: String, console: Console) {
        self.label = label
        descriptor = console.messages
        isTerminal = !console.quiet && isatty(descriptor.rawValue) == 1
    }

    func update(_ done: Int, of total: Int) {
        guard isTerminal, total > 0 else { return }
        let width = 30
        let filled = done * width / total
        // Redraw only when the bar moves, so a fast run does not flood the terminal.
        guard
            lastDrawn.withLock({ drawn in
                defer { drawn = max(drawn, filled * 1000 + done * 1000 / total) }
                return filled * 1000 + done * 1000 / total > drawn
            })
        else { return }
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let line = "\r\(label) [\(bar)] \(done)/\(total)"
        // A progress line that cannot be drawn is not worth failing a build for.
        try? descriptor.writeAll(Array(line.utf8))
    }

    func finish() {
        guard isTerminal, lastDrawn.withLock({ $0 }) >= 0 else { return }
        try? descriptor.writeAll(Array("\r\u{1B}[K".utf8))
    }
}
