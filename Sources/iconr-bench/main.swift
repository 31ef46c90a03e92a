import Foundation
import Iconr
import IconrRender

// iconr-bench: where the time of one icon goes (parse, substitute, render, encode) against
// the raw librsvg + cairo + libpng cost of the same icons, measured interleaved in one
// process so that machine noise hits both alike.
//
//   swift run -c release iconr-bench [corpus-folder] [rounds]

let arguments = CommandLine.arguments.dropFirst()
let folder = arguments.first ?? "../shared/corpora/maki"
let rounds = arguments.dropFirst().first.flatMap(Int.init) ?? 5

let files = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { $0.hasSuffix(".svg") }.sorted() ?? []
guard !files.isEmpty else {
    FileHandle.standardError.write(Data("error: no SVG files in \(folder)\n".utf8))
    exit(1)
}
let documents = files.map { [UInt8](FileManager.default.contents(atPath: "\(folder)/\($0)") ?? Data()) }

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

struct Phases {
    var parse = 0.0, substitute = 0.0, render = 0.0, encode = 0.0, raw = 0.0
    var iconr: Double { parse + substitute + render + encode }
}

let clock = ContinuousClock()
print("iconr-bench: \(files.count) icons from \(folder), \(rounds) rounds, times per icon in microseconds")
print(String(format: "%-6@ %9@ %11@ %9@ %9@ %9@ %9@ %7@", "scale", "parse", "substitute", "render", "encode", "iconr", "raw", "ratio"))
for scale in [1.0, 2.0] {
    var totals = Phases()
    for _ in 0..<rounds {
        for (index, bytes) in documents.enumerated() {
            var start = clock.now
            guard ReferencePipeline.renderPNG(bytes, scale: scale) != nil else { fatalError("\(files[index]): raw pipeline failed") }
            totals.raw += microseconds(clock.now - start)

            do {
                start = clock.now
                let template = try IconTemplate(name: files[index], bytes: bytes)
                let parsed = clock.now
                let params = try template.resolve([:])
                let substituted = clock.now
                let image = try template.render(params, scale: scale).image
                let rendered = clock.now
                _ = try PNGEncoder.encode(image)
                let encoded = clock.now
                totals.parse += microseconds(parsed - start)
                totals.substitute += microseconds(substituted - parsed)
                totals.render += microseconds(rendered - substituted)
                totals.encode += microseconds(encoded - rendered)
            } catch {
                fatalError("\(files[index]): \(error)")
            }
        }
    }
    let count = Double(documents.count * rounds)
    let p = Phases(parse: totals.parse / count, substitute: totals.substitute / count, render: totals.render / count,
                   encode: totals.encode / count, raw: totals.raw / count)
    print(String(format: "%-6@ %9.1f %11.1f %9.1f %9.1f %9.1f %9.1f %6.2fx", "\(Int(scale))x", p.parse, p.substitute,
                 p.render, p.encode, p.iconr, p.raw, p.iconr / p.raw))
}
