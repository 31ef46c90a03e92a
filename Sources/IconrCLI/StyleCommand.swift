import Iconr
import IconrCore
import IconrStyle

/// `iconr style check <style.json>`: what `sprite --emit-style` would resolve, remove or
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
        """
    static let positionalUsage = "check <style.json>"
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
            OptionSpec(names: ["--json"], help: "Print {\"changes\": [...], \"problems\": [...]} on stdout."),
        ] + SpriteCommand.environmentOptions

    struct Options: CommandOptions {
        var style: String
        var config: [String: JSONValue]
        var imports: [String: String]
        var environment: MapboxEnvironment
        var json: Bool

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
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        let style = try StyleDocument(
            bytes: IconrError.reading(options.style), file: options.style, config: options.config,
            environment: options.environment, imports: StyleVariants.reading(imports: options.imports))
        let emitted = style.emitted(sprite: .string("sprite"), templates: [:], needed: [])
        let changes = style.warnings + emitted.warnings
        let problems = emitted.problems.map { "\(options.style): \($0)" }
        if options.json {
            let strings = { (lines: [String]) in JSONValue.array(lines.map { .string($0) }) }
            console.out(JSONValue.object(["changes": strings(changes), "problems": strings(problems)]).text(.indented))
        } else {
            changes.forEach { console.out($0.escapedForMessage) }
            problems.forEach { console.error($0) }
            console.note(
                "style: \(changes.count) change\(changes.count == 1 ? "" : "s") for MapLibre, "
                    + "\(problems.count) part\(problems.count == 1 ? "" : "s") MapLibre would reject")
        }
        return problems.isEmpty ? 0 : 1
    }
}
