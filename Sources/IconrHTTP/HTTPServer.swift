import CMicroHTTPD
import Glibc
import IconrSystem
import Synchronization

/// One HTTP request as it arrived: the method, the path and query still percent-encoded
/// (see `HTTPRequest.decodedPath`), and the headers.
public struct HTTPRequest: Sendable {
    /// `GET`, `HEAD`, ... as sent.
    public var method: String
    /// The path as sent, without the query, e.g. `/icons/flag@2x.png`.
    public var path: String
    /// The query's `name=value` pairs in order, still percent-encoded.
    public var query: [(name: String, value: String)]
    /// Header values by lowercased name (a repeated header keeps its first value).
    public var headers: [String: String]
    /// The bytes of all header names and values: what a header limit is checked against.
    public var headerBytes: Int
    /// The protocol version as sent, `HTTP/1.1` or `HTTP/1.0` (made in tests: `HTTP/1.0`,
    /// which needs no `Host`).
    public var version = "HTTP/1.0"

    /// A request (tests make them; the server makes them from libmicrohttpd's).
    public init(
        method: String, path: String, query: [(name: String, value: String)] = [], headers: [String: String] = [:]
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        headerBytes = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }

    /// The path's bytes with `%XX` decoded, or nil when an escape is malformed.
    public var decodedPath: [UInt8]? { Self.percentDecoded(path, plusIsSpace: false) }

    /// `text` with `%XX` decoded (and `+` as a space in queries), or nil when an escape is malformed.
    public static func percentDecoded(_ text: String, plusIsSpace: Bool) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        func hex(_ byte: UInt8?) -> UInt8? {
            guard let byte else { return nil }
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { return byte - UInt8(ascii: "0") }
            let lowercase = byte | 0x20
            if (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(lowercase) { return lowercase - UInt8(ascii: "a") + 10 }
            return nil
        }
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = hex(iterator.next()), let low = hex(iterator.next()) else { return nil }
                bytes.append(high << 4 | low)
            case UInt8(ascii: "+") where plusIsSpace: bytes.append(UInt8(ascii: " "))
            default: bytes.append(byte)
            }
        }
        return bytes
    }
}

/// A response: status, headers (`Content-Length` and `Date` are added by the server), body.
/// A `HEAD` request gets the same headers without the body.
public struct HTTPResponse: Sendable {
    /// The status code, e.g. 200.
    public var status: Int
    /// Header lines in order.
    public var headers: [(name: String, value: String)]
    /// The body (not sent for `HEAD`).
    public var body: [UInt8]

    /// A response of `status` with `headers` and `body`.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// What a handler gives for a request: a response now, or one sent later from another
/// thread while the connection waits holding no thread (a render, a sprite build).
public enum HTTPAnswer: Sendable {
    /// Sent at once.
    case now(HTTPResponse)
    /// `start` runs on the handler's thread with `send`, which sends the response: call it
    /// once, from any thread (a call during `start` sends at once; later calls are ignored).
    case later(_ start: @Sendable (_ send: @escaping @Sendable (HTTPResponse) -> Void) -> Void)
}

/// Why a server could not start.
public enum HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// libmicrohttpd could not be loaded, or lacks a function.
    case library(String)
    /// The listen address is not `HOST:PORT`.
    case address(String)
    /// A system call failed on the address.
    case system(SystemError, address: String)
    /// libmicrohttpd refused to start.
    case start(address: String)

    /// One line naming the address or library.
    public var description: String {
        switch self {
        case .library(let message): message
        case .address(let text):
            "invalid listen address '\(text)': expected HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080"
        case .system(let error, let address): "cannot listen on \(address): \(error)"
        case .start(let address): "cannot start the HTTP server on \(address)"
        }
    }
}

/// One request and its answer, as a request log writes it: who asked for what, and how it
/// went.
public struct HTTPExchange: Sendable {
    /// The client's address (`127.0.0.1`, `2001:db8:0:0:0:0:0:1`).
    public let client: String
    /// `GET`, `HEAD`, ...
    public let method: String
    /// The path and query as they came, still percent-encoded.
    public let target: String
    /// The answer's status.
    public let status: Int
    /// The body's length in bytes (none for HEAD and 304).
    public let bytes: Int
    /// From the request's head in to its answer queued.
    public let seconds: Double
    /// The answer's headers.
    public let headers: [(name: String, value: String)]
    /// The request's `User-Agent`, when it had one.
    public var userAgent: String? = nil
    /// The request's `Referer`, when it had one.
    public var referer: String? = nil
    /// The request's `X-Forwarded-For`, when it had one (a proxy's list of clients).
    public var forwardedFor: String? = nil
}

