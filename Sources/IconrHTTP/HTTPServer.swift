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

/// An HTTP/1.1 server on GNU libmicrohttpd: a pool of threads, each with its own epoll loop,
/// keep-alive, connection limits and idle timeouts. `handler` runs on those threads, one
/// request at a time per thread; it may block (a render), which holds only its thread.
public final class HTTPServer: Sendable {
    /// Limits of one server.
    public struct Configuration: Sendable {
        /// Threads answering requests (each runs `handler` for its connections).
        public var threads = 8
        /// Open connections at most; more wait in the kernel's accept queue.
        public var connectionLimit = 1024
        /// Open connections from one IP address at most; more are closed as they come, so
        /// that one client (slowloris: many connections, a header line now and then) cannot
        /// take them all. Behind a proxy every client has its address: raise it there.
        public var connectionsPerClient = 256
        /// An idle connection is closed after this many seconds.
        public var idleTimeout = 30
        /// Per-connection memory for the request line and headers: past it libmicrohttpd
        /// answers 414 or 431 itself.
        public var connectionMemory = 64 << 10

        /// 8 threads, 1,024 connections (256 from one address), 30 s idle timeout, 64 KiB
        /// per connection.
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
    public init(
        listening address: String, configuration: Configuration = Configuration(),
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) {
        let table = try MicroHTTPD.load()
        let socket = try ListenSocket(address)
        host = socket.host
        port = socket.port
        let context = Unmanaged.passRetained(HandlerContext(api: table, handler: handler))
        var options = [
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_LISTEN_SOCKET), value: Int(socket.descriptor), ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_THREAD_POOL_SIZE), value: max(1, configuration.threads), ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_CONNECTION_LIMIT), value: max(1, configuration.connectionLimit),
                ptr_value: nil),
            MHD_OptionItem(
                option: Int32(ICONR_MHD_OPTION_PER_IP_CONNECTION_LIMIT),
                value: max(1, configuration.connectionsPerClient), ptr_value: nil),
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
                option: Int32(ICONR_MHD_OPTION_NOTIFY_COMPLETED), value: unsafeBitCast(requestCompleted, to: Int.self),
                ptr_value: context.toOpaque()),
            MHD_OptionItem(option: Int32(ICONR_MHD_OPTION_END), value: 0, ptr_value: nil),
        ]
        let flags = UInt32(ICONR_MHD_USE_INTERNAL_POLLING_THREAD | ICONR_MHD_USE_EPOLL | ICONR_MHD_USE_ITC)
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
    }

    deinit {
        stop(drainingFor: .zero)
        context.release()
    }

    /// Requests whose handler is running or whose response is still being sent.
    public var requestsInFlight: Int { context.takeUnretainedValue().inFlight.load(ordering: .relaxed) }

    /// Stops accepting connections, lets the requests in flight finish (waiting at most
    /// `drainingFor`), then closes every connection and joins the threads. Idempotent.
    public func stop(drainingFor limit: Duration = .seconds(10)) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let api = context.takeUnretainedValue().api.api
        // Quiesced, the daemon no longer listens; the socket is ours to close, so new
        // connections are refused at once (a load balancer moves on to another replica).
        let listening = api.MHD_quiesce_daemon(daemon.pointer)
        if listening >= 0 { close(listening) }
        let deadline = ContinuousClock.now + limit
        while requestsInFlight > 0, ContinuousClock.now < deadline {
            usleep(2_000)
        }
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
    let handler: @Sendable (HTTPRequest) -> HTTPResponse
    let inFlight = Atomic<Int>(0)

    init(api: MicroHTTPD.Table, handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse) {
        self.api = api
        self.handler = handler
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

private let requestCompleted: MHD_RequestCompletedCallback = { context, _, requestContext, _ in
    guard let context, let requestContext, requestContext.pointee != nil else { return }
    requestContext.pointee = nil
    Unmanaged<HandlerContext>.fromOpaque(context).takeUnretainedValue().inFlight.subtract(1, ordering: .relaxed)
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, version, _, uploadSize, requestContext in
    guard let context, let connection, let requestContext else { return Int32(ICONR_MHD_NO) }
    let server = Unmanaged<HandlerContext>.fromOpaque(context).takeUnretainedValue()
    if requestContext.pointee == nil {
        // The first call has the headers only. Answering now would be an early response,
        // after which libmicrohttpd closes the connection; the next call ends the request.
        // Marks the request as seen: `requestCompleted` counts it out.
        requestContext.pointee = UnsafeMutableRawPointer(bitPattern: 1)
        server.inFlight.add(1, ordering: .relaxed)
        return Int32(ICONR_MHD_YES)
    }
    if let uploadSize, uploadSize.pointee > 0 {
        // A body, which no route reads: skipped.
        uploadSize.pointee = 0
        return Int32(ICONR_MHD_YES)
    }
    let api = server.api.api

    let headers = ValueCollector()
    let query = ValueCollector()
    _ = api.MHD_get_connection_values(
        connection, Int32(ICONR_MHD_HEADER_KIND), collectValue, Unmanaged.passUnretained(headers).toOpaque())
    _ = api.MHD_get_connection_values(
        connection, Int32(ICONR_MHD_GET_ARGUMENT_KIND), collectValue, Unmanaged.passUnretained(query).toOpaque())
    var request = HTTPRequest(
        method: method.map { String(cString: $0) } ?? "", path: url.map { String(cString: $0) } ?? "/",
        query: query.pairs.map { (name: $0.0, value: $0.1) })
    for (name, value) in headers.pairs where request.headers[name.lowercased()] == nil {
        request.headers[name.lowercased()] = value
    }
    request.headerBytes = headers.bytes
    request.version = version.map { String(cString: $0) } ?? ""
    var response = server.handler(request)
    let made = response.body.withUnsafeMutableBytes { body in
        api.MHD_create_response_from_buffer(body.count, body.baseAddress, Int32(ICONR_MHD_RESPMEM_MUST_COPY))
    }
    guard let made else { return Int32(ICONR_MHD_NO) }
    defer { api.MHD_destroy_response(made) }
    for header in response.headers {
        _ = api.MHD_add_response_header(made, header.name, header.value)
    }
    return api.MHD_queue_response(connection, UInt32(response.status), made)
}

/// A bound, listening TCP socket for `HOST:PORT`.
private struct ListenSocket {
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
        if host.isEmpty || host == "localhost" { host = "127.0.0.1" }
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
        guard listen(descriptor, 511) == 0 else {
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
