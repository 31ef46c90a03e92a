import Glibc
import IconrCore
import IconrRender
import IconrSystem

/// Where a sprite build's files go: the sheets' prefix and the documents made with them.
package struct SpriteOutputs: Sendable {
    /// The sheets' prefix: `out/sprite` writes `out/sprite.png`, `out/sprite@2x.json`, ...
    package var prefix: String
    /// The style's copy for MapLibre (`--emit-style`).
    package var emitStyle: String?
    /// The HTML catalog of the built icons (`--catalog`).
    package var catalog: String?
    /// A picture of the style's point features (`--preview`), of the plain build only.
    package var preview: String?
    /// The preview's size in logical pixels.
    package var previewSize = PixelSize(width: 300, height: 200)
    /// The sprite URL the emitted style names; nil for `file://` and the absolute prefix.
    package var spriteURL: String?
    /// Indexes without white space.
    package var minify = false
    /// Sheets named after their content (`sprite.<hash>.png`), never replaced or removed.
    package var hashNames = false
    /// Parts of the emitted style MapLibre would reject removed (a warning each), not an error.
    package var lenient = false
    /// The style's own sprites drawn into the sheets.
    package var mergeSprites = false

    /// Outputs under `prefix`, nothing else.
    package init(prefix: String) {
        self.prefix = prefix
    }

    /// The outputs of `theme`'s flavor, by the one naming rule: `-<theme>` at the end of the
    /// prefix and of the sprite URL (before its query), before the extension of a document
    /// (`style.json` -> `style-dark.json`). A theme draws no preview of its own.
    package func named(for theme: Theme?) -> SpriteOutputs {
        guard let theme else { return self }
        var themed = self
        let suffix = "-" + theme.name
        themed.prefix = prefix + suffix
        themed.emitStyle = emitStyle.map { Self.beforeExtension($0, suffix) }
        themed.catalog = catalog.map { Self.beforeExtension($0, suffix) }
        themed.preview = nil
        themed.spriteURL = spriteURL.map { url in
            let end = url.firstIndex { $0 == "?" || $0 == "#" } ?? url.endIndex
            return url[..<end] + suffix + url[end...]
        }
        return themed
    }

    /// `path` with `suffix` before its file's extension, or at its end.
    static func beforeExtension(_ path: String, _ suffix: String) -> String {
        let slash = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        guard let dot = path[slash...].lastIndex(of: "."), dot != slash else { return path + suffix }
        return path[..<dot] + suffix + path[dot...]
    }

    /// The ids' stem of later sheets (`sprite` for `sprite-2`), the same in every flavor:
    /// the last part of the unthemed, unhashed prefix.
    var sheetName: String { prefix.split(separator: "/").last.map(String.init) ?? prefix }
}

/// An output plan that cannot be written: two outputs with one name, an output that is an
/// input, an output in an icon folder, a theme named like a sheet. Found before anything is
/// built or written.
package struct SpriteOutputError: Error, Sendable, CustomStringConvertible {
    /// One line naming both parties.
    package let description: String
}