/// An HTTP/1.1 server on GNU libmicrohttpd: a pool of threads, each with its own epoll loop,
/// keep-alive, connection limits and idle timeouts. `handler` runs on those threads and
/// should not block: slow work answers `.later`, and its connection is suspended (held by
/// no thread) until the response is sent.
public final class HTTPServer: Sendable {
    /// Limits of one server.
    public struct Configuration: Sendable {
        /// Threads answering requests (each runs `handler` for its connections).
        public var threads = 8
        /// Open connections at most; more wait in the kernel's accept queue. Each takes a
        /// file descriptor: `iconr serve` raises its descriptor limit to fit.
        public var connectionLimit = 4096
        /// Open connections from one IP address at most; more are closed as they come, so
        /// that one client (slowloris: many connections, a header line now and then) cannot
        /// take them all. Behind a proxy every client has its address: raise it there.
        public var connectionsPerClient = 256
        /// An idle connection is closed after this many seconds.
        public var idleTimeout = 30
        /// A request head (request line and headers) must be in within this many seconds of
        /// its connection opening or of the previous response, or the connection is closed:
        /// a client sending a header line now and then (slowloris) holds it no longer.
        public var headDeadline = 15
        /// Per-connection memory for the request line and headers: past it libmicrohttpd
        /// answers 414 or 431 itself. (At most 32 KiB, libmicrohttpd takes it from malloc;
        /// above, it maps and unmaps pages per connection, which made a burst of 2,000
        /// connections about three times slower to answer.)
        public var connectionMemory = 32 << 10

        /// 8 threads, 4,096 connections (256 from one address), 30 s idle timeout, 15 s for a
        /// request head, 32 KiB per connection.
        public init() {}
    }

    /// The address the socket is bound to, e.g. `127.0.0.1`; `[::1]` for IPv6.
    public let host: String
    /// The port it listens on (the kernel's choice when asked for 0).
    public let port: Int
    /// `http://host:port`.
    public var url: String { "http://\(host):\(port)" }

    private let daemon: Daemon
    private let context: Unmanaged<HandlerContext>
    private let stopped = Atomic<Bool>(false)

