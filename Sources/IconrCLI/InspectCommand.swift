import Iconr
import IconrCore
import IconrRender
import IconrSystem

/// `iconr inspect <template.svg | icons-dir> [--json]`
enum InspectCommand: Command {
    static let name = "inspect"
    static let abstract =
        "Show a template's size, parameters, stretch areas, content box and warnings; for a folder, the paints its icons use."
    static let positionalUsage = "<template.svg | icons-dir>"
    static let arguments: [(name: String, help: String)] = [
        ("<template.svg | icons-dir>", "The SVG template to inspect, or a folder of them (read with its subfolders).")
    ]
    static let options: [OptionSpec] =
        [OptionSpec(names: ["--json"], help: "Print JSON instead of text.")]
        + RenderSettings.options

    struct Options: CommandOptions {
        var template: String
        var json: Bool
        var render: RenderSettings

        init(_ arguments: ScannedArguments) throws(UsageError) {
            template = try arguments.onePositional("<template.svg>")
            json = arguments.has("--json")
            render = try RenderSettings(arguments)
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        options.render.apply()
        let path = options.template, settings = options.render, json = options.json
        if FileReader.isFolder(path) { return try paints(in: path, json: json, console: console) }
        return CrashGuard.run(file: path, timeout: settings.limits.timeout, console: console) { console in
            console.reportingErrors {
                let source = try IconSource(path: path)
                var report = try Report(source, path: path)
                try report.addLegacyAreas(of: source, path: path)
                if json {
                    console.out(report.json.text(.indented))
                } else {
                    console.out(report.text)
                }
            }
        }
    }

    /// The distinct paint colors of a folder's icons (what a theme maps), with how many icons
    /// use each, most used first; pure Swift (scanning, no rendering). An icon that does not
    /// scan is named on stderr and left out.
    static func paints(in folder: String, json: Bool, console: Console) throws -> Int32 {
        let files = try SpriteBuilder.iconFiles(in: [folder], recursive: true).filter { !$0.path.hasSuffix(".png") }
        var icons: [UInt32: [String]] = [:]
        var failed = 0
        for file in files {
            do {
                let template = try SVGTemplate(bytes: try IconrError.readingTemplate(file.path), file: file.path)
                for rgb in Theme.paints(of: template) { icons[rgb, default: []].append(file.id) }
            } catch {
                console.error("\(error)")
                failed += 1
            }
        }
        let rows = icons.map { rgb, names in
            (
                color: "#" + hexText([UInt8(rgb >> 16), UInt8(rgb >> 8 & 0xFF), UInt8(rgb & 0xFF)]),
                icons: names.sorted()
            )
        }.sorted {
            ($0.icons.count, $1.color) > ($1.icons.count, $0.color)
        }
        if json {
            console.out(
                JSONValue.object([
                    "folder": .string(folder), "icons": .number(Double(files.count - failed)),
                    "paints": .array(
                        rows.map { row -> JSONValue in
                            .object(["color": .string(row.color), "icons": .array(row.icons.map { .string($0) })])
                        }),
                ]).text(.indented))
        } else {
            for row in rows {
                let examples = row.icons.prefix(3).joined(separator: ", ") + (row.icons.count > 3 ? ", ..." : "")
                console.out(
                    "\(row.color)  \(row.icons.count) icon\(row.icons.count == 1 ? "" : "s") (\(examples))"
                        .escapedForMessage)
            }
            console.note(
                "inspect: \(rows.count) paint\(rows.count == 1 ? "" : "s") in \(files.count - failed) icons, the "
                    + "initial black of undeclared paints included (a theme's \"colors\" maps them: iconr sprite --theme)"
            )
        }
        return failed == 0 ? 0 : 1
    }

    struct Report {
        struct Parameter {
            var name: String
            var type = "color"
            var `default`: String
        }

        var file: String
        var name: String
        var width: Double
        var height: Double
        var parameters: [Parameter]
        var stretchX: [[Double]]
        var stretchY: [[Double]]
        var content: [Double]?
        /// Elements that mark areas in spritezero's convention (`mapbox-stretch-x`, ...).
        var elementIDs: [String]
        var warnings: [String]

