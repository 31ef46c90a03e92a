import Dispatch
import Foundation
import Iconr
import IconrCore
import IconrSystem

/// `iconr-bench fuzz [N] [seed]`: runs `iconr render` (one icon, and a batch with a hostile
/// `--list`), `iconr inspect`, `iconr sprite` (with
/// a hostile style, `--preview`, `--emit-style` and a random few of its other flags) and
/// `iconr style check` on N mutated inputs (from the bundled icons, the corpora in
/// ../shared/corpora when present, and hostile shapes: entity bombs, deep nesting, absurd
/// sizes, external references) with hostile parameters, scales and sizes, two at a time,
/// from the package's folder, and counts what must never happen: deaths by a
/// signal, crashes in iconr's own code (exit 70, or a worker's that the crash guard names),
/// hangs (a run still going 20 s after a 2 s time limit), messages that are not one escaped
/// `error:`/`warning:` line each, and files left behind (temporaries, anything after a
/// failure, anything but the command's outputs). Deterministic for a seed.
enum FuzzBenchmark {
    struct Counts {
        var runs = 0, succeeded = 0, failed = 0, usage = 0, signals = 0, hangs = 0, badMessages = 0, leftovers = 0
        /// Runs that crashed in iconr's own code (the crash guard says so): defects, like signals.
        var ownCrashes = 0
        /// Runs per command (render, inspect, sprite, style), and how many of them exited 0.
        var runsByCommand: [String: Int] = [:], succeededByCommand: [String: Int] = [:]
        var examples: [String] = []
    }

    /// One command line and the paths (relative to its folder) a success may write.
    struct FuzzRun {
        var arguments: [String]
        var outputs: [String]
        /// What the summary counts it as: the command, or `batch` for a render of many.
        var label: String
        /// Whether a failure (exit 1) may leave its outputs: a batch writes what did render.
        var keepsOutputsOnFailure = false

        init(arguments: [String], outputs: [String], label: String? = nil, keepsOutputsOnFailure: Bool = false) {
            self.arguments = arguments
            self.outputs = outputs
            self.label = label ?? arguments[0]
            self.keepsOutputsOnFailure = keepsOutputsOnFailure
        }
    }

