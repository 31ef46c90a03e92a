import Glibc
import IconrCore
import IconrHTTP
import IconrSystem

/// The server's own lines on stderr: warnings, and errors of requests that failed inside;
/// each begins with its time (UTC) unless stderr is systemd's journal, which stamps lines itself.
public enum Log {
    static func warning(_ message: String) {
        write("warning: " + message)
    }

    /// A line that is no warning (`iconr serve: SIGTERM: ...`).
    public static func note(_ message: String) {
        write(message)
    }

    /// Whether stderr is the journal: systemd sets `JOURNAL_STREAM` for a service whose
    /// stderr it reads.
    static let toJournal = getenv("JOURNAL_STREAM") != nil

    /// One line: controls in what input put there (file names, messages) are escaped.
    static func write(_ line: String) {
        var bytes = Array(((toJournal ? "" : timestamp() + " ") + line.escapedForMessage).utf8)
        bytes.append(UInt8(ascii: "\n"))
        _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }

    /// The time now as RFC 3339 in UTC, to the millisecond: `2026-12-07T03:40:00.123Z`.
    public static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func padded(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return
            "\(padded(Int(parts.tm_year) + 1900, 4))-\(padded(Int(parts.tm_mon) + 1, 2))-\(padded(Int(parts.tm_mday), 2))"
            + "T\(padded(Int(parts.tm_hour), 2)):\(padded(Int(parts.tm_min), 2)):\(padded(Int(parts.tm_sec), 2))"
            + ".\(padded(now.tv_nsec / 1_000_000, 3))Z"
    }
}

/// `--request-log`: a line per request, as text or JSON, to stderr or a file that SIGHUP
/// reopens (for logrotate).
public final class RequestLog: Sendable {
    /// `json` with DEL, the C1 controls and the line and paragraph separators, which JSON
    /// leaves as they are (only in its strings can they be), as `\u` escapes: a terminal or
    /// a log reader sees one plain line, and it is still JSON (`escapedForMessage` would
    /// write `\u{85}`, which JSON does not read).
    static func escapingSeparators(_ json: String) -> String {
        guard json.utf8.contains(where: { $0 >= 0x7F }) else { return json }
        var line = ""
        for scalar in json.unicodeScalars {
            if (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029 {
                let hex = String(scalar.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                line.unicodeScalars.append(scalar)
            }
        }
        return line
    }

    private let path: String
    private let json: Bool
    /// The proxies whose `X-Forwarded-For` names the client.
    private let proxies: TrustedProxies
    /// The descriptor written to: 2 for stderr, else the file's.
    private let descriptor: Locked<Int32>

    /// A log to `path` (`-`: stderr), appended to; a request from one of `proxies` is logged
    /// with the client its `X-Forwarded-For` names.
    /// - Throws: `FileWriteError` when the file cannot be opened.
    public init(path: String, json: Bool, proxies: TrustedProxies = TrustedProxies()) throws(FileWriteError) {
        self.path = path
        self.json = json
        self.proxies = proxies
        descriptor = Locked(try Self.open(path))
    }

    /// Opens `path` to append to, without waiting: a FIFO no process reads is an error now
    /// (it would hold the server before it listens, or after SIGHUP), and a full pipe drops
    /// a line instead of holding a request's thread.
    private static func open(_ path: String) throws(FileWriteError) -> Int32 {
        guard path != "-" else { return 2 }
        let opened = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o644)
        guard opened >= 0 else {
            if errno == ENXIO { throw FileWriteError(path: path, problem: .noReader) }
            throw FileWriteError(path: path, problem: .system(SystemError("open")))
        }
        return opened
    }

    /// `text` in double quotes, its `\\` and `"` escaped with a backslash.
    static func quoted(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
            return "\"" + text + "\""
        }
        var result = "\""
        for character in text {
            if character == "\"" || character == "\\" { result.append("\\") }
            result.append(character)
        }
        return result + "\""
    }

    /// Opens the file again (after logrotate moved it); on failure writes go on to the old one.
    public func reopen() {
        guard path != "-", let new = try? Self.open(path) else { return }
        let old = descriptor.withLock { descriptor -> Int32 in
            defer { descriptor = new }
            return descriptor
        }
        close(old)
    }

    /// Writes one line for `exchange`: `TIME CLIENT "METHOD TARGET" STATUS BYTES MS CACHE
    /// "REFERER" "USER-AGENT"` (`-` for a header not sent), or the same fields as one JSON
    /// object (`referer` and `userAgent` null when not sent).
    public func write(_ exchange: HTTPExchange) {
        let cache = exchange.headers.last { $0.name == IconServer.cacheHeader }?.value ?? "-"
        let milliseconds = (exchange.seconds * 100_000).rounded() / 100
        let client = proxies.client(peer: exchange.client, forwardedFor: exchange.forwardedFor)
        let line: String
        if json {
            line = Self.escapingSeparators(
                JSONValue.object([
                    "time": .string(Log.timestamp()), "client": .string(client),
                    "method": .string(exchange.method),
                    "target": .string(exchange.target), "status": .number(Double(exchange.status)),
                    "bytes": .number(Double(exchange.bytes)), "ms": .number(milliseconds), "cache": .string(cache),
                    "referer": exchange.referer.map(JSONValue.string) ?? .null,
                    "userAgent": exchange.userAgent.map(JSONValue.string) ?? .null,
                ]).serialized)
        } else {
            // What the client sent, quoted with its quotes and backslashes escaped, and the
            // whole escaped so that the line stays one line: no field can pose as another.
            line =
                ("\(Log.timestamp()) \(client) \(Self.quoted(exchange.method + " " + exchange.target)) \(exchange.status) "
                + "\(exchange.bytes) \(milliseconds.shortText)ms \(cache) \(exchange.referer.map(Self.quoted) ?? "\"-\"") "
                + (exchange.userAgent.map(Self.quoted) ?? "\"-\"")).escapedForMessage
        }
        let bytes = Array((line + "\n").utf8)
        descriptor.withLock { descriptor in
            _ = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        }
    }
}
