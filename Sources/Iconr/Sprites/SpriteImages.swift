import IconrCore
import IconrRender
import IconrSystem

/// The images stage of a sprite build: every image of one icon (plain and variants, at every
/// ratio) with its index entry, from the files `SpriteInputs` read. SVG files go through the
/// one way to a variant (`IconRenderer`, as for `iconr render` and `IconLibrary`); PNG files
/// are scaled. Every step librsvg or a file read takes part in is announced to `recovery`.
struct SpriteImageRenderer: Sendable {
    let options: SpriteOptions
    let renderer: IconRenderer
    let placement: RenderPlacement
    let inputs: SpriteInputs
    let recovery: SpriteBuildRecovery

    /// Every image of one icon, each ratio from the icon's file for that ratio
    /// (`name@2x.svg`) or else from its base file. Images known to be new (`isNew`: the
    /// icon's files changed since the last build) are drawn without asking the disk cache.
    func images(of source: SpriteSource, isNew: Bool) -> Result<SourceImages, SpriteFailure> {
        var all = SourceImages()
        for (file, ratios) in source.files(for: options.ratios) {
            switch images(of: source, file: file, ratios: ratios, isNew: isNew) {
            case .success(let rendered):
                all.images += rendered.images
                all.warnings += rendered.warnings
                all.references.merge(rendered.references) { first, _ in first }
            case .failure(let failure): return .failure(failure)
            }
        }
        return .success(all)
    }

