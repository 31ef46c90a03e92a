import Foundation
import Iconr
import IconrCore
import IconrRender

// iconr-bench: where the time of an icon goes, against the raw cost of the same work, all
// measured interleaved in one run so that machine noise hits both sides alike.
//
//   make bench     (iconr as `make` builds it, and the bench with the same flags)
//   .build/release/iconr-bench [folder] [rounds]
//   .build/release/iconr-bench cache      (the cache's figures: CacheBenchmark.swift)
//   .build/release/iconr-bench sprite [folder] [--recursive]  (sprite builds: SpriteBenchmark.swift)
//   .build/release/iconr-bench sprite-versus OTHER [folder] [runs]  (this iconr against another
//                                            build of it, run by run in turns: SpriteVersusBenchmark.swift)
//   .build/release/iconr-bench memory [icons]  (peak memory of a sprite build: MemoryBenchmark.swift)
//   .build/release/iconr-bench render [folder]  (batch and single renders: RenderBenchmark.swift)
//   .build/release/iconr-bench fuzz [N] [seed]  (hostile inputs: FuzzBenchmark.swift)
//   .build/release/iconr-bench pack [seeds]  (sheet fill on seeded sets: PackBenchmark.swift)
//   .build/release/iconr-bench serve      (iconr serve over loopback: ServeBenchmark.swift)
//   .build/release/iconr-bench serve burst  (only the 2,000-connection burst, three rounds)
//   .build/release/iconr-bench serve hits   (only the cache hits against nginx, three rounds)
//   .build/release/iconr-bench serve misses (only the misses under wrk against the raw floor)
//   .build/release/iconr-bench serve edits [N] [folder]  (a served folder edited N times: memory and
//                                            the disk cache against its limit: EditsBenchmark.swift)
//   .build/release/iconr-bench serve catalog [corpora]  (the catalog and sprite files under its
//                                            reloads: CatalogBenchmark.swift)
//
// 1. In process, per icon: parse (template + librsvg load), substitute, render, encode,
//    against librsvg + cairo + cairo's libpng writer on the same bytes (ReferencePipeline).
// 2. Parameter variants: each icon made a template whose `color` parameter (default black)
//    is set to #800080; per variant once the template is loaded (of which substitute:
//    resolving the value and rewriting the document), and one-shot.
// 3. Whole processes: `iconr render` (rendering with --no-cache, and answered by its disk
//    cache) against `rsvg-convert` on the same icons.

let arguments = Array(CommandLine.arguments.dropFirst())
/// The `iconr` that `make bench` builds beside this program: the one the scenarios run.
let iconrBesideBench = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    .appendingPathComponent("iconr").path
if arguments.first == "cache" {
    CacheBenchmark.run()
    exit(0)
}
if arguments.first == "fuzz" {
    FuzzBenchmark.run(
        count: arguments.count > 1 ? Int(arguments[1]) ?? 2000 : 2000,
        seed: arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : 1, iconr: iconrBesideBench)
    exit(0)
}
if arguments.first == "pack" {
    let seeds = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5
    PackBenchmark.run(seeds: 1...max(1, seeds))
    exit(0)
}
if arguments.first == "serve", arguments.dropFirst().first == "catalog" {
    CatalogBenchmark.run(corpora: arguments.count > 2 ? arguments[2] : "../shared/corpora")
    exit(0)
}
if arguments.first == "serve" {
    ServeBenchmark.run(
        only: arguments.dropFirst().first, edits: arguments.count > 2 ? Int(arguments[2]) ?? 25 : 25,
        editedFolder: arguments.count > 3 ? arguments[3] : nil)
    exit(0)
}
if arguments.first == "render" {
    RenderBenchmark.run(folder: arguments.dropFirst().first ?? "../shared/corpora/maki", iconr: iconrBesideBench)
    exit(0)
}
if arguments.first == "memory" {
    MemoryBenchmark.run(
        icons: arguments.count > 1 ? Int(arguments[1]) ?? 25_000 : 25_000, maki: "../shared/corpora/maki",
        iconr: iconrBesideBench)
    exit(0)
}
if arguments.first == "sprite-versus" {
    guard arguments.count > 1 else {
        FileHandle.standardError.write(Data("usage: iconr-bench sprite-versus OTHER-ICONR [folder] [runs]\n".utf8))
        exit(2)
    }
    SpriteVersusBenchmark.run(
        iconr: iconrBesideBench, other: arguments[1],
        folder: arguments.count > 2 ? arguments[2] : "../shared/corpora/maki",
        runs: arguments.count > 3 ? max(1, Int(arguments[3]) ?? 15) : 15)
    exit(0)
}
if arguments.first == "sprite" {
    let operands = arguments.dropFirst().filter { $0 != "--recursive" }
    SpriteBenchmark.run(
        folder: operands.first ?? "../shared/corpora/maki", recursive: arguments.contains("--recursive"),
        iconr: iconrBesideBench)
    exit(0)
}
let folder = arguments.first ?? "../shared/corpora/maki"
let rounds = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5

let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".svg") }
    .sorted()
guard !files.isEmpty else {
    FileHandle.standardError.write(Data("error: no SVG files in \(folder)\n".utf8))
    exit(1)
}
let documents = files.map { [UInt8](FileManager.default.contents(atPath: "\(folder)/\($0)") ?? Data()) }