    /// Binds `address` (`HOST:PORT`; port 0 picks a free one) and starts serving.
    /// - Throws: `HTTPServerError` naming the address and what failed.
    /// `answered` hears every request's exchange as its answer is queued (a request log).
    public init(
        listening address: String, configuration: Configuration = Configuration(),
        answered: (@Sendable (HTTPExchange) -> Void)? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPAnswer
    ) throws(HTTPServerError) {
        let table = try MicroHTTPD.load()
        let socket = try ListenSocket(address)
        host = socket.host
        port = socket.port
        let context = Unmanaged.passRetained(
            HandlerContext(
                api: table, handler: handler, headDeadline: .seconds(max(1, configuration.headDeadline)),
                connectionsPerClient: max(1, configuration.connectionsPerClient),
                connectionLimit: max(1, configuration.connectionLimit), answered: answered))
        var options = [
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_LISTEN_SOCKET), value: Int(socket.descriptor), ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_THREAD_POOL_SIZE), value: max(1, configuration.threads), ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_CONNECTION_LIMIT), value: max(1, configuration.connectionLimit),
                ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_CONNECTION_TIMEOUT), value: max(1, configuration.idleTimeout),
                ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_CONNECTION_MEMORY_LIMIT), value: configuration.connectionMemory,
                ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_UNESCAPE_CALLBACK), value: unsafeBitCast(keepEscaped, to: Int.self),
                ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_URI_LOG_CALLBACK), value: unsafeBitCast(requestStarted, to: Int.self),
                ptr_value: context.toOpaque()),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_NOTIFY_COMPLETED), value: unsafeBitCast(requestCompleted, to: Int.self),
                ptr_value: context.toOpaque()),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_NOTIFY_CONNECTION),
                value: unsafeBitCast(connectionChanged, to: Int.self), ptr_value: context.toOpaque()),
            MHD_OptionItem(option: Int32(ICONR_MHD_OPTION_END), value: 0, ptr_value: nil),
        ]
        let flags = UInt32(
            ICONR_MHD_USE_INTERNAL_POLLING_THREAD | ICONR_MHD_USE_EPOLL | ICONR_MHD_ALLOW_SUSPEND_RESUME)
        guard
            let started = withUnsafePointer(
                to: table.api,
                { api in
                    options.withUnsafeMutableBufferPointer { items in
                        IconrMHD_start(api, flags, accessHandler, context.toOpaque(), items.baseAddress)
                    }
                })
        else {
            close(socket.descriptor)
            context.release()
            throw .start(address: address)
        }
        daemon = Daemon(pointer: started)
        self.context = context
        context.takeUnretainedValue().startWatchingHeads()
    }

    deinit {
        stop(drainingFor: .zero)
        context.release()
    }

    /// Requests whose handler is running or whose response is still being sent.
    public var requestsInFlight: Int { context.takeUnretainedValue().inFlight.load(ordering: .relaxed) }

    /// Connections open now.
    public var openConnections: Int { context.takeUnretainedValue().heads.withLock { $0.connections.count } }

    /// Stops accepting connections and lets the requests in flight finish, each answered with
    /// `Connection: close`; a request that arrives on a kept-alive connection from then on is
    /// answered `unanswered` at once (with `Connection: close`), so a replica leaves as soon
    /// as its work is done. Those still waiting for a `.later` answer a second before
    /// `drainingFor` ends get `unanswered` too. Then closes every connection and joins the
    /// threads: never with a connection still suspended (libmicrohttpd aborts the process
    /// then), so if one is left past the limit, the daemon is left to the exiting process.
    /// Idempotent.
    public func stop(
        drainingFor limit: Duration = .seconds(10),
        unanswered: HTTPResponse = HTTPResponse(status: 503, body: Array("the server is stopping\n".utf8))
    ) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let server = context.takeUnretainedValue()
        let api = server.api.api
        var closing = unanswered
        closing.headers.append(("Connection", "close"))
        // From here no new request is taken, and every answer closes its connection. Requests
        // being handled still wait for their answers while the server drains.
        server.stopping.withLock { $0 = closing }
        // Quiesced, the daemon no longer listens; the socket is ours to close, so new
        // connections are refused at once (a load balancer moves on to another replica).
        let listening = api.MHD_quiesce_daemon(daemon.pointer)
        if listening >= 0 { close(listening) }
        let deadline = ContinuousClock.now + limit
        func drain(until end: ContinuousClock.Instant) {
            while requestsInFlight > 0, ContinuousClock.now < end {
                usleep(2_000)
            }
        }
        drain(until: deadline - min(limit / 2, .seconds(1)))
        // libmicrohttpd must not be stopped with suspended connections: from here none is
        // suspended, and each waiting one is answered, its connection resumed, sent its answer
        // and closed before the daemon stops.
        let left = server.waiting.withLock { waiting -> [PendingRequest] in
            server.suspensionsEnded.store(true, ordering: .relaxed)
            return Array(waiting.values)
        }
        for request in left {
            request.deliver(closing)
        }
        drain(until: deadline)
        while server.waiting.withLock({ !$0.isEmpty }), ContinuousClock.now < deadline + .seconds(1) {
            usleep(2_000)
        }
        server.watching.store(false, ordering: .relaxed)
        guard server.waiting.withLock({ $0.isEmpty }) else { return }
        api.MHD_stop_daemon(daemon.pointer)
    }
}

