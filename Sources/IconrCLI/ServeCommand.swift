import Glibc
import Iconr
import IconrCore
import IconrHTTP
import IconrServer

/// `iconr serve --icons DIR[=NAME]... [--style FILE[=NAME]]... [--listen HOST:PORT] [options]`
enum ServeCommand: Command {
    static let name = "serve"
    static let abstract = "Serve icons (any params, any scale), sprites and styles over HTTP until SIGINT or SIGTERM."
    static let positionalUsage = ""
    static let arguments: [(name: String, help: String)] = []
    static let options: [OptionSpec] =
        [
            OptionSpec(
                names: ["--icons"], valueName: "DIR[=NAME]",
                help: "A folder of icons, served as set NAME (default: the folder's name) (repeatable).",
                isRepeatable: true,
                isRequired: true),
            OptionSpec(
                names: ["--style"], valueName: "FILE[=NAME]",
                help: "A style served at /styles/NAME.json (default: the file's name) for MapLibre (repeatable).",
                isRepeatable: true),
            OptionSpec(
                names: ["--listen"], valueName: "HOST:PORT",
                help:
                    "Where to listen: HOST:PORT, [IPv6]:PORT, or :PORT for every interface (as Go and nginx read it); port 0 picks one (default: 127.0.0.1:8080)."
            ),
            OptionSpec(
                names: ["--public-url"], valueName: "URL",
                help: "The URL clients reach this server at, for URLs in styles (default: from the request's Host)."),
            OptionSpec(
                names: ["--cors"], valueName: "ORIGIN", help: "Send Access-Control-Allow-Origin: ORIGIN ('*' for any)."),
            OptionSpec(names: ["--max-scale"], valueName: "S", help: "The largest scale /icons/ renders (default: 4)."),
            OptionSpec(
                names: ["--ratio", "-r"], valueName: "R",
                help: "Pixel ratios of the sprites served: repeatable or comma-separated (default: 1 and 2).",
                isRepeatable: true, values: ["1", "2", "1,2", "1,2,3"]),
            OptionSpec(names: ["--threads"], valueName: "N", help: "Threads answering requests (default: 8)."),
            OptionSpec(
                names: ["--client-connections"], valueName: "N",
                help:
                    "Open connections from one IP address at most; more are closed (default: 256; raise it behind a proxy)."
            ),
            OptionSpec(
                names: ["--header-timeout"], valueName: "SECONDS",
                help:
                    "A request's line and headers must arrive within this long of the connection opening or the last response (default: 15)."
            ),
            OptionSpec(
                names: ["--render-queue"], valueName: "N",
                help: "Renders waiting or running at most; more get 503 with Retry-After (default: 32)."),
            OptionSpec(
                names: ["--request-log"], valueName: "FILE",
                help:
                    "Log a line per request (time, client, request, status, bytes, duration, cache tier, referer, user agent) "
                    + "to FILE, or - for stderr; SIGHUP reopens it."
            ),
            OptionSpec(names: ["--request-log-json"], help: "Write --request-log's lines as JSON objects."),
            OptionSpec(
                names: ["--trusted-proxy"], valueName: "CIDR",
                help:
                    "A reverse proxy (10.0.0.0/8, 127.0.0.1, ::1) whose X-Forwarded-For names the client in the request log "
                    + "(repeatable; from other peers the header is ignored).",
                isRepeatable: true),
            ThemeOption.spec(
                repeatable: true,
                help:
                    "Serve each set's sprite in a theme's colors too, at /sprites/<set>/<theme>/sprite.json (a JSON file, or grayscale; repeatable)."
            ),
            OptionSpec(
                names: ["--strict"],
                help: "Refuse to start when a --style shows an icon the sets lack (default: a warning each)."),
            OptionSpec(
                names: ["--follow-links"],
                help:
                    "Serve icons that are symbolic links (or in linked folders) leading out of their --icons folder (default: refused, as unknown icons)."
            ),
            OptionSpec(
                names: ["--queue-wait"], valueName: "SECONDS",
                help:
                    "How long a render may wait in the queue; past it its requests get 503 with Retry-After (default: 10)."
            ),
            OptionSpec(
                names: ["--max-age"], valueName: "SECONDS",
                help: "Cache-Control max-age of URLs without a digest (default: 300)."),
        ] + RenderSettings.options + CacheSettings.options

