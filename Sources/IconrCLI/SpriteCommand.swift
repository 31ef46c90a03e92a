import Glibc
import Iconr
import IconrCore
import IconrServer
import IconrStyle
import IconrSystem

/// `iconr sprite <icons-dir>... -o <out/prefix> [options]`
enum SpriteCommand: Command {
    static let name = "sprite"
    static let abstract = "Build MapLibre/Mapbox sprite sheets (PNG + JSON per pixel ratio) from folders of icons."
    static let positionalUsage = "<icons-dir[=NAME]>..."
    static let arguments: [(name: String, help: String)] = [
        (
            "<icons-dir[=NAME]>",
            "Folders of .svg, .svgz and .png icons, with their subfolders (ids are file names, folder/name below; "
                + "name@2x.svg is name at 2x). DIR=NAME gives the folder's icons ids NAME/id, as serve's --icons DIR=NAME."
        )
    ]
    static let options: [OptionSpec] =
        [
            OptionSpec(
                names: ["--output", "-o"], valueName: "PREFIX",
                help: "Write PREFIX.png/.json, PREFIX@2x.png/.json, ... (required; a folder: FOLDER/sprite).",
                isRequired: true),
            OptionSpec(
                names: ["--ratio", "-r"], valueName: "R",
                help: "Pixel ratios to build: repeatable or comma-separated, 1,2,3 (default: 1 and 2).",
                isRepeatable: true, values: ["1", "2", "1,2", "1,2,3"]),
            OptionSpec(names: ["--retina"], help: "Build ratio 2 only (as spreet does)."),
            OptionSpec(
                names: ["--json"],
                help:
                    "Print a JSON summary (files, sheets, fill, bytes, timings, warnings; each --theme's under themes) on stdout."
            ),
            OptionSpec(
                names: ["--variants"], valueName: "FILE",
                help:
                    "JSON: {\"icon\": [{\"params\": {\"name\": \"color\"}, \"id\": \"optional-id\"}, ...]}; a variant with an id may "
                    + "recolor the icon itself, as a theme does: {\"id\": \"shield-red\", \"colors\": {\"#000000\": \"#d22\"}}."
            ),
            OptionSpec(
                names: ["--style"], valueName: "FILE",
                help:
                    "Add the icon variants a style's symbol layers show (its features, filters, zooms and literal values); Mapbox v3 parts: see 'iconr style --help'."
            ),
            OptionSpec(
                names: ["--data"], valueName: "FILE",
                help:
                    "GeoJSON for a --style source whose URL ends in this file name; other files (GeoJSON, or one JSON "
                    + "object of properties per line) are samples for sources without data (repeatable).",
                isRepeatable: true),
            OptionSpec(
                names: ["--config"], valueName: "NAME=VALUE",
                help: "Set a --style schema option (Mapbox's config), e.g. --config lightPreset=night (repeatable).",
                isRepeatable: true),
            importOption,
            ThemeOption.spec(
                repeatable: true,
                help:
                    "Also build the sprite in a theme's colors (a JSON file, or grayscale), as <prefix>-<theme> "
                    + "(sprite-dark.json), with --emit-style's copy as <style>-<theme>.json (repeatable)."),
        ] + environmentOptions + [
            OptionSpec(
                names: ["--emit-style"], valueName: "FILE",
                help: "Write a copy of --style that MapLibre renders with the new sprite (parameters prebaked)."),
            OptionSpec(
                names: ["--exact-icon-sizes"],
                help:
                    "Draw --style's variants only at the icon-size their features show, not the largest their layer can "
                    + "reach (smaller sheets; an icon an app enlarges at run time, as on a tap, is then blurred)."),
            OptionSpec(
                names: ["--bake-halos"],
                help:
                    "Bake each layer's icon-halo-color, -width and -blur (literal or from data) into its non-SDF icons, "
                    + "which MapLibre draws without halos; the --emit-style copy names the haloed images."),
            OptionSpec(
                names: ["--strict"],
                help:
                    "Fail (exit 1, nothing written) when --style shows an icon the folders lack (default: a warning each)."
            ),
            OptionSpec(
                names: ["--lenient"],
                help:
                    "Remove what MapLibre would reject from --emit-style's copy, with a warning each (default: an error, "
                    + "and nothing written)."),
            OptionSpec(
                names: ["--merge-sprites"],
                help:
                    "Draw the --style's own sprites (local files) and sprite iconsets into the sheets, one sheet a ratio, "
                    + "for clients that read no sprite array (OpenLayers' ol-mapbox-style); default: an array that keeps them."
            ),
            OptionSpec(
                names: ["--catalog"], valueName: "FILE",
                help:
                    "Write an HTML page of every icon and variant at 1x and 2x (ids, sizes, parameters, SDF tinted, stretch and content areas, a search box), one file, for review."
            ),
            OptionSpec(
                names: ["--preview"], valueName: "FILE",
                help: "Draw --style's point features with their icons into a PNG (its center and zoom)."),
            OptionSpec(
                names: ["--preview-size"], valueName: "WxH",
                help: "The preview's size in logical pixels (default: 300x200)."),
            OptionSpec(
                names: ["--sprite-url"], valueName: "URL",
                help: "The sprite URL in --emit-style's copy (default: file:// and the absolute -o prefix)."),
            OptionSpec(
                names: ["--recursive"],
                help:
                    "Read subfolders too, their icons with ids folder/name: the default, as in inspect, check and serve "
                    + "(spreet's spelling)."),
            OptionSpec(names: ["--no-recursive"], help: "Read each folder's own icons only, not its subfolders."),
            OptionSpec(
                names: ["--padding", "--spacing"], valueName: "N",
                help: "Empty pixels between images at 1x (default: 1; --spacing is spreet's name)."),
            OptionSpec(
                names: ["--max-size"], valueName: "PX",
                help: "The largest sheet side; more sheets past it (default: 4096)."),
            OptionSpec(names: ["--unique"], help: "Store pixel-identical images once."),
            OptionSpec(
                names: ["--minify", "--minify-index-file", "-m"],
                help: "Write the JSON index without white space (-m and --minify-index-file are spreet's names)."),
            OptionSpec(
                names: ["--optimize"],
                help:
                    "Compress the sheets harder: 2-13% smaller (Maki, Temaki: within 1% of zopflipng), 3-5 times the time."
            ),
            OptionSpec(
                names: ["--skip-invalid"],
                help: "Leave out icons that fail (with a warning) instead of failing, unless all do."),
            OptionSpec(
                names: ["--sdf"], valueName: "ID",
                help:
                    "Draw this sprite id as a signed distance field; * and ? match (repeatable). Bare, as spreet's --sdf: every id.",
                isRepeatable: true, bareMeans: "--sdf-all"),
            OptionSpec(names: ["--sdf-all"], help: "Draw every sprite id as a signed distance field."),
            RenderSettings.haloOption,
            OptionSpec(
                names: ["--sdf-radius"], valueName: "PX",
                help:
                    "How far an SDF's alpha ramp reaches, px at 1x (default: 8, as glyphs', so icon-halo-width matches text's)."
            ),
            OptionSpec(
                names: ["--sdf-buffer"], valueName: "PX",
                help:
                    "The border around each SDF image, px at 1x (default: 0.75 x the radius, 6, as far as the field reaches: halos up to 5 px at icon-size 1 are clean)."
            ),
            OptionSpec(
                names: ["--hash-names"],
                help: "Name the files PREFIX.<hash>[@2x].png/json after their content, and print that prefix."),
            OptionSpec(
                names: ["--check"], help: "Write nothing; exit 1 naming each output that a build would change (for CI)."
            ),
            OptionSpec(
                names: ["--sanitize-ids"], help: "Replace ':', '{', '}' and control characters in ids with '_'."),
            OptionSpec(names: ["--timeout"], valueName: "SECONDS", help: "Time limit per render (default: 20)."),
            RenderSettings.fileLimitOption, RenderSettings.quietOption,
        ] + CacheSettings.options