/// The daemon handle: used only through libmicrohttpd's thread-safe calls.
private struct Daemon: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// What the C callbacks reach through their closure pointer.
private final class HandlerContext: Sendable {
    let api: MicroHTTPD.Table
    let handler: @Sendable (HTTPRequest) -> HTTPAnswer
    let inFlight = Atomic<Int>(0)
    /// Requests whose connection is suspended until their `.later` answer is sent.
    let waiting = Locked<[ObjectIdentifier: PendingRequest]>([:])
    let headDeadline: Duration
    let connectionsPerClient: Int
    /// Open connections past which each new one sheds the connection whose request head has
    /// been arriving longest (over a second): many clients holding connections open, each
    /// within its own limit (slowloris from many addresses), could otherwise fill every
    /// place and keep new clients out until the head deadline. A sixteenth of the places
    /// stays free for them.
    let sheddingThreshold: Int
    /// Hears each exchange as its answer is queued.
    let answered: (@Sendable (HTTPExchange) -> Void)?
    /// Each open connection's socket, client address, and since when its request head has
    /// been arriving (nil while a request is handled or answered), by connection; and the
    /// open connections of each client address. (libmicrohttpd's own per-address limit
    /// counts per pool thread, so one client could hold the limit on every thread.)
    let heads = Locked(
        (
            connections: [Int: (socket: Int32, client: [UInt8], since: ContinuousClock.Instant?)](),
            clients: [[UInt8]: Int]()
        ))
    /// Whether the head watcher runs.
    let watching = Atomic<Bool>(true)
    /// Once the server is stopping, the answer to new requests and, once `suspensionsEnded`,
    /// to those that would wait (and every answer then closes its connection); nil while it
    /// serves.
    let stopping = Locked<HTTPResponse?>(nil)
    /// Set by a stopping server, under `waiting`'s lock, as it answers the requests still
    /// waiting: no connection is suspended after.
    let suspensionsEnded = Atomic<Bool>(false)

    init(
        api: MicroHTTPD.Table, handler: @escaping @Sendable (HTTPRequest) -> HTTPAnswer, headDeadline: Duration,
        connectionsPerClient: Int, connectionLimit: Int, answered: (@Sendable (HTTPExchange) -> Void)?
    ) {
        self.answered = answered
        self.api = api
        self.handler = handler
        self.headDeadline = headDeadline
        self.connectionsPerClient = connectionsPerClient
        sheddingThreshold = max(1, connectionLimit - max(1, connectionLimit / 16))
    }

