import Foundation
import Iconr
import IconrCore
import IconrSystem
import IconrTestSupport

/// `iconr serve`'s figures, from the built binary over loopback, side by side in one run:
/// requests per second on keep-alive connections for `/health` (the HTTP floor: libmicrohttpd
/// and the route, nothing else) and for an icon answered from memory; the latency of a miss
/// (a render in an isolated worker, then the PNG over HTTP) against an in-process render of
/// the same variant; and `wrk`'s view of a hit when wrk is installed.
enum ServeBenchmark {
    static let clock = ContinuousClock()

    /// Everything, or (`only`) three rounds of the 2,000-connection burst (`burst`) or the
    /// cache hits against nginx (`hits`).
    static func run(only: String?, edits: Int = 25, editedFolder: String? = nil) {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-serve-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        if only == "burst" {
            ServeAttacks.runBurst(repository: repository, scratch: scratch, rounds: 3)
            return
        }
        if only == "hits" {
            ServeAttacks.runHits(repository: repository, scratch: scratch)
            return
        }
        if only == "edits" {
            EditsBenchmark.run(repository: repository, scratch: scratch, edits: edits, folder: editedFolder)
            return
        }
        if only == "misses" {
            runMisses(repository: repository, scratch: scratch)
            return
        }
        let server: ServerProcess
        do {
            server = try ServerProcess(
                ["--icons", repository.appendingPathComponent("icons").path, "--no-cache", "--threads", "4"],
                directory: scratch)
        } catch {
            print("error: \(error.localizedDescription)")
            return
        }
        print("iconr-bench serve: \(server.url), 4 server threads, 2 cores\n")
        let health = throughput(port: server.port, target: "/health", clients: 4, seconds: 2)
        // Rendered once first: what follows are memory hits.
        _ = try? server.get("/icons/flag@2x.png?flag_color=%23800080")
        let hit = throughput(
            port: server.port, target: "/icons/flag@2x.png?flag_color=%23800080", clients: 4, seconds: 2)
        print("keep-alive, 4 clients, 2 s each:")
        print("  GET /health            \(Int(health)) requests/s")
        print("  GET an icon (memory)   \(Int(hit)) requests/s  (\(percent(hit / health)) of /health)")

        // Misses: 200 colors never asked for, one client, each a render in a worker.
        let colors = (0..<200).map { String(format: "%%23%06x", ($0 * 2_654_435_761) & 0xFFFFFF) }
        func oneClientMisses(port: Int) -> [Double] {
            var times: [Double] = []
            guard let connection = try? HTTPConnection(port: port) else { return times }
            for color in colors {
                let started = clock.now
                guard (try? connection.request("/icons/flag@2x.png?flag_color=\(color)"))?.status == 200 else {
                    continue
                }
                times.append(milliseconds(clock.now - started))
            }
            return times
        }
        let missTimes = oneClientMisses(port: server.port)
        // The same with a disk cache (the default), whose entries are written behind the answers.
        var diskMissTimes: [Double] = []
        if let cached = try? ServerProcess(
            [
                "--icons", repository.appendingPathComponent("icons").path, "--cache-dir", scratch.path + "/cache",
                "--threads", "4",
            ],
            directory: scratch)
        {
            diskMissTimes = oneClientMisses(port: cached.port)
            cached.process.signal(SIGTERM)
            cached.process.wait(timeout: 20)
        }
        var renderTimes: [Double] = []
        if let source = try? IconSource(path: repository.appendingPathComponent("icons/flag.svg").path) {
            for color in colors {
                let started = clock.now
                _ = try? source.render(params: ["flag_color": "#" + color.dropFirst(3)], scale: 2).png
                renderTimes.append(milliseconds(clock.now - started))
            }
        }
        let miss = median(missTimes), render = median(renderTimes)
        print("\nmisses (200 new colors of flag@2x, one client):")
        print("  over HTTP, isolated worker   median \(fixed(miss)) ms, p99 \(fixed(percentile(missTimes, 0.99))) ms")
        if !diskMissTimes.isEmpty {
            print(
                "  the same with a disk cache   median \(fixed(median(diskMissTimes))) ms, "
                    + "p99 \(fixed(percentile(diskMissTimes, 0.99))) ms")
        }
        print(
            "  in process, render + encode  median \(fixed(render)) ms  (HTTP + isolation: \(fixed(miss / max(render, 1e-9)))x)"
        )

        // Misses under load: every request a color never asked for, 16 connections, against
        // the same renders (render + encode) in process on every core, and against issue 28's
        // floor, raw librsvg + cairo + libpng.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        // The server's CPU (its threads and its render workers), apart from the client's.
        let serverCPUBefore = cpuSeconds(ofTree: server.process.pid)
        let missRate = throughput(port: server.port, clients: 16, seconds: 2) { client, request in
            "/icons/flag.png?flag_color=" + String(format: "%%23%06x", (client << 19 | request) & 0xFFFFFF)
        }
        let serverCPU = cpuSeconds(ofTree: server.process.pid) - serverCPUBefore
        // The same renders in this process on every core, in process and through isolated
        // workers (the server's placement): what the worker hop adds to iconr's own render.
        func renderRate(_ placement: RenderPlacement, threads: Int) -> Double {
            guard let source = try? IconSource(path: repository.appendingPathComponent("icons/flag.svg").path) else {
                return .nan
            }
            let perCore = 400
            let started = clock.now
            DispatchQueue.concurrentPerform(iterations: threads) { core in
                for index in 0..<perCore {
                    let color = String(format: "#%06x", (0x80_0000 | core << 16 | index) & 0xFFFFFF)
                    _ = try? source.render(params: ["flag_color": color], scale: 1, placement: placement).png
                }
            }
            return Double(threads * perCore) / (milliseconds(clock.now - started) / 1000)
        }
        let inProcessRate = renderRate(.inProcess, threads: cores)
        let workerRate = renderRate(.isolated(TestSupport.isolated), threads: cores)
        print(
            "\nmisses under load (new colors of flag at 1x, 16 connections, 2 s; the server renders without a disk cache):"
        )
        print("  over HTTP                    \(Int(missRate)) variants/s")
        print(
            "  in process on \(cores) cores     \(Int(inProcessRate)) variants/s (iconr's render + encode; "
                + "the server is \(fixed(inProcessRate / max(missRate, 1e-9)))x that per variant)")
        print(
            "  isolated workers, \(cores) threads \(Int(workerRate)) variants/s (\(fixed(inProcessRate / max(workerRate, 1e-9)))x in process)"
        )
        // CPU per variant: the server's over the misses it answered, in process over its renders
        // (every core busy), so that the client sharing the cores does not count.
        let serverPerVariant = serverCPU / max(missRate * 2, 1) * 1e6
        let inProcessPerVariant = Double(cores) / max(inProcessRate, 1e-9) * 1e6
        print(
            "  server CPU per variant       \(Int(serverPerVariant)) us (threads and workers; in process: "
                + "\(Int(inProcessPerVariant)) us; \(fixed(serverPerVariant / inProcessPerVariant))x)")
        let floor = RawFloor(repository: repository, scratch: scratch.path, cores: cores)
        let rawFloor = floor?.median()
        if let rawFloor {
            print(
                "  raw librsvg + cairo + libpng \(Int(rawFloor)) us a variant (variant-floor.c on \(cores) cores: "
                    + "issue 28's floor; the server is \(fixed(serverPerVariant / rawFloor))x that)")
        } else {
            print("  raw librsvg + cairo + libpng: needs cc, pkg-config and librsvg2-dev; not measured")
        }

        if let wrk = which("wrk") {
            let result = try? TestSupport.run(
                wrk, ["-t2", "-c32", "-d3s", "--latency", server.url + "/icons/flag@2x.png?flag_color=%23800080"],
                directory: scratch, timeout: 30)
            let lines = String(decoding: result?.stdout ?? Data(), as: UTF8.self).split(separator: "\n")
                .filter { $0.contains("Requests/sec") || $0.contains(" 50%") || $0.contains(" 99%") }
            print("\nwrk -t2 -c32 -d3s, an icon from memory:")
            lines.forEach { print("  " + $0.trimmingCharacters(in: .whitespaces)) }
            let withoutCache = wrkMisses(wrk, server: server, scratch: scratch, floor: floor, label: "")
            // The same against a server with a disk cache (the default) in a new folder: each
            // miss also appends its entry to the journal, behind the answer.
            if let cached = try? ServerProcess(
                [
                    "--icons", repository.appendingPathComponent("icons").path, "--cache-dir",
                    scratch.path + "/cache-wrk", "--threads", "4",
                ],
                directory: scratch)
            {
                let withCache = wrkMisses(
                    wrk, server: cached, scratch: scratch, floor: floor, label: ", with a disk cache in a new folder")
                print("  the disk cache (the server's journal): \(Int(withCache - withoutCache)) us a miss more")
                cached.process.signal(SIGTERM)
                cached.process.wait(timeout: 20)
            }
        }
        let metrics = (try? server.get("/metrics").text) ?? ""
        let misses = metrics.split(separator: "\n").first { $0.hasPrefix("iconr_cache_misses_total") } ?? ""
        print("\nserver: \(misses)\n")
        server.process.signal(SIGTERM)
        server.process.wait(timeout: 20)
        ServeAttacks.run(repository: repository, scratch: scratch)
    }

