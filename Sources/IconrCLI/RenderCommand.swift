import Iconr
import IconrCore
import IconrSystem

/// `iconr render <template.svg>... [--param NAME=COLOR]... [--scale S[,S]...]... [-o PATH | -o DIR] [--list FILE]`
///
/// One template at one scale is one job: `-o` names the file (or `-`, stdout). More than one
/// (several templates or scales, or `--list`) is a batch, rendered in one process.
enum RenderCommand: Command {
    static let name = "render"
    static let abstract = "Render parameterized SVG templates to PNG files."
    static let discussion = """
        Several templates, several scales or a --list render in one process, on all cores, into
        the folder -o names (default: the current one); an icon that fails (a librsvg crash, a
        timeout) fails alone. A --list line is one render, written as this command's arguments:
          flag.svg -p flag_color=#800080 -s 2 -o flag-purple@2x.png
        """
    static let positionalUsage = "<template.svg>..."
    static let arguments: [(name: String, help: String)] = [("<template.svg>", "The SVG templates to render.")]
    static let options: [OptionSpec] =
        [
            OptionSpec(
                names: ["--param", "-p"], valueName: "NAME=COLOR",
                help: "Set a parameter, e.g. flag_color=#800080 (repeatable).", isRepeatable: true),
            OptionSpec(
                names: ["--scale", "-s"], valueName: "S",
                help: "Pixels per icon unit: 1, 2, 1.5, ... (default: 1); several render each.", isRepeatable: true),
            OptionSpec(
                names: ["--output", "-o"], valueName: "PATH",
                help: "The PNG, '-' for stdout (default: <name>.png, <name>@<S>x.png); for several, their folder."),
            OptionSpec(
                names: ["--list"], valueName: "FILE",
                help: "Render each line of FILE ('-' for stdin): <template.svg> [-p NAME=COLOR]... [-s S] [-o PATH]."),
            ThemeOption.spec(
                repeatable: false,
                help: "Draw in a theme's colors: a JSON file (see 'iconr sprite --help'), or grayscale."),
            RenderSettings.haloOption,
        ] + RenderSettings.options + CacheSettings.options

    struct Options: CommandOptions {
        /// The templates on the command line.
        var templates: [String]
        /// Colors by parameter name (resolved against what each template declares); a
        /// `--list` line's own `-p` take precedence.
        var params: IconParameters
        /// Every template renders at each (a `--list` line without `-s` too).
        var scales: [Double]
        /// `-o`: the file of a single job (`-` for stdout), the folder of a batch.
        var output: String?
        /// `--list`: a file of jobs, `-` for stdin.
        var list: String?
        /// A batch's jobs from the command line (every template at every scale); empty for a
        /// single job.
        var jobs: [RenderJob] = []
        var render: RenderSettings
        var cache: CacheSettings
        /// `--theme` as given (read when the command runs).
        var theme: String?

        init(_ arguments: ScannedArguments) throws(UsageError) {
            templates = arguments.positionals
            theme = arguments.value("--theme")
            list = arguments.value("--list")
            guard !templates.isEmpty || list != nil else { throw UsageError(message: "missing <template.svg>") }
            scales = try RenderCommand.parseScales(arguments.all("--scale"))
            params = try parseParams(arguments.all("--param"))
            render = try RenderSettings(arguments)
            cache = try CacheSettings(arguments)
            output = arguments.value("--output")
            if isBatch {
                if output == "-" {
                    throw UsageError(message: "-o - writes one PNG: give one template at one scale, or -o DIR")
                }
                jobs = try RenderJob.commandLineJobs(self)
            }
        }

        /// Whether this is more than one job (or a list of them): `-o` is then a folder.
        var isBatch: Bool { list != nil || templates.count * scales.count > 1 }

