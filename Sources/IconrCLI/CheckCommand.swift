import Iconr
import IconrCore
import IconrSystem

/// `iconr check <icons>... [--style FILE] [--for mapbox|maplibre] [--sdf ID|GLOB]... [--json]`
enum CheckCommand: Command {
    static let name = "check"
    static let abstract = "Report, per icon, what Mapbox (Studio) or MapLibre will drop or draw differently."
    static let discussion = """
        Each finding is one line: the file, the target, and why. Mapbox:
          studio-size, studio-file-size, studio-images: Studio takes icons up to 512 px a side,
            files under 400 KB, at most 1,000 images a style.
          style-element: Studio silently drops SVGs with <style> elements (mapbox-gl-js #13331).
          text, pattern, blend-mode, spread-method, image: Mapbox draws vector icons from a usvg
            tree with Canvas 2D, which ignores them; iconr (librsvg) draws them.
          shared-default: a parameter's default color is also the initial paint (black) of
            elements that declare none (a shape's fill, a stop's color, currentColor): a value
            for the parameter recolors them too.
          fractional-size: a size that is not whole pixels at 1x or 2x: Mapbox rounds the
            raster and stretches the drawing to fill it.
        MapLibre:
          sdf-stretch: an SDF icon (--sdf) with stretch areas is deformed (maplibre-gl-js #6953).
          sdf-mix (--style): a layer that shows SDF and non-SDF icons is refused ("Cannot mix
            SDF and non-SDF icons in one buffer"); Mapbox allows it since 11.9.
        Both, with --style:
          missing-icon: the style shows an icon the folders lack (with "did you mean").
        invalid: a file that is no SVG iconr can read is dropped by both.
        Exit 1 when anything would be lost.
        """
    static let positionalUsage = "<icons>..."
    static let arguments: [(name: String, help: String)] = [
        ("<icons>", "SVG icons, or folders of them (read with their subfolders).")
    ]
    static let options: [OptionSpec] = [
        OptionSpec(
            names: ["--for"], valueName: "TARGET", help: "Check for mapbox or maplibre only (default: both).",
            values: IconCheck.Target.allCases.map(\.rawValue)),
        OptionSpec(
            names: ["--sdf"], valueName: "ID|GLOB",
            help: "The icons that go into a sprite as SDF (as 'iconr sprite --sdf'; repeatable).", isRepeatable: true,
            bareMeans: "--sdf-all"),
        OptionSpec(names: ["--sdf-all"], help: "Every icon goes into a sprite as SDF."),
        OptionSpec(
            names: ["--style"], valueName: "FILE",
            help: "Check a style against the icon folders too: icons it lacks, layers that mix SDF and non-SDF icons."
        ),
        OptionSpec(names: ["--json"], help: "Print {\"checked\": N, \"icons\": [{\"file\", \"findings\"}]} on stdout."),
    ]

    struct Options: CommandOptions {
        var paths: [String]
        var targets: Set<IconCheck.Target>
        var sdf: Set<String>
        var json: Bool
        var style: String?