/// One sprite build as `iconr sprite` asks for it: the folders, the options, the style, the
/// themes and the outputs go in; `plan()` names every output by one rule and refuses a plan
/// that would overwrite or read itself; `build` makes every flavor (the plain icons, then
/// each theme's) into one `SpriteProduct`, which `write` writes together.
package struct SpriteJob: Sendable {
    package var folders: [String]
    package var options: SpriteOptions
    /// What `--style` adds (its variants are in `options` already) and emits.
    package var style: StyleVariants?
    /// The style's file, for `--merge-sprites`' local sprites.
    package var stylePath: String?
    package var themes: [Theme]
    package var outputs: SpriteOutputs
    /// Every file the job reads besides the icons (style, data, variants, themes, imports):
    /// no output may be one of them.
    package var inputFiles: [String]

    package init(
        folders: [String], options: SpriteOptions, style: StyleVariants? = nil, stylePath: String? = nil,
        themes: [Theme] = [], outputs: SpriteOutputs, inputFiles: [String] = []
    ) {
        self.folders = folders
        self.options = options
        self.style = style
        self.stylePath = stylePath
        self.themes = themes
        self.outputs = outputs
        self.inputFiles = inputFiles
    }

    /// One flavor's outputs: the plain icons (`theme` nil) or a theme's.
    package struct Flavor: Sendable {
        package let theme: Theme?
        package let outputs: SpriteOutputs
    }

    /// The one flavor of the job's own options and outputs, unplanned: what a server builds,
    /// whose outputs are URLs it answers, not files (`options.theme` its colors).
    package var served: Flavor { Flavor(theme: options.theme, outputs: outputs) }

    /// Every flavor's outputs, named by `SpriteOutputs.named(for:)`, checked as a whole.
    /// - Throws: `SpriteOutputError` for a theme whose name ends in `-<number>` (its sheets
    ///   would be another theme's later sheets), two outputs of one path, an output that is an
    ///   input file or a sprite file of the plan, and sheets, a preview or a style copy
    ///   inside an icon folder (the next build would read them).
    package func plan() throws(SpriteOutputError) -> [Flavor] {
        for theme in themes {
            if let dash = theme.name.lastIndex(of: "-"), Self.isNumber(theme.name[theme.name.index(after: dash)...]) {
                let base = theme.name[..<dash], number = theme.name[theme.name.index(after: dash)...]
                throw SpriteOutputError(
                    description: "theme \"\(theme.name)\": a name ending in -\(number) would name sheet \(number) "
                        + "of theme \"\(base)\" (\(outputs.sheetName)-\(base)-\(number).png); rename it")
            }
        }
        let flavors =
            [Flavor(theme: nil, outputs: outputs)] + themes.map { Flavor(theme: $0, outputs: outputs.named(for: $0)) }
        var documents: [(option: String, path: String, canonical: String)] = []
        for flavor in flavors {
            let of = flavor.theme.map { " (theme \($0.name))" } ?? ""
            for (option, path) in [
                ("--emit-style", flavor.outputs.emitStyle), ("--catalog", flavor.outputs.catalog),
                ("--preview", flavor.outputs.preview),
            ] {
                guard let path else { continue }
                documents.append((option + of, path, Self.canonical(path)))
            }
        }
        var seen: [String: String] = [:]
        for document in documents {
            if let earlier = seen[document.canonical] {
                throw SpriteOutputError(
                    description: "\(earlier) and \(document.option) both write \(document.path): give each its own file"
                )
            }
            seen[document.canonical] = document.option
            for flavor in flavors
            where Self.isSheetFile(
                document.canonical, of: Self.canonical(flavor.outputs.prefix), hashed: outputs.hashNames)
            {
                throw SpriteOutputError(
                    description: "\(document.option) \(document.path) is a sprite file of -o "
                        + "\(flavor.outputs.prefix): give it another name")
            }
        }
        for input in inputFiles {
            let canonical = Self.canonical(input)
            if let option = seen[canonical] {
                throw SpriteOutputError(
                    description: "\(option) \(input) would replace an input of the build: give another file")
            }
            for flavor in flavors
            where Self.isSheetFile(canonical, of: Self.canonical(flavor.outputs.prefix), hashed: outputs.hashNames) {
                throw SpriteOutputError(
                    description: "-o \(flavor.outputs.prefix) would replace \(input), an input of the build")
            }
        }
        // A sheet, a preview or a style copy in an icon folder is an icon (or its sidecar) next time.
        let read =
            [("-o", outputs.prefix)]
            + documents.filter { !$0.option.hasPrefix("--catalog") }.map { ($0.option, $0.path) }
        for folder in folders {
            let icons = Self.canonical(folder)
            for (option, path) in read {
                let written = Self.canonical(path)
                guard let slash = written.lastIndex(of: "/") else { continue }
                let into = String(written[..<slash])
                if into == icons || into.hasPrefix(icons == "/" ? icons : icons + "/") {
                    throw SpriteOutputError(
                        description: "\(option) \(path) is inside the icon folder \(folder): the next build would "
                            + "read it as an icon; write it elsewhere")
                }
            }
        }
        return flavors
    }

    /// Whether `path` is one of the files a sprite with `prefix` writes: `prefix`, its hash
    /// (`.<12 hex digits>`) when `hashed`, a sheet number (`-2`), a ratio (`@2x`), `.png` or `.json`.
    static func isSheetFile(_ path: String, of prefix: String, hashed: Bool) -> Bool {
        guard path.hasPrefix(prefix) else { return false }
        var rest = Substring(path.dropFirst(prefix.count))
        guard rest.hasSuffix(".png") || rest.hasSuffix(".json") else { return false }
        rest = rest.dropLast(rest.hasSuffix(".png") ? 4 : 5)
        if let at = rest.lastIndex(of: "@"), rest.hasSuffix("x") {
            guard Double(rest[rest.index(after: at)..<rest.index(before: rest.endIndex)]) != nil else { return false }
            rest = rest[..<at]
        }
        if let dash = rest.lastIndex(of: "-"), isNumber(rest[rest.index(after: dash)...]) { rest = rest[..<dash] }
        if hashed, rest.first == ".", rest.utf8.count == 13,
            rest.utf8.dropFirst().allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        {
            return true
        }
        return rest.isEmpty
    }

    /// Whether `text` is one or more ASCII digits.
    static func isNumber(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (48...57).contains($0) }
    }

    /// The URL of the file `to` from a page at `from` (both canonical paths): `../out/sprite.png`,
    /// each part percent-encoded where a URL needs it.
    static func relativePath(from: String, to: String) -> String {
        let page = from.split(separator: "/").dropLast(), file = to.split(separator: "/")
        var common = 0
        while common < page.count, common < file.count - 1, page[page.startIndex + common] == file[common] {
            common += 1
        }
        let parts = Array(repeating: "..", count: page.count - common) + file[common...].map(String.init)
        return parts.map { part in
            var encoded = ""
            for byte in part.utf8 {
                let safe =
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || [UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@")]
                        .contains(byte)
                encoded += safe ? String(UnicodeScalar(byte)) : "%" + hexText([byte]).uppercased()
            }
            return encoded
        }.joined(separator: "/")
    }

    /// `path` made absolute, `.` and `..` resolved, and the links of its folders followed as
    /// far as they exist: two spellings of one file are one path.
    static func canonical(_ path: String) -> String {
        var absolute = path
        if !path.hasPrefix("/"), let folder = getcwd(nil, 0) {
            absolute = String(cString: folder) + "/" + path
            free(folder)
        }
        var parts: [Substring] = []
        for part in absolute.split(separator: "/") where part != "." {
            if part == ".." { _ = parts.popLast() } else { parts.append(part) }
        }
        absolute = "/" + parts.joined(separator: "/")
        // The deepest folder that exists, its links followed, and the rest as written.
        var existing = absolute, rest = ""
        while existing != "/", !existing.isEmpty {
            if let real = FileReader.realPath(existing) { return real + rest }
            guard let slash = existing.lastIndex(of: "/") else { break }
            rest = String(existing[slash...]) + rest
            existing = String(existing[..<slash])
        }
        return absolute
    }
}