        init(_ source: IconSource, path: String) throws(IconrError) {
            file = path
            name = source.name
            // librsvg measures in single precision: 14.4 comes back as 14.399999618530273.
            let size = try source.intrinsicSize()
            width = Self.rounded(size.width)
            height = Self.rounded(size.height)
            elementIDs = source.template.legacyAreaIDs
            parameters = source.parameters.map { Parameter(name: $0.name, default: $0.defaultColor.hexString) }
            stretchX = source.template.stretchX.map { [$0.start, $0.end] }
            stretchY = source.template.stretchY.map { [$0.start, $0.end] }
            content = source.template.content.map { [$0.left, $0.top, $0.right, $0.bottom] }
            warnings = source.warnings
        }

        /// A number measured as a 32-bit float, written back with the digits that float has.
        static func rounded(_ value: Double) -> Double {
            Double("\(Float(value))") ?? value
        }

        /// The areas of spritezero's element ids, measured by librsvg, when the template has no
        /// Mapbox metadata (as `iconr sprite` uses them), and their problems as warnings.
        mutating func addLegacyAreas(of template: IconSource, path: String) throws {
            guard stretchX.isEmpty, stretchY.isEmpty, content == nil, !elementIDs.isEmpty else { return }
            let measurement = try Rasterizer.measure(template.template.bytes, elementIDs: elementIDs)
            let areas = LegacyAreas.areas(
                ids: elementIDs, boxes: measurement.elementBoxes.mapValues { ($0.x, $0.y, $0.width, $0.height) })
            stretchX = areas.stretchX.map { [Self.rounded($0.start), Self.rounded($0.end)] }
            stretchY = areas.stretchY.map { [Self.rounded($0.start), Self.rounded($0.end)] }
            content = areas.content.map { [$0.left, $0.top, $0.right, $0.bottom].map(Self.rounded) }
            warnings += areas.problems.map { "\(path): \($0)" }
        }

        /// `--json`: the same facts, keys as in the text.
        var json: JSONValue {
            func numbers(_ values: [Double]) -> JSONValue { .array(values.map { .number($0) }) }
            var object: [String: JSONValue] = [
                "file": .string(file), "name": .string(name), "width": .number(width), "height": .number(height),
                "parameters": .array(
                    parameters.map {
                        .object(["name": .string($0.name), "type": .string($0.type), "default": .string($0.default)])
                    }),
                "stretchX": .array(stretchX.map(numbers)), "stretchY": .array(stretchY.map(numbers)),
                "elementIDs": .array(elementIDs.map { .string($0) }), "warnings": .array(warnings.map { .string($0) }),
            ]
            object["content"] = content.map(numbers)
            return .object(object)
        }

        var text: String {
            func spans(_ areas: [[Double]]) -> String {
                areas.isEmpty ? "none" : areas.map { "[\($0[0].shortText), \($0[1].shortText)]" }.joined(separator: " ")
            }
            var lines = ["\(file)", "  size: \(width.shortText) x \(height.shortText)"]
            if parameters.isEmpty {
                lines.append("  parameters: none")
            } else {
                lines.append("  parameters:")
                let width = parameters.map(\.name.count).max() ?? 0
                for parameter in parameters {
                    let padding = String(repeating: " ", count: width - parameter.name.count)
                    lines.append("    \(parameter.name)\(padding)  \(parameter.type)  default \(parameter.default)")
                }
            }
            lines.append("  stretch x: \(spans(stretchX))")
            lines.append("  stretch y: \(spans(stretchY))")
            lines.append("  content: " + (content.map { "[\($0.map(\.shortText).joined(separator: ", "))]" } ?? "none"))
            if !elementIDs.isEmpty { lines.append("  area elements: " + elementIDs.joined(separator: " ")) }
            lines += warnings.map { "  warning: \($0)" }
            return lines.joined(separator: "\n")
        }
    }
}