    struct Options: CommandOptions {
        var folders: [String]
        /// `-o` as given: a prefix, or a folder (see `outputPrefix`).
        var output: String
        /// The library's options, but for the variants file's (read when the command runs).
        var sprite = SpriteOptions()
        var variantsFile: String?
        var style: String?
        var dataFiles: [String]
        var config: [String: JSONValue]
        /// `--import ID=FILE`: the file of each Mapbox import's style, by import id.
        var imports: [String: String]
        /// What --style's Mapbox-only camera and light expressions are taken at.
        var environment = MapboxEnvironment()
        var emitStyle: String?
        /// `--catalog`: the HTML page of the built sprite.
        var catalog: String?
        /// `--theme`: the themes to build the sprite in too, as given (read when the command runs).
        var themes: [String] = []
        /// Which icon-size --style's variants are drawn at.
        var iconSizes: IconSizes
        /// Whether the style's own sprites are drawn into the sheets (`--merge-sprites`).
        var mergeSprites: Bool
        /// Whether parts of the emitted style MapLibre would reject are removed, not an error.
        var lenient: Bool
        /// Whether an icon the style shows that the folders lack is an error (`--strict`).
        var strict = false
        /// Whether the style's icon halos are baked into its images (`--bake-halos`).
        var bakeHalos = false
        var spriteURL: String?
        var preview: String?
        var previewSize: PixelSize
        var minify: Bool
        var hashNames: Bool
        var check: Bool
        var json: Bool
        var cache: CacheSettings
        /// `--max-file-size` in bytes, when given.
        var fileLimit: Int?
        var quiet: Bool

