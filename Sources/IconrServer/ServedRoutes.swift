/// The routes of `iconr serve` with their parameters and answers: what `/` lists and what
/// the man page's HTTP ROUTES section says, from this one table.
public enum ServedRoutes {
    /// One route: its path pattern, what it answers, and its statuses beyond those of every
    /// route (405 for a method other than GET and HEAD, 414 and 431 for a request too long).
    public struct Route: Sendable {
        /// `/icons/{name}[@{S}x].png?{param}={color}&...`.
        public let path: String
        /// What it answers, and its parameters.
        public let summary: String
        /// `200 a PNG; 304 ...; 400 ...`.
        public let statuses: String
    }

    /// Every route, in the order `/` lists them.
    public static let all: [Route] = [
        Route(
            path: "/icons/{name}[@{S}x].png?{param}={color}&...[&halo=W[,COLOR[,BLUR]]]",
            summary:
                "One variant of an icon: name an id of an --icons folder (set:id for one set), S a scale from 0.01 to "
                + "--max-scale (default 1), each param a color in the style specification's syntax, URL-encoded; "
                + "halo bakes a halo around it. The Iconr-Image header carries width, height, pixelRatio, stretchX, "
                + "stretchY and content; Iconr-Cache says memory, disk or render.",
            statuses:
                "200 the PNG; 304 unchanged (ETag); 400 a bad scale, color, parameter or halo, or a raster past "
                + "--max-size; 404 no such icon; 500 the icon fails to render; 503 the render queue is full or waited "
                + "too long (Retry-After)"),
        Route(
            path: "/sprites/{set}[/{theme}]/sprite[.{hash}][-N][@{R}x].json|png",
            summary:
                "A folder's sprite (with a --theme), built on first request and rebuilt when a file changes; -N for "
                + "later sheets, R a --ratio; the hashed names are immutable.",
            statuses: "200 the index or sheet; 304 unchanged; 404 no such set, theme, sheet or ratio"),
        Route(
            path: "/styles/{name}.json",
            summary:
                "A --style rewritten for MapLibre, its sprite served beside it at /styles/{name}/sprite...; colors "
                + "nobody prebaked name runtime images that iconr.js fetches from /icons/.",
            statuses: "200 the style; 304 unchanged; 404 no such style; 500 a style MapLibre would not load"),
        Route(
            path: "/catalog",
            summary:
                "An HTML page of every set, theme and style with its icons (JSON for other clients); / for browsers.",
            statuses: "200 the page; 304 unchanged"),
        Route(
            path: "/iconr.js, /iconr.mjs",
            summary:
                "The MapLibre GL JS plugin (a script, an ES module) that draws runtime images: iconr.install(map).",
            statuses: "200 the script; 304 unchanged"),
        Route(path: "/health", summary: "Whether the server answers.", statuses: "200 {\"status\":\"ok\"}"),
        Route(
            path: "/metrics",
            summary: "Prometheus' text format: requests by route and status, renders, caches, queues, the process.",
            statuses: "200 the metrics"),
        Route(path: "/", summary: "The sets, styles and routes as JSON (the catalog for browsers).", statuses: "200"),
    ]
}
