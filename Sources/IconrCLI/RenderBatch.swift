import Dispatch
import Glibc
import Iconr
import IconrCore
import IconrRender
import IconrSystem
import Synchronization

/// One PNG a batch `render` makes: which template, with what, at which scale, to where.
struct RenderJob: Equatable {
    var template: String
    var params: IconParameters
    var scale: Double
    var output: String
    /// Where it was asked for, for messages: `jobs.txt:3`, or nil on the command line.
    var origin: String?

    /// Every template on the command line at every scale, named `<name>.png` or
    /// `<name>@<S>x.png` in the output folder.
    static func commandLineJobs(_ options: RenderCommand.Options) throws(UsageError) -> [RenderJob] {
        let jobs = options.templates.flatMap { template in
            options.scales.map { scale in
                RenderJob(
                    template: template, params: options.params, scale: scale,
                    output: inFolder(
                        options.output,
                        RenderCommand.defaultOutputName(IconSource.iconName(path: template), scale: scale)))
            }
        }
        do {
            try checkDistinctOutputs(jobs)
        } catch {
            throw UsageError(message: error.description)
        }
        return jobs
    }

    /// The jobs of a `--list` file (`-`: stdin), one per line that is not blank or a `#`
    /// comment, each written as `render`'s own arguments: `<template.svg> [-p NAME=COLOR]...
    /// [-s S[,S]...]... [-o PATH]`, words split at spaces unless quoted ('...' or "...").
    /// The command's `--param` and `--scale` apply where a line gives none of its own; a
    /// relative `-o` is in the command's output folder.
    static func listed(in list: String, options: RenderCommand.Options) throws -> [RenderJob] {
        let name = list == "-" ? "<stdin>" : list
        let bytes = list == "-" ? try readStandardInput() : try IconrError.reading(list)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ListError(origin: name, message: "not UTF-8 text")
        }
        let lineOptions = RenderCommand.options.filter {
            !Set(["--param", "--scale", "--output"]).isDisjoint(with: $0.names)
        }
        var jobs: [RenderJob] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let origin = "\(name):\(index + 1)"
            // A comment is skipped as it is: its words are not read (an apostrophe is no quote).
            if line.drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("#") { continue }
            guard let words = splitWords(line) else { throw ListError(origin: origin, message: "unclosed quote") }
            guard let first = words.first, !first.hasPrefix("#") else { continue }
            do {
                let arguments = try ArgumentScanner.scan(words, options: lineOptions)
                let template = try arguments.onePositional("<template.svg>")
                let params = try RenderCommand.parseParams(arguments.all("--param"))
                let scales =
                    arguments.has("--scale") ? try RenderCommand.parseScales(arguments.all("--scale")) : options.scales
                let output = arguments.value("--output")
                if output != nil, scales.count > 1 {
                    throw UsageError(message: "-o names one file: give one scale with it")
                }
                if output == "-" { throw UsageError(message: "-o - is not for a list: name a file") }
                for scale in scales {
                    jobs.append(
                        RenderJob(
                            template: template, params: options.params.merging(params), scale: scale,
                            output: inFolder(
                                options.output,
                                output
                                    ?? RenderCommand.defaultOutputName(
                                        IconSource.iconName(path: template), scale: scale)),
                            origin: origin))
                }
            } catch {
                throw ListError(origin: origin, message: error.message)
            }
        }
        return jobs
    }

    /// Fails when two jobs would write one file (the second would replace the first).
    static func checkDistinctOutputs(_ jobs: [RenderJob]) throws(ListError) {
        var seen: [String: RenderJob] = [:]
        for job in jobs {
            if let earlier = seen[job.output] {
                guard job.origin != nil else {
                    throw ListError(
                        message: "\(earlier.template) and \(job.template) would both write \(job.output): "
                            + "name their outputs in a --list (-o on each line)")
                }
                throw ListError(
                    origin: job.origin,
                    message:
                        "\(job.output) is written by \(earlier.origin ?? earlier.template) already: give this line its own -o"
                )
            }
            seen[job.output] = job
        }
    }

    /// `name` inside `folder` unless it is absolute (or there is no folder).
    private static func inFolder(_ folder: String?, _ name: String) -> String {
        guard let folder, !folder.isEmpty, !name.hasPrefix("/") else { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// The line's words: split at spaces and tabs, `'...'` and `"..."` kept whole (quotes
    /// removed), a backslash outside quotes taking the next character as it is; nil when a
    /// quote is not closed.
    static func splitWords(_ line: Substring) -> [String]? {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                word.append(character)
                escaped = false
            } else if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == " " || character == "\t" || character == "\r" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                inWord = true
                switch character {
                case "'", "\"": quote = character
                case "\\": escaped = true
                default: word.append(character)
                }
            }
        }
        guard quote == nil, !escaped else { return nil }
        if inWord { words.append(word) }
        return words
    }

    /// Everything on stdin (a `--list -`), up to 64 MiB.
    private static func readStandardInput() throws(ListError) -> [UInt8] {
        var bytes: [UInt8] = []
        let input = FileDescriptor(rawValue: 0)
        while true {
            let chunk: [UInt8]
            do {
                chunk = try input.read(upTo: 1 << 16)
            } catch {
                throw ListError(origin: "<stdin>", message: "cannot read it: \(error.reason)")
            }
            if chunk.isEmpty { return bytes }
            bytes += chunk
            guard bytes.count <= 64 << 20 else { throw ListError(origin: "<stdin>", message: "more than 64 MiB") }
        }
    }
}

