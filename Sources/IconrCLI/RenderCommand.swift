import Iconr

/// `iconr render <template.svg> [--param NAME=COLOR]... [--scale S] [-o PATH]`
enum RenderCommand: Command {
    static let name = "render"
    static let abstract = "Render a parameterized SVG template to a PNG file."
    static let usage = "<template.svg> [--param NAME=COLOR]... [--scale S] [-o PATH]"
    static let arguments: [(name: String, help: String)] = [("<template.svg>", "The SVG template to render.")]
    static let options: [OptionSpec] = [
        OptionSpec(names: ["--param", "-p"], valueName: "NAME=COLOR",
                   help: "Set a parameter, e.g. flag_color=#800080 (repeatable).", isRepeatable: true),
        OptionSpec(names: ["--scale", "-s"], valueName: "S", help: "Pixels per icon unit: 1, 2, 1.5, ... (default: 1)."),
        OptionSpec(names: ["--output", "-o"], valueName: "PATH",
                   help: "Where to write the PNG; '-' for stdout (default: <name>.png, or <name>@<S>x.png)."),
    ] + RenderSettings.options

    static func run(_ arguments: ScannedArguments, console: Console) throws -> Int32 {
        guard arguments.positionals.count == 1 else {
            throw UsageError(message: arguments.positionals.isEmpty ? "missing <template.svg>"
                                 : "unexpected argument '\(arguments.positionals[1])'")
        }
        let path = arguments.positionals[0]
        let scale = try arguments.value("--scale", as: parseScale, expected: "a finite number > 0") ?? 1
        let params = try parseParams(arguments.all("--param"))
        let settings = try RenderSettings(arguments)
        let output = arguments.value("--output")
        return Supervisor.run(file: path, timeout: settings.limits.timeout, console: console) {
            console.reportingErrors {
                try render(path, params: params, scale: scale, limits: settings.limits, output: output, console: console)
            }
        }
    }

    private static func render(_ path: String, params: [String: String], scale: Double, limits: RenderLimits,
                               output: String?, console: Console) throws {
        let template = try IconTemplate(path: path)
        template.warnings.forEach { console.warning("\(path):\($0)") }
        let resolved = try template.resolve(params)
        if !resolved.unknownNames.isEmpty {
            let declared = template.parameters.map(\.name)
            console.warning("\(path): ignoring unknown parameter\(resolved.unknownNames.count == 1 ? "" : "s") "
                + resolved.unknownNames.map { "\"\($0)\"" }.joined(separator: ", ")
                + " (it declares \(declared.isEmpty ? "none" : declared.joined(separator: ", ")))")
        }
        let png = try template.render(resolved, scale: scale, limits: limits).pngData()
        let destination = output ?? defaultOutputName(template.name, scale: scale)
        if destination == "-" {
            console.outBytes(png)
        } else {
            try AtomicFile.write(png, to: destination)
            console.out(destination)
        }
    }

    /// `flag.png` at scale 1, `flag@2x.png` at 2, `flag@1.5x.png` at 1.5.
    static func defaultOutputName(_ name: String, scale: Double) -> String {
        scale == 1 ? "\(name).png" : "\(name)@\(formatScale(scale))x.png"
    }

    /// Accepts `2` and `2x`.
    static func parseScale(_ text: String) -> Double? {
        let number = text.hasSuffix("x") ? String(text.dropLast()) : text
        guard let scale = Double(number), scale.isFinite, scale > 0 else { return nil }
        return scale
    }

    private static func parseParams(_ values: [String]) throws(UsageError) -> [String: String] {
        var params: [String: String] = [:]
        for value in values {
            guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
                throw UsageError(message: "invalid value '\(value)' for --param: expected NAME=COLOR")
            }
            params[String(value[..<equals])] = String(value[value.index(after: equals)...])
        }
        return params
    }
}

func formatScale(_ scale: Double) -> String {
    scale == scale.rounded() && abs(scale) < 1e15 ? String(Int(scale)) : String(scale)
}

/// Options shared by commands that load templates: limits.
struct RenderSettings {
    static let options: [OptionSpec] = [
        OptionSpec(names: ["--max-size"], valueName: "PX",
                   help: "Refuse rasters wider or taller than this, or WxH (default: 4096)."),
        OptionSpec(names: ["--timeout"], valueName: "SECONDS", help: "Time limit per render (default: 20)."),
    ]

    var limits = RenderLimits.default

    init(_ arguments: ScannedArguments) throws(UsageError) {
        if let size = try arguments.value("--max-size", as: Self.parseSize, expected: "PX or WxH, whole numbers > 0") {
            limits.maxSize = size
        }
        if let timeout = try arguments.value("--timeout", as: { Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } },
                                             expected: "a number of seconds > 0") {
            limits.timeout = timeout
        }
    }

    static func parseSize(_ text: String) -> PixelSize? {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
        guard (1...2).contains(parts.count), parts.allSatisfy({ ($0 ?? 0) > 0 }) else { return nil }
        return PixelSize(width: parts[0]!, height: parts.last!!)
    }
}
