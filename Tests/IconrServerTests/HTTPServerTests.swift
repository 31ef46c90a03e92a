import Foundation
import IconrHTTP
import IconrSystem
import IconrTestSupport
import Testing

/// The HTTP server on its own, over real sockets: what no route decides.
struct HTTPServerTests {
    /// Slowloris from many addresses, each within its per-client limit, past the connection
    /// limit: connections whose request head has been arriving longest (over a second) make
    /// room, so a new client is answered at once (it waited for the head deadline, 15 s,
    /// behind them).
    @Test func connectionsHoldingTheirHeadsMakeRoomForNewClients() throws {
        var configuration = HTTPServer.Configuration()
        configuration.connectionLimit = 64
        configuration.connectionsPerClient = 16
        configuration.threads = 2
        let server = try HTTPServer(listening: "127.0.0.1:0", configuration: configuration) { _ in
            .now(HTTPResponse(status: 200, body: Array("ok\n".utf8)))
        }
        defer { server.stop(drainingFor: .zero) }
        // 5 addresses x 16 connections, each with half a request line and nothing more.
        var held: [HTTPConnection] = []
        for address in 2...6 {
            for _ in 0..<16 {
                let connection = try HTTPConnection(port: server.port, timeout: 3, from: "127.0.0.\(address)")
                try connection.send(Array("GET /".utf8))
                held.append(connection)
            }
        }
        #expect(held.count == 80)
        usleep(1_500_000)
        for _ in 0..<4 {
            let started = ContinuousClock.now
            let probe = try HTTPConnection(port: server.port, timeout: 6, from: "127.0.0.9")
            #expect(try probe.request("/").status == 200)
            #expect(ContinuousClock.now - started < .seconds(5), "a new client behind 80 held connections")
        }
    }

    /// A request whose work had started when the server began to stop (a SIGTERM just after a
    /// render began) waits for its answer while the server drains, as the requests already
    /// waiting do: it was answered 503 at once when the stop came between its work's start
    /// and its connection's suspension.
    @Test func aRequestWhoseWorkStartedAsTheServerStopsGetsItsAnswer() throws {
        var configuration = HTTPServer.Configuration()
        configuration.threads = 2
        let holder = Locked<HTTPServer?>(nil)
        let server = try HTTPServer(listening: "127.0.0.1:0", configuration: configuration) { _ in
            .later { send in
                // The server stops now, while this request's work runs: `start` returns only
                // once new connections are refused (the stop is under way).
                guard let server = holder.withLock({ $0 }) else { return }
                DispatchQueue.global().async { server.stop(drainingFor: .seconds(10)) }
                let deadline = ContinuousClock.now + .seconds(5)
                while ContinuousClock.now < deadline, (try? HTTPConnection(port: server.port, timeout: 1)) != nil {
                    usleep(2_000)
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
                    send(HTTPResponse(status: 200, body: Array("drawn\n".utf8)))
                }
            }
        }
        holder.withLock { $0 = server }
        let reply = try HTTPConnection(port: server.port, timeout: 10).request("/slow")
        #expect(reply.status == 200 && reply.text == "drawn\n", "\(reply.status) \(reply.text)")
        #expect(throws: (any Error).self) { try HTTPConnection(port: server.port, timeout: 1) }
    }
}