/// A mistake in a `--list` (or two jobs writing one file): where, and what.
struct ListError: Error, CustomStringConvertible {
    /// `jobs.txt:3`, or nil for the command line.
    var origin: String?
    var message: String

    var description: String { (origin.map { "\($0): " } ?? "") + message }
}

extension Error {
    /// A usage mistake's message, else the error's description.
    fileprivate var message: String { (self as? UsageError)?.message ?? "\(self)" }
}

extension IconParameters {
    /// These colors with `other`'s on top.
    fileprivate func merging(_ other: IconParameters) -> IconParameters {
        IconParameters(colors.merging(other.colors) { _, new in new })
    }
}

/// Renders a batch of jobs in one process, on all cores, in a child that `Supervisor`
/// watches: an icon that crashes librsvg or renders past the time limit fails alone, and
/// the others are written. Each PNG is written whole as soon as it is made; the written
/// files are listed on stdout, and the failures on stderr, in the jobs' order, at the end.
enum RenderBatch {
    static func run(
        _ jobs: [RenderJob], folder: String?, settings: RenderSettings, cache: CacheSettings, console: Console
    ) -> Int32 {
        let started = ContinuousClock.now
        return Supervisor.runBuild(timeout: settings.limits.timeout, console: console) { recovery, console in
            console.checkingStdout(
                render(
                    jobs, folder: folder, limits: settings.limits, theme: settings.theme, halo: settings.halo,
                    cache: cache,
                    recovery: recovery, started: started, console: console))
        }
    }

