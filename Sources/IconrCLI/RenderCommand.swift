import Iconr
import IconrCore
import IconrSystem

/// `iconr render <template.svg> [--param NAME=COLOR]... [--scale S] [-o PATH]`
enum RenderCommand: Command {
    static let name = "render"
    static let abstract = "Render a parameterized SVG template to a PNG file."
    static let positionalUsage = "<template.svg>"
    static let arguments: [(name: String, help: String)] = [("<template.svg>", "The SVG template to render.")]
    static let options: [OptionSpec] =
        [
            OptionSpec(
                names: ["--param", "-p"], valueName: "NAME=COLOR",
                help: "Set a parameter, e.g. flag_color=#800080 (repeatable).", isRepeatable: true),
            OptionSpec(
                names: ["--scale", "-s"], valueName: "S", help: "Pixels per icon unit: 1, 2, 1.5, ... (default: 1)."),
            OptionSpec(
                names: ["--output", "-o"], valueName: "PATH",
                help: "Where to write the PNG; '-' for stdout (default: <name>.png, or <name>@<S>x.png)."),
        ] + RenderSettings.options + CacheSettings.options

    struct Options: CommandOptions {
        var template: String
        /// Colors by parameter name (resolved against what the template declares).
        var params: IconParameters
        var scale: Double
        /// A file, or `-` for stdout.
        var output: String
        var render: RenderSettings
        var cache: CacheSettings

        init(_ arguments: ScannedArguments) throws(UsageError) {
            template = try arguments.onePositional("<template.svg>")
            scale = try arguments.value("--scale", as: parseScale, expected: "a finite number > 0") ?? 1
            params = try parseParams(arguments.all("--param"))
            render = try RenderSettings(arguments)
            cache = try CacheSettings(arguments)
            output = arguments.value("--output") ?? defaultOutputName(IconSource.iconName(path: template), scale: scale)
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        let path = options.template, params = options.params, scale = options.scale
        let settings = options.render, cacheSettings = options.cache, destination = options.output

        // The time limit covers the whole job: reading, scanning, parsing, rendering.
        return CrashGuard.run(file: path, timeout: settings.limits.timeout, console: console) { console in
            console.reportingErrors {
                // Reading and scanning the template is pure Swift: enough for the cache key,
                // so a cache hit never loads librsvg.
                let source = try IconSource(path: path)
                source.warnings.forEach { console.warning($0) }
                let resolved = source.resolve(params)
                if !resolved.unknownNames.isEmpty {
                    let declared = source.parameters.map(\.name)
                    console.warning(
                        "\(path): ignoring unknown parameter\(resolved.unknownNames.count == 1 ? "" : "s") "
                            + resolved.unknownNames.map { "\"\($0)\"" }.joined(separator: ", ")
                            + " (it declares \(declared.isEmpty ? "none" : declared.joined(separator: ", ")))")
                }
                // One job: no memory cache; a disk write holds interrupts back until it is whole.
                let cache = IconCache(
                    memoryLimit: 0, disk: cacheSettings.diskCache(console: console),
                    writingDisk: { write in CrashGuard.writingOutput(write) })
                let renderer = IconRenderer(cache: cache, placement: .inProcess, limits: settings.limits)
                let variant = try renderer.variant(of: source, resolved, scale: scale)
                let png = try variant.png
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
            console.out(destination)
        }
    }

    /// `flag.png` at scale 1, `flag@2x.png` at 2, `flag@1.5x.png` at 1.5.
    static func defaultOutputName(_ name: String, scale: Double) -> String {
        scale == 1 ? "\(name).png" : "\(name)@\(scale.shortText)x.png"
    }

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

    /// `--param NAME=COLOR` options, colors parsed: a bad one is a usage mistake, as a bad
    /// `--scale` is.
    private static func parseParams(_ values: [String]) throws(UsageError) -> IconParameters {
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
    ]

    var limits = RenderLimits.default

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