        /// Where a single job's PNG goes: `-o`, else `<name>.png` or `<name>@<S>x.png`.
        var singleOutput: String {
            output ?? RenderCommand.defaultOutputName(IconSource.iconName(path: templates[0]), scale: scales[0])
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        var options = options
        options.render.theme = try options.theme.flatMap { try ThemeOption.read([$0]).first }
        options.render.apply()
        var console = console
        console.quiet = options.render.quiet
        if options.isBatch {
            var jobs = options.jobs
            if let list = options.list { jobs += try RenderJob.listed(in: list, options: options) }
            try RenderJob.checkDistinctOutputs(jobs)
            return RenderBatch.run(
                jobs, folder: options.output, settings: options.render, cache: options.cache, console: console)
        }
        let path = options.templates[0], params = options.params, scale = options.scales[0]
        let settings = options.render, cacheSettings = options.cache
        let destination = options.singleOutput

        // The time limit covers the whole job: reading, scanning, parsing, rendering.
        return CrashGuard.run(file: path, timeout: settings.limits.timeout, console: console) { console in
            console.reportingErrors {
                // Reading and scanning the template is pure Swift: enough for the cache key,
                // so a cache hit never loads librsvg.
                let read = try IconSource(path: path)
                let source = try settings.theme.map { theme throws(IconrError) in try read.themed(theme) } ?? read
                source.warnings.forEach { console.warning($0) }
                let resolved = source.resolve(params)
                if let unknown = source.undeclared(in: resolved) {
                    throw IconrError.unknownParameter(unknown, file: path)
                }
                // One job: no memory cache; a disk write holds interrupts back until it is whole.
                let cache = IconCache(
                    memoryLimit: 0, disk: cacheSettings.diskCache(console: console),
                    writingDisk: { write in CrashGuard.writingOutput(write) })
                let renderer = IconRenderer(cache: cache, placement: .inProcess, limits: settings.limits)
                let variant = try renderer.variant(of: source, resolved, scale: scale)
                // `--halo`, else the theme's for this icon.
                let halo = settings.halo ?? settings.theme?.theme(forIcon: read.name).halo
                let png = try (halo.map(variant.haloed) ?? variant).png
                try CrashGuard.writingOutput { try deliver(png, to: destination, console: console) }
            }
        }
    }

    /// Writes the PNG to its destination (stdout for `-`) and names the file it wrote.
    private static func deliver(_ png: [UInt8], to destination: String, console: Console) throws {
        if destination == "-" {
            console.outBytes(png)
        } else {
            try AtomicFile.write(png, to: destination)
            console.written(destination)
        }
    }

    /// `flag.png` at scale 1, `flag@2x.png` at 2, `flag@1.5x.png` at 1.5.
    static func defaultOutputName(_ name: String, scale: Double) -> String {
        scale == 1 ? "\(name).png" : "\(name)@\(scale.shortText)x.png"
    }

    /// What `parseScale` accepts, for the error when it refuses a value.
    static let scaleExpected = "a number > 0 and at most 1000000, such as 2 or 2x"

    /// Accepts `2`, `2x`, `1.5`, `1e1`: decimal numbers only (not `0x10` or `0x1p-3`),
    /// finite, from 1e-6 to 1e6 (a raster past the size limit is refused later anyway).
    static func parseScale(_ text: String) -> Double? {
        let number = text.hasSuffix("x") ? String(text.dropLast()) : text
        guard
            number.utf8.allSatisfy({
                ("0"..."9").contains(Character(Unicode.Scalar($0))) || $0 == UInt8(ascii: ".")
                    || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "+")
                    || $0 == UInt8(ascii: "-")
            }),
            let scale = Double(number), scale.isFinite, scale >= 1e-6, scale <= 1e6
        else { return nil }
        return scale
    }

    /// `--scale` values, each `S` or `S,S,...` (default: 1), in order, each once.
    static func parseScales(_ values: [String]) throws(UsageError) -> [Double] {
        var scales: [Double] = []
        for text in values.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            guard let scale = parseScale(String(text)) else {
                throw UsageError(message: "invalid value '\(text)' for --scale: expected \(scaleExpected)")
            }
            if !scales.contains(scale) { scales.append(scale) }
        }
        return scales.isEmpty ? [1] : scales
    }

    /// `--param NAME=COLOR` options, colors parsed: a bad one is a usage mistake, as a bad
    /// `--scale` is.
    static func parseParams(_ values: [String]) throws(UsageError) -> IconParameters {
        var params: [String: Color] = [:]
        for value in values {
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
                throw UsageError(message: "invalid value '\(value)' for --param: expected NAME=COLOR")
            }
            let name = String(value[..<equals]), text = String(value[value.index(after: equals)...])
            guard let color = IconParameters.color(text) else {
                throw UsageError(
                    message: "invalid color '\(text)' for --param \(name): \(ParameterError.syntaxes)")
            }
            params[name] = color
        }
        return IconParameters(params)
    }
}

/// Options shared by commands that load templates: limits.
struct RenderSettings {
    static let options: [OptionSpec] = [
        OptionSpec(
            names: ["--max-size"], valueName: "PX",
            help: "Refuse rasters wider or taller than this, or WxH (default: 4096)."),
        OptionSpec(names: ["--timeout"], valueName: "SECONDS", help: "Time limit per render (default: 20)."),
        fileLimitOption,
        quietOption,
    ]
    /// `--quiet`, which `iconr sprite` takes too (spreet's silence).
    static let quietOption = OptionSpec(
        names: ["--quiet", "-q"], help: "Print no notes, progress or list of files written; warnings and errors still.")
    /// `--max-file-size`, which `iconr sprite` takes too.
    static let fileLimitOption = OptionSpec(
        names: ["--max-file-size"], valueName: "MIB",
        help: "Refuse icon files (and the files they draw) larger than this many MiB (default: 4).")