    /// A thread that, twice a second, shuts down the sockets whose request head is past its
    /// deadline; libmicrohttpd then sees them end and closes them as usual. (The socket is
    /// shut down under `heads`' lock, and a connection leaves `heads` before libmicrohttpd
    /// closes its socket, so a descriptor is never one reused by another connection.)
    func startWatchingHeads() {
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                guard let context else { return nil }
                let server = Unmanaged<HandlerContext>.fromOpaque(context).takeRetainedValue()
                while server.watching.load(ordering: .relaxed) {
                    usleep(500_000)
                    let now = ContinuousClock.now
                    let late = now - server.headDeadline
                    server.heads.withLock { heads in
                        for (connection, head) in heads.connections {
                            guard let since = head.since, since < late else { continue }
                            shutdown(head.socket, Int32(SHUT_RDWR))
                            heads.connections[connection]?.since = nil
                        }
                        // At the limit no connection is accepted, so none sheds: room is made here,
                        // twice the margin, for the clients waiting in the accept queue.
                        if heads.connections.count >= server.sheddingThreshold {
                            let margin = heads.connections.count - server.sheddingThreshold
                            HandlerContext.shedOldestHeads(
                                &heads.connections, keeping: server.sheddingThreshold - margin - 1, now: now)
                        }
                    }
                }
                return nil
            }, Unmanaged.passRetained(self).toOpaque())
        if started == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged.passUnretained(self).release()
        }
    }

    /// Shuts down the connections whose request head has been arriving longest (over a
    /// second), oldest first, until at most `count` connections are left that are not shut
    /// down; libmicrohttpd then closes them as usual.
    static func shedOldestHeads(
        _ connections: inout [Int: (socket: Int32, client: [UInt8], since: ContinuousClock.Instant?)],
        keeping count: Int,
        now: ContinuousClock.Instant
    ) {
        let open = connections.count
        guard open > count else { return }
        let waiting = connections.compactMap { key, head -> (key: Int, since: ContinuousClock.Instant)? in
            guard let since = head.since, now - since > .seconds(1) else { return nil }
            return (key, since)
        }.sorted { $0.since < $1.since }
        for (key, _) in waiting.prefix(open - max(0, count)) {
            if let socket = connections[key]?.socket { shutdown(socket, Int32(SHUT_RDWR)) }
            connections[key]?.since = nil
        }
    }

    /// The client address of `connection` as text: dotted for IPv4, eight groups for IPv6.
    func client(of connection: OpaquePointer) -> String {
        let key = Int(bitPattern: UnsafeRawPointer(connection))
        let bytes = heads.withLock { $0.connections[key]?.client } ?? []
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return "-" }
        return stride(from: 0, to: 16, by: 2).map { String(Int(bytes[$0]) << 8 | Int(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }

    /// A request head is in (`arrived`), or the next one may begin.
    func head(of connection: OpaquePointer, arrived: Bool) {
        let key = Int(bitPattern: UnsafeRawPointer(connection))
        heads.withLock { $0.connections[key]?.since = arrived ? nil : ContinuousClock.now }
    }
}

/// A connection opened (its head clock starts; past its client's limit it is shut down at
/// once, and libmicrohttpd closes it) or closed (it is forgotten).
private let connectionChanged: MHD_NotifyConnectionCallback = { context, connection, _, code in
    guard let context, let connection else { return }
    let server = Unmanaged<HandlerContext>.fromOpaque(context).takeUnretainedValue()
    let key = Int(bitPattern: UnsafeRawPointer(connection))
    if code == Int32(ICONR_MHD_CONNECTION_NOTIFY_STARTED) {
        var address = [UInt8](repeating: 0, count: 16)
        let (socket, length) = withUnsafePointer(to: server.api.api) { api in
            (
                IconrMHD_connection_socket(api, connection),
                address.withUnsafeMutableBufferPointer { IconrMHD_client_address(api, connection, $0.baseAddress) }
            )
        }
        guard socket >= 0 else { return }
        let client = Array(address.prefix(Int(max(0, length))))
        server.heads.withLock { heads in
            let count = heads.clients[client, default: 0] + 1
            heads.clients[client] = count
            let now = ContinuousClock.now
            heads.connections[key] = (socket, client, count > server.connectionsPerClient ? nil : now)
            if count > server.connectionsPerClient { shutdown(socket, Int32(SHUT_RDWR)) }
            // Near the limit: the connection whose head has been arriving longest makes room.
            if heads.connections.count >= server.sheddingThreshold {
                HandlerContext.shedOldestHeads(&heads.connections, keeping: heads.connections.count - 1, now: now)
            }
        }
    } else {
        server.heads.withLock { heads in
            guard let closed = heads.connections.removeValue(forKey: key) else { return }
            let left = (heads.clients[closed.client] ?? 1) - 1
            heads.clients[closed.client] = left > 0 ? left : nil
        }
    }
}

/// One request from its headers to its completion: libmicrohttpd's request context.
private final class PendingRequest: @unchecked Sendable {
    enum State {
        /// The head is in; the handler has not run.
        case receiving
        /// The handler (or a `.later` start) is running.
        case handling
        /// The connection waits, suspended, for `deliver`.
        case suspended
        /// A response is ready and not yet queued.
        case answered(HTTPResponse)
        /// The response is queued.
        case sent
    }

    let state = Locked(State.receiving)
    /// Used only through libmicrohttpd's thread-safe resume.
    let connection: OpaquePointer
    let server: HandlerContext
    /// The query as the request line gave it (after `?`, still escaped): iconr parses it,
    /// not libmicrohttpd, whose per-connection memory a long query of many parameters ran
    /// out of, leaving the request unanswered.
    let query: [UInt8]
    /// Whether the handler saw the head (its first call, before any body); only the
    /// connection's own thread touches it.
    nonisolated(unsafe) var headSeen = false
    /// The headers, collected once with `headSeen` (the framing check and the handler read them).
    nonisolated(unsafe) var headers = ValueCollector()
    /// Set with `headSeen`, for the request log: the client, method and target, and when the
    /// head was in.
    nonisolated(unsafe) var exchange:
        (
            client: String, method: String, target: String, started: ContinuousClock.Instant,
            userAgent: String?, referer: String?, forwardedFor: String?
        )?

    init(connection: OpaquePointer, server: HandlerContext, query: [UInt8]) {
        self.connection = connection
        self.server = server
        self.query = query
    }

    /// The response, sent now if the connection waits for it; only the first call counts.
    func deliver(_ response: HTTPResponse) {
        let resume = state.withLock { state -> Bool in
            switch state {
            case .receiving, .handling:
                state = .answered(response)
                return false
            case .suspended:
                state = .answered(response)
                return true
            case .answered, .sent: return false
            }
        }
        if resume { server.api.api.MHD_resume_connection(connection) }
    }

    /// The answer ready to queue, marked sent; nil if there is none yet.
    func takeAnswer() -> HTTPResponse? {
        state.withLock { state in
            guard case .answered(let response) = state else { return nil }
            state = .sent
            return response
        }
    }
}

/// Collects a connection's headers or query arguments (libmicrohttpd's iterator callback).
private final class ValueCollector {
    var pairs: [(String, String)] = []
    var bytes = 0
}

private let collectValue: MHD_KeyValueIterator = { collector, _, key, value in
    guard let collector else { return Int32(ICONR_MHD_NO) }
    let values = Unmanaged<ValueCollector>.fromOpaque(collector).takeUnretainedValue()
    let name = key.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
    let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: strlen($0)), as: UTF8.self) } ?? ""
    values.pairs.append((name, text))
    values.bytes += name.utf8.count + text.utf8.count
    return Int32(ICONR_MHD_YES)
}

