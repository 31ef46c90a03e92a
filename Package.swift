// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "iconr",
    products: [
        // Icons, caches and sprites; `import Iconr`.
        .library(name: "Iconr", targets: ["Iconr"]),
        // The style engine (style documents, expressions, the MapLibre rewrite); `import IconrStyle`.
        .library(name: "IconrStyle", targets: ["IconrStyle"]),
        .executable(name: "iconr", targets: ["iconr"]),
        .executable(name: "iconr-bench", targets: ["iconr-bench"]),
    ],
    targets: [
        // C libraries from Debian, each behind a module map. Only IconrRender imports them.
        // librsvg and cairo are declared here, not linked: opened on the first render.
        .systemLibrary(name: "CRsvg"),
        .systemLibrary(name: "CPNG"),
        // Linux calls Swift cannot make directly (variadic in C), for the CLI's process supervision.
        .systemLibrary(name: "CSystem"),
        // GNU libmicrohttpd, declared here, not linked: opened when `iconr serve` starts.
        .systemLibrary(name: "CMicroHTTPD"),
        // The platform layer: file descriptors, system errors, child processes, signals, locks,
        // whole-file reads and atomic writes (Glibc only), the CPU's SHA-256 instructions.
        .target(name: "IconrSystem", dependencies: ["CSystem"]),
        // Pure Swift: colors, templates, parameter substitution, packing.
        // No unsafe flags in any target: SwiftPM refuses them in a dependency given by version.
        .target(name: "IconrCore", dependencies: ["IconrSystem"]),
        // Pure Swift: the style specification's expression language and style documents
        // (checking them, and rewriting them for MapLibre).
        .target(name: "IconrStyle", dependencies: ["IconrCore"]),
        // The one door to C: librsvg + cairo rasterization, libpng encoding, process isolation.
        .target(name: "IconrRender", dependencies: ["IconrCore", "IconrSystem", "CRsvg", "CPNG"]),
        // The one door to libmicrohttpd: an HTTP server that calls a Swift handler.
        .target(name: "IconrHTTP", dependencies: ["IconrSystem", "CMicroHTTPD"]),
        // The public library renderers link.
        .target(name: "Iconr", dependencies: ["IconrCore", "IconrStyle", "IconrSystem", "IconrRender"]),
        // `iconr serve`'s routes: icons, sprites, styles, iconr.js, metrics, over IconrHTTP.
        .target(
            name: "IconrServer", dependencies: ["Iconr", "IconrCore", "IconrStyle", "IconrSystem", "IconrHTTP"]),
        // Commands, argument scanning and help text.
        .target(
            name: "IconrCLI",
            dependencies: [
                "Iconr", "IconrCore", "IconrStyle", "IconrSystem", "IconrRender", "IconrServer", "IconrHTTP",
                "CSystem",
            ]),
        .executableTarget(name: "iconr", dependencies: ["IconrCLI"]),
        .executableTarget(
            name: "iconr-bench",
            dependencies: ["Iconr", "IconrCore", "IconrSystem", "IconrRender", "IconrTestSupport"]),
        // A Swift program that does nothing: the start every Swift program pays, a peer in
        // `iconr-bench render`.
        .executableTarget(name: "empty-swift", path: "Benchmarks/empty-swift"),
        // Crashes of each kind under each crash handler, for CrashAttributionTests.
        .executableTarget(
            name: "iconr-crash-probe", dependencies: ["Iconr", "IconrCLI", "IconrSystem"], path: "Tests/CrashProbe"),
        // Paths, process running and image comparison shared by the test targets.
        .target(
            name: "IconrTestSupport", dependencies: ["Iconr", "IconrCore", "IconrSystem", "IconrRender"],
            path: "Tests/IconrTestSupport"),
        .testTarget(name: "IconrCoreTests", dependencies: ["IconrCore", "IconrSystem"]),
        .testTarget(name: "IconrStyleTests", dependencies: ["IconrStyle", "IconrCore"]),
        .testTarget(name: "IconrSystemTests", dependencies: ["IconrSystem"]),
        .testTarget(name: "IconrRenderTests", dependencies: ["IconrRender", "IconrCore", "IconrSystem"]),
        .testTarget(
            name: "IconrTests",
            dependencies: ["Iconr", "IconrCore", "IconrStyle", "IconrSystem", "IconrRender", "IconrTestSupport"]),
        .testTarget(
            name: "IconrServerTests",
            dependencies: [
                "IconrServer", "IconrHTTP", "Iconr", "IconrCore", "IconrSystem", "IconrRender",
                "IconrTestSupport",
            ]),
        .testTarget(
            name: "IconrCLITests",
            dependencies: [
                "IconrCLI", "Iconr", "IconrCore", "IconrStyle", "IconrSystem", "IconrRender", "IconrServer",
                "IconrTestSupport",
            ]),
    ]
)