    /// One attempt, in the supervised child.
    private static func render(
        _ jobs: [RenderJob], folder: String?, limits: RenderLimits, theme: Theme?, halo: Halo?,
        cache cacheSettings: CacheSettings,
        recovery: SpriteBuildRecovery, started: ContinuousClock.Instant, console: Console
    ) -> Int32 {
        if let folder, !folder.isEmpty {
            do {
                try FileReader.makeFolder(folder)
            } catch {
                console.error(
                    "\(IconrError.folder(path: folder, problem: .cannotCreate(purpose: "the folder", error)))")
                return 1
            }
        }
        // Each template is read and scanned once, however many jobs use it (pure Swift: a
        // batch answered by the cache never loads librsvg).
        let paths = Array(Set(jobs.map(\.template))).sorted()
        let loaded = Locked<[String: Result<IconSource, BatchFailure>]>([:])
        DispatchQueue.concurrentPerform(iterations: paths.count) { index in
            let path = paths[index]
            let source: Result<IconSource, BatchFailure>
            if let reason = recovery.failed[path] {
                source = .failure(BatchFailure("\(path): \(reason)"))
            } else {
                source = recovery.watching(path) {
                    Result { () throws(IconrError) in
                        let source = try IconSource(path: path)
                        return try theme.map { theme throws(IconrError) in try source.themed(theme) } ?? source
                    }.mapError { BatchFailure("\($0)") }
                }
            }
            loaded.withLock { $0[path] = source }
        }
        let sources = loaded.withLock { $0 }
        for path in sources.keys.sorted() {
            if case .success(let source)? = sources[path] { source.warnings.forEach { console.warning($0) } }
        }
        if let unknown = unknownParameter(jobs, sources: sources) {
            console.error(unknown)
            return 1
        }

        let renderer = IconRenderer(
            cache: IconCache(memoryLimit: 0, disk: cacheSettings.diskCache(console: console)), placement: .inProcess,
            limits: limits)
        let outcomes = Locked<[Int: Result<String, BatchFailure>]>([:])
        let done = Atomic<Int>(0)
        let progress = ProgressBar(label: "rendering", console: console)
        @Sendable func run(_ index: Int) {
            let job = jobs[index]
            let outcome = Result { () throws(BatchFailure) -> String in
                let source: IconSource
                switch sources[job.template] {
                case .success(let loaded)?: source = loaded
                case .failure(let failure)?: throw failure
                case nil: throw BatchFailure("\(job.template): was not read")
                }
                if let reason = recovery.failed[job.template] { throw BatchFailure("\(job.template): \(reason)") }
                let png: [UInt8]
                do {
                    png = try recovery.watching(job.template) { () throws(IconrError) in
                        let variant = try renderer.variant(of: source, source.resolve(job.params), scale: job.scale)
                        // `--halo`, else the theme's for this icon.
                        guard let halo = halo ?? theme?.theme(forIcon: source.name).halo else { return try variant.png }
                        return try variant.haloed(halo).png
                    }
                } catch {
                    throw BatchFailure("\(error)")
                }
                // A batch whose command was killed must not write: its user has moved on.
                guard Supervisor.parentIsAlive else { throw BatchFailure("\(job.output): not written") }
                do {
                    try AtomicFile.write(png, to: job.output)
                } catch {
                    throw BatchFailure("\(error)")
                }
                return job.output
            }
            outcomes.withLock { $0[index] = outcome }
            progress.update(done.add(1, ordering: .relaxed).newValue, of: jobs.count)
        }
        // The suspects of an earlier attempt's crash render first, one at a time.
        let alone = jobs.indices.filter { recovery.suspects.contains(jobs[$0].template) }
        let together = jobs.indices.filter { !recovery.suspects.contains(jobs[$0].template) }
        alone.forEach(run)
        DispatchQueue.concurrentPerform(iterations: together.count) { run(together[$0]) }
        progress.finish()

        let results = outcomes.withLock { $0 }
        var failed = 0
        // A template that cannot be read is said once, however many jobs it had, and counted
        // as one file, not as the PNGs it would have made.
        var unread: Set<String> = []
        for index in jobs.indices {
            switch results[index] {
            case .success(let output)?: console.written(output)
            case .failure(let failure)?:
                if case .failure? = sources[jobs[index].template] {
                    guard unread.insert(jobs[index].template).inserted else { continue }
                } else {
                    failed += 1
                }
                // A pattern the shell left as it was (it matched no file) says so.
                let template = jobs[index].template
                let unmatched =
                    unread.contains(template)
                    && template.utf8.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }
                    && !FileReader.exists(template)
                console.error(
                    (jobs[index].origin.map { "\($0): " } ?? "") + failure.message
                        + (unmatched ? " (the shell matched no file to this pattern)" : ""))
            case nil:
                failed += 1
                console.error("\(jobs[index].template): was not rendered")
            }
        }
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let planned = jobs.filter { !unread.contains($0.template) }.count
        let written =
            planned == 0 ? "no PNG written" : "\(planned - failed) of \(planned) PNG\(planned == 1 ? "" : "s") written"
        console.note(
            "render: \(written) in \((seconds * 100).rounded() / 100) s" + (failed == 0 ? "" : ", \(failed) failed")
                + (unread.isEmpty ? "" : ", \(unread.count) file\(unread.count == 1 ? "" : "s") not read"))
        return failed == 0 && unread.isEmpty ? 0 : 1
    }

    /// The error for a parameter name that no template of the batch declares (a name some
    /// declare was meant for those, as a style's params are), once every template was read:
    /// one that was not may declare it.
    private static func unknownParameter(
        _ jobs: [RenderJob], sources: [String: Result<IconSource, BatchFailure>]
    ) -> String? {
        var declared: Set<String> = []
        for case .success(let source) in sources.values {
            declared.formUnion(source.parameters.map(\.name))
        }
        let unknown = Set(jobs.flatMap(\.params.colors.keys)).subtracting(declared).sorted()
        let read = sources.compactMapValues { try? $0.get() }
        guard let name = unknown.first, read.count == sources.count else { return nil }
        if read.count == 1, let (path, source) = read.first {
            // The name no job's template declares (a list's lines may give different params).
            let error = UnknownParameterError(
                unknownNames: [name], icon: source.name, declared: source.parameters.map(\.name))
            return error.map { "\(path): \($0)" }
        }
        return "unknown parameter '\(name)': no template declares it"
            + didYouMean(name, among: declared.sorted())
    }
}

/// Why one job of a batch failed: the line its `error:` says.
private struct BatchFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