    struct Options: CommandOptions {
        /// What the server serves and how (the library's options), but for the cache folder.
        var server = ServerOptions()
        var cache: CacheSettings
        var http = HTTPServer.Configuration()
        var render: RenderSettings
        /// `--request-log` (`-`: stderr) and whether its lines are JSON.
        var requestLog: (path: String, json: Bool)?
        /// `--trusted-proxy`: the peers whose `X-Forwarded-For` the request log believes.
        var proxies = TrustedProxies()
        var address: String
        /// `--theme` as given (read when the command runs).
        var themes: [String]

        init(_ arguments: ScannedArguments) throws(UsageError) {
            if let extra = arguments.positionals.first { throw UsageError(message: "unexpected argument '\(extra)'") }
            server.iconSets = try named(arguments.all("--icons"), option: "--icons") { path in
                path.split(separator: "/").last.map(String.init) ?? path
            }
            guard !server.iconSets.isEmpty else { throw UsageError(message: "missing --icons DIR") }
            server.styles = try named(arguments.all("--style"), option: "--style") { path in
                let file = path.split(separator: "/").last.map(String.init) ?? path
                return file.hasSuffix(".json") ? String(file.dropLast(5)) : file
            }.map { (name: $0.name, path: $0.directory) }
            server.maxScale =
                try arguments.value(
                    "--max-scale", as: RenderCommand.parseScale, expected: RenderCommand.scaleExpected) ?? 4
            let ratios = try arguments.all("--ratio").flatMap {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            .map { text throws(UsageError) -> Double in
                guard let ratio = RenderCommand.parseScale(String(text)), ratio <= 16 else {
                    throw UsageError(
                        message: "invalid value '\(text)' for --ratio: expected a number > 0 and at most 16")
                }
                return ratio
            }
            if !ratios.isEmpty { server.spriteRatios = Array(Set(ratios)).sorted() }
            server.corsOrigin = arguments.value("--cors")
            server.followsLinks = arguments.has("--follow-links")
            server.strictStyles = arguments.has("--strict")
            themes = arguments.all("--theme")
            if arguments.has("--request-log-json"), !arguments.has("--request-log") {
                throw UsageError(message: "--request-log-json needs --request-log")
            }
            requestLog = arguments.value("--request-log").map { ($0, arguments.has("--request-log-json")) }
            let trusted = arguments.all("--trusted-proxy")
            guard let parsed = TrustedProxies(parsing: trusted) else {
                throw UsageError(
                    message: "invalid value for --trusted-proxy: expected an address or CIDR (10.0.0.0/8, ::1), got "
                        + trusted.map { "'\($0)'" }.joined(separator: ", "))
            }
            if !trusted.isEmpty, requestLog == nil {
                throw UsageError(message: "--trusted-proxy needs --request-log (it names the clients there)")
            }
            proxies = parsed
            server.publicURL = arguments.value("--public-url").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
            server.renderQueueLimit =
                try arguments.value(
                    "--render-queue", as: { Int($0).flatMap { $0 >= 1 ? $0 : nil } },
                    expected: "a whole number >= 1") ?? 32
            server.queueWait = .milliseconds(
                Int(
                    (try arguments.value(
                        "--queue-wait", as: { Double($0).flatMap { $0 > 0 && $0 <= 3600 ? $0 : nil } },
                        expected: "a number of seconds > 0 and at most 3600") ?? 10) * 1000))
            server.maxAge =
                try arguments.value(
                    "--max-age", as: { Int($0).flatMap { $0 >= 0 ? $0 : nil } },
                    expected: "a whole number of seconds >= 0") ?? 300
            render = try RenderSettings(arguments)
            server.limits = render.limits
            cache = try CacheSettings(arguments)
            http.threads =
                try arguments.value(
                    "--threads", as: { Int($0).flatMap { (1...256).contains($0) ? $0 : nil } },
                    expected: "a whole number from 1 to 256") ?? 8
            http.connectionsPerClient =
                try arguments.value(
                    "--client-connections", as: { Int($0).flatMap { (1...65536).contains($0) ? $0 : nil } },
                    expected: "a whole number from 1 to 65536") ?? 256
            http.headDeadline =
                try arguments.value(
                    "--header-timeout", as: { Int($0).flatMap { (1...3600).contains($0) ? $0 : nil } },
                    expected: "a whole number of seconds from 1 to 3600") ?? 15
            address = arguments.value("--listen") ?? "127.0.0.1:8080"
        }
    }

