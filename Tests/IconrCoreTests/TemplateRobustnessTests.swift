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
        let files =
            ["maki/airport.svg", "maki/bakery.svg"].map { corpora.appendingPathComponent($0) }
            + ["flag.svg", "marker.svg", "badge.svg", "label.svg"].map { icons.appendingPathComponent($0) }
        return files.compactMap { try? [UInt8](Data(contentsOf: $0)) }
    }()

    /// Two of the seeds are Maki icons from ../shared/corpora: without it (a fresh clone) the
    /// test is skipped with that reason; in CI (`CI=true`) it runs, and a missing corpus fails.
    static let corporaAvailable = seeds.count == 6 || ProcessInfo.processInfo.environment["CI"] == "true"

    @Test(.enabled(if: corporaAvailable, "needs ../shared/corpora beside the checkout (the project's shared/ folder)"))
    func mangledDocumentsParseOrThrowButNeverCrash() {
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
                _ = template.apply(
                    template.resolve(
                        colors: Dictionary(uniqueKeysWithValues: template.parameters.map { ($0.name, Color.black) })))
            } else {
                rejected += 1
            }
        }
        #expect(parsed + rejected == 4000 && parsed > 0 && rejected > 0)
    }
}

/// Entities: declared ones expand where paints are read, and a document whose references
/// expand past the limit fails at once, whatever the shape of the bomb.
struct EntityExpansionTests {
    static func document(depth: Int, breadth: Int) -> [UInt8] {
        var doctype = "<!ENTITY e0 \"#000000\">"
        for level in stride(from: 1, through: depth, by: 1) {
            doctype += "<!ENTITY e\(level) \"\(String(repeating: "&e\(level - 1);", count: breadth))\">"
        }
        return Array(
            ("<!DOCTYPE svg [\(doctype)]><svg xmlns='http://www.w3.org/2000/svg' width='4' height='4' "
                + "fill='&e\(depth);'><rect width='4' height='4'/></svg>").utf8)
    }

    @Test func declaredEntitiesStillExpand() throws {
        let template = try SVGTemplate(
            bytes: Array(
                """
                <!DOCTYPE svg [<!ENTITY ink "#000000">]>
                <svg xmlns='http://www.w3.org/2000/svg' xmlns:m='https://www.mapbox.com' width='4' height='4'>
                  <m:metadata><m:parameters><m:parameter m:name='c' m:type='color' m:value='&ink;'/></m:parameters></m:metadata>
                  <rect width='4' height='4' fill='&ink;'/>
                </svg>
                """.utf8))
        #expect(template.parameters.first?.defaultColor == Color(css: "#000000"))
        #expect(
            String(decoding: template.apply(template.resolve(colors: ["c": Color(css: "red")!])), as: UTF8.self)
                .contains("#ff0000"))
    }

    @Test(arguments: [(2, 1_500), (3, 120), (4, 40), (6, 40)])
    func bombsFailAtOnce(_ shape: (depth: Int, breadth: Int)) {
        let bytes = Self.document(depth: shape.depth, breadth: shape.breadth)
        #expect { try SVGTemplate(bytes: bytes) } throws: { "\($0)".contains("entity references expand to more than") }
    }
}

struct MessageTextTests {
    @Test func controlCharactersAreEscaped() {
        #expect("plain text: #fff".escapedForMessage == "plain text: #fff")
        #expect("a\nerror: b".escapedForMessage == #"a\nerror: b"#)
        #expect(
            "\u{1B}[31mred\t\r\u{0}\u{7F}\u{85}\u{2028}".escapedForMessage
                == #"\u{1B}[31mred\t\r\u{0}\u{7F}\u{85}\u{2028}"#)
        #expect("ünïcode ✓".escapedForMessage == "ünïcode ✓")
        // Lead bytes of C1 controls and of the separators, in characters that are neither.
        #expect("¡a – b…".escapedForMessage == "¡a – b…")
        #expect("\u{2029}x\u{9F}".escapedForMessage == #"\u{2029}x\u{9F}"#)
    }
}
