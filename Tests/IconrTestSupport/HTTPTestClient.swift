import Foundation
import Glibc
import IconrSystem

/// One HTTP reply as a test reads it.
public struct HTTPReply: Sendable {
    public var status: Int
    /// Header values by lowercased name.
    public var headers: [String: String]
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A plain HTTP/1.1 client over one TCP connection (kept alive between requests), so that
/// tests can send exactly the bytes they mean: hostile paths, huge headers, other methods.
public final class HTTPConnection {
    private let descriptor: Int32
    private let port: Int
    private var buffered: [UInt8] = []

    /// Connects to `host`:`port` (an IPv4 address) from `source` (another loopback address is
    /// another client to a per-address limit); every read waits at most `timeout` seconds.
    public init(port: Int, timeout: Int = 30, from source: String = "127.0.0.1", host: String = "127.0.0.1") throws {
        self.port = port
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        _ = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr(host)
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Self.failure("cannot connect to port \(port): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Sends `GET target` (or another method) with `headers` and reads the reply.
    public func request(_ target: String, method: String = "GET", headers: [String: String] = [:]) throws -> HTTPReply {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        try send(Array((text + "\r\n").utf8))
        return try readReply(method: method)
    }

    public func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { throw Self.failure("send failed: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// Reads one reply: status line, headers, and a `Content-Length` body (none for HEAD and 304).
    public func readReply(method: String = "GET") throws -> HTTPReply {
        var head: [UInt8] = []
        while true {
            if let end = Self.find([13, 10, 13, 10], in: buffered) {
                head = Array(buffered[..<end])
                buffered.removeFirst(end + 4)
                break
            }
            try fill()
        }
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw Self.failure("bad status line: \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = method == "HEAD" || status == 304 || status == 204 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while buffered.count < length { try fill() }
        let body = Array(buffered[..<length])
        buffered.removeFirst(length)
        return HTTPReply(status: status, headers: headers, body: body)
    }

    /// Whether the server closed the connection (reads end of file within `timeout` seconds).
    public func isClosedByServer() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else {
            throw Self.failure(
                count == 0 ? "the server closed the connection" : "recv failed: \(String(cString: strerror(errno)))")
        }
        buffered += chunk[..<count]
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }

    static func failure(_ message: String) -> NSError {
        NSError(domain: "HTTPConnection", code: 1, userInfo: [NSLocalizedDescriptionKey: message])
    }
}

/// `iconr serve` run by a test: started with `--listen 127.0.0.1:0`, its URL read from stdout.
public final class ServerProcess {
    public let process: RunningProgram
    public let url: String
    public let port: Int
    public let stderrPath: String

    /// Starts `iconr serve arguments...` in `directory` and waits (at most 30 s) for its URL.
    public init(_ arguments: [String], directory: URL, listen: String = "127.0.0.1:0") throws {
        let name = UUID().uuidString
        let stdout = directory.appendingPathComponent("serve-\(name).out").path
        stderrPath = directory.appendingPathComponent("serve-\(name).err").path
        process = try RunningProgram(
            TestSupport.iconrExecutable, ["serve", "--listen", listen] + arguments, directory: directory,
            stdout: stdout, stderr: stderrPath)
        let deadline = ContinuousClock.now + .seconds(30)
        var found: String?
        while found == nil, ContinuousClock.now < deadline, process.isRunning {
            let text = (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").first.map(String.init).flatMap { $0.hasPrefix("http://") ? $0 : nil }
            if found == nil { usleep(20_000) }
        }
        guard let found, let colon = found.lastIndex(of: ":"), let port = Int(found[found.index(after: colon)...])
        else {
            process.signal(SIGKILL)
            process.wait()
            throw HTTPConnection.failure(
                "iconr serve did not start: " + ((try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""))
        }
        url = found
        self.port = port
    }

    deinit {
        process.signal(SIGKILL)
        process.wait(timeout: 10)
    }

    /// What it wrote on stderr so far.
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// One request on a new connection.
    public func get(_ target: String, headers: [String: String] = [:], method: String = "GET") throws -> HTTPReply {
        try HTTPConnection(port: port).request(target, method: method, headers: headers)
    }
}

/// `iconr serve` stopped under cache misses on keep-alive connections: `clients` clients, each
/// on one connection asking for a new color of the flag every request (every request a miss,
/// its connection suspended while it renders), and SIGTERM `after` in. What the clients saw
/// and how the server ended; the test and `iconr-bench serve` read the same figures.
public struct StopUnderMisses: Sendable {
    /// The server's exit status (nil: it did not end within 30 s).
    public var status: Int32?
    /// From SIGTERM to the server's end.
    public var seconds = 0.0
    public var replies = 0
    /// Replies that carried `Connection: close`.
    public var closing = 0
    /// Replies to requests sent after a `Connection: close` on the same connection.
    public var afterClose = 0
    /// Replies neither a whole PNG nor a 503: status and length.
    public var broken: [String] = []

    /// Runs the clients against `server` (colors unique to `round`) and stops it.
    public static func run(_ server: ServerProcess, round: Int, clients: Int = 16, after: Double = 1.5) -> Self {
        let port = server.port
        let stop = Locked(false)
        let seen = Locked(StopUnderMisses())
        let group = DispatchGroup()
        for client in 0..<clients {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                guard let connection = try? HTTPConnection(port: port, timeout: 30) else { return }
                var index = 0
                var closed = false
                while !stop.withLock({ $0 }) {
                    index += 1
                    let color = String(
                        format: "%%23%02x%02x%02x", (round * clients + client) % 256, index / 256 % 256, index % 256)
                    // An error is the connection's end: after a close, or at the stop.
                    guard let reply = try? connection.request("/icons/flag@2x.png?flag_color=\(color)") else { return }
                    let closing = reply.headers["connection"]?.lowercased() == "close"
                    seen.withLock {
                        $0.replies += 1
                        if closed { $0.afterClose += 1 }
                        if closing { $0.closing += 1 }
                        if !(reply.status == 503 || (reply.status == 200 && reply.body.count > 100)) {
                            $0.broken.append("\(reply.status) \(reply.body.count) bytes")
                        }
                    }
                    if closing { closed = true }
                }
            }
        }
        usleep(useconds_t(after * 1_000_000))
        let signalled = ContinuousClock.now
        server.process.signal(SIGTERM)
        let status = server.process.wait(timeout: 30)
        let elapsed = ContinuousClock.now - signalled
        stop.withLock { $0 = true }
        _ = group.wait(timeout: .now() + 30)
        var result = seen.withLock { $0 }
        result.status = status
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }
}