/// Leaves paths and query arguments as they came: `HTTPRequest` decodes them, so that
/// `%2e%2e`, `%2F` and `%00` are seen for what they are.
private let keepEscaped: MHD_UnescapeCallback = { _, _, text in
    text.map { strlen($0) } ?? 0
}

/// As soon as a request line is in: the request's context, holding its query, which it
/// hides from libmicrohttpd (the byte after `?` made the string's end).
private let requestStarted: MHD_LogCallback = { context, uri, connection in
    guard let context, let connection else { return nil }
    let server = Unmanaged<HandlerContext>.fromOpaque(context).takeUnretainedValue()
    var query: [UInt8] = []
    if let uri, let mark = strchr(uri, Int32(UInt8(ascii: "?"))) {
        let start = UnsafeMutablePointer(mutating: mark + 1)
        query = Array(UnsafeRawBufferPointer(start: start, count: strlen(start)))
        start.pointee = 0
    }
    return Unmanaged.passRetained(PendingRequest(connection: connection, server: server, query: query)).toOpaque()
}

/// The query's `name=value` pairs, split as libmicrohttpd would (at `&`, then the first `=`),
/// still escaped; empty pairs are skipped.
private func queryPairs(_ query: [UInt8]) -> [(name: String, value: String)] {
    query.split(separator: UInt8(ascii: "&")).map { pair in
        guard let equals = pair.firstIndex(of: UInt8(ascii: "=")) else {
            return (String(decoding: pair, as: UTF8.self), "")
        }
        return (
            String(decoding: pair[..<equals], as: UTF8.self),
            String(decoding: pair[(equals + 1)...], as: UTF8.self)
        )
    }
}