/// What a `SpriteJob` made: each flavor's sheets and documents, named as planned, the
/// warnings of the whole job once each, and the stale sheets the write removes.
package struct SpriteProduct: Sendable {
    /// One flavor's build and its files.
    package struct Flavor: Sendable {
        package let theme: Theme?
        package let build: SpriteBuild
        /// The prefix written, with its hash when `hashNames`.
        package let prefix: String
        /// The sheets and indexes, then the style copy, preview and catalog.
        package let files: [(bytes: [UInt8], path: String)]
        /// The `"sprite"` value a style names these sheets by: the plain build's ids in
        /// every flavor (`default`, `sprite-2`, ...), this flavor's URLs.
        package let spriteValue: JSONValue
        /// `sprite-N` sheets past this build's count, left by an earlier build: removed.
        package let stale: [String]
    }

    package let flavors: [Flavor]
    /// Every warning of the job, once, in the order first met.
    package let warnings: [String]

    /// Every file, all flavors.
    package var files: [(bytes: [UInt8], path: String)] { flavors.flatMap(\.files) }

    /// Writes every flavor's files together (all or none, their folders made), then removes the
    /// stale sheets of the prefixes it wrote (only names the plan gave this job).
    /// - Throws: `FileWriteError` naming the file or folder.
    package func write() throws(FileWriteError) {
        for path in Set(files.map(\.path)) {
            guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { continue }
            let folder = String(path[..<slash])
            do {
                try FileReader.makeFolder(folder)
            } catch {
                throw FileWriteError(path: folder, problem: .system(error))
            }
        }
        try AtomicFile.writeTogether(files)
        for path in flavors.flatMap(\.stale) { unlink(path) }
    }
}

extension SpriteJob {
    /// Builds every flavor of the plan with `cache`, each through `SpriteBuilder` (`recovery`
    /// hears its renders, `progress` its icons with the flavor's theme), makes the documents
    /// each one's outputs name, and collects the warnings once.
    /// - Throws: `SpriteBuildError`, `StyleError` (a style copy MapLibre would not load),
    ///   `IconrError` (a local sprite to merge, a preview).
    /// Rendering runs where `placement` says (in process for `iconr sprite`'s supervised
    /// child, in isolated workers for a server), settled file stamps told by `clock`.
    package func build(
        _ flavors: [Flavor], cache: IconCache, recovery: SpriteBuildRecovery, placement: RenderPlacement = .inProcess,
        clock: CacheClock = .system, progress: (@Sendable (Theme?, Int, Int) -> Void)? = nil
    ) throws -> SpriteProduct {
        var made: [SpriteProduct.Flavor] = []
        var warnings: [String] = []
        var said = Set<String>()
        func warn(_ lines: [String]) {
            for line in lines where said.insert(line).inserted { warnings.append(line) }
        }
        for flavor in flavors {
            var options = self.options
            options.theme = flavor.theme
            let builder = SpriteBuilder(options: options, cache: cache, placement: placement, clock: clock)
            let built = try builder.build(directories: folders, recovery: recovery) { done, total in
                progress?(flavor.theme, done, total)
            }
            let build =
                if let style, let stylePath, outputs.mergeSprites {
                    try SpriteMerge.merged(
                        built, with: SpriteMerge.sources(of: style.style, stylePath: stylePath), options: options)
                } else {
                    built
                }
            warn(build.skipped.map { "skipped \($0)" } + build.warnings)
            made.append(try product(of: flavor, build: build, warn: warn))
        }
        return SpriteProduct(flavors: made, warnings: warnings)
    }

