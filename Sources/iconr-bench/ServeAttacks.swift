import Foundation
import IconrSystem
import IconrTestSupport
import Synchronization

/// `iconr serve` against nginx serving the same PNG (wrk at 16 and 64 connections), and under
/// the attacks of issue 26: for each, whether `/health` and a cache hit, asked from another
/// client address while the attack runs, still answer within 100 ms.
enum ServeAttacks {
    static let clock = ContinuousClock()
    static let hit = "/icons/flag@2x.png?flag_color=%23800080"

    static func run(repository: URL, scratch: URL) {
        let icons = scratch.appendingPathComponent("icons")
        try? FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        for name in ["flag", "marker", "badge"] {
            try? FileManager.default.copyItem(
                at: repository.appendingPathComponent("icons/\(name).svg"),
                to: icons.appendingPathComponent("\(name).svg"))
        }
        // A blur and a dilation: about 2 s at scale 12 (the resvg corpus's feTurbulence is alike).
        try? Data(slowSVG.utf8).write(to: icons.appendingPathComponent("slow.svg"))
        let cache = scratch.appendingPathComponent("cache").path
        func start(_ extra: [String] = []) -> ServerProcess? {
            try? ServerProcess(
                ["--icons", icons.path, "--cache-dir", cache, "--max-scale", "16"] + extra, directory: scratch)
        }
        guard let server = start() else {
            print("error: iconr serve did not start")
            return
        }
        let nginx = compareWithNginx(server, scratch: scratch)
        defer {
            nginx?.process.signal(SIGQUIT)
            nginx?.process.wait(timeout: 10)
        }
        let port = server.port

        print("\nattacks (probes from 127.0.0.2 while each runs; ok = every probe within 100 ms):")
        attack("slowloris: 1,000 connections from one address, a header line each second", server) {
            slowloris(port: port, connections: 1000, seconds: 4)
        }
        attack("2,000 connections at once from 8 addresses, each one request", server) {
            let (answered, refused) = burst(port: port, target: "/health", connections: 2000, seconds: 4)
            return "\(answered) answered in 4 s, \(refused) closed unanswered (at most 4,096 open)"
        }
        if let nginx {
            // The same burst and probes against nginx: what this machine allows.
            attack("the same 2,000 against nginx", port: nginx.port, probes: ("/flag.png", "/flag.png")) {
                let (answered, refused) = burst(port: nginx.port, target: "/flag.png", connections: 2000, seconds: 4)
                return "\(answered) answered in 4 s, \(refused) closed unanswered"
            }
        }
        attack("slow-render flood: 64 renders of 2 s at unique scales", server) {
            let statuses = concurrently(64) { index in
                (try? HTTPConnection(port: port, timeout: 60).request(
                    "/icons/slow@\(8 + Double(index) / 16)x.png"))?.status ?? -1
            }
            return "statuses " + histogram(statuses)
        }
        attack("worker kills: kill -9 every render worker each 50 ms while 300 misses are asked", server) {
            let killer = Atomic<Bool>(true)
            let serverPID = server.process.pid
            Thread.detachNewThread {
                while killer.load(ordering: .relaxed) {
                    for child in TestSupport.children(of: serverPID) { kill(child, SIGKILL) }
                    usleep(50_000)
                }
            }
            let statuses = concurrently(4) { client in
                (0..<75).map { index in
                    (try? HTTPConnection(port: port).request(
                        "/icons/marker.png?fill_color=%23\(String(format: "%06x", client * 75 + index + 0x10000))"))?
                        .status ?? -1
                }
            }.flatMap { $0 }
            killer.store(false, ordering: .relaxed)
            return "statuses " + histogram(statuses)
        }
        server.process.signal(SIGTERM)
        server.process.wait(timeout: 20)

        if let limited = start(["--cache-limit", "1"]) {
            let port = limited.port
            attack("eviction at the limit: 4 clients writing new variants past a 1 MiB disk cache", limited) {
                let started = clock.now
                let times = concurrently(4) { client in
                    (0..<400).map { index -> Double in
                        let asked = clock.now
                        _ = try? HTTPConnection(port: port).request(
                            "/icons/badge@3x.png?badge_color=%23\(String(format: "%06x", client * 400 + index + 0x20000))"
                        )
                        return milliseconds(clock.now - asked)
                    }
                }.flatMap { $0 }
                let seconds = milliseconds(clock.now - started) / 1000
                return
                    "\(Int(Double(times.count) / seconds)) misses/s, mean \(fixed(times.reduce(0, +) / Double(times.count))) ms, "
                    + "p99 \(fixed(percentile(times, 0.99))) ms"
            }
            limited.process.signal(SIGTERM)
            limited.process.wait(timeout: 20)
        }

        if let stopping = start() {
            let port = stopping.port
            let statuses = Locked<[Int]>([])
            let group = DispatchGroup()
            for index in 0..<24 {
                group.enter()
                Thread.detachNewThread {
                    let target = index % 2 == 0 ? hit : "/icons/slow@\(12 + Double(index) / 32)x.png"
                    let status = (try? HTTPConnection(port: port, timeout: 60).request(target))?.status ?? -1
                    statuses.withLock { $0.append(status) }
                    group.leave()
                }
            }
            usleep(1_000_000)
            let signalled = clock.now
            stopping.process.signal(SIGTERM)
            let code = stopping.process.wait(timeout: 30)
            let exit = milliseconds(clock.now - signalled) / 1000
            _ = group.wait(timeout: .now() + 10)
            let all = statuses.withLock { $0 }
            print("  SIGTERM under load (12 hits, 12 renders of 2 s in flight)")
            print(
                "    exited \(code.map(String.init) ?? "?") after \(fixed(exit)) s; answers " + histogram(all)
                    + " (-1: none)")
        }
        sigtermUnderMisses(start)
        tornJournal(start, cache: cache)
    }