let clock = ContinuousClock()

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func column(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

func number(_ value: Double) -> String {
    String((value * 10).rounded() / 10)
}

func printRow(_ cells: [String]) {
    print(cells.enumerated().map { column($0.element, $0.offset == 0 ? 20 : 14) }.joined())
}

/// The document with a Mapbox `color` parameter (default black) declared on its root.
func parameterized(_ bytes: [UInt8]) -> [UInt8] {
    var text = String(decoding: bytes, as: UTF8.self)
    guard let root = text.range(of: "<svg"), let close = text[root.upperBound...].firstIndex(of: ">") else {
        return bytes
    }
    let metadata =
        "<m:metadata xmlns:m=\"https://www.mapbox.com\"><m:parameters>"
        + "<m:parameter m:name=\"color\" m:type=\"color\" m:value=\"#000000\"/></m:parameters></m:metadata>"
    text.insert(contentsOf: metadata, at: text.index(after: close))
    return Array(text.utf8)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

print("iconr-bench: \(files.count) icons from \(folder), \(rounds) rounds; times are means per icon in microseconds\n")
print("1. In process, one icon from bytes to PNG")
printRow(["scale", "parse", "substitute", "render", "encode", "iconr", "raw", "iconr/raw"])
for scale in [1.0, 2.0] {
    var parse = 0.0, substitute = 0.0, render = 0.0, encode = 0.0, raw = 0.0
    for _ in 0..<rounds {
        for (index, bytes) in documents.enumerated() {
            var start = clock.now
            guard ReferencePipeline.renderPNG(bytes, scale: scale) != nil else {
                fail("\(files[index]): raw pipeline failed")
            }
            raw += microseconds(clock.now - start)
            do {
                start = clock.now
                // Parsing: iconr's scan and librsvg's load (which an IconSource defers to here).
                let template = try IconSource(name: files[index], bytes: bytes)
                _ = try template.intrinsicSize()
                let parsed = clock.now
                let params = template.resolve(IconParameters())
                let substituted = clock.now
                let icon = try template.render(params, scale: scale)
                let rendered = clock.now
                _ = try icon.png
                encode += microseconds(clock.now - rendered)
                parse += microseconds(parsed - start)
                substitute += microseconds(substituted - parsed)
                render += microseconds(rendered - substituted)
            } catch {
                fail("\(files[index]): \(error)")
            }
        }
    }
    let count = Double(documents.count * rounds)
    let total = parse + substitute + render + encode
    printRow([
        "\(Int(scale))x", number(parse / count), number(substitute / count), number(render / count),
        number(encode / count), number(total / count), number(raw / count), number(total / raw * 100) + "%",
    ])
}

print("\n2. Parameter variants (color=#800080)")
printRow(["scale", "substitute", "per variant", "one-shot", "raw", "variant/raw", "one-shot/raw"])
let templates = documents.map(parameterized)
for scale in [1.0, 2.0] {
    var substitute = 0.0, variant = 0.0, oneShot = 0.0, raw = 0.0
    for _ in 0..<rounds {
        for (index, bytes) in templates.enumerated() {
            do {
                var start = clock.now
                let template = try IconSource(name: files[index], bytes: bytes)
                _ = try template.intrinsicSize()
                let loaded = clock.now
                let params = try template.resolve(IconParameters(parsing: ["color": "#800080"]))
                _ = try template.render(params, scale: scale).png
                let done = clock.now
                variant += microseconds(done - loaded)
                oneShot += microseconds(done - start)
                start = clock.now
                let substituted = template.template.apply(
                    try template.resolve(IconParameters(parsing: ["color": "#800080"])))
                substitute += microseconds(clock.now - start)
                start = clock.now
                guard ReferencePipeline.renderPNG(substituted, scale: scale) != nil else {
                    fail("\(files[index]): raw pipeline failed")
                }
                raw += microseconds(clock.now - start)
            } catch {
                fail("\(files[index]): \(error)")
            }
        }
    }
    let count = Double(documents.count * rounds)
    printRow([
        "\(Int(scale))x", number(substitute / count), number(variant / count), number(oneShot / count),
        number(raw / count),
        number(variant / raw * 100) + "%", number(oneShot / raw * 100) + "%",
    ])
}

print("\n3. Whole processes, one icon each at 1x (spawn to exit)")
let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
let iconr = directory.appendingPathComponent("iconr").path
let rsvgConvert = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}
if !FileManager.default.isExecutableFile(atPath: iconr) {
    print("skipped: no iconr executable beside iconr-bench (make)")
} else if let rsvgConvert {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-bench-\(getpid()).png").path
    defer { try? FileManager.default.removeItem(atPath: output) }
    func time(_ executable: String, _ arguments: [String]) -> Double {
        timedRun(executable, arguments) * 1_000_000
    }
    let sample = stride(from: 0, to: files.count, by: max(1, files.count / 40)).map { "\(folder)/\(files[$0])" }
    let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-bench-cache-\(getpid())")
        .path
    defer { try? FileManager.default.removeItem(atPath: cacheDirectory) }
    for file in sample { _ = time(iconr, ["render", file, "--cache-dir", cacheDirectory, "-o", output]) }
    var rendered: [Double] = [], cached: [Double] = [], theirs: [Double] = []
    for _ in 0..<rounds {
        for file in sample {
            rendered.append(time(iconr, ["render", file, "--no-cache", "-o", output]))
            cached.append(time(iconr, ["render", file, "--cache-dir", cacheDirectory, "-o", output]))
            theirs.append(time(rsvgConvert, [file, "-o", output]))
        }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    func row(_ label: String, _ values: [Double]) {
        printRow([
            label, "\(values.count)", number(values.reduce(0, +) / Double(values.count) / 1000),
            number(median(values) / 1000), number(median(values) / median(theirs) * 100) + "%",
        ])
    }
    printRow(["", "runs", "mean ms", "median ms", "vs rsvg"])
    row("iconr (rendering)", rendered)
    row("iconr (cache hit)", cached)
    row("rsvg-convert", theirs)
} else {
    print("skipped: rsvg-convert is not installed (apt-get install librsvg2-bin)")
}
