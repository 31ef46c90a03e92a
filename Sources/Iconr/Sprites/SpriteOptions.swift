import IconrCore
import IconrRender

/// What goes into a sprite and how it is laid out.
public struct SpriteOptions: Sendable {
    /// Pixel ratios to build, one sheet set each (`sprite`, `sprite@2x`, ...).
    public var ratios: [Double] = [1, 2]
    /// Empty pixels between images at 1x; times the ratio (rounded up) in each sheet.
    public var padding = 1
    /// The largest sheet side; icons that do not fit one sheet go to more sheets.
    public var maxSize = 4096
    /// Names of folders (by the path given), whose icons then get ids `NAME/id`, as
    /// `iconr serve --icons DIR=NAME` names a set (`iconr sprite DIR=NAME`).
    public var folderNames: [String: String] = [:]
    /// Read subfolders too (as `inspect`, `check` and `serve` do); their icons get ids
    /// `folder/name`. False reads the folder's own icons only.
    public var recursive = true
    /// Store pixel-identical images once; their ids share one rectangle.
    public var unique = false
    /// Leave out icons that fail instead of failing the build.
    public var skipInvalid = false
    /// An id found in several of the folders comes from the first of them (with a warning),
    /// as `iconr serve` looks names up, instead of being an error.
    public var firstFolderWins = false
    /// Whether icons that are symbolic links (or in linked folders) leading out of their
    /// folder are read; `iconr serve` reads none unless `--follow-links` (a link in a served
    /// folder would serve files the folder's owner did not put there).
    package var followsLinksOut = true
    /// Replace characters that break style expressions or multi-sprite prefixes (`:`, `{`,
    /// `}`, control characters) in ids with `_`, instead of failing on them.
    public var sanitizeIDs = false
    /// Sprite ids drawn as signed distance fields (`sdf: true`), tinted by `icon-color`:
    /// ids or glob patterns (`*` any run of characters, `?` one), each of which must match.
    public var sdf: Set<String> = []
    /// How far the signed distance fields reach and the border they get (`SDFField`).
    public var sdfField = SDFField()
    /// A halo baked around every image that is not a distance field; nil for none.
    public var halo: Halo?
    /// Parameter variants by icon id.
    public var variants: [String: [SpriteVariant]] = [:]
    /// Size and time limits of each render.
    public var limits = RenderLimits.default
    /// The colors every icon is drawn in (`Theme`); nil draws the colors the files have.
    public var theme: Theme?
    /// Compress the sheets at libdeflate's highest levels: 2-13% smaller (Maki's and
    /// Temaki's within 1% of zopflipng's bytes), in 3-5 times the time of a build.
    public var optimize = false

    /// Ratios 1 and 2, padding 1, sheets up to 4096 px, no variants.
    public init() {}
}

/// A parameterized variant of an icon to put in a sprite.
public struct SpriteVariant: Hashable, Sendable {
    /// The sprite id; nil for the generated one (see `SpriteID`).
    public var id: String?
    /// The parameters' colors of this variant.
    public var params: IconParameters
    /// Drawn at this many times each ratio, with `pixelRatio` to match, so that a style's
    /// `icon-size` of up to `scale` stays sharp. With no params and no id, it applies to the
    /// plain icon.
    public var scale: Double
    /// A recoloring of this variant's own (a plain SVG without parameters made red, green and
    /// blue from one black icon): the icon drawn in it, as in a theme. Such a variant has an id.
    public var recolor: Theme?
    /// A halo baked around this variant's image, in place of the build's (`--halo`); its id
    /// then ends in the halo (`SpriteID.haloed`).
    public var halo: Halo?

    /// A variant of `params`, named `id` (or by `SpriteID`), drawn at `scale` times each ratio,
    /// with `halo` baked in.
    public init(id: String? = nil, params: IconParameters, scale: Double = 1, halo: Halo? = nil) {
        self.id = id
        self.params = params
        self.scale = scale
        self.halo = halo
    }
}

/// The shape of a sprite's signed distance fields: the distance their alpha ramp spans, and
/// the transparent border each image gets, both in pixels at 1x (times the ratio in a sheet).
/// MapLibre and Mapbox read the edge at alpha 0.75 (`cutoff` 0.25 of the ramp below it) and
/// a halo of `icon-halo-width` W at `icon-size` S out to W / S pixels beyond the edge, so the
/// field must reach that far and the border hold it: a radius of 8 (as text's glyphs, so halo
/// widths match text's) reaches 6 px out, and the default border is those 6 px (halos up to 5
/// px clean; at 6 the renderers draw half the halo where the field has ended).
public struct SDFField: Hashable, Sendable {
    /// The renderers' cut between inside and outside: the edge is at 1 - cutoff of the ramp.
    public static let cutoff = 0.25
    /// The distance in pixels at 1x that the alpha ramp spans (8 by default).
    public var radius: Double
    /// The border in pixels at 1x; nil for as far as the field reaches, radius x (1 - cutoff).
    public var buffer: Double?

    /// Radius 8, and the border the field reaches (6 px at 1x).
    public init(radius: Double = 8, buffer: Double? = nil) {
        self.radius = radius
        self.buffer = buffer
    }

    /// The border in pixels at 1x.
    public var border: Double { buffer ?? radius * (1 - Self.cutoff) }

    /// The border in whole pixels at `ratio`, as the image and its index entry have it.
    public func border(at ratio: Double) -> Int { Int((border * ratio).rounded(.up)) }
}

extension SDFField {
    /// What the field's shape adds to cache keys (` sdf 8 6`): fields of other shapes are other images.
    var keyText: String { " sdf \(radius.shortText) \(border.shortText)" }
}
