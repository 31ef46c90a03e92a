import IconrCore

/// What draws SVG documents: one implementation per rasterizing library. librsvg
/// (`LibrsvgBackend`) is the one iconr ships, and `Rasterizer.backend` is the one in use:
/// a second backend is a type of its own that conforms, named there.
public protocol SVGBackend: Sendable {
    /// The library and its exact build, known without loading it, e.g.
    /// `librsvg librsvg-2.so.2.48.0 6402920 1700000000`. Every cache key holds it, so that
    /// no cache ever hands out another backend's (or another version's) pixels.
    var identity: String { get }

    /// Opens the backend's libraries now rather than on the first render, so that a job
    /// that cannot render fails once, before it starts.
    func prepare() throws(RenderError)

    /// Parses `bytes` once, to be drawn at any scale. With no `baseFile` the document
    /// cannot reach other files; with one, relative references resolve against it, to
    /// files in its folder and below.
    func load(_ bytes: [UInt8], baseFile: String?) throws(RenderError) -> any ParsedSVG

    /// `image` scaled to `size` with the backend's best filter (bitmap icons drawn at
    /// another ratio), straight RGBA in and out.
    func resample(_ image: RasterImage, to size: PixelSize) throws(RenderError) -> RasterImage
}

/// A document a backend has parsed. Safe to use from many threads at once.
public protocol ParsedSVG: Sendable {
    /// Width and height in pixels at scale 1: from `width`/`height`, else from the viewBox,
    /// else the size of what the document draws.
    var intrinsicSize: (width: Double, height: Double) { get }

    /// Draws the document stretched to fill `size` exactly; a size beyond `limit` is
    /// refused before any allocation. With a `stylesheet`, that user stylesheet is set
    /// first (`SVGTemplate.Restyling`); a document drawn with one is always drawn with one.
    func draw(size: PixelSize, limit: PixelSize, stylesheet: [UInt8]?) throws(RenderError) -> RasterImage

    /// The box of the element with `id`, in pixels at scale 1 as drawn (its geometry
    /// without stroke, with every transform above it), or nil when there is none.
    func box(of id: String) -> SVGMeasurement.Box?
}
