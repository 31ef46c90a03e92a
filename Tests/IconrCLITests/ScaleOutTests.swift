import Dispatch
import Foundation
import Iconr
import IconrCore
import IconrRender
import IconrSystem
import IconrTestSupport
import Synchronization
import Testing

/// Two `iconr serve` replicas behind Debian's nginx, configured by `examples/nginx/iconr.conf`
/// (only its ports and paths replaced): load goes through nginx, one replica is killed with
/// SIGKILL in the middle, and no request may fail; repeated requests must come from nginx's
/// cache; every PNG served must be pixel-equal to a render of its variant.
struct ScaleOutTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder

    init() throws {
        scratch = try TestSupport.folderWithBundledIcons("iconr-scale")
        directory = scratch.url
    }

    /// A port nobody listens on now (the kernel's choice for a socket bound and closed).
    private func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(socket, pointer, length) == 0 ? getsockname(socket, pointer, &length) : -1
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func aReplicaKilledUnderLoadCostsNoRequest() throws {
        let nginx = try #require(
            ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "nginx is needed (Debian's nginx; .ci/install installs it)")
        let port = try freePort()
        let publicURL = ["--public-url", "http://127.0.0.1:\(port)"]
        let replicas = [
            try ServerProcess(["--icons", "icons", "--no-cache"] + publicURL, directory: directory),
            try ServerProcess(["--icons", "icons", "--no-cache"] + publicURL, directory: directory),
        ]
        let state = directory.appendingPathComponent("nginx")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        // nginx's workers may run as another user: its folders must be theirs to write.
        chmod(state.path, 0o777)
        var config = try String(
            contentsOf: TestSupport.repository.appendingPathComponent("examples/nginx/iconr.conf"), encoding: .utf8)
        for (from, to) in [
            ("127.0.0.1:8080", "127.0.0.1:\(port)"), ("127.0.0.1:8081", "127.0.0.1:\(replicas[0].port)"),
            ("127.0.0.1:8082", "127.0.0.1:\(replicas[1].port)"), ("/tmp/iconr-nginx", state.path + "/iconr-nginx"),
        ] {
            config = config.replacingOccurrences(of: from, with: to)
        }
        let temporary = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map {
            "    \($0)_temp_path \(state.path)/\($0);"
        }
        config = config.replacingOccurrences(
            of: "http {\n", with: "http {\n" + temporary.joined(separator: "\n") + "\n")
        let configFile = state.appendingPathComponent("nginx.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        let proxy = try RunningProgram(
            nginx, ["-p", state.path, "-c", configFile.path, "-g", "daemon off;"],
            stderr: state.appendingPathComponent("stderr").path)
        defer {
            proxy.signal(SIGTERM)
            proxy.wait(timeout: 20)
        }
        var ready = false
        for _ in 0..<250 where !ready {
            ready = (try? HTTPConnection(port: port).request("/health").status) == 200
            if !ready { usleep(20_000) }
        }
        try #require(
            ready,
            "nginx did not start: \((try? String(contentsOf: state.appendingPathComponent("stderr"), encoding: .utf8)) ?? "")"
        )

        // 48 variants: half of them asked for 3 times each, then all of them 3 times each, in
        // shuffled orders, by 4 clients; one replica is killed while the first half is under
        // way, so the second half's new variants can come only from the other one.
        let colors = ["red", "teal", "%23800080", "navy", "orange", "rgb(10%2C200%2C30)", "gold", "%23123456"]
        let targets = colors.flatMap { color in
            ["flag_color": "flag", "fill_color": "marker"].sorted { $0.key < $1.key }.flatMap { parameter, icon in
                [1, 2, 3].map { "/icons/\(icon)@\($0)x.png?\(parameter)=\(color)" }
            }
        }
        var generator = SeededGenerator(seed: 11)
        let firstHalf = Array(targets.shuffled(using: &generator).prefix(targets.count / 2))
        let before = (Array(repeating: firstHalf, count: 3).flatMap { $0 } + ["/sprites/icons/sprite@2x.png"]).shuffled(
            using: &generator)
        let after = (Array(repeating: targets, count: 3).flatMap { $0 } + ["/sprites/icons/sprite.json"]).shuffled(
            using: &generator)
        let requests = before + after
        let killAt = before.count - 8
        let results = Locked<[(target: String, reply: HTTPReply?)]>([])
        let next = Atomic<Int>(0)
        let victim = replicas[0].process.pid
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var connection = try? HTTPConnection(port: port)
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < requests.count else { break }
                if index == killAt { kill(victim, SIGKILL) }
                var reply = try? connection?.request(requests[index])
                if reply == nil {
                    // nginx closed the keep-alive connection: a client reconnects.
                    connection = try? HTTPConnection(port: port)
                    reply = try? connection?.request(requests[index])
                }
                results.withLock { $0.append((requests[index], reply)) }
            }
        }
        #expect(replicas[0].process.wait(timeout: 10) == -SIGKILL)
        let all = results.withLock { $0 }
        #expect(all.count == requests.count)
        let failed = all.filter { $0.reply?.status != 200 }
        #expect(failed.count == 0, "failed: \(failed.prefix(5).map { "\($0.target): \($0.reply?.status ?? -1)" })")
        let hits = all.filter { $0.reply?.headers["x-cache-status"] == "HIT" }.count
        #expect(hits >= requests.count / 2, "\(hits) of \(requests.count) answered by nginx's cache")
        // The survivor rendered the variants first asked for after the kill.
        let survivor = try replicas[1].get("/metrics").text
        let rendered =
            survivor.split(separator: "\n").first { $0.hasPrefix("iconr_cache_misses_total ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        #expect(rendered >= targets.count / 2, "the surviving replica rendered \(rendered) variants")

        // Every PNG pixel-equal to a render of its variant (sprites: to the surviving replica's).
        var expected: [String: RasterImage] = [:]
        for (target, reply) in all {
            guard let reply, reply.status == 200, target.hasSuffix(".json") == false else { continue }
            let image = try PNGDecoder.decode(reply.body)
            if expected[target] == nil {
                expected[target] = try PNGDecoder.decode(try replicas[1].get(target).body)
            }
            #expect(TestSupport.maxChannelDifference(image, try #require(expected[target])) == 0, "\(target)")
        }
        let flag = try IconSource(path: directory.appendingPathComponent("icons/flag.svg").path).render(
            params: ["flag_color": "#800080"], scale: 2)
        let served = try #require(expected["/icons/flag@2x.png?flag_color=%23800080"])
        #expect(TestSupport.maxChannelDifference(served, flag.image) == 0)
    }
}