    var limits = RenderLimits.default
    /// `iconr render --theme`: the colors every icon is drawn in.
    var theme: Theme?
    /// `--halo`: a ring baked around every icon.
    var halo: Halo?

    /// `--halo WIDTH[,COLOR[,BLUR]]`, on `render` and `sprite`.
    static let haloOption = OptionSpec(
        names: ["--halo"], valueName: "W[,COLOR[,BLUR]]",
        help:
            "Bake a halo W px wide at 1x (times the scale) around each icon, under it, in COLOR (default: white; "
            + "#hex or a name), its edge faded over BLUR px; the image grows by it on every side.")

    /// The `--halo` given, parsed.
    static func halo(_ arguments: ScannedArguments) throws(UsageError) -> Halo? {
        try arguments.value(
            "--halo", as: { Halo(parsing: $0) },
            expected: "W[,COLOR[,BLUR]]: a width from 0 to 32 px, a color (#hex or a name), a blur from 0 to 32")
    }
    /// `--max-file-size` in bytes, when given (`apply()` makes it the process's).
    var fileLimit: Int?
    /// `--quiet`.
    var quiet = false

    init(_ arguments: ScannedArguments) throws(UsageError) {
        if let size = try arguments.value(
            "--max-size", as: Self.parseSize, expected: "PX or WxH, whole numbers from 1 to 32767")
        {
            limits.maxSize = size
        }
        if let timeout = try arguments.value(
            "--timeout", as: { Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } },
            expected: "a number of seconds > 0")
        {
            limits.timeout = timeout
        }
        fileLimit = try Self.fileLimit(arguments)
        quiet = arguments.has("--quiet")
        halo = try Self.halo(arguments)
    }

    /// `--max-file-size MIB` in bytes: a number > 0, at most 1024.
    static func fileLimit(_ arguments: ScannedArguments) throws(UsageError) -> Int? {
        try arguments.value(
            "--max-file-size", as: { Double($0).flatMap { $0 > 0 && $0 <= 1024 ? Int($0 * 1_048_576) : nil } },
            expected: "a number of MiB > 0 and at most 1024, such as 4 or 0.5")
    }

    /// Makes the settings that hold for the whole process (`--max-file-size`) hold.
    func apply() {
        Self.apply(fileLimit: fileLimit)
    }

    /// Makes `--max-file-size` (when given) the process's limit on icon files.
    static func apply(fileLimit: Int?) {
        if let fileLimit { FileReader.iconLimit.store(max(1, fileLimit), ordering: .relaxed) }
    }

    /// `PX` or `WxH`, whole numbers from 1 to 32767 (the largest surface cairo makes).
    static func parseSize(_ text: String) -> PixelSize? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard (1...2).contains(parts.count),
            parts.count == text.lowercased().split(separator: "x", omittingEmptySubsequences: false).count,
            let width = parts.first, let height = parts.last, (1...32767).contains(width), (1...32767).contains(height)
        else { return nil }
        return PixelSize(width: width, height: height)
    }
}

/// Options of commands that use the disk cache.
struct CacheSettings {
    static let options: [OptionSpec] = [
        OptionSpec(
            names: ["--cache-dir"], valueName: "DIR",
            help: "The disk cache (default: $XDG_CACHE_HOME/iconr, else ~/.cache/iconr)."),
        OptionSpec(
            names: ["--cache-limit"], valueName: "MIB",
            help: "Disk space the cache may take, in MiB; past it the least recently used go (default: 256)."),
        OptionSpec(names: ["--no-cache"], help: "Neither read nor write the disk cache."),
    ]

    var directory: String?
    var isDisabled: Bool
    /// The disk cache's limit in bytes.
    var byteLimit: Int

    init(_ arguments: ScannedArguments) throws(UsageError) {
        directory = arguments.value("--cache-dir")
        isDisabled = arguments.has("--no-cache")
        byteLimit =
            try arguments.value(
                "--cache-limit", as: { Int($0).flatMap { (1...(1 << 30)).contains($0) ? $0 << 20 : nil } },
                expected: "a whole number of MiB from 1") ?? 256 << 20
    }

    /// The disk cache, or nil with `--no-cache`; `batch` names a batch job's pack. A cache
    /// folder that cannot be made costs only speed: a warning, and the work goes on without it.
    func diskCache(batch: String? = nil, console: Console) -> DiskCache? {
        guard !isDisabled else { return nil }
        do {
            return try DiskCache(directory: directory ?? DiskCache.defaultDirectory, byteLimit: byteLimit, batch: batch)
        } catch {
            console.warning("\(error); working without the disk cache")
            return nil
        }
    }
}
