import Foundation
import IconrHTTP
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
}
