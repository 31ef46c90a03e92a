import Dispatch
import Foundation
import Iconr
import IconrCore
import IconrSystem

/// `iconr-bench fuzz [N] [seed]`: runs `iconr render` and `iconr inspect` on N mutated
/// inputs (from the bundled icons, the corpora in ../shared/corpora when present, and
/// hostile shapes: entity bombs, deep nesting, absurd sizes, external references) with
/// hostile parameters, two at a time, and counts what must never happen: deaths by a
/// signal, crashes in iconr's own code (which the crash guard names as such), hangs (a
/// run still going 20 s after a 2 s time limit), messages that are not
/// one escaped `error:`/`warning:` line each, and files left behind (temporaries, or an
/// output after a failure). Deterministic for a seed.
enum FuzzBenchmark {
    struct Counts {
        var runs = 0, succeeded = 0, failed = 0, usage = 0, signals = 0, hangs = 0, badMessages = 0, leftovers = 0
        /// Runs that crashed in iconr's own code (the crash guard says so): defects, like signals.
        var ownCrashes = 0
        var examples: [String] = []
    }

    static func run(count: Int, seed: UInt64, iconr: String) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let seeds = seedDocuments()
        print(
            "iconr-bench fuzz: \(count) mutated inputs from \(seeds.count) seed documents (seed \(seed)), "
                + "each through render and inspect, 2 at a time")
        let tally = Locked(Counts())
        let ownCrash = RenderError.crashedInIconr.description
        let started = ContinuousClock.now
        DispatchQueue.concurrentPerform(iterations: 2) { lane in
            var random = Generator(state: seed &+ UInt64(lane) &* 0x9E37_79B9_7F4A_7C15)
            for index in stride(from: lane, to: count, by: 2) {
                let folder = scratch.appendingPathComponent("\(index)")
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let input = mutate(seeds[random.next(seeds.count)], &random)
                let name = random.next(8) == 0 ? "odd\u{1B}[1m\nname.svg" : "icon.svg"
                try? Data(input).write(to: folder.appendingPathComponent(name))
                let param = hostileParameter(&random)
                for arguments in [
                    ["render", name, "--timeout", "2", "--no-cache", "-p", param, "-o", "out.png"],
                    ["inspect", name, "--timeout", "2"] + (random.next(2) == 0 ? ["--json"] : []),
                ] {
                    let outcome = spawn(iconr, arguments, in: folder.path)
                    let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
                        $0 != name
                    }
                    tally.withLock { counts in
                        counts.runs += 1
                        func note(_ what: String) {
                            if counts.examples.count < 12 {
                                counts.examples.append("\(what): input \(index), \(arguments[0])")
                            }
                        }
                        switch outcome.status {
                        case 0: counts.succeeded += 1
                        case 1: counts.failed += 1
                        case 64: counts.usage += 1
                        case nil:
                            counts.hangs += 1
                            note("hang")
                        default:
                            counts.signals += 1
                            note("signal \(-(outcome.status ?? 0))")
                        }
                        if String(decoding: outcome.stderr, as: UTF8.self).contains(ownCrash) {
                            counts.ownCrashes += 1
                            note("crash in iconr's own code")
                        }
                        if !isOneLineMessages(outcome.stderr) {
                            counts.badMessages += 1
                            note(
                                "message \(String(decoding: outcome.stderr.prefix(120), as: UTF8.self).debugDescription)"
                            )
                        }
                        let expected = arguments[0] == "render" && outcome.status == 0 ? ["out.png"] : []
                        if files.sorted() != expected {
                            counts.leftovers += 1
                            note("left \(files)")
                        }
                    }
                    try? FileManager.default.removeItem(at: folder.appendingPathComponent("out.png"))
                }
                try? FileManager.default.removeItem(at: folder)
            }
        }
        let counts = tally.withLock { $0 }
        let elapsed = ContinuousClock.now - started
        print(
            "runs: \(counts.runs) in \(elapsed.components.seconds) s (exit 0: \(counts.succeeded), exit 1: \(counts.failed), "
                + "exit 64: \(counts.usage))")
        print(
            "signals: \(counts.signals), crashes in iconr's own code: \(counts.ownCrashes), hangs: \(counts.hangs), "
                + "multi-line or raw messages: \(counts.badMessages), leftovers: \(counts.leftovers)")
        counts.examples.forEach { print("  \($0)") }
    }

    /// A stderr of whole `error:`/`warning:` lines with no control character (after a usage
    /// mistake, the usage, wrapped on indented lines, and the pointer to help follow, as in
    /// well-made Swift tools).
    static func isOneLineMessages(_ stderr: [UInt8]) -> Bool {
        guard !stderr.isEmpty else { return true }
        guard stderr.last == 0x0A else { return false }
        let prefixes = ["error: ", "warning: ", "Usage: iconr ", "  See 'iconr "].map { Array($0.utf8) }
        let usage = Array("Usage: iconr ".utf8), wrapped = Array("      ".utf8)
        var inUsage = false
        for line in stderr.dropLast().split(separator: 0x0A, omittingEmptySubsequences: false) {
            if line.starts(with: usage) { inUsage = true }
            let continuesUsage = inUsage && line.starts(with: wrapped)
            guard continuesUsage || prefixes.contains(where: { line.starts(with: $0) }) else { return false }
            if line.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return false }
            if String(validating: line, as: UTF8.self) == nil { return false }
        }
        return true
    }

    private static func seedDocuments() -> [[UInt8]] {
        var documents: [[UInt8]] = []
        let folders = [
            "icons", "../shared/corpora/maki", "../shared/corpora/librsvg-2.54-crashers", "../shared/corpora/temaki",
        ]
        for folder in folders {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
                $0.hasSuffix(".svg")
            }.sorted()
            for name in names.prefix(60) {
                if let data = FileManager.default.contents(atPath: folder + "/" + name) {
                    documents.append([UInt8](data))
                }
            }
        }
        let svg = "<svg xmlns='http://www.w3.org/2000/svg' xmlns:m='https://www.mapbox.com' width='24' height='24'>"
        // Four levels of 100 references: 10^8 expansions, which once took a minute and 1.2 GB.
        let bomb = (1...4).map { level in
            "<!ENTITY e\(level) '" + String(repeating: "&e\(level - 1);", count: 100) + "'>"
        }.joined()
        documents += [
            "<?xml version='1.0'?><!DOCTYPE svg [<!ENTITY e0 '#000000'>\(bomb)]>"
                + svg + "<rect width='24' height='24' fill='&e4;'/></svg>",
            svg + String(repeating: "<g>", count: 5000) + String(repeating: "</g>", count: 5000) + "</svg>",
            "<svg xmlns='http://www.w3.org/2000/svg' width='1e9' height='1e9'><rect width='9' height='9'/></svg>",
            svg + "<image href='file:///etc/passwd' width='24' height='24'/><use href='/etc/hostname#x'/></svg>",
            svg + "<m:metadata><m:parameters><m:parameter m:name='color' m:type='color' m:value='#000'/></m:parameters>"
                + "</m:metadata><path d='M0 0h24v24z'/></svg>",
        ].map { Array($0.utf8) }
        return documents
    }

    private static let tokens = [
        "&", "&a;", "<!ENTITY x 'y'>", "\n", "\u{1B}[31m", "\u{0}", "\u{FF}", "m:value='\n'", "9e999",
        "-1", "<", ">", "\"", "'", "<![CDATA[", "]]>", "<!--", "href='../x.svg'", "xi:include",
        "fill='#000'", "style='fill:red'", "<style>*{fill:#000}</style>",
    ]

    /// One to eight edits: flips, token insertions, deletions, duplications, truncation.
    private static func mutate(_ document: [UInt8], _ random: inout Generator) -> [UInt8] {
        var bytes = document
        for _ in 0..<(1 + random.next(8)) {
            guard !bytes.isEmpty else { break }
            let at = random.next(bytes.count)
            switch random.next(5) {
            case 0: bytes[at] ^= UInt8(1 << random.next(8))
            case 1: bytes.insert(contentsOf: Array(tokens[random.next(tokens.count)].utf8), at: at)
            case 2: bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.next(64)))
            case 3:
                let end = min(bytes.count, at + 1 + random.next(256))
                bytes.insert(contentsOf: bytes[at..<end], at: at)
            default: if random.next(4) == 0 { bytes.removeSubrange(at...) }
            }
        }
        // Flipped bits can make any byte; a NUL is common in real damage.
        if random.next(16) == 0 { bytes.append(0) }
        return bytes
    }

    private static func hostileParameter(_ random: inout Generator) -> String {
        let values = [
            "color=red", "color=#800080", "color=rgb(1e999,0,0)", "color=red\nerror: forged", "color=\u{1B}[2J",
            "color=" + String(repeating: "a", count: 10_000), "=red", "color", "nope=blue", "color=hsl(1,2,3",
        ]
        return values[random.next(values.count)]
    }

    /// Runs the program in `directory` with stdout to /dev/null and stderr captured; nil
    /// status when it was still running after 20 s (then killed).
    private static func spawn(
        _ executable: String, _ arguments: [String], in directory: String
    ) -> (status: Int32?, stderr: [UInt8]) {
        let errors = directory + "/../\(UUID().uuidString).err"
        defer { unlink(errors) }
        let argv = (["/usr/bin/env", "-C", directory, executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/usr/bin/env", &actions, nil, argv, environ) == 0 else { return (127, []) }
        let deadline = ContinuousClock.now + .seconds(20)
        var raw: Int32 = 0
        var status: Int32?
        while true {
            if waitpid(pid, &raw, WNOHANG) == pid {
                status = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : -(raw & 0x7F)
                break
            }
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &raw, 0)
                break
            }
            usleep(1000)
        }
        return (status, [UInt8](FileManager.default.contents(atPath: errors) ?? Data()))
    }

    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(max(1, bound)))
        }
    }
}
