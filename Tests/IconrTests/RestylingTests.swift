import Foundation
import Iconr
import IconrCore
import IconrRender
import IconrSystem
import IconrTestSupport
import Testing

/// Parameters applied as a user stylesheet on the loaded template (`SVGTemplate.Restyling`)
/// draw exactly what the rewritten document draws: every pixel equal, at two scales, for
/// every way a parameter reaches a paint that restyling takes, and after other variants
/// were drawn from the same document. Templates where another declaration could override
/// a rule are rewritten instead.
struct RestylingTests {
    private static func document(_ body: String, root: String = "") -> String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
             xmlns:m="https://www.mapbox.com" width="20" height="20" \(root)>
          <m:metadata><m:parameters>
            <m:parameter m:name="p" m:type="color" m:value="#000000"/>
            <m:parameter m:name="q" m:type="color" m:value="#00ff00"/>
          </m:parameters></m:metadata>
          \(body)
        </svg>
        """
    }

    /// Variants of `p` and `q`, drawn one after another from one marked document.
    private static let variants: [[String: String]] = [
        ["p": "#ff0000", "q": "#0000ff"], ["p": "rgba(0, 128, 255, 0.5)"], ["q": "teal"],
        ["p": "transparent", "q": "#00ff00"], ["p": "#123456", "q": "hsla(30, 100%, 50%, 0.25)"], [:],
    ]

    private static func expectRestylingDrawsAsRewriting(
        _ template: SVGTemplate, _ label: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        let restyling = try #require(template.restyling, "\(label): not restyled", sourceLocation: sourceLocation)
        let marked = try LoadedSVG(bytes: restyling.bytes)
        // `p` and `q` are the template's parameters of those names, else its first and second
        // (the repository's icons name theirs: colors under other names would draw defaults).
        let names = template.parameters.map(\.name)
        func named(_ key: String) -> String? {
            names.contains(key) ? key : names.dropFirst(key == "p" ? 0 : 1).first
        }
        var colored = 0
        for scale in [1.0, 2.7] {
            for variant in variants {
                let colors = Dictionary(
                    variant.compactMap { key, value in named(key).map { ($0, value) } }, uniquingKeysWith: { $1 })
                if !colors.isEmpty { colored += 1 }
                let params = template.resolve(try IconParameters(parsing: colors))
                let rewritten = try LoadedSVG(bytes: template.apply(params)).render(scale: scale)
                let restyled = try marked.render(scale: scale, stylesheet: restyling.stylesheet(params))
                // Compared apart from the expectation, which would print every pixel.
                let same = restyled == rewritten
                #expect(same, "\(label) at \(scale)x with \(colors)", sourceLocation: sourceLocation)
            }
        }
        // Variants that all drew the defaults would prove nothing.
        #expect(colored >= 8, "\(label): \(colored) variants set a color", sourceLocation: sourceLocation)
    }

    @Test(arguments: [
        (
            "presentation attributes",
            "<rect width='20' height='10' fill='#000000'/><rect y='10' width='20' height='10' fill='lime'/>"
        ),
        (
            "named and short colors",
            "<rect width='20' height='10' fill='black'/><rect y='10' width='20' height='10' fill='#0f0'/>"
        ),
        ("rgb()", "<rect width='20' height='20' fill=' rgb(0, 0, 0) '/>"),
        (
            "inherited from groups",
            "<g fill='#000'><g stroke='#0f0' stroke-width='3'><rect x='3' y='3' width='14' height='14'/></g></g>"
        ),
        ("currentColor", "<g color='#00ff00'><rect width='20' height='20' fill='currentColor'/></g>"),
        (
            "initial fill and color",
            "<rect width='20' height='10'/><rect y='10' width='20' height='10' fill='currentColor'/>"
        ),
        (
            "strokes with opacity",
            "<rect x='2' y='2' width='16' height='16' fill='#0f0' fill-opacity='0.5' stroke='#000' stroke-width='4' stroke-opacity='0.7'/>"
        ),
        (
            "group opacity",
            "<g opacity='0.6'><rect width='20' height='20' fill='#000'/><circle cx='10' cy='10' r='6' fill='#0f0'/></g>"
        ),
        (
            "gradient stops",
            "<linearGradient id='g'><stop offset='0' stop-color='#000'/><stop offset='0.5'/><stop offset='1' stop-color='#0f0' stop-opacity='0.5'/></linearGradient><rect width='20' height='20' fill='url(#g)'/>"
        ),
        (
            "a symbol used twice",
            "<defs><symbol id='s'><rect width='8' height='8' fill='#0f0'/></symbol></defs><use xlink:href='#s'/><use xlink:href='#s' x='10' y='10'/><rect x='10' width='8' height='8'/>"
        ),
        (
            "a pattern",
            "<pattern id='t' width='4' height='4' patternUnits='userSpaceOnUse'><rect width='2' height='2' fill='#000'/><rect x='2' y='2' width='2' height='2' fill='#0f0'/></pattern><rect width='20' height='20' fill='url(#t)'/>"
        ),
        (
            "a mask and a clip",
            "<mask id='m'><rect width='20' height='20' fill='#fff'/><circle cx='10' cy='10' r='4' fill='#000'/></mask><clipPath id='c'><circle cx='10' cy='10' r='9'/></clipPath><rect width='20' height='20' fill='#0f0' mask='url(#m)' clip-path='url(#c)'/>"
        ),
        (
            "markers",
            "<marker id='k' markerWidth='4' markerHeight='4' refX='2' refY='2'><circle cx='2' cy='2' r='2' fill='#0f0'/></marker><path d='M2 2 L18 18' stroke='#000' stroke-width='2' marker-end='url(#k)' marker-start='url(#k)'/>"
        ),
    ])
    func restyledVariantsDrawAsRewrittenOnes(_ label: String, _ body: String) throws {
        try Self.expectRestylingDrawsAsRewriting(try SVGTemplate(bytes: Array(Self.document(body).utf8)), label)
    }

    /// Threads drawing variants of one icon at once share its marked document (one at a time,
    /// the others loading their own): each gets its own variant's pixels.
    @Test func concurrentVariantsOfOneIconGetTheirOwnColors() throws {
        let badge = try IconSource(path: TestSupport.icons.appendingPathComponent("badge.svg").path)
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 48) { index in
            let color = String(format: "#%06x", (index * 2_654_435_761) & 0xFFFFFF)
            do {
                let params = badge.resolve(try IconParameters(parsing: ["badge_color": color]))
                let drawn = try badge.render(params, scale: 1 + Double(index % 3)).image
                let rewritten = try LoadedSVG(bytes: badge.template.apply(params)).render(scale: 1 + Double(index % 3))
                if drawn != rewritten { failures.withLock { $0.append(color) } }
            } catch {
                failures.withLock { $0.append("\(color): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
    }

    /// Render workers keep the marked documents of recent icons: variants of several icons in
    /// turn, and their defaults (no stylesheet), each get their own pixels.
    @Test func workersDrawVariantsOfSeveralIconsInTurn() throws {
        let sources = try TestSupport.requiredSVGFiles(in: TestSupport.icons, atLeast: 4).map {
            try IconSource(path: $0.path)
        }
        for round in 0..<3 {
            for source in sources {
                let name = try #require(source.parameters.first?.name)
                let colors = round == 1 ? [:] : [name: String(format: "#%06x", (round * 7_919 + name.count) & 0xFFFFFF)]
                let params = source.resolve(try IconParameters(parsing: colors))
                let isolated = try source.render(params, scale: 2, placement: .isolated(TestSupport.isolated)).image
                let rewritten = try LoadedSVG(bytes: source.template.apply(params)).render(scale: 2)
                let same = isolated == rewritten
                #expect(same, "\(source.name) in round \(round)")
            }
        }
    }

    /// In process, one variant at two ratios is one parse (its rewritten document), and many
    /// variants are two (the first rewritten, then the marked template for all the others).
    @Test func restylingStartsWithTheSecondVariant() throws {
        let path = TestSupport.icons.appendingPathComponent("badge.svg").path
        func parses(colors: [String], scales: [Double]) throws -> Int {
            let badge = try IconSource(path: path)
            let before = LibrsvgCounters.documentsLoadedOnThisThread
            for color in colors {
                let params = badge.resolve(try IconParameters(parsing: ["badge_color": color]))
                for scale in scales { _ = try badge.render(params, scale: scale) }
            }
            return LibrsvgCounters.documentsLoadedOnThisThread - before
        }
        #expect(try parses(colors: ["#ff0000"], scales: [1, 2]) == 1)
        #expect(try parses(colors: ["#ff0000", "#00ff00", "#0000ff", "teal", "navy"], scales: [1, 2]) == 2)
    }

    /// The repository's icons draw the same restyled as rewritten; marker.svg declares its
    /// paints in a `style` attribute, which a user stylesheet could override, so it is
    /// rewritten instead (no restyling), and the three others are restyled.
    @Test func theRepositorysIconsRestyleAsTheyRewrite() throws {
        var restyled: [String] = []
        for file in try TestSupport.requiredSVGFiles(in: TestSupport.icons, atLeast: 4) {
            let template = try SVGTemplate(bytes: [UInt8](try Data(contentsOf: file)))
            guard template.restyling != nil else {
                #expect(file.lastPathComponent == "marker.svg", "\(file.lastPathComponent) is not restyled")
                continue
            }
            try Self.expectRestylingDrawsAsRewriting(template, file.lastPathComponent)
            restyled.append(file.lastPathComponent)
        }
        #expect(restyled == ["badge.svg", "flag.svg", "label.svg"])
    }

    @Test(arguments: [
        ("a style sheet", "<style>rect { fill: #0f0 }</style><rect width='20' height='20' fill='#000'/>", ""),
        ("a style attribute with a paint", "<rect width='20' height='20' fill='#000' style='fill: red'/>", ""),
        ("a style attribute on the root", "<rect width='20' height='20'/>", "style='fill: #00f'"),
        ("a paint server with a fallback", "<rect width='20' height='20' fill='url(#none) #000'/>", ""),
        ("a character reference", "<rect width='20' height='20' fill='&#35;000'/>", ""),
        ("a marker attribute of its own", "<rect width='20' height='20' fill='#000' data-iconr='0'/>", ""),
        (
            "another file drawn",
            "<image href='other.png' width='20' height='20'/><rect width='9' height='9' fill='#000'/>", ""
        ),
    ])
    func declarationsAStylesheetCouldOverrideAreRewritten(_ label: String, _ body: String, _ root: String) throws {
        let template = try SVGTemplate(bytes: Array(Self.document(body, root: root).utf8))
        #expect(template.restyling == nil, "\(label)")
    }

    @Test func anXMLStylesheetIsRewritten() throws {
        let text =
            "<?xml-stylesheet type='text/css' href='style.css'?>\n" + Self.document("<rect width='20' height='20'/>")
        #expect(try SVGTemplate(bytes: Array(text.utf8)).restyling == nil)
    }

    @Test func aTemplateWithoutParametersIsNotRestyled() throws {
        let text = "<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'><rect width='4' height='4'/></svg>"
        #expect(try SVGTemplate(bytes: Array(text.utf8)).restyling == nil)
    }
}