    /// Five rounds of 16 keep-alive clients each asking for a new color every time (every
    /// request a miss, its connection suspended while it renders), SIGTERM 1.5 s in: how each
    /// exited (134 was libmicrohttpd's abort), how long it took, whether every reply was whole,
    /// and whether any request was taken on a connection after a `Connection: close`.
    static func sigtermUnderMisses(_ start: ([String]) -> ServerProcess?) {
        let rounds = (0..<5).compactMap { round in start([]).map { StopUnderMisses.run($0, round: round) } }
        print("  SIGTERM under cache misses on keep-alive connections (16 clients, a new color each request; 5 rounds)")
        print(
            "    exit codes \(rounds.map { $0.status.map(String.init) ?? "?" }.joined(separator: ", ")), "
                + "stopped in \(rounds.map { fixed($0.seconds) }.joined(separator: ", ")) s; "
                + "\(rounds.reduce(0) { $0 + $1.replies }) replies, \(rounds.reduce(0) { $0 + $1.broken.count }) not whole, "
                + "\(rounds.reduce(0) { $0 + $1.afterClose }) taken after Connection: close")
    }

    /// A journal whose last record is cut short (a crash mid-append, a full disk): a server on
    /// it then answers 400 misses; how long they take against a journal without the tear, and
    /// the repairs it counts (each later miss re-read the journal from the tear to its end).
    static func tornJournal(_ start: ([String]) -> ServerProcess?, cache: String) {
        func misses(_ server: ServerProcess, offset: Int) -> Double {
            let started = clock.now
            let connection = try? HTTPConnection(port: server.port)
            for index in 0..<400 {
                _ = try? connection?.request(
                    "/icons/marker@2x.png?fill_color=%23\(String(format: "%06x", 0x50_0000 + offset + index))")
            }
            return milliseconds(clock.now - started) / 400
        }
        let packs = cache + "/entries-v1/packs"
        var report: [String] = []
        for torn in [false, true] {
            // A journal of 400 variants, then (torn) half a record at its end.
            try? FileManager.default.removeItem(atPath: cache)
            guard let writer = start([]) else { return }
            _ = misses(writer, offset: torn ? 10_000 : 20_000)
            writer.process.signal(SIGTERM)
            writer.process.wait(timeout: 30)
            if torn, let name = (try? FileManager.default.contentsOfDirectory(atPath: packs))?.first,
                let handle = FileHandle(forWritingAtPath: packs + "/" + name)
            {
                handle.seekToEndOfFile()
                var half: [UInt8] = [64, 0, 0, 0] + Array(String(repeating: "a", count: 64).utf8) + [0, 0, 1, 0]
                half += [UInt8](repeating: 7, count: 1000)
                handle.write(Data(half))
                try? handle.close()
            }
            guard let server = start([]) else { return }
            let perMiss = misses(server, offset: torn ? 30_000 : 40_000)
            let repairs =
                (try? server.get("/metrics").text)?.split(separator: "\n")
                .first { $0.hasPrefix("iconr_cache_journal_repairs_total ") }.map {
                    String($0.split(separator: " ")[1])
                } ?? "?"
            report.append("\(torn ? "torn" : "whole"): \(fixed(perMiss)) ms a miss, \(repairs) repairs")
            server.process.signal(SIGTERM)
            server.process.wait(timeout: 30)
        }
        print(
            "  a torn journal record (400 misses on a journal of 400 variants, whole and with half a record at its end)"
        )
        print("    " + report.joined(separator: "; "))
    }