        init(_ arguments: ScannedArguments) throws(UsageError) {
            fileLimit = try RenderSettings.fileLimit(arguments)
            quiet = arguments.has("--quiet")
            folders = arguments.positionals
            var output = arguments.value("--output")
            // spreet's form, `sprite icons out/sprite`: a last argument that is no folder is the output.
            if output == nil, folders.count >= 2, let last = folders.last, !FileReader.isFolder(last) {
                output = folders.removeLast()
            }
            guard !folders.isEmpty else { throw UsageError(message: "missing <icons-dir>") }
            // `DIR=NAME`, as serve's --icons: the folder's icons get ids NAME/id. A folder
            // whose own name has `=` is taken as it is.
            var names: [String: String] = [:]
            for (index, value) in folders.enumerated() where !FileReader.isFolder(value) {
                guard let equals = value.lastIndex(of: "="), equals != value.startIndex else { continue }
                let name = String(value[value.index(after: equals)...])
                guard ServeCommand.isPlainName(name) else {
                    throw UsageError(
                        message:
                            "invalid folder name '\(name)' in '\(value)': use letters, digits, '-', '_' or '.' (as serve's --icons)"
                    )
                }
                folders[index] = String(value[..<equals])
                guard !names.values.contains(name) else {
                    throw UsageError(message: "two folders are named '\(name)'")
                }
                names[folders[index]] = name
            }
            guard var output else { throw UsageError(message: "missing -o <out/prefix>") }
            let ratios = try arguments.all("--ratio").flatMap {
                $0.split(separator: ",", omittingEmptySubsequences: false)
            }
            .map { text throws(UsageError) -> Double in
                guard let ratio = RenderCommand.parseScale(String(text)) else {
                    throw UsageError(
                        message: "invalid value '\(text)' for --ratio: expected \(RenderCommand.scaleExpected)")
                }
                return ratio
            }
            if !ratios.isEmpty { sprite.ratios = Array(Set(ratios)).sorted() }
            if arguments.has("--retina") {
                guard ratios.isEmpty else { throw UsageError(message: "--retina and --ratio cannot go together") }
                sprite.ratios = [2]
            }
            // spreet users write `--retina -o sprite@2x`: iconr adds each ratio's suffix itself.
            if let at = output.lastIndex(of: "@"), output.hasSuffix("x"),
                let ratio = RenderCommand.parseScale(String(output[output.index(after: at)...])),
                !output[..<at].hasSuffix("/"), at != output.startIndex
            {
                let base = String(output[..<at])
                guard sprite.ratios == [ratio] else {
                    throw UsageError(
                        message: "-o \(output) ends in @\(output[output.index(after: at)...]), which iconr adds to "
                            + "each ratio's files itself: give -o \(base)")
                }
                output = base
            }
            self.output = output
            sprite.folderNames = names
            if arguments.has("--recursive"), arguments.has("--no-recursive") {
                throw UsageError(message: "--recursive and --no-recursive contradict each other")
            }
            sprite.recursive = !arguments.has("--no-recursive")
            sprite.unique = arguments.has("--unique")
            sprite.skipInvalid = arguments.has("--skip-invalid")
            sprite.sanitizeIDs = arguments.has("--sanitize-ids")
            sprite.optimize = arguments.has("--optimize")
            sprite.sdf = Set(arguments.all("--sdf") + (arguments.has("--sdf-all") ? ["*"] : []))
            sprite.halo = try RenderSettings.halo(arguments)
            sprite.sdfField.radius =
                try arguments.value(
                    "--sdf-radius", as: { Double($0).flatMap { $0 > 0 && $0 <= 64 ? $0 : nil } },
                    expected: "a number of pixels above 0, at most 64") ?? 8
            sprite.sdfField.buffer = try arguments.value(
                "--sdf-buffer", as: { Double($0).flatMap { $0 >= 0 && $0 <= 64 ? $0 : nil } },
                expected: "a number of pixels from 0 to 64")
            sprite.padding =
                try arguments.value(
                    "--padding", as: { Int($0).flatMap { $0 >= 0 ? $0 : nil } }, expected: "a whole number >= 0") ?? 1
            sprite.maxSize =
                try arguments.value(
                    "--max-size", as: { Int($0).flatMap { (1...32767).contains($0) ? $0 : nil } },
                    expected: "a whole number from 1 to 32767") ?? 4096
            if let timeout = try arguments.value(
                "--timeout", as: { Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } },
                expected: "a number of seconds > 0")
            {
                sprite.limits.timeout = timeout
            }
            variantsFile = arguments.value("--variants")
            for option in [
                "--emit-style", "--preview", "--data", "--config", "--import", "--light", "--worldview", "--lenient",
                "--strict",
                "--exact-icon-sizes", "--merge-sprites",
            ]
            where arguments.has(option) && !arguments.has("--style") {
                throw UsageError(message: "\(option) needs --style")
            }
            previewSize =
                try arguments.value(
                    "--preview-size", as: RenderSettings.parseSize, expected: "WxH, whole numbers from 1 to 32767")
                ?? PixelSize(width: 300, height: 200)
            style = arguments.value("--style")
            dataFiles = arguments.all("--data")
            config = try parseConfig(arguments.all("--config"))
            imports = try parseImports(arguments.all("--import"))
            themes = arguments.all("--theme")
            environment = try SpriteCommand.environment(arguments)
            emitStyle = arguments.value("--emit-style")
            lenient = arguments.has("--lenient")
            strict = arguments.has("--strict")
            bakeHalos = arguments.has("--bake-halos")
            if bakeHalos && emitStyle == nil {
                throw UsageError(message: "--bake-halos needs --emit-style: the style copy names the haloed images")
            }
            mergeSprites = arguments.has("--merge-sprites")
            iconSizes = arguments.has("--exact-icon-sizes") ? .featuresSeen : .layerLargest
            spriteURL = arguments.value("--sprite-url")
            preview = arguments.value("--preview")
            catalog = arguments.value("--catalog")
            minify = arguments.has("--minify")
            hashNames = arguments.has("--hash-names")
            check = arguments.has("--check")
            json = arguments.has("--json")
            cache = try CacheSettings(arguments)
        }
    }

    static func run(_ parsed: Options, console: Console) throws -> Int32 {
        var console = console
        console.quiet = parsed.quiet
        RenderSettings.apply(fileLimit: parsed.fileLimit)
        let job = try job(parsed)
        // Every output is named and checked before anything is built or written.
        let flavors: [SpriteJob.Flavor]
        do {
            flavors = try job.plan()
        } catch {
            throw UsageError(message: error.description)
        }
        job.style?.warnings.forEach { console.warning($0) }
        // A set of outputs that a killed run left half renamed is finished (and the temporary
        // files it left removed) before anything else, even when this run writes nothing.
        let outputFolder = parsed.check ? nil : AtomicFile.folder(of: outputPrefix(parsed.output))
        if let outputFolder { AtomicFile.recoverInterruptedWrites(in: outputFolder) }
        if parsed.strict, let style = job.style, !style.missingIcons.isEmpty {
            throw BuildFailure(
                description: "--strict: the style shows \(style.missingIcons.count) icon"
                    + "\(style.missingIcons.count == 1 ? "" : "s") the folders lack (\(style.missingIcons.joined(separator: ", "))), "
                    + "nothing written")
        }

        // Everything above is pure Swift; librsvg runs in a supervised child from here on.
        let work = { (recovery: SpriteBuildRecovery, console: Console) -> Int32 in
            console.checkingStdout(
                console.reportingErrors {
                    try build(job, flavors, parsed, recovery: recovery, console: console)
                })
        }
        // The command line run in process by its tests builds here, unsupervised.
        if console.isRecording { return work(SpriteBuildRecovery(), console) }
        let status = Supervisor.runBuild(timeout: job.options.limits.timeout, console: console, work: work)
        // The build's process killed among its renames: they are finished here, before the
        // command ends, so that it leaves one build's files, whole.
        if status != 0, let outputFolder { AtomicFile.recoverInterruptedWrites(in: outputFolder) }
        return status
    }

    /// The library's job for these options: the variants file, the style and the themes read.
    private static func job(_ parsed: Options) throws -> SpriteJob {
        var options = parsed.sprite
        if let file = parsed.variantsFile { options.variants = try readVariants(file) }
        var style = try parsed.style.map { path in
            try StyleVariants(
                stylePath: path, dataPaths: parsed.dataFiles, config: parsed.config, imports: parsed.imports,
                directories: parsed.folders, recursive: options.recursive, environment: parsed.environment,
                sizes: parsed.iconSizes, folderNames: options.folderNames)
        }
        if parsed.bakeHalos { style?.bakeHalos(sdf: Set(options.sdf)) }
        if let style { style.add(to: &options) }
        var outputs = SpriteOutputs(prefix: outputPrefix(parsed.output))
        outputs.emitStyle = parsed.emitStyle
        outputs.catalog = parsed.catalog
        outputs.preview = parsed.preview
        outputs.previewSize = parsed.previewSize
        outputs.spriteURL = parsed.spriteURL
        outputs.minify = parsed.minify
        outputs.hashNames = parsed.hashNames
        outputs.lenient = parsed.lenient
        outputs.mergeSprites = parsed.mergeSprites
        let inputs =
            [parsed.style, parsed.variantsFile].compactMap { $0 } + parsed.dataFiles + Array(parsed.imports.values)
            + parsed.themes.filter { Theme.builtIn($0) == nil }
        return SpriteJob(
            folders: parsed.folders, options: options, style: style, stylePath: parsed.style,
            themes: try ThemeOption.read(parsed.themes), outputs: outputs, inputFiles: inputs)
    }

    /// Builds every flavor of `job` in process, then checks or writes them together.
    private static func build(
        _ job: SpriteJob, _ flavors: [SpriteJob.Flavor], _ parsed: Options, recovery: SpriteBuildRecovery,
        console: Console
    ) throws {
        let started = ContinuousClock.now
        let options = job.options
        // One cache pack shared by every sprite build: entries are keyed by variant and scale
        // alone, so another folder, a moved one or an added ratio finds what was rendered.
        // No memory cache: a build asks for each image once, and the images are kept anyway.
        let cache = IconCache(memoryLimit: 0, disk: parsed.cache.diskCache(batch: "sprites", console: console))
        // A bar a flavor, labelled with its theme.
        let bar = Locked<(theme: String?, bar: ProgressBar)?>(nil)
        let product: SpriteProduct
        do {
            product = try job.build(flavors, cache: cache, recovery: recovery) { theme, done, total in
                let current = bar.withLock { current -> ProgressBar in
                    if let current, current.theme == theme?.name { return current.bar }
                    current?.bar.finish()
                    let made = ProgressBar(
                        label: "rendering" + (theme.map { " (theme \($0.name))" } ?? ""), console: console)
                    current = (theme?.name, made)
                    return made
                }
                current.update(done, of: total)
            }
        } catch let error as SpriteBuildError {
            // Invalid icons: one line each, then the summary as the command's error.
            bar.withLock { $0?.bar.finish() }
            if case .invalidIcons(let failures) = error {
                failures.forEach { console.error($0.description) }
                // With --skip-invalid, every icon failed.
                if options.skipInvalid {
                    throw BuildFailure(
                        description: "every icon failed (\(failures.count)), so there is nothing to build")
                }
            }
            // Folders whose icons are all in subfolders (openstreetmap-carto's): say how to read them.
            if case .noIcons = error, !options.recursive, let nested = iconsInSubfolders(job.folders), nested > 0 {
                throw BuildFailure(
                    description:
                        "\(error) (without --no-recursive, the \(nested) icon\(nested == 1 ? "" : "s") in subfolders are read)"
                )
            }
            throw error
        }
        bar.withLock { $0?.bar.finish() }
        guard let plain = product.flavors.first else { return }
        var warnings = product.warnings
        // Far more icons below the top than at it (36 of openstreetmap-carto's 994): say so.
        if !options.recursive, let nested = iconsInSubfolders(job.folders), nested > plain.build.icons {
            warnings.append(
                "\(plain.build.icons) icon\(plain.build.icons == 1 ? "" : "s") read, and \(nested) more in subfolders: "
                    + "without --no-recursive they are read"
            )
        }
        warnings.forEach { console.warning($0) }

        let files = product.files
        if parsed.check {
            let changed =
                files.filter { file in (try? FileReader.read(file.path)) != file.bytes }.map(\.path)
                + product.flavors.flatMap(\.stale)
            for path in changed { console.error("\(path) would change") }
            guard changed.isEmpty else { throw CheckFailure(count: changed.count) }
            console.note("sprite: \(files.count) files up to date")
            return
        }
        // A build whose command was killed must not write: its user has moved on.
        guard Supervisor.parentIsAlive else { return }
        for flavor in product.flavors {
            guard let slash = flavor.prefix.lastIndex(of: "/"), slash != flavor.prefix.startIndex else { continue }
            let folder = String(flavor.prefix[..<slash])
            do {
                try FileReader.makeFolder(folder)
            } catch {
                throw IconrError.folder(path: folder, problem: .cannotCreate(purpose: "the folder", error))
            }
        }
        try product.write()
        let elapsed = seconds(ContinuousClock.now - started)
        let headroom = job.style.map { $0.headroomCost(in: plain.build) }
        if parsed.json {
            console.out(jsonSummary(product, seconds: elapsed, warnings: warnings, headroom: headroom))
            return
        }
        // Results (the files) on stdout; what a person reads on stderr.
        files.forEach { console.written($0.path) }
        // The prefix a style's "sprite" names, last, for scripts.
        if parsed.hashNames { product.flavors.forEach { console.out($0.prefix) } }
        for flavor in product.flavors {
            let build = flavor.build
            let of = flavor.theme.map { " (theme \($0.name))" } ?? ""
            if build.sheetCount > 1 {
                let fix =
                    oneSheetSide(build, padding: options.padding).map { " (--max-size \($0) puts them on one)" } ?? ""
                console.note(
                    "The icons\(of) need \(build.sheetCount) sheets\(fix); in the style (ids in sheet N are "
                        + "prefixed \"<id>:\"):")
                console.note("\"sprite\": " + flavor.spriteValue.serialized)
            }
            console.note(summary(build, theme: flavor.theme, ratios: options.ratios.count, seconds: elapsed))
        }
        if let headroom, headroom.variants > 0 {
            let share = percent(Double(headroom.extraPixels) / Double(max(1, headroom.imagePixels)))
            console.note(
                "sprite: \(headroom.variants) style variant\(headroom.variants == 1 ? "" : "s") drawn at the largest "
                    + "icon-size their layer can reach, larger than their features show: \(headroom.extraPixels) more "
                    + "pixels at the largest ratio (\(share) of the images; --exact-icon-sizes leaves them out)")
        }
    }

    /// How many icons the subfolders of `folders` hold (what `--no-recursive` leaves out); nil
    /// when none has a subfolder, so that a flat folder costs no second listing. Each
    /// subfolder is listed on its own: the same name in two of them is no duplicate here.
    private static func iconsInSubfolders(_ folders: [String]) -> Int? {
        let subfolders = folders.flatMap { folder in
            FileReader.listing(of: folder, folders: true, wanted: { _ in false }).filter(\.isFolder).map {
                folder + "/" + $0.name
            }
        }
        guard !subfolders.isEmpty else { return nil }
        return subfolders.reduce(0) { $0 + ((try? SpriteBuilder.iconFiles(in: [$1], recursive: true).count) ?? 0) }
    }

    /// The smallest `--max-size` (up to 32767) at which the packer puts `build`'s images on
    /// one sheet at its largest ratio; nil when none does.
    private static func oneSheetSide(_ build: SpriteBuild, padding: Int) -> Int? {
        guard let ratio = build.sheets.map(\.ratio).max() else { return nil }
        let sizes = build.sheets.filter { $0.ratio == ratio }.flatMap { sheet in
            sheet.entries.sorted { $0.key < $1.key }.map {
                PixelSize(width: $0.value.rect.width, height: $0.value.rect.height)
            }
        }
        let padded = Int((Double(padding) * ratio).rounded(.up))
        let area = sizes.reduce(0) { $0 + ($1.width + padded) * ($1.height + padded) }
        var side = max(sizes.map { max($0.width, $0.height) }.max() ?? 1, Int(Double(area).squareRoot()))
        while side <= 32767 {
            if SpritePacker.split(sizes, padding: padded, maxSide: side).groups.count == 1 { return side }
            side += max(1, side / 50)
        }
        return nil
    }

    /// The one-line summary: icons, variants, sheets, fill, bytes, time (the whole job's), and the theme.
    private static func summary(_ build: SpriteBuild, theme: Theme?, ratios: Int, seconds: Double) -> String {
        let largest = build.sheets.filter { $0.ratio == build.sheets.map(\.ratio).max() }
        let area = Double(max(1, largest.reduce(0) { $0 + $1.size.width * $1.size.height }))
        let fill = largest.reduce(0.0) { $0 + $1.fill * Double($1.size.width * $1.size.height) } / area
        let packing = largest.reduce(0.0) { $0 + $1.packing * Double($1.size.width * $1.size.height) } / area
        let bytes = build.sheets.reduce(0) { $0 + $1.png.count }
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        func rounded(_ value: Double) -> String { String((value * 100).rounded() / 100) }
        return
            "sprite\(theme.map { " (theme \($0.name))" } ?? ""): \(count(build.icons, "icon")), \(count(build.variants, "variant")), \(build.sheetCount) sheet"
            + "\(build.sheetCount == 1 ? "" : "s") x \(count(ratios, "ratio")), "
            + "fill \(percent(fill)) (\(percent(packing)) with padding), \(bytes) PNG bytes, \(build.renders) rendered, "
            + "\(build.cacheHits) from cache, \(rounded(seconds)) s (render \(rounded(build.renderSeconds)) s, "
            + "pack and encode \(rounded(build.composeSeconds)) s)"
            + (build.skipped.isEmpty ? "" : ", \(build.skipped.count) skipped")
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The options that set what a style's Mapbox-only camera and light expressions read.
    static let environmentOptions = [
        OptionSpec(
            names: ["--light"], valueName: "PRESET",
            help:
                "The light Mapbox's measure-light reads in the style: day, dawn, dusk, night (brightness 0.8, 0.5, "
                + "0.35, 0.1) or a brightness from 0 to 1 (default: day).",
            values: ["day", "dawn", "dusk", "night"]),
        OptionSpec(
            names: ["--worldview"], valueName: "CODE",
            help: "The worldview Mapbox's [\"worldview\"] gives in the style (default: US)."),
    ]

    /// `--light` and `--worldview` as the environment they set.
    static func environment(_ arguments: ScannedArguments) throws(UsageError) -> MapboxEnvironment {
        var environment = MapboxEnvironment()
        if let light = try arguments.value(
            "--light",
            as: { LightPreset(rawValue: $0)?.brightness ?? Double($0).flatMap { (0...1).contains($0) ? $0 : nil } },
            expected: "day, dawn, dusk, night or a brightness from 0 to 1")
        {
            environment.lightBrightness = light
        }
        if let worldview = arguments.value("--worldview") { environment.worldview = worldview }
        return environment
    }

    /// `--import ID=FILE`: the style of a Mapbox import, for a style whose layers come from one.
    static let importOption = OptionSpec(
        names: ["--import"], valueName: "ID=FILE",
        help: "The style that the Mapbox import ID names (its URL iconr cannot read), written in (repeatable).",
        isRepeatable: true)

    /// `--import ID=FILE` options: the file of each import id.
    static func parseImports(_ options: [String]) throws(UsageError) -> [String: String] {
        var imports: [String: String] = [:]
        for option in options {
            guard let equals = option.firstIndex(of: "="), equals != option.startIndex,
                option.index(after: equals) != option.endIndex
            else {
                throw UsageError(message: "--import expects ID=FILE, found '\(option)'")
            }
            imports[String(option[..<equals])] = String(option[option.index(after: equals)...])
        }
        return imports
    }

    /// `--config NAME=VALUE` options: a JSON value (true, 2, "x", [..]) as it is, anything else a string.
    static func parseConfig(_ options: [String]) throws(UsageError) -> [String: JSONValue] {
        var overrides: [String: JSONValue] = [:]
        for option in options {
            guard let equals = option.firstIndex(of: "="), equals != option.startIndex else {
                throw UsageError(message: "--config expects NAME=VALUE, found '\(option)'")
            }
            let text = String(option[option.index(after: equals)...])
            overrides[String(option[..<equals])] = (try? JSONValue.parse(Array(text.utf8))) ?? .string(text)
        }
        return overrides
    }

    /// The variants file: `{"flag": [{"params": {"flag_color": "red"}}, {"id": "x", "params": {...}}]}`.
    private static func readVariants(_ path: String) throws -> [String: [SpriteVariant]] {
        let malformed = IconrError.variants(path: path, problem: .malformed)
        // A file that cannot be read says why (`no such file`), not that it is no variants file.
        let bytes = try IconrError.reading(path)
        guard let icons = (try? JSONValue.parse(bytes))?.objectValue else { throw malformed }
        // Colors are parsed here, once: a bad one names this file and the icon.
        var variants: [String: [SpriteVariant]] = [:]
        for (icon, list) in icons.sorted(by: { $0.key < $1.key }) {
            guard let list = list.arrayValue else { throw malformed }
            variants[icon] = []
            for entry in list {
                guard let object = entry.objectValue,
                    object["id"].map({ $0 == .null || $0.stringValue != nil }) ?? true
                else { throw malformed }
                // A recoloring of the variant's own: every member but id, params (and icon, the
                // key's name again), as a theme's.
                let recoloring = object.filter { !["id", "params", "icon"].contains($0.key) }
                var recolor: Theme?
                if !recoloring.isEmpty {
                    guard let id = object["id"]?.stringValue else {
                        throw BuildFailure(
                            description: "\(path): icon \"\(icon)\": a variant with colors of its own needs an \"id\"")
                    }
                    do {
                        recolor = try Theme(
                            json: Array(JSONValue.object(recoloring).serialized.utf8), fallbackName: "v")
                    } catch {
                        throw BuildFailure(
                            description: "\(path): icon \"\(icon)\", variant \"\(id)\": \(error.message)")
                    }
                }
                guard let paramsObject = object["params"]?.objectValue ?? (recolor == nil ? nil : [:]) else {
                    throw malformed
                }
                var texts: [String: String] = [:]
                for (name, value) in paramsObject {
                    guard let text = value.stringValue else { throw malformed }
                    texts[name] = text
                }
                let params = Result { () throws(ParameterError) -> IconParameters in
                    try IconParameters(parsing: texts)
                }
                switch params {
                case .success(let params):
                    var variant = SpriteVariant(id: object["id"]?.stringValue, params: params)
                    variant.recolor = recolor
                    variants[icon, default: []].append(variant)
                case .failure(let error): throw IconrError.variants(path: path, problem: .parameter(icon: icon, error))
                }
            }
        }
        return variants
    }

    /// A build's error said in the command line's terms (its options).
    struct BuildFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// `--check` found outputs that would change (each already named on its own line).
    struct CheckFailure: Error, CustomStringConvertible {
        var count: Int
        var description: String { "\(count) output\(count == 1 ? "" : "s") not up to date (--check)" }
    }

    /// `--json`: what the build wrote and measured, for scripts: the plain sprite's figures,
    /// and each theme's under `themes` (its name, files, sheets and `sprite` value).
    private static func jsonSummary(
        _ product: SpriteProduct, seconds: Double, warnings: [String],
        headroom: (variants: Int, extraPixels: Int, imagePixels: Int)?
    ) -> String {
        guard case .object(var summary)? = product.flavors.first.map(flavorSummary) else { return "{}" }
        summary["seconds"] = .number(seconds)
        summary["warnings"] = .array(warnings.map { .string($0) })
        if let headroom {
            summary["iconSizeHeadroom"] = .object([
                "variants": .number(Double(headroom.variants)), "extraPixels": .number(Double(headroom.extraPixels)),
                "imagePixels": .number(Double(headroom.imagePixels)),
            ])
        }
        let themes = product.flavors.dropFirst()
        if !themes.isEmpty {
            summary["themes"] = .array(
                themes.map { flavor in
                    guard case .object(var fields) = flavorSummary(flavor) else { return .null }
                    fields["theme"] = .string(flavor.theme?.name ?? "")
                    return .object(fields)
                })
        }
        return JSONValue.object(summary).text(.indented)
    }

    /// One flavor's part of `--json`: its files, sheets, counts and `sprite` value.
    private static func flavorSummary(_ flavor: SpriteProduct.Flavor) -> JSONValue {
        let build = flavor.build
        func strings(_ values: [String]) -> JSONValue { .array(values.map { .string($0) }) }
        let sheets = build.sheets.map { sheet -> JSONValue in
            let base = SpriteBuild.sheetBase(flavor.prefix, sheet: sheet.sheet, ratio: sheet.ratio)
            let numbers: [String: Double] = [
                "ratio": sheet.ratio, "sheet": Double(sheet.sheet + 1), "width": Double(sheet.size.width),
                "height": Double(sheet.size.height), "ids": Double(sheet.ids), "images": Double(sheet.images),
                "fill": sheet.fill, "packing": sheet.packing, "bytes": Double(sheet.png.count),
            ]
            return .object(
                numbers.mapValues { .number($0) }.merging([
                    "png": .string(base + ".png"), "json": .string(base + ".json"),
                ]) {
                    $1
                })
        }
        let numbers: [String: Double] = [
            "sheetCount": Double(build.sheetCount), "icons": Double(build.icons), "variants": Double(build.variants),
            "rendered": Double(build.renders), "fromCache": Double(build.cacheHits),
            "renderSeconds": build.renderSeconds, "composeSeconds": build.composeSeconds,
            "filesRead": Double(build.filesRead), "iconsReused": Double(build.iconsReused),
        ]
        let others: [String: JSONValue] = [
            "files": strings(flavor.files.map(\.path)), "sheets": .array(sheets),
            "skipped": strings(build.skipped.map(\.path)), "sheetsFromCache": .bool(build.sheetsFromCache),
            "inputsUnchanged": .bool(build.inputsUnchanged), "sprite": flavor.spriteValue,
        ]
        return .object(numbers.mapValues { .number($0) }.merging(others) { $1 })
    }

    /// `-o out/` or an existing folder: `out/sprite`; anything else is the prefix itself.
    static func outputPrefix(_ value: String) -> String {
        if value.hasSuffix("/") { return value + "sprite" }
        if FileReader.isFolder(value) { return value + "/sprite" }
        return value
    }

    private static func percent(_ fraction: Double) -> String {
        String((fraction * 1000).rounded() / 10) + "%"
    }
}