    /// The images of one file of an icon, at the sheet `ratios` it serves.
    private func images(
        of source: SpriteSource, file: SpriteSource.File, ratios: [Double], isNew: Bool
    ) -> Result<SourceImages, SpriteFailure> {
        func failure<T>(_ message: String) -> Result<T, SpriteFailure> {
            .failure(SpriteFailure(id: source.id, path: file.path, message: message))
        }
        if let reason = recovery.failed[file.path] { return failure(reason) }
        // Scanning is watched like renders (as reading was): a supervisor's time limit covers it.
        let read: Result<[UInt8], SpriteFailure> = recovery.watching(file.path) {
            do {
                var bytes = try inputs.bytes(of: file.path).get()
                guard !bytes.isEmpty else { return failure("the file is empty") }
                if Gzip.isCompressed(bytes) {
                    bytes = try Gzip.decompress(bytes, limit: FileReader.iconLimit.load(ordering: .relaxed))
                }
                return .success(bytes)
            } catch let error as FileReadError {
                return failure(error.reason)
            } catch {
                return failure("\(error)")
            }
        }
        let bytes: [UInt8]
        switch read {
        case .success(let value): bytes = value
        case .failure(let error): return .failure(error)
        }
        if PNGDecoder.isPNG(bytes) {
            return bitmapImages(of: source, file: file, png: bytes, ratios: ratios).map {
                SourceImages(images: $0.images, warnings: $0.warnings)
            }.mapError {
                SpriteFailure(id: source.id, path: file.path, message: $0.description)
            }
        }
        // The file's icon, and the icon drawn: in the build's theme, if any.
        let (fileIcon, icon): (IconSource, IconSource)
        do {
            (fileIcon, icon) = try recovery.watching(file.path) { () throws(IconrError) in
                let icon = try IconSource(name: source.id, bytes: bytes, path: file.path)
                return (icon, try options.theme.map { theme throws(IconrError) in try icon.themed(theme) } ?? icon)
            }
        } catch {
            // The failure names the file already.
            return failure(error.reason)
        }
        let template = icon.template
        var warnings = icon.warnings
        var areas = IconAreas(
            stretchX: template.stretchX, stretchY: template.stretchY, content: template.content, placeholder: nil)
        if areas.stretchX.isEmpty, areas.stretchY.isEmpty, areas.content == nil, !template.legacyAreaIDs.isEmpty {
            let measurement: SVGMeasurement
            do {
                measurement = try recovery.watching(file.path) { () throws(IconrError) in
                    try icon.measure(elementIDs: template.legacyAreaIDs, placement: placement, limits: options.limits)
                }
            } catch {
                return failure(error.reason)
            }
            let legacy = LegacyAreas.areas(
                ids: template.legacyAreaIDs,
                boxes: measurement.elementBoxes.mapValues { ($0.x, $0.y, $0.width, $0.height) })
            areas = IconAreas(
                stretchX: legacy.stretchX, stretchY: legacy.stretchY, content: legacy.content,
                placeholder: legacy.placeholder)
            warnings += legacy.problems.map { "\(file.path): \($0)" }
        }
        // A sidecar `name.json` replaces what it gives.
        var sidecar: SpriteSidecar?
        switch Self.sidecar(of: file.path, inputs: inputs) {
        case .success(let found?):
            sidecar = found
            warnings += found.unknownKeys.map {
                "\(Self.sidecarPath(of: file.path)): ignoring the unknown key \"\($0)\""
            }
            areas = IconAreas(
                stretchX: found.stretchX ?? areas.stretchX, stretchY: found.stretchY ?? areas.stretchY,
                content: found.content ?? areas.content, placeholder: found.placeholder ?? areas.placeholder)
        case .success(nil): break
        case .failure(let error): return failure("\(Self.sidecarPath(of: file.path)): \(error)")
        }
        var images: [SpriteImage] = []
        var reportedProblems = Set<String>()
        let planned: [WantedImage]
        do {
            planned = try wantedImages(of: source, icon: icon, fileIcon: fileIcon)
        } catch {
            return failure(error.reason)
        }
        for wanted in planned {
            let sdf = sidecar?.sdf ?? options.sdf.contains { SpriteID.matches(wanted.id, pattern: $0) }
            for sheetRatio in ratios {
                // The image's own ratio: the sheet's, times the variant's scale.
                let ratio = sheetRatio * wanted.scale
                // A file for ratio R is drawn at 1 for R: its units are 1/R of a pixel at 1x.
                let drawn = ratio / file.unit
                // A signed distance field is computed from a render at 4 times the ratio.
                let scale = sdf ? drawn * SignedDistanceField.supersampling : drawn
                // Announced to the recovery's listeners: a supervisor pins a crash on this file.
                let variant: IconVariant
                do {
                    variant = try recovery.watching(file.path) { () throws(IconrError) in
                        try renderer.variant(of: wanted.icon, wanted.params, scale: scale, lookingUp: !isNew)
                    }
                } catch {
                    return failure(error.reason)
                }
                // A distance field, or the image with the build's halo baked in (an SDF icon's
                // halo is the renderer's).
                let image =
                    sdf
                    ? SignedDistanceField.make(from: variant.image, ratio: ratio, field: options.sdfField)
                    : wanted.halo.map { $0.apply(to: variant.image, scale: ratio) } ?? variant.image
                guard image.size.width <= options.maxSize, image.size.height <= options.maxSize else {
                    return failure(
                        "is \(image.size) at \(ratio.shortText)x, larger than the \(options.maxSize) px sheet limit")
                }
                let entry = areas.entry(
                    size: image.size, ratio: ratio, sdf: sdf,
                    offset: border(sdf: sdf, ratio: ratio, halo: wanted.halo), scale: drawn,
                    sidecar: sidecar)
                // Metadata that does not fit the image is left out with a warning (once an icon).
                let (valid, problems) = entry.validated()
                for problem in problems {
                    // One warning per id and field (`stretchX`, `content`, ...), not per ratio.
                    let field = "\(wanted.id) " + (problem.split(separator: " ").first.map(String.init) ?? problem)
                    guard reportedProblems.insert(field).inserted else { continue }
                    let prefix = wanted.id == source.id ? "" : "\(wanted.id): "
                    warnings.append("\(file.path): \(prefix)\(problem) at \(ratio.shortText)x: it is left out")
                }
                images.append(
                    SpriteImage(
                        id: wanted.id, source: source.path, ratio: sheetRatio, size: image.size, image: image,
                        entry: valid,
                        isVariant: wanted.isVariant,
                        contentKey: variant.key.identity + drawingKey(sdf: sdf, halo: wanted.halo)))
            }
        }
        let references = template.externalReferences.isEmpty ? [:] : [file.path: template.externalReferences]
        return .success(SourceImages(images: images, warnings: warnings, references: references))
    }

    /// One image an icon gives the sheet: its id, what is drawn, at how many times the ratio,
    /// and the halo baked around it.
    private struct WantedImage {
        var id: String
        var icon: IconSource
        var params: ResolvedParameters
        var isVariant: Bool
        var scale: Double
        var halo: Halo?
    }

    /// The plan for one icon: its plain image, then each variant the options ask for, by
    /// sprite id (two variants with one id are one image, at the larger scale). Ids are named
    /// after the file's defaults, so that a theme's sheets have the plain sheets' ids.
    /// A variant with a recoloring of its own is drawn from the file's icon in it, in place of
    /// the build's theme (which draws the others). A variant with a halo of its own has it
    /// in place of the build's, and an id that ends in it.
    private func wantedImages(
        of source: SpriteSource, icon: IconSource, fileIcon: IconSource
    ) throws(IconrError) -> [WantedImage] {
        var wanted = [
            WantedImage(
                id: source.id, icon: icon, params: icon.template.resolve(colors: [:]), isVariant: false, scale: 1,
                halo: halo(of: source))
        ]
        for variant in options.variants[source.id] ?? [] {
            let drawn = try variant.recolor.map { recolor throws(IconrError) in try fileIcon.themed(recolor) } ?? icon
            let resolved = drawn.template.resolve(variant.params)
            var id = variant.id ?? SpriteID.variant(of: source.id, icon.fileTemplate.resolve(variant.params))
            if let halo = variant.halo { id = SpriteID.haloed(id, halo) }
            if let existing = wanted.firstIndex(where: { $0.id == id }) {
                wanted[existing].scale = max(wanted[existing].scale, variant.scale)
            } else {
                wanted.append(
                    WantedImage(
                        id: id, icon: drawn, params: resolved, isVariant: true, scale: variant.scale,
                        halo: variant.halo ?? variant.recolor?.theme(forIcon: source.id).halo ?? halo(of: source)))
            }
        }
        return wanted
    }