    /// Only the misses under wrk against the raw floor (`iconr-bench serve misses`): without a
    /// disk cache, then with one in a new folder, as `run` measures them.
    static func runMisses(repository: URL, scratch: URL) {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard let wrk = which("wrk") else {
            print("(wrk is not installed: apt-get install wrk)")
            return
        }
        let floor = RawFloor(repository: repository, scratch: scratch.path, cores: cores)
        for (label, extra) in [
            ("", ["--no-cache"]),
            (", with a disk cache in a new folder", ["--cache-dir", scratch.path + "/cache-wrk"]),
        ] {
            guard
                let server = try? ServerProcess(
                    ["--icons", repository.appendingPathComponent("icons").path, "--threads", "4"] + extra,
                    directory: scratch)
            else {
                print("error: iconr serve did not start")
                return
            }
            _ = wrkMisses(wrk, server: server, scratch: scratch, floor: floor, label: label)
            server.process.signal(SIGTERM)
            server.process.wait(timeout: 20)
        }
    }

    /// Misses under `wrk -t2 -c16` (a C client, lighter on the shared cores than the bench's
    /// own), three rounds: every request a color of flag at 1x never asked for (from 0x800000
    /// up, above the colors asked before, each round its own range), and the server's CPU per
    /// miss split between its own threads and its render workers, after a round not measured.
    /// Each round is set against issue 28's floor measured just before and just after it (the
    /// mean of the two medians of three runs): this machine's speed drifts by a third within
    /// minutes, and a floor taken once, earlier, moved the ratio as much. Prints the median
    /// round and the median ratio; returns the median round.
    static func wrkMisses(
        _ wrk: String, server: ServerProcess, scratch: URL, floor: RawFloor?, label: String
    ) -> Double {
        let script = scratch.appendingPathComponent("misses.lua")
        let text = """
            local threads = 0
            function setup(thread)
              threads = threads + 1
              thread:set("id", threads)
            end
            local round = 0
            function init(args)
              round = tonumber(args[1])
            end
            local n = 0
            request = function()
              n = n + 1
              local color = 0x800000 + (id - 1) * 0x200000 + round * 0x40000 + n
              return wrk.format("GET", string.format("/icons/flag.png?flag_color=%%23%06x", color))
            end
            """
        guard (try? Data(text.utf8).write(to: script)) != nil else { return .nan }
        func missCount() -> Double {
            let metrics = (try? server.get("/metrics").text) ?? ""
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("iconr_cache_misses_total ") }
            return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        }
        // One round first, not measured: a new server's first misses grow its heap (its memory
        // cache filling) and start its workers: a first round cost 10-30 us a miss more than
        // the next three here. A server that has run a while is past them.
        _ = try? TestSupport.run(
            wrk, ["-t2", "-c16", "-d2s", "-s", script.path, server.url, "--", "3"], directory: scratch, timeout: 30)
        var perMiss: [Double] = [], ratios: [Double] = []
        var floorAfter = floor?.median()
        for round in 0..<3 {
            let floorBefore = floorAfter
            let workers = TestSupport.children(of: server.process.pid)
            let missesBefore = missCount(), threadsBefore = cpuSeconds(of: server.process.pid)
            let workersBefore = workers.reduce(0) { $0 + cpuSeconds(of: $1) }
            let result = try? TestSupport.run(
                wrk, ["-t2", "-c16", "-d4s", "-s", script.path, server.url, "--", "\(round)"], directory: scratch,
                timeout: 30)
            // Entries still being written behind the answers count too.
            usleep(500_000)
            let misses = missCount() - missesBefore
            // Workers started during the run count from zero.
            let workersAfter = TestSupport.children(of: server.process.pid).reduce(0) { $0 + cpuSeconds(of: $1) }
            let threads = (cpuSeconds(of: server.process.pid) - threadsBefore) / max(misses, 1) * 1e6
            let renderers = (workersAfter - workersBefore) / max(misses, 1) * 1e6
            perMiss.append(threads + renderers)
            floorAfter = floor?.median()
            var versus = ""
            if let floorBefore, let floorAfter {
                let roundFloor = (floorBefore + floorAfter) / 2
                ratios.append((threads + renderers) / roundFloor)
                versus = ", \(fixed((threads + renderers) / roundFloor))x the raw floor's \(Int(roundFloor)) us"
            }
            let rate =
                String(decoding: result?.stdout ?? Data(), as: UTF8.self).split(separator: "\n")
                .first { $0.contains("Requests/sec") }.map { $0.trimmingCharacters(in: .whitespaces) } ?? "no rate"
            if round == 0 {
                print(
                    "\nwrk -t2 -c16 -d4s, new colors of flag at 1x\(label), three rounds (each against the floor run just before and after it):"
                )
            }
            print(
                "  \(Int(misses)) misses (\(rate)): server CPU per miss \(Int(threads + renderers)) us "
                    + "(its threads \(Int(threads)) us, its render workers \(Int(renderers)) us\(versus))")
        }
        let middle = median(perMiss)
        let versus = ratios.count == 3 ? ", median ratio \(fixed(median(ratios)))x the raw floor" : ""
        print("  median round: \(Int(middle)) us a miss\(versus)")
        return middle
    }

    /// Issue 28's floor: the CPU a variant of the flag costs with raw librsvg, cairo and
    /// libpng (Benchmarks/variant-floor.c). 800 colors of the flag, applied to its SVG as the
    /// server applies them, are each loaded from memory, rendered and encoded as a PNG into
    /// memory, by one process per core at once (as the server's cores are all busy).
    /// `measure()` is one such run, the processes' mean in microseconds. Nil without a C
    /// compiler or librsvg2-dev.
    struct RawFloor {
        let program: String
        let files: [String]
        let cores: Int

        init?(repository: URL, scratch: String, cores: Int) {
            let folder = scratch + "/raw-floor"
            guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil,
                let program = compileFloorProgram("variant-floor", into: folder),
                let bytes = try? [UInt8](Data(contentsOf: repository.appendingPathComponent("icons/flag.svg"))),
                let template = try? SVGTemplate(bytes: bytes, file: "flag.svg")
            else { return nil }
            var written: [String] = []
            for index in 0..<800 {
                let value = (index * 2_654_435_761) & 0xFFFFFF
                let color = Color(red: UInt8(value >> 16), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
                let file = folder + "/flag-\(index).svg"
                // A variant not written would measure librsvg's error path instead of a render.
                guard
                    FileManager.default.createFile(
                        atPath: file, contents: Data(template.apply(template.resolve(colors: ["flag_color": color]))))
                else { return nil }
                written.append(file)
            }
            (self.program, files, self.cores) = (program, written, cores)
        }

        /// One run on every core: the processes' mean CPU per variant, in microseconds.
        func measure() -> Double? {
            let means = Locked<[Double]>([])
            DispatchQueue.concurrentPerform(iterations: cores) { _ in
                guard let result = try? TestSupport.run(program, files, timeout: 120), result.status == 0,
                    let mean = Double(
                        String(decoding: result.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
                else { return }
                means.withLock { $0.append(mean) }
            }
            let all = means.withLock { $0 }
            return all.count == cores ? all.reduce(0, +) / Double(all.count) : nil
        }

        /// The median of three runs.
        func median() -> Double? {
            let runs = (0..<3).compactMap { _ in measure() }
            return runs.count == 3 ? ServeBenchmark.median(runs) : nil
        }
    }

    /// Requests per second of `clients` keep-alive connections asking for `target` for `seconds`.
    static func throughput(port: Int, target: String, clients: Int, seconds: Double) -> Double {
        throughput(port: port, clients: clients, seconds: seconds) { _, _ in target }
    }

    /// Requests per second of `clients` keep-alive connections for `seconds`, client `c`'s
    /// request `n` asking for `target(c, n)`. Each client is a thread of its own, all at once
    /// (`concurrentPerform` ran only as many as there are cores: 2 of 16 connections).
    static func throughput(
        port: Int, clients: Int, seconds: Double, target: @escaping @Sendable (Int, Int) -> String
    ) -> Double {
        let count = Locked(0)
        let deadline = clock.now + .milliseconds(Int(seconds * 1000))
        let finished = DispatchGroup()
        for client in 0..<clients {
            finished.enter()
            Thread {
                defer { finished.leave() }
                guard let connection = try? HTTPConnection(port: port) else { return }
                var done = 0
                while clock.now < deadline {
                    guard (try? connection.request(target(client, done)))?.status == 200 else { break }
                    done += 1
                }
                count.withLock { $0 += done }
            }.start()
        }
        finished.wait()
        return Double(count.withLock { $0 }) / seconds
    }

    /// CPU seconds (user and system) of process `pid` and of its running children (the
    /// server's render workers), from `/proc`.
    static func cpuSeconds(ofTree pid: pid_t) -> Double {
        ([pid] + TestSupport.children(of: pid)).reduce(0) { $0 + cpuSeconds(of: $1) }
    }

    /// CPU seconds (user and system) of process `pid`, from `/proc`; 0 once it is gone.
    static func cpuSeconds(of pid: pid_t) -> Double {
        let fields = TestSupport.processStat(pid)
        guard fields.count > 12 else { return 0 }
        return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func which(_ program: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/", "/bin/", "/usr/sbin/"].map { $0 + program }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
    }

    static func median(_ values: [Double]) -> Double { percentile(values, 0.5) }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    static func fixed(_ value: Double) -> String { String(format: "%.2f", value) }
    static func percent(_ fraction: Double) -> String { String(format: "%.0f%%", fraction * 100) }
}