    static func run(count: Int, seed: UInt64, iconr: String) {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let seeds = seedDocuments()
        print(
            "iconr-bench fuzz: \(count) mutated inputs from \(seeds.count) seed documents (seed \(seed)), "
                + "each through render, a batch render, inspect, sprite and style check, 2 at a time")
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
                try? FileManager.default.createDirectory(
                    at: folder.appendingPathComponent("icons"), withIntermediateDirectories: true)
                try? Data(input).write(to: folder.appendingPathComponent("icons/" + name))
                try? FileManager.default.copyItem(atPath: "icons/flag.svg", toPath: folder.path + "/icons/flag.svg")
                let style = hostileStyle(index, &random)
                try? Data(style.utf8).write(to: folder.appendingPathComponent("style.json"))
                try? Data(hostileList(name: name, &random).utf8).write(to: folder.appendingPathComponent("list.txt"))
                let inputs = Set(files(in: folder.path))
                for run in runs(name: name, &random) {
                    let outcome = spawn(iconr, run.arguments, in: folder.path)
                    let made = Set(files(in: folder.path)).subtracting(inputs)
                    // A success writes only its outputs; a failure writes nothing, not even a folder
                    // (a batch's failure: only the outputs of the renders that worked).
                    let failedOwningOutputs = outcome.status == 1 && run.keepsOutputsOnFailure
                    let leftover = made.filter { path in
                        (outcome.status != 0 && !failedOwningOutputs) || path.hasSuffix(".tmp")
                            || !run.outputs.contains { path.hasPrefix($0) }
                    }
                    tally.withLock { counts in
                        counts.runs += 1
                        counts.runsByCommand[run.label, default: 0] += 1
                        func note(_ what: String) {
                            if counts.examples.count < 12 {
                                counts.examples.append(
                                    "\(what): input \(index), \(run.arguments.joined(separator: " "))")
                            }
                        }
                        switch outcome.status {
                        case 0:
                            counts.succeeded += 1
                            counts.succeededByCommand[run.label, default: 0] += 1
                        case 1: counts.failed += 1
                        case 64: counts.usage += 1
                        case CrashSignals.ownFaultStatus: break
                        case nil:
                            counts.hangs += 1
                            note("hang")
                        default:
                            counts.signals += 1
                            note(
                                (outcome.status ?? 0) < 0
                                    ? "signal \(-(outcome.status ?? 0))" : "exit \(outcome.status ?? 0)")
                        }
                        // A worker's crash in iconr's code is named in the message; the process's own exits 70.
                        if outcome.status == CrashSignals.ownFaultStatus
                            || String(decoding: outcome.stderr, as: UTF8.self).contains(ownCrash)
                        {
                            counts.ownCrashes += 1
                            note("crash in iconr's own code")
                        }
                        if !isOneLineMessages(outcome.stderr) {
                            counts.badMessages += 1
                            note(
                                "message \(String(decoding: outcome.stderr.prefix(120), as: UTF8.self).debugDescription)"
                            )
                        }
                        if !leftover.isEmpty {
                            counts.leftovers += 1
                            note("left \(leftover.sorted())")
                        }
                    }
                    for path in made.sorted(by: >) {
                        try? FileManager.default.removeItem(atPath: folder.path + "/" + path)
                    }
                }
                try? FileManager.default.removeItem(at: folder)
            }
        }
        let counts = tally.withLock { $0 }
        let elapsed = ContinuousClock.now - started
        print(
            "runs: \(counts.runs) in \(elapsed.components.seconds) s (exit 0: \(counts.succeeded), exit 1: \(counts.failed), "
                + "exit 64: \(counts.usage); "
                + counts.runsByCommand.sorted { $0.key < $1.key }.map {
                    "\($0.key) \($0.value) (\(counts.succeededByCommand[$0.key, default: 0]) exit 0)"
                }.joined(separator: ", ")
                + ")")
        print(
            "signals: \(counts.signals), crashes in iconr's own code: \(counts.ownCrashes), hangs: \(counts.hangs), "
                + "multi-line or raw messages: \(counts.badMessages), leftovers: \(counts.leftovers)")
        counts.examples.forEach { print("  \($0)") }
    }

    /// A stderr of whole `error:`/`warning:` lines with no control character (after a usage
    /// mistake, the usage, wrapped on indented lines, and the pointer to help follow, as in
    /// well-made Swift tools; after a build, sprite's and style's one summary line).
    static func isOneLineMessages(_ stderr: [UInt8]) -> Bool {
        guard !stderr.isEmpty else { return true }
        guard stderr.last == 0x0A else { return false }
        let prefixes = ["error: ", "warning: ", "Usage: iconr ", "  See 'iconr ", "sprite: ", "style: ", "render: "].map
        {
            Array($0.utf8)
        }
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

    /// The runs for one input: render and inspect of the icon, a sprite of its folder with
    /// the style, a preview and some of sprite's other flags, and a style check.
    private static func runs(name: String, _ random: inout Generator) -> [FuzzRun] {
        func pick(_ values: [String]) -> String { values[random.next(values.count)] }
        let numbers = ["0", "-1", "1e-19", "1e308", "nan", "inf", "2x", "99999999999999999999", "1.5", "3"]
        var render = ["render", name, "--timeout", "2", "--no-cache", "-p", hostileParameter(&random), "-o", "out.png"]
        if random.next(3) == 0 { render += ["--scale", pick(numbers)] }
        if random.next(4) == 0 { render += ["--max-size", pick(numbers + ["24x24", "0x5", "x"])] }
        let inspect = ["inspect", name, "--timeout", "2"] + (random.next(2) == 0 ? ["--json"] : [])
        var sprite = [
            "sprite", "icons", "-o", "out/sprite", "--style", "style.json", "--preview", "out/p.png", "--no-cache",
            "--timeout", "2",
        ]
        let flags: [[String]] = [
            ["--ratio", pick(numbers + ["1,2", "1,,2"])], ["--max-size", pick(numbers)],
            [pick(["--padding", "--spacing"]), pick(numbers)],
            ["--preview-size", pick(["0x0", "-5x5", "99999x1", "abc", "64x64", "1x99999"])],
            ["--sdf", pick(["flag", "*", "--minify"])], ["--sdf-all"], ["--unique"], ["--retina"], ["--minify"],
            ["--hash-names"], ["--sanitize-ids"], ["--skip-invalid"], ["--emit-style", "out/style.json"],
            ["--json"], ["--lenient"], ["--sprite-url", pick(["", "\u{1B}[2J", "https://x/sprite"])],
            ["--config", pick(["lightPreset=night", "=", "x", "a=\n"])], ["--light", pick(["night", "2", "nan", ""])],
            ["--worldview", pick(["CN", "", "\u{7F}"])], ["--check"],
        ]
        // Most sprites skip the broken icon, so that the preview and the emitted style are reached.
        if random.next(4) != 0 { sprite.append("--skip-invalid") }
        for _ in 0..<random.next(4) { sprite += flags[random.next(flags.count)] }
        let check = ["style", "check", "style.json"] + (random.next(2) == 0 ? ["--json"] : [])
        var batch = [
            "render", name, "icons/flag.svg", "--list", "list.txt", "-o", "batch", "--timeout", "2", "--no-cache",
        ]
        if random.next(2) == 0 { batch += ["-s", pick(numbers + ["1,2", "1,,2", "2,2"])] }
        if random.next(2) == 0 { batch += ["-p", hostileParameter(&random)] }
        if random.next(4) == 0 { batch += ["--max-size", pick(numbers + ["24x24"])] }
        return [
            FuzzRun(arguments: render, outputs: ["out.png"]), FuzzRun(arguments: inspect, outputs: []),
            FuzzRun(arguments: sprite, outputs: ["out"]), FuzzRun(arguments: check, outputs: []),
            FuzzRun(arguments: batch, outputs: ["batch"], label: "batch", keepsOutputsOnFailure: true),
        ]
    }

    /// A style for `sprite --style` and `style check`, hostile in its camera and icon sizes:
    /// these cycle with the input's index (coprime counts, so each pair comes up), while the
    /// features, their values and the icon image are random.
    private static func hostileStyle(_ index: Int, _ random: inout Generator) -> String {
        func pick(_ values: [String]) -> String { values[random.next(values.count)] }
        let centres = ["[0,0]", "[0,100]", "[0,-1e300]", "[1e308,0]", "\"x\"", "[]", "[0,89.99999]"]
        let zooms = ["2", "1e300", "-3", "24", "\"z\"", "null"]
        let sizes = [
            "0", "-1", "1e300", "1e-300", #"["get","size"]"#, "\"big\"",
            #"["interpolate",["linear"],["zoom"],0,1,24,1e308]"#, "1", "1e-7", "0.5", "nan", "40",
            #"["/",1,0]"#,
        ]
        let images = [
            "\"flag\"", #"["image","flag",{"params":{"flag_color":["get","c"]}}]"#, "\"missing\"",
            #"["concat","fl","ag"]"#, "\"icon\"",
        ]
        let coordinates = ["[0,0]", "[1e308,1e308]", "[0,89.99999]", "[-180,-90]", "[\"a\",1]", "[0]"]
        let values = ["0", "-1e308", "1e308", "\"red\"", "\"#zzz\"", "null", "[]", "\"hsl(1,2,3\"", "2"]
        let features = (0..<(1 + random.next(4))).map { _ in
            #"{"type":"Feature","geometry":{"type":"Point","coordinates":"# + pick(coordinates)
                + #"},"properties":{"size":"# + pick(values) + #","c":"# + pick(values) + "}}"
        }.joined(separator: ",")
        return #"{"version":8,"center":"# + centres[index % centres.count] + #","zoom":"#
            + zooms[index % zooms.count]
            + #","sources":{"points":{"type":"geojson","data":{"type":"FeatureCollection","features":["# + features
            + #"]}}},"layers":[{"id":"icons","type":"symbol","source":"points","layout":{"icon-image":"#
            + pick(images) + #","icon-size":"# + sizes[index % sizes.count] + "}}]}"
    }

    /// A `render --list` file: a few lines of the icon and the flag with hostile parameters,
    /// scales, names, quotes, options and bytes (output names stay inside the batch folder).
    private static func hostileList(name: String, _ random: inout Generator) -> String {
        func pick(_ values: [String]) -> String { values[random.next(values.count)] }
        let quoted = "'" + name.replacingOccurrences(of: "'", with: "") + "'"
        let lines = [
            "\(quoted) -p \(hostileParameter(&random).replacingOccurrences(of: "\n", with: " "))",
            "icons/flag.svg -s \(pick(["0", "1e308", "nan", "2", "1,2", "1.5x"]))",
            "icons/flag.svg -o \(pick(["a.png", "sub/x.png", "'q q.png'", "\"unclosed", "\u{1B}[2J.png", "''"]))",
            "icons/flag.svg -p flag_color=\(pick(["red", "#12", "\u{7F}", "rgb(1,2", "teal"])) -o f.png",
            "\(quoted) --zoom 2", "# a comment", "", "\u{1B}[2J\u{0}", String(repeating: "x", count: 5000),
            "\(quoted) \(quoted)", "icons/flag.svg -o a.png",
        ]
        return (0..<(1 + random.next(4))).map { _ in pick(lines) }.joined(separator: "\n")
    }

    /// Every file and folder under `folder`, relative to it.
    private static func files(in folder: String) -> [String] {
        (try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []
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