    /// The halo baked around `source`'s images: the build's, else its theme's for that icon.
    private func halo(of source: SpriteSource) -> Halo? {
        options.halo ?? options.theme?.theme(forIcon: source.id).halo
    }

    /// The pixels an image grew by on each side: a distance field's border, or the halo's.
    private func border(sdf: Bool, ratio: Double, halo: Halo?) -> Int {
        sdf ? options.sdfField.border(at: ratio) : halo?.border(at: ratio) ?? 0
    }

    /// What the image's drawing adds to its content key: the field's shape, or the halo.
    private func drawingKey(sdf: Bool, halo: Halo?) -> String {
        sdf ? options.sdfField.keyText : halo?.keyText ?? ""
    }

    /// `dir/name.json` for `dir/name.svg` (or `.svgz`, `.png`, `name@2x.svg`).
    static func sidecarPath(of iconPath: String) -> String {
        let slash = iconPath.lastIndex(of: "/").map { iconPath.index(after: $0) } ?? iconPath.startIndex
        let dot = iconPath[slash...].lastIndex(of: ".") ?? iconPath.endIndex
        return String(iconPath[..<dot]) + ".json"
    }

    /// The sidecar of an icon file (as `inputs` read it), nil when there is none.
    static func sidecar(of iconPath: String, inputs: SpriteInputs) -> Result<SpriteSidecar?, SidecarError> {
        switch inputs.sidecar(of: iconPath) {
        case .success(let bytes?): Result { () throws(SidecarError) in try SpriteSidecar(json: bytes) }
        case .success(nil): .success(nil)
        case .failure(let error): .failure(SidecarError(message: error.reason))
        }
    }