    static func run(_ parsed: Options, console: Console) throws -> Int32 {
        parsed.render.apply()
        // SIGINT and SIGTERM are waited for on this thread: blocked before any thread
        // starts (the render and build queues' too), so that every thread inherits the mask and none is interrupted.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        sigaddset(&stopSignals, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &stopSignals, nil)
        signal(SIGPIPE, SIG_IGN)
        var options = parsed.server
        options.themes = try ThemeOption.read(parsed.themes)
        // A cache folder that cannot be made costs only speed, as for the other commands.
        options.cacheDirectory = parsed.cache.diskCache(console: console)?.directory
        options.cacheByteLimit = parsed.cache.byteLimit
        var configuration = parsed.http
        let address = parsed.address
        // Each connection is a descriptor: the soft limit (often 1,024) is raised to the hard
        // one, and the connection limit kept under it, with room for workers and files.
        var descriptors = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors) == 0 {
            descriptors.rlim_cur = descriptors.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors)
            _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &descriptors)
            configuration.connectionLimit = max(
                64, min(configuration.connectionLimit, Int(clamping: descriptors.rlim_cur) - 256))
        }

        // librsvg runs in worker processes: an icon that crashes it or hangs fails its own
        // requests, and the server lives on.
        let workers = IsolatedRenderer(executable: executablePath(), arguments: [CLI.workerCommand])
        let iconServer = try IconServer(options: options, placement: .isolated(workers))

        var requestLog: RequestLog?
        if let log = parsed.requestLog {
            requestLog = try RequestLog(path: log.path, json: log.json, proxies: parsed.proxies)
        }
        var answered: (@Sendable (HTTPExchange) -> Void)?
        if let requestLog { answered = { requestLog.write($0) } }
        let http = try HTTPServer(listening: address, configuration: configuration, answered: answered) { request in
            iconServer.answer(to: request)
        }
        iconServer.countConnections { [weak http] in http?.openConnections ?? 0 }
        console.out(http.url)
        // The folders' names as given (escaped by Log, so that the line stays one line).
        Log.note(
            "iconr serve: \(options.iconSets.map { "\($0.name) (\($0.directory))" }.joined(separator: ", "))"
                + (options.styles.isEmpty
                    ? "" : "; styles \(options.styles.map { "/styles/\($0.name).json" }.joined(separator: ", "))")
                + "; stop with Ctrl-C")
        var received: Int32 = 0
        // SIGHUP reopens the request log (logrotate moved it) and has the next requests check
        // every icon, sprite and style file at once; SIGINT and SIGTERM stop.
        while true {
            guard sigwait(&stopSignals, &received) == 0 else { continue }
            guard received == SIGHUP else { break }
            requestLog?.reopen()
            iconServer.recheck()
            Log.note("iconr serve: SIGHUP: files rechecked" + (requestLog == nil ? "" : ", the request log reopened"))
        }
        Log.note(
            "iconr serve: \(received == SIGINT ? "SIGINT" : "SIGTERM"): finishing \(http.requestsInFlight) request(s) in flight"
        )
        // Within the 10 s the docs promise: what is not done by then is answered 503.
        http.stop(drainingFor: .seconds(9), unanswered: IconServer.stopping)
        // The disk cache writes behind the answers: what was rendered is kept for next time.
        iconServer.finishWriting()
        return 0
    }

    /// Whether `name` is made of ASCII letters, digits, `-`, `_` and `.` only: a set's or a
    /// style's name that any URL reaches as it is (`?`, `#`, `%`, `/` and `:` would not).
    static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy {
                (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0)
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
            }
    }

    /// `DIR=NAME` or `DIR` (named by `defaultName`) values, names unique.
    private static func named(
        _ values: [String], option: String,
        defaultName: (String) -> String
    ) throws(UsageError) -> [(name: String, directory: String)] {
        var result: [(name: String, directory: String)] = []
        for value in values {
            var path = value
            var name: String
            if let equals = value.lastIndex(of: "="), equals != value.startIndex {
                path = String(value[..<equals])
                name = String(value[value.index(after: equals)...])
            } else {
                while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
                name = defaultName(path)
            }
            guard isPlainName(name) else {
                throw UsageError(message: "invalid name '\(name)' for \(option): use letters, digits, '-', '_' or '.'")
            }
            guard !result.contains(where: { $0.name == name }) else {
                throw UsageError(
                    message: "\(option): the name '\(name)' is given twice (name them: \(option) DIR=NAME)")
            }
            result.append((name, path))
        }
        return result
    }

    /// This executable, for the render workers (`iconr render-worker`).
    private static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return length > 0
            ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : CommandLine.arguments[0]
    }
}
