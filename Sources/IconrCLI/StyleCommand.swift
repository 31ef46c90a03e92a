import Iconr
import IconrCore
import IconrStyle
import IconrSystem

/// `iconr style check <style.json> [--icons DIR]... [--strict]`: what `sprite --emit-style` would resolve, remove or
/// refuse in a style, without building anything.
enum StyleCommand: Command {
    static let name = "style"
    static let abstract =
        "Report what a style's copy for MapLibre would resolve, remove or refuse (Mapbox v3 styles), without building."
    static let discussion = """
        Mapbox GL JS v3 styles become MapLibre styles (sprite --emit-style and serve do the same):
          Evaluated: every expression, image params, config, hsl, hsla, to-hsla, and filters
            that read ["zoom"] anywhere (kept as written: MapLibre evaluates them too).
          Resolved at build time, a warning each: config (--config, else the schema default),
            measure-light (--light), pitch (the style's), distance-from-center (0), worldview
            (--worldview), sky-radial-progress, raster-value and raster-particle-speed (0),
            unitless hsl() strings, to-hsla components from data (from to-rgba), and coalesce
            over images from data (by the sheet's names).
          Written in: imports (--import ID=FILE, or the import's inline data; one not given is
            named by its URL), ref layers, appearances (case and step on their conditions),
            sprite iconsets (sprite entries), a sprite array of the style's own (kept).
          Dropped, a warning each: schema, source iconsets, featuresets, fog, lights, camera,
            models, color-theme, indoor, snow, rain, slot, Mapbox-only layer types and
            properties, image's second image.
          Checked: the whole copy as MapLibre GL JS validates a style (version, sources by
            type, sprite, glyphs, light, sky, terrain, projection, layer ids, types and
            sources, properties, value types, expressions), each problem by its JSON path;
            what fails is an error unless --lenient removes it (a property, a layer, a root
            key; never what the document needs).
          With --icons: each icon the style shows that the folders lack, once, with "did you
            mean" (a size suffix like -15 ignored); a warning, an error with --strict.
        """
    static let positionalUsage = "check <style.json>"
    static let positionalWords = ["check"]
    static let arguments: [(name: String, help: String)] = [
        ("check <style.json>", "The style to read; exit 1 when MapLibre would not load its copy.")
    ]
    static let options: [OptionSpec] =
        [
            OptionSpec(
                names: ["--config"], valueName: "NAME=VALUE",
                help: "Set a schema option (Mapbox's config), as sprite --config does (repeatable).",
                isRepeatable: true),
            SpriteCommand.importOption,
            OptionSpec(
                names: ["--icons"], valueName: "DIR",
                help: "Check that the folder (with its subfolders) holds every icon the style shows (repeatable).",
                isRepeatable: true),
            OptionSpec(
                names: ["--strict"], help: "With --icons, an icon the folders lack is an error (exit 1), not a warning."
            ),
            OptionSpec(
                names: ["--json"],
                help: "Print {\"changes\": [...], \"problems\": [...], \"missingIcons\": [...]} on stdout."),
        ] + SpriteCommand.environmentOptions

    struct Options: CommandOptions {
        var style: String
        var config: [String: JSONValue]
        var imports: [String: String]
        var environment: MapboxEnvironment
        var json: Bool
        var icons: [String]
        var strict: Bool

        init(_ arguments: ScannedArguments) throws(UsageError) {
            guard arguments.positionals.first == "check" else {
                // `iconr style style.json` is the likely slip: show the command it meant.
                let positionals = arguments.positionals
                let hint =
                    positionals.count == 1
                    ? " (did you mean 'iconr style check \(positionals[0])'?)"
                    : didYouMean(positionals.first ?? "", among: ["check"])
                throw UsageError(message: "expected 'check <style.json>'" + hint)
            }
            guard arguments.positionals.count == 2 else { throw UsageError(message: "expected one <style.json>") }
            style = arguments.positionals[1]
            config = try SpriteCommand.parseConfig(arguments.all("--config"))
            imports = try SpriteCommand.parseImports(arguments.all("--import"))
            environment = try SpriteCommand.environment(arguments)
            json = arguments.has("--json")
            icons = arguments.all("--icons")
            strict = arguments.has("--strict")
            if strict && icons.isEmpty {
                throw UsageError(message: "--strict needs --icons: the folders the style's icons must be in")
            }
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        let style = try StyleDocument(
            bytes: IconrError.reading(options.style), file: options.style, config: options.config,
            environment: options.environment, imports: StyleVariants.reading(imports: options.imports))
        let emitted = style.emitted(sprite: .string("sprite"), templates: [:], needed: [])
        let changes = style.warnings + emitted.warnings
        let problems = emitted.problems.map { "\(options.style): \($0)" }
        let missing = try missingIcons(options)
        if options.json {
            let strings = { (lines: [String]) in JSONValue.array(lines.map { .string($0) }) }
            var fields = ["changes": strings(changes), "problems": strings(problems)]
            if !options.icons.isEmpty { fields["missingIcons"] = strings(missing) }
            console.out(JSONValue.object(fields).text(.indented))
        } else {
            changes.forEach { console.out($0.escapedForMessage) }
            problems.forEach { console.error($0) }
            missing.forEach { options.strict ? console.error($0) : console.warning($0) }
            console.note(
                "style: \(changes.count) change\(changes.count == 1 ? "" : "s") for MapLibre, "
                    + "\(problems.count) part\(problems.count == 1 ? "" : "s") MapLibre would reject"
                    + (options.icons.isEmpty
                        ? "" : ", \(missing.count) icon\(missing.count == 1 ? "" : "s") the folders lack"))
        }
        return problems.isEmpty && (missing.isEmpty || !options.strict) ? 0 : 1
    }

    /// One line per icon the style shows that the `--icons` folders lack, with "did you mean".
    private static func missingIcons(_ options: Options) throws -> [String] {
        guard !options.icons.isEmpty else { return [] }
        for folder in options.icons where !FileReader.isFolder(folder) { throw IconrError.notAFolder(folder) }
        let variants = try StyleVariants(
            stylePath: options.style, dataPaths: [], config: options.config, imports: options.imports,
            directories: options.icons, recursive: true, environment: options.environment)
        return variants.missingIcons.map {
            "\(options.style): the style shows icon \"\($0)\", which the folders lack"
                + StyleVariants.suggestion(for: $0, among: variants.icons)
        }
    }
}