    /// A PNG icon's images: its pixels as they are at the ratio its file is for, scaled
    /// (cairo's best filter) for the others, with a warning where it is enlarged.
    private func bitmapImages(
        of source: SpriteSource, file: SpriteSource.File, png: [UInt8], ratios: [Double]
    ) -> Result<(images: [SpriteImage], warnings: [String]), RenderError> {
        // A PNG icon declares no parameters: a variant of params alone is the icon itself (as
        // Mapbox ignores names an icon does not declare), drawn at the largest scale asked for
        // (a style's icon-size); only a variant named by an id of its own cannot be.
        let variants = options.variants[source.id] ?? []
        if let named = variants.first(where: { $0.id != nil }) {
            return .failure(
                .invalidDocument(
                    "a PNG icon has no parameters, so it can have no variant \"\(named.id ?? "")\" of its own"))
        }
        let plainScale = variants.map(\.scale).max().map { max($0, 1) } ?? 1
        let pixels: RasterImage
        do {
            // The file may be larger than a sheet at the ratio it is for (name@2x.png built at
            // 1x only): what must fit the sheet is each ratio's image, checked below.
            let smallestScale = (ratios.min() ?? 1) / file.unit
            let side = min(
                max(Double(options.maxSize), (Double(options.maxSize) / smallestScale).rounded(.up)),
                Double(RenderLimits.default.maxSize.width * 4))
            pixels = try PNGDecoder.decode(png, maxSize: PixelSize(width: Int(side), height: Int(side)))
        } catch {
            return .failure(error)
        }
        var images: [SpriteImage] = [], warnings: [String] = []
        let digest = SHA256.hex(png)
        let sidecar: SpriteSidecar?
        switch Self.sidecar(of: file.path, inputs: inputs) {
        case .success(let found): sidecar = found
        case .failure(let error): return .failure(.invalidDocument("\(Self.sidecarPath(of: file.path)): \(error)"))
        }
        warnings += (sidecar?.unknownKeys ?? []).map {
            "\(Self.sidecarPath(of: file.path)): ignoring the unknown key \"\($0)\""
        }
        let areas = IconAreas(
            stretchX: sidecar?.stretchX ?? [], stretchY: sidecar?.stretchY ?? [], content: sidecar?.content,
            placeholder: sidecar?.placeholder)
        for sheetRatio in ratios {
            let ratio = sheetRatio * plainScale
            let scale = ratio / file.unit
            let sdf = sidecar?.sdf ?? options.sdf.contains { SpriteID.matches(source.id, pattern: $0) }
            let size = PixelSize.raster(
                width: Double(pixels.size.width), height: Double(pixels.size.height), scale: scale)
            if size != pixels.size, scale > 1 {
                warnings.append(
                    "\(file.path): a PNG icon enlarged \(scale.shortText) times for \(ratio.shortText)x blurs; "
                        + "give \(source.id)@\(ratio.shortText)x.png or an SVG")
            }
            let image: RasterImage
            do {
                if sdf {
                    // A signed distance field is computed from 4 times the pixels, as for SVG icons.
                    let large = PixelSize.raster(
                        width: Double(pixels.size.width), height: Double(pixels.size.height),
                        scale: scale * SignedDistanceField.supersampling)
                    image = SignedDistanceField.make(
                        from: try Rasterizer.resample(pixels, to: large), ratio: ratio, field: options.sdfField)
                } else {
                    let drawn = size == pixels.size ? pixels : try Rasterizer.resample(pixels, to: size)
                    image = halo(of: source).map { $0.apply(to: drawn, scale: ratio) } ?? drawn
                }
            } catch {
                return .failure(error)
            }
            guard image.size.width <= options.maxSize, image.size.height <= options.maxSize else {
                return .failure(
                    .tooLarge(image.size, limit: PixelSize(width: options.maxSize, height: options.maxSize)))
            }
            let entry = areas.entry(
                size: image.size, ratio: ratio, sdf: sdf,
                offset: border(sdf: sdf, ratio: ratio, halo: halo(of: source)), scale: scale,
                sidecar: sidecar)
            let (valid, problems) = entry.validated()
            if sheetRatio == ratios.first {
                warnings += problems.map { "\(file.path): \($0) at \(ratio.shortText)x: it is left out" }
            }
            images.append(
                SpriteImage(
                    id: source.id, source: source.path, ratio: sheetRatio, size: image.size, image: image, entry: valid,
                    isVariant: false,
                    contentKey: "png " + digest + " " + scale.shortText + drawingKey(sdf: sdf, halo: halo(of: source))))
        }
        return .success((images, warnings))
    }
}

/// An icon's stretch areas, content box and text placeholder in its own units (from its
/// metadata, spritezero's shapes or a sidecar).
private struct IconAreas {
    var stretchX: [StretchArea]
    var stretchY: [StretchArea]
    var content: ContentBox?
    var placeholder: ContentBox?

    /// The index entry of an image of `size` drawn `scale` times; a signed distance field's
    /// border moves every area by its width. Index keys only a sidecar gives come from `sidecar`.
    func entry(
        size: PixelSize, ratio: Double, sdf: Bool, offset: Int, scale: Double, sidecar: SpriteSidecar?
    ) -> SpriteIndexEntry {
        let offset = Double(offset)
        func placed(_ box: ContentBox) -> ContentBox {
            let scaled = box.scaled(by: scale)
            return ContentBox(
                left: scaled.left + offset, top: scaled.top + offset, right: scaled.right + offset,
                bottom: scaled.bottom + offset)
        }
        func placed(_ area: StretchArea) -> StretchArea {
            StretchArea(start: area.start * scale + offset, end: area.end * scale + offset)
        }
        return SpriteIndexEntry(
            rect: PixelRect(x: 0, y: 0, width: size.width, height: size.height), pixelRatio: ratio, sdf: sdf,
            content: content.map(placed), stretchX: stretchX.map(placed), stretchY: stretchY.map(placed),
            textFitWidth: sidecar?.textFitWidth, textFitHeight: sidecar?.textFitHeight,
            placeholder: placeholder.map(placed), visible: sidecar?.visible)
    }
}

/// What rendering an icon, or one of its files, gave: its images, its warnings, and the
/// references of its files to other files (by the path of the file that makes them).
struct SourceImages: Sendable {
    var images: [SpriteImage] = []
    var warnings: [String] = []
    var references: [String: [String]] = [:]
}

/// One image of one sprite id at one ratio.
struct SpriteImage: Sendable {
    let id: String
    let source: String
    let ratio: Double
    let size: PixelSize
    /// The pixels; nil for an image of an icon taken from the last build (`SpriteSetRecord`),
    /// whose pixels are in the last build's sheets.
    let image: RasterImage?
    let entry: SpriteIndexEntry
    let isVariant: Bool
    /// What determines the pixels: the variant's cache key (with the SDF flag), or a PNG's digest.
    let contentKey: String
}