    /// Requests/s and p50/p99 of wrk against iconr and against nginx serving the same PNG,
    /// three rounds at 16 and at 64 connections, each round iconr then nginx back to back (this
    /// machine's speed drifts within minutes); each round's ratio, then the median ratio with
    /// the range of the three. nginx, left running (nil without wrk or nginx).
    static func compareWithNginx(_ server: ServerProcess, scratch: URL) -> (process: RunningProgram, port: Int)? {
        guard let wrk = which("wrk") else {
            print("(wrk is not installed: apt-get install wrk nginx for the nginx comparison)")
            return nil
        }
        let nginx = startNginx(serving: (try? server.get(hit).body) ?? [], scratch: scratch)
        print(
            "cache hits, wrk -t2 -d3s (sharing the 2 cores), iconr serve --threads 8 against nginx (workers: auto), "
                + "three rounds each:")
        for connections in [16, 64] {
            /// wrk's rate and latencies, and the server's CPU per request (its processes', from
            /// /proc: the client's share of the cores apart, what the machine's noise moves least).
            func measure(_ url: String, pid: pid_t) -> (rate: Double, p50: String, p99: String, cpu: Double) {
                let cpuBefore = ServeBenchmark.cpuSeconds(ofTree: pid)
                let result = try? TestSupport.run(
                    wrk, ["-t2", "-c\(connections)", "-d3s", "--latency", url], directory: scratch, timeout: 30)
                let cpu = ServeBenchmark.cpuSeconds(ofTree: pid) - cpuBefore
                let lines = String(decoding: result?.stdout ?? Data(), as: UTF8.self).split(separator: "\n")
                func field(_ prefix: String) -> String {
                    lines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix(prefix) }?
                        .split(separator: " ", omittingEmptySubsequences: true).last.map(String.init) ?? "?"
                }
                let requests =
                    lines.first { $0.contains(" requests in ") }?.split(separator: " ").first.flatMap { Double($0) }
                    ?? 0
                return (Double(field("Requests/sec:")) ?? 0, field("50%"), field("99%"), cpu / max(requests, 1) * 1e6)
            }
            var ratios: [Double] = [], cpuRatios: [Double] = []
            for round in 1...3 {
                let ours = measure(server.url + hit, pid: server.process.pid)
                let theirs =
                    nginx.map { measure("http://127.0.0.1:\($0.port)/flag.png", pid: $0.process.pid) }
                    ?? (rate: 0.0, p50: "?", p99: "?", cpu: 0)
                if theirs.rate > 0 { ratios.append(ours.rate / theirs.rate) }
                if theirs.cpu > 0 { cpuRatios.append(ours.cpu / theirs.cpu) }
                print(
                    "  \(connections) connections, round \(round): iconr \(Int(ours.rate))/s (p50 \(ours.p50), p99 \(ours.p99), "
                        + "\(fixed(ours.cpu)) us CPU a request); nginx \(Int(theirs.rate))/s (p50 \(theirs.p50), "
                        + "p99 \(theirs.p99), \(fixed(theirs.cpu)) us); "
                        + "iconr/nginx \(theirs.rate > 0 ? percent(ours.rate / theirs.rate) : "?")")
            }
            if ratios.count == 3, cpuRatios.count == 3 {
                let sorted = ratios.sorted(), cpu = cpuRatios.sorted()
                print(
                    "  \(connections) connections: iconr/nginx \(percent(sorted[1])) (median of 3 rounds; "
                        + "\(percent(sorted[0]))-\(percent(sorted[2]))); CPU a request \(fixed(cpu[1]))x nginx's "
                        + "(\(fixed(cpu[0]))-\(fixed(cpu[2]))x)")
            }
        }
        return nginx
    }

    /// Only the nginx comparison (`iconr-bench serve hits`): a server like `run`'s.
    static func runHits(repository: URL, scratch: URL) {
        guard
            let server = try? ServerProcess(
                ["--icons", repository.appendingPathComponent("icons").path, "--no-cache"], directory: scratch)
        else {
            print("error: iconr serve did not start")
            return
        }
        let nginx = compareWithNginx(server, scratch: scratch)
        nginx?.process.signal(SIGQUIT)
        nginx?.process.wait(timeout: 10)
        server.process.signal(SIGTERM)
        server.process.wait(timeout: 20)
    }

    /// nginx (`worker_processes auto`) serving `png` as `/flag.png` on loopback; nil when
    /// nginx is not installed.
    static func startNginx(serving png: [UInt8], scratch: URL) -> (process: RunningProgram, port: Int)? {
        let root = scratch.appendingPathComponent("www")
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try? Data(png).write(to: root.appendingPathComponent("flag.png"))
        let nginxPort = 20000 + Int(getpid()) % 20000
        let config = """
            worker_processes auto; daemon off; pid \(scratch.path)/nginx.pid; error_log \(scratch.path)/nginx.err;
            events { worker_connections 4096; }
            http { access_log off; server { listen 127.0.0.1:\(nginxPort); root \(root.path); etag on; } }
            """
        try? Data(config.utf8).write(to: scratch.appendingPathComponent("nginx.conf"))
        let nginx = which("nginx").flatMap {
            try? RunningProgram(
                $0, ["-c", scratch.appendingPathComponent("nginx.conf").path, "-p", scratch.path], directory: scratch,
                stdout: "/dev/null", stderr: scratch.appendingPathComponent("nginx.stderr").path)
        }
        usleep(500_000)
        return nginx.map { ($0, nginxPort) }
    }

    /// Only the 2,000-connection burst, `rounds` times against iconr and against nginx.
    static func runBurst(repository: URL, scratch: URL, rounds: Int) {
        let icons = scratch.appendingPathComponent("icons")
        try? FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(
            at: repository.appendingPathComponent("icons/flag.svg"), to: icons.appendingPathComponent("flag.svg"))
        guard let server = try? ServerProcess(["--icons", icons.path, "--no-cache"], directory: scratch) else {
            print("error: iconr serve did not start")
            return
        }
        let nginx = startNginx(serving: (try? server.get(hit).body) ?? [], scratch: scratch)
        defer {
            nginx?.process.signal(SIGQUIT)
            nginx?.process.wait(timeout: 10)
        }
        for round in 1...rounds {
            attack("round \(round): 2,000 connections at once from 8 addresses, each one request", server) {
                let (answered, refused) = burst(port: server.port, target: "/health", connections: 2000, seconds: 4)
                return "\(answered) answered in 4 s, \(refused) closed unanswered"
            }
            if let nginx {
                attack("round \(round): the same against nginx", port: nginx.port, probes: ("/flag.png", "/flag.png")) {
                    let (answered, refused) = burst(
                        port: nginx.port, target: "/flag.png", connections: 2000, seconds: 4)
                    return "\(answered) answered in 4 s, \(refused) closed unanswered"
                }
            }
        }
    }

    /// `attack(_:port:probes:_:)` on iconr: `/health` and a cache hit.
    static func attack(_ name: String, _ server: ServerProcess, _ work: () -> String) {
        _ = try? server.get(hit)
        attack(name, port: server.port, probes: ("/health", hit), work)
    }

    /// Runs `work` while probing the two targets every 100 ms from another address, and
    /// prints what it says and the probes' worst latencies.
    static func attack(
        _ name: String, port: Int, probes targets: (health: String, hit: String), _ work: () -> String
    ) {
        let probing = Atomic<Bool>(true)
        let probes = Locked<(health: [Double], hit: [Double], failed: Int)>(([], [], 0))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while probing.load(ordering: .relaxed) {
                for (index, target) in [targets.health, targets.hit].enumerated() {
                    let started = clock.now
                    let status = (try? HTTPConnection(port: port, timeout: 5, from: "127.0.0.2").request(target))?
                        .status
                    let time = milliseconds(clock.now - started)
                    probes.withLock { probes in
                        if status != 200 { probes.failed += 1 }
                        if index == 0 { probes.health.append(time) } else { probes.hit.append(time) }
                    }
                }
                usleep(100_000)
            }
            done.signal()
        }
        let summary = work()
        probing.store(false, ordering: .relaxed)
        done.wait()
        let seen = probes.withLock { $0 }
        let worstHealth = seen.health.max() ?? .nan, worstHit = seen.hit.max() ?? .nan
        let ok = seen.failed == 0 && worstHealth < 100 && worstHit < 100
        print("  \(name)")
        print("    \(summary)")
        print(
            "    \(targets.health == "/health" ? "/health" : "probe") worst \(fixed(worstHealth)) ms, "
                + "\(targets.health == "/health" ? "cache hit" : "second probe") worst \(fixed(worstHit)) ms over \(seen.health.count) probes"
                + (seen.failed > 0 ? ", \(seen.failed) failed" : "") + ": \(ok ? "ok" : "NOT within 100 ms")")
    }

    /// `connections` sockets from 127.0.0.3, each sending a request line and then a header
    /// line a second, for `seconds`; how many the server closed.
    static func slowloris(port: Int, connections: Int, seconds: Int) -> String {
        var sockets: [Int32] = []
        for _ in 0..<connections {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var local = sockaddr_in(), remote = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr("127.0.0.3")
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = UInt16(port).bigEndian
            remote.sin_addr.s_addr = inet_addr("127.0.0.1")
            withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    _ = bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            withUnsafePointer(to: &remote) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    _ = connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            sockets.append(socket)
        }
        usleep(200_000)
        var closed = Set<Int32>()
        for second in 0..<seconds {
            for socket in sockets where !closed.contains(socket) {
                let line = second == 0 ? "GET /health HTTP/1.1\r\n" : "X-Slow-\(second): x\r\n"
                if send(socket, line, line.utf8.count, Int32(MSG_NOSIGNAL)) < 0, errno != EAGAIN {
                    closed.insert(socket)
                }
            }
            usleep(1_000_000)
        }
        for socket in sockets { close(socket) }
        return "\(closed.count) of \(connections) closed by the server within \(seconds) s"
    }

    /// `connections` connections at once, from 127.0.0.10-17, each asking `target` and
    /// holding the connection; how many were answered and how many closed unanswered.
    static func burst(port: Int, target: String, connections: Int, seconds: Int) -> (answered: Int, refused: Int) {
        let results = concurrently(8) { address -> (Int, Int) in
            var open: [HTTPConnection] = []
            for _ in 0..<(connections / 8) {
                if let connection = try? HTTPConnection(port: port, timeout: seconds, from: "127.0.0.\(10 + address)") {
                    try? connection.send(Array("GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                    open.append(connection)
                }
            }
            var answered = 0, refused = 0
            for connection in open {
                switch (try? connection.readReply())?.status {
                case 200: answered += 1
                case nil: refused += 1
                default: break
                }
            }
            return (answered, refused)
        }
        return (results.reduce(0) { $0 + $1.0 }, results.reduce(0) { $0 + $1.1 })
    }

    /// `body(i)` for i in 0..<count, each on its own thread (Dispatch would start threads for
    /// blocked work one by one), in order.
    static func concurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        let results = Locked<[Int: T]>([:])
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                let result = body(index)
                results.withLock { $0[index] = result }
                group.leave()
            }
        }
        group.wait()
        return results.withLock { all in (0..<count).compactMap { all[$0] } }
    }

    static func histogram(_ statuses: [Int]) -> String {
        Dictionary(grouping: statuses, by: { $0 }).sorted { $0.key < $1.key }.map { "\($0.key) x\($0.value.count)" }
            .joined(separator: ", ")
    }

    static let slowSVG = """
        <svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">
          <filter id="b" x="-50%" y="-50%" width="200%" height="200%"><feGaussianBlur stdDeviation="9"/><feMorphology radius="6"/></filter>
          <g filter="url(#b)"><circle cx="32" cy="32" r="20" fill="#000"/></g>
        </svg>
        """

    static func which(_ program: String) -> String? { ServeBenchmark.which(program) }
    static func milliseconds(_ duration: Duration) -> Double { ServeBenchmark.milliseconds(duration) }
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        ServeBenchmark.percentile(values, fraction)
    }
    static func fixed(_ value: Double) -> String { ServeBenchmark.fixed(value) }
    static func percent(_ fraction: Double) -> String { ServeBenchmark.percent(fraction) }
}
