import Foundation
import Testing
@testable import IconrCore

/// The template scanner runs in the CLI's own process (a cache hit never reaches librsvg),
/// so no input may crash it: mangled copies of real SVGs must parse or throw, never trap.
struct TemplateRobustnessTests {
    static let seeds: [[UInt8]] = {
        let corpora = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpora")
        let icons = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("icons")
        let files = ["maki/airport.svg", "maki/bakery.svg"].map { corpora.appendingPathComponent($0) }
            + ["flag.svg", "marker.svg", "badge.svg", "label.svg"].map { icons.appendingPathComponent($0) }
        return files.compactMap { try? [UInt8](Data(contentsOf: $0)) }
    }()

    @Test func mangledDocumentsParseOrThrowButNeverCrash() {
        #expect(Self.seeds.count == 6)
        var state: UInt64 = 7
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(max(bound, 1)))
        }
        let noise = Array("<>&;\"'=/![]-?:#{}()x \n".utf8)
        var parsed = 0, rejected = 0
        for round in 0..<4000 {
            var bytes = Self.seeds[round % Self.seeds.count]
            for _ in 0..<(1 + next(6)) {
                switch next(4) {
                case 0: bytes = Array(bytes.prefix(next(bytes.count + 1)))
                case 1: if !bytes.isEmpty { bytes[next(bytes.count)] = noise[next(noise.count)] }
                case 2: bytes.insert(noise[next(noise.count)], at: next(bytes.count + 1))
                default: if !bytes.isEmpty { bytes.remove(at: next(bytes.count)) }
                }
            }
            if let template = try? SVGTemplate(bytes: bytes) {
                parsed += 1
                // Applying parameters to whatever parsed must not crash either.
                _ = template.apply(template.resolve(colors: Dictionary(uniqueKeysWithValues: template.parameters.map { ($0.name, Color.black) })))
            } else {
                rejected += 1
            }
        }
        #expect(parsed + rejected == 4000 && parsed > 0 && rejected > 0)
    }
}