        init(_ arguments: ScannedArguments) throws(UsageError) {
            paths = arguments.positionals
            guard !paths.isEmpty else { throw UsageError(message: "missing <icons>") }
            style = arguments.value("--style")
            if style != nil, let file = paths.first(where: { !FileReader.isFolder($0) }) {
                throw UsageError(message: "--style checks a style against icon folders: '\(file)' is no folder")
            }
            if let target = arguments.value("--for") {
                guard let parsed = IconCheck.Target(rawValue: target) else {
                    throw UsageError(
                        message: "invalid value '\(target)' for --for: expected mapbox or maplibre"
                            + didYouMean(target, among: ["mapbox", "maplibre"]))
                }
                targets = [parsed]
            } else {
                targets = Set(IconCheck.Target.allCases)
            }
            sdf = Set(arguments.all("--sdf") + (arguments.has("--sdf-all") ? ["*"] : []))
            json = arguments.has("--json")
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        // Each path: a folder's SVGs by id (as a sprite names them), or a file by its name.
        var icons: [(id: String, path: String)] = []
        var sets: [(path: String, count: Int)] = []
        for path in options.paths {
            if FileReader.isFolder(path) {
                let files = try SpriteBuilder.iconFiles(in: [path], recursive: true).filter {
                    !$0.path.lowercased().hasSuffix(".png")
                }
                icons += files.map { ($0.id, $0.path) }
                sets.append((path, files.count))
            } else {
                icons.append((IconSource.iconName(path: path), path))
            }
        }
        var reports: [(path: String, findings: [IconCheck.Finding])] = []
        for icon in icons {
            let findings: [IconCheck.Finding]
            do {
                let bytes = try IconrError.readingTemplate(icon.path)
                let template: SVGTemplate
                do {
                    template = try SVGTemplate(bytes: bytes, file: icon.path)
                } catch {
                    reports.append((icon.path, invalid("\(error)", targets: options.targets)))
                    continue
                }
                let sdf = options.sdf.contains { SpriteID.matches(icon.id, pattern: $0) }
                findings = IconCheck.findings(bytes: bytes, template: template, sdf: sdf, targets: options.targets)
            } catch {
                findings = invalid("\(error)", targets: options.targets)
            }
            if !findings.isEmpty { reports.append((icon.path, findings)) }
        }
        for set in sets where options.targets.contains(.mapbox) {
            if let finding = IconCheck.setFinding(count: set.count) { reports.append((set.path, [finding])) }
        }
        if let style = options.style {
            let findings = try styleFindings(style, options: options)
            if !findings.isEmpty { reports.append((style, findings)) }
        }
        let lost = reports.reduce(0) { $0 + $1.findings.count }
        if options.json {
            let entries = reports.map { report -> JSONValue in
                .object([
                    "file": .string(report.path),
                    "findings": .array(
                        report.findings.map { finding -> JSONValue in
                            .object([
                                "target": .string(finding.target.rawValue), "rule": .string(finding.rule),
                                "message": .string(finding.message),
                            ])
                        }),
                ])
            }
            console.out(
                JSONValue.object(["checked": .number(Double(icons.count)), "icons": .array(entries)]).text(.indented))
        } else {
            for report in reports {
                for finding in report.findings { console.out("\(report.path): \(finding)".escapedForMessage) }
            }
            let files = Set(reports.map(\.path)).count
            console.note(
                "check: \(icons.count) icon\(icons.count == 1 ? "" : "s"), "
                    + (lost == 0
                        ? "nothing lost for \(options.targets.map(\.rawValue).sorted().joined(separator: " or "))"
                        : "\(lost) finding\(lost == 1 ? "" : "s") in \(files) file\(files == 1 ? "" : "s")"))
        }
        return lost == 0 ? 0 : 1
    }

    /// What a style loses with the icon folders: each icon it shows that none holds (for
    /// both targets), and for MapLibre each layer whose icons are both SDF and not.
    /// A layer whose icon names come from data the build has not seen is not judged.
    private static func styleFindings(_ path: String, options: Options) throws -> [IconCheck.Finding] {
        let style = try StyleVariants(
            stylePath: path, dataPaths: [], config: [:], directories: options.paths, recursive: true)
        var findings: [IconCheck.Finding] = []
        for target in options.targets.sorted(by: { $0.rawValue < $1.rawValue }) {
            for name in style.missingIcons {
                findings.append(
                    IconCheck.Finding(
                        target: target, rule: "missing-icon",
                        message: "the style shows icon \"\(name)\", which no folder holds"
                            + StyleVariants.suggestion(for: name, among: style.icons)))
            }
        }
        guard options.targets.contains(.maplibre) else { return findings }
        for layer in style.layers where !layer.namesFromData {
            let shown = layer.names.intersection(style.icons)
            let sdf = shown.filter { id in options.sdf.contains { SpriteID.matches(id, pattern: $0) } }
            guard !sdf.isEmpty, sdf.count < shown.count else { continue }
            let plain = shown.subtracting(sdf)
            func listed(_ ids: Set<String>) -> String {
                let sorted = ids.sorted()
                return sorted.prefix(3).joined(separator: ", ") + (sorted.count > 3 ? ", ..." : "")
            }
            findings.append(
                IconCheck.Finding(
                    target: .maplibre, rule: "sdf-mix",
                    message: "layer \"\(layer.id)\" shows SDF icons (\(listed(sdf))) and others (\(listed(plain))): "
                        + "MapLibre refuses to mix them in one layer; give it icons of one kind"))
        }
        return findings
    }

    /// A file both targets drop: it is no SVG iconr can read.
    private static func invalid(_ why: String, targets: Set<IconCheck.Target>) -> [IconCheck.Finding] {
        targets.sorted { $0.rawValue < $1.rawValue }.map {
            IconCheck.Finding(target: $0, rule: "invalid", message: "not an icon it can read: \(why)")
        }
    }
}