/// A head whose body could be read two ways (two different `Content-Length`s: a proxy in
/// front may take the other), or in a way iconr does not know (a `Transfer-Encoding` other
/// than chunked): answered before any body is read, and the connection closed.
private func framingProblem(_ headers: [(String, String)]) -> HTTPResponse? {
    func values(_ name: String) -> [String] {
        headers.filter { $0.0.lowercased() == name }.map {
            String($0.1.unicodeScalars.filter { $0.value > 0x20 && $0.value < 0x7F && $0 != "\"" && $0 != "\\" })
                .lowercased()
        }
    }
    let lengths = Set(values("content-length")), encodings = values("transfer-encoding")
    var refusal: HTTPResponse?
    if lengths.count > 1 {
        refusal = HTTPResponse(status: 400, body: Array(#"{"error":"two different Content-Length headers"}"#.utf8))
    } else if !lengths.isEmpty, !encodings.isEmpty {
        refusal = HTTPResponse(
            status: 400, body: Array(#"{"error":"a request with both Content-Length and Transfer-Encoding"}"#.utf8))
    } else if let encoding = encodings.first(where: { $0 != "chunked" }) ?? (encodings.count > 1 ? encodings[1] : nil) {
        refusal = HTTPResponse(
            status: 501, body: Array(#"{"error":"Transfer-Encoding \#(encoding.prefix(64)) is not supported"}"#.utf8))
    }
    refusal?.headers += [("Content-Type", "application/json"), ("Cache-Control", "no-store"), ("Connection", "close")]
    return refusal
}

private let requestCompleted: MHD_RequestCompletedCallback = { context, connection, requestContext, _ in
    guard let context, let requestContext, let pending = requestContext.pointee else { return }
    requestContext.pointee = nil
    let request = Unmanaged<PendingRequest>.fromOpaque(pending).takeRetainedValue()
    let server = Unmanaged<HandlerContext>.fromOpaque(context).takeUnretainedValue()
    if let connection { server.head(of: connection, arrived: false) }
    server.waiting.withLock { $0[ObjectIdentifier(request)] = nil }
    // Counted in flight from its head on: a request line whose headers never came is not.
    if request.headSeen { server.inFlight.subtract(1, ordering: .relaxed) }
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, version, _, uploadSize, requestContext in
    guard let context, let connection, let requestContext else { return Int32(ICONR_MHD_NO) }
    let server = Unmanaged<HandlerContext>.fromOpaque(context).takeUnretainedValue()
    guard let opaque = requestContext.pointee else {
        // `requestStarted` made the context of every request; without one there is nothing to do.
        return Int32(ICONR_MHD_NO)
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(opaque).takeUnretainedValue()
    if !pending.headSeen {
        // The first call has the headers only. Answering now would be an early response,
        // after which libmicrohttpd closes the connection; the next call ends the request.
        // `requestCompleted` releases the context and counts the request out.
        pending.headSeen = true
        server.inFlight.add(1, ordering: .relaxed)
        server.head(of: connection, arrived: true)
        let started = ContinuousClock.now
        _ = server.api.api.MHD_get_connection_values(
            connection, Int32(ICONR_MHD_HEADER_KIND), collectValue,
            Unmanaged.passUnretained(pending.headers).toOpaque())
        if server.answered != nil {
            let target =
                (url.map { String(cString: $0) } ?? "/")
                + (pending.query.isEmpty ? "" : "?" + String(decoding: pending.query, as: UTF8.self))
            let pairs = pending.headers.pairs
            func header(_ name: String) -> String? { pairs.first { $0.0.lowercased() == name }?.1 }
            pending.exchange = (
                server.client(of: connection), method.map { String(cString: $0) } ?? "", target, started,
                header("user-agent"), header("referer"), header("x-forwarded-for")
            )
        }
        // Unless its body cannot be read safely: then it is answered now, and closed.
        if let refusal = framingProblem(pending.headers.pairs) {
            pending.state.withLock { $0 = .sent }
            return queue(refusal, on: connection, server: server, pending: pending)
        }
        return Int32(ICONR_MHD_YES)
    }
    if let uploadSize, uploadSize.pointee > 0 {
        // A body, which no route reads: skipped.
        uploadSize.pointee = 0
        return Int32(ICONR_MHD_YES)
    }
    // Resumed: the answer came.
    if let response = pending.takeAnswer() {
        return queue(response, on: connection, server: server, pending: pending)
    }
    let isNew = pending.state.withLock { state -> Bool in
        guard case .receiving = state else { return false }
        state = .handling
        return true
    }
    guard isNew else { return Int32(ICONR_MHD_NO) }
    let api = server.api.api
    // Stopping: a new request on a kept-alive connection is not taken.
    if let closing = server.stopping.withLock({ $0 }) {
        pending.state.withLock { $0 = .sent }
        return queue(closing, on: connection, server: server, pending: pending)
    }

    let headers = pending.headers
    var request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "/",
        query: queryPairs(pending.query))
    for (name, value) in headers.pairs where request.headers[name.lowercased()] == nil {
        request.headers[name.lowercased()] = value
    }
    request.headerBytes = headers.bytes
    request.version = version.map { String(cString: $0) } ?? ""
    switch server.handler(request) {
    case .now(let response):
        pending.state.withLock { $0 = .sent }
        return queue(response, on: connection, server: server, pending: pending)
    case .later(let start):
        start { response in pending.deliver(response) }
        // Answered during `start`: sent now. Else suspended until `deliver` resumes it,
        // which waits for this lock, so that it never resumes a connection not yet suspended.
        // A stopping server suspends it too while it drains (its work has started: a
        // SIGTERM just after a render began used to answer 503), but not once it has
        // answered those waiting: the request then gets the stopping answer.
        let answer = pending.state.withLock { state -> HTTPResponse? in
            if case .answered(let response) = state {
                state = .sent
                return response
            }
            // Under `waiting`'s lock, which `stop` takes to end suspensions: a request is
            // either answered here or found waiting there.
            return server.waiting.withLock { waiting -> HTTPResponse? in
                if server.suspensionsEnded.load(ordering: .relaxed), let closing = server.stopping.withLock({ $0 }) {
                    state = .sent
                    return closing
                }
                state = .suspended
                waiting[ObjectIdentifier(pending)] = pending
                api.MHD_suspend_connection(connection)
                return nil
            }
        }
        guard let answer else { return Int32(ICONR_MHD_YES) }
        return queue(answer, on: connection, server: server, pending: pending)
    }
}

/// Queues `response` on `connection`, closing it after when the server is stopping.
/// (libmicrohttpd 0.9.75 adds `Content-Length: 0` to a 304, and cannot be told not to:
/// given the 200's length it sends both, and given no length it sends a chunked body, which
/// a 304 must not have.)
private func queue(
    _ response: HTTPResponse, on connection: OpaquePointer, server: HandlerContext, pending: PendingRequest
) -> Int32 {
    let api = server.api.api
    var response = response
    if server.stopping.withLock({ $0 != nil }),
        !response.headers.contains(where: { $0.name.lowercased() == "connection" })
    {
        response.headers.append(("Connection", "close"))
    }
    var body = response.body
    let made = body.withUnsafeMutableBytes { body in
        api.MHD_create_response_from_buffer(body.count, body.baseAddress, Int32(ICONR_MHD_RESPMEM_MUST_COPY))
    }
    guard let made else { return Int32(ICONR_MHD_NO) }
    defer { api.MHD_destroy_response(made) }
    for header in response.headers {
        _ = api.MHD_add_response_header(made, header.name, header.value)
    }
    let queued = api.MHD_queue_response(connection, UInt32(response.status), made)
    if let answered = server.answered, let exchange = pending.exchange {
        pending.exchange = nil
        let bodyless = exchange.method == "HEAD" || response.status == 304
        answered(
            HTTPExchange(
                client: exchange.client, method: exchange.method, target: exchange.target, status: response.status,
                bytes: bodyless ? 0 : response.body.count,
                seconds: {
                    let elapsed = ContinuousClock.now - exchange.started
                    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                }(), headers: response.headers, userAgent: exchange.userAgent, referer: exchange.referer,
                forwardedFor: exchange.forwardedFor))
    }
    return queued
}

/// A bound, listening TCP socket for `HOST:PORT`.
private struct ListenSocket {
    /// Connections the kernel queues before they are accepted: a burst of 2,000 waits
    /// there instead of being dropped and retried a second later.
    static let backlog = 4096

    let descriptor: Int32
    let host: String
    let port: Int

    init(_ address: String) throws(HTTPServerError) {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else {
            throw .address(address)
        }
        var host = String(address[..<colon])
        let isIPv6 = host.hasPrefix("[") && host.hasSuffix("]")
        if isIPv6 { host = String(host.dropFirst().dropLast()) }
        // `:PORT` is every interface, as in Go and nginx; `localhost` is the loopback.
        if host.isEmpty { host = "0.0.0.0" }
        if host == "localhost" { host = "127.0.0.1" }
        let family = isIPv6 ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(SystemError("socket"), address: address) }
        var reuse: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        /// bind(2) of a filled-in `sockaddr_in` or `sockaddr_in6`.
        func bind<Address>(_ socketAddress: inout Address) -> Int32 {
            withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<Address>.size))
                }
            }
        }
        var bound: Int32 = -1
        var parsed: Int32 = 0
        if isIPv6 {
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = port.bigEndian
            parsed = inet_pton(AF_INET6, host, &socketAddress.sin6_addr)
            if parsed == 1 { bound = bind(&socketAddress) }
        } else {
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = port.bigEndian
            parsed = inet_pton(AF_INET, host, &socketAddress.sin_addr)
            if parsed == 1 { bound = bind(&socketAddress) }
        }
        guard parsed == 1 else {
            close(descriptor)
            throw .address(address)
        }
        guard bound == 0 else {
            let error = SystemError("bind")
            close(descriptor)
            throw .system(error, address: address)
        }
        guard listen(descriptor, Int32(Self.backlog)) == 0 else {
            let error = SystemError("listen")
            close(descriptor)
            throw .system(error, address: address)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        let actualPort = withUnsafePointer(to: &storage) { pointer -> UInt16 in
            isIPv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
        }
        self.descriptor = descriptor
        self.host = isIPv6 ? "[\(host)]" : host
        self.port = Int(UInt16(bigEndian: actualPort))
    }
}