    /// One flavor's files: its sheets under the (hashed) prefix, then its documents.
    private func product(
        of flavor: Flavor, build: SpriteBuild, warn: ([String]) -> Void
    ) throws -> SpriteProduct.Flavor {
        let named = flavor.outputs
        // With hashed names every sheet's name carries the digest of all of them: a new build
        // gets new names, so no cache pairs a stale PNG with a fresh JSON.
        let hash =
            named.hashNames
            ? "." + SpriteBuild.contentHash(build.files(prefix: named.prefix, minify: named.minify)) : ""
        let prefix = named.prefix + hash
        var files = build.files(prefix: prefix, minify: named.minify)
        let sheetName = outputs.sheetName
        if let style, let output = named.emitStyle {
            // A sprite URL names the files as written: with their hash, before a query.
            let url =
                named.spriteURL.map { url in
                    let end = url.firstIndex { $0 == "?" || $0 == "#" } ?? url.endIndex
                    return url[..<end] + hash + url[end...]
                } ?? "file://" + Self.canonical(prefix)
            let emitted = try style.emitted(
                build: build, prefix: url, sheetName: sheetName, lenient: named.lenient, merged: named.mergeSprites)
            warn(emitted.warnings)
            files.append((emitted.json, output))
        }
        if let style, let output = named.preview {
            let largest = build.sheets.filter { $0.ratio == options.ratios.max() }
            files.append(
                (
                    try ScenePreview.png(
                        style: style.style, sheets: largest, size: named.previewSize, spriteID: style.spriteID),
                    output
                ))
        }
        if let output = named.catalog {
            let icons = try SpriteBuilder.iconFiles(
                in: folders, recursive: options.recursive, followsLinksOut: options.followsLinksOut,
                names: options.folderNames)
            let name =
                folders.map { $0.split(separator: "/").last.map(String.init) ?? $0 }.joined(separator: ", ")
                + (flavor.theme.map { " (theme \($0.name))" } ?? "")
            let title =
                "iconr catalog: " + (named.prefix.split(separator: "/").last.map(String.init) ?? named.prefix)
            // The page fetches the sheets written beside it, by their paths from its folder.
            let from = Self.canonical(output)
            let sheetURL: @Sendable (Double, Int) -> String = { ratio, sheet in
                Self.relativePath(
                    from: from, to: Self.canonical(SpriteBuild.sheetBase(prefix, sheet: sheet, ratio: ratio) + ".png"))
            }
            files.append(
                (
                    CatalogPage.html(
                        title: title,
                        sections: [
                            .init(
                                name: name, build: build, sheetURL: sheetURL, files: icons, liveIcons: nil,
                                theme: flavor.theme)
                        ]),
                    output
                ))
        }
        let stale =
            named.hashNames
            ? [] : Self.staleSheets(prefix: prefix, ratios: Set(build.sheets.map(\.ratio)), sheets: build.sheetCount)
        return SpriteProduct.Flavor(
            theme: flavor.theme, build: build, prefix: prefix, files: files,
            spriteValue: build.spriteValue(prefix: prefix, sheetName: sheetName), stale: stale)
    }

    /// The `prefix-N` sheet files past `sheets` at `ratios` that are on disk.
    static func staleSheets(prefix: String, ratios: Set<Double>, sheets: Int) -> [String] {
        var stale: [String] = []
        for ratio in ratios.sorted() {
            var sheet = sheets
            while true {
                let base = SpriteBuild.sheetBase(prefix, sheet: sheet, ratio: ratio)
                let found = [".png", ".json"].map { base + $0 }.filter { FileReader.exists($0) }
                guard !found.isEmpty else { break }
                stale += found
                sheet += 1
            }
        }
        return stale
    }
}
