import Foundation
import Iconr
import IconrRender
import IconrTestSupport
import Testing

struct RasterizationTests {
    private static func svg(width: String, height: String, viewBox: String? = nil) -> String {
        "<svg xmlns='http://www.w3.org/2000/svg' width='\(width)' height='\(height)'"
            + (viewBox.map { " viewBox='\($0)'" } ?? "") + "><rect width='100%' height='100%'/></svg>"
    }

    @Test(arguments: [
        (1.0, PixelSize(width: 15, height: 15)), (1.5, PixelSize(width: 23, height: 23)),
        (2.0, PixelSize(width: 30, height: 30)), (3.0, PixelSize(width: 45, height: 45)),
        (0.01, PixelSize(width: 1, height: 1)), (0.7, PixelSize(width: 11, height: 11)),
    ])
    func sizesFollowMapboxRounding(_ scale: Double, _ expected: PixelSize) throws {
        let icon = try TestSupport.template(Self.svg(width: "15", height: "15")).render(scale: scale)
        #expect(icon.size == expected)
        // Drawn to fill the raster exactly: the corners are covered.
        #expect(icon.image[0, 0].alpha == 255)
        #expect(icon.image[expected.width - 1, expected.height - 1].alpha == 255)
    }

    @Test(
        arguments: [
            ("48", "48.00012", nil, 1.0, PixelSize(width: 48, height: 48)),
            ("10.4", "10.6", nil, 1.0, PixelSize(width: 10, height: 11)),
            ("10.4", "10.6", nil, 2.0, PixelSize(width: 21, height: 21)),
            ("100%", "100%", "0 0 20 12.5", 2.0, PixelSize(width: 40, height: 25)),
            ("10mm", "5mm", nil, 1.0, PixelSize(width: 38, height: 19)),
            ("0.2", "0.2", nil, 1.0, PixelSize(width: 1, height: 1)),
        ] as [(String, String, String?, Double, PixelSize)])
    func intrinsicSizesComeFromWidthHeightElseViewBox(
        _ width: String, _ height: String, _ viewBox: String?,
        _ scale: Double, _ expected: PixelSize
    ) throws {
        let template = try TestSupport.template(Self.svg(width: width, height: height, viewBox: viewBox))
        #expect(try template.pixelSize(scale: scale) == expected)
        #expect(try template.render(scale: scale).size == expected)
    }

    @Test func aDocumentWithoutSizeTakesTheSizeOfItsDrawingAsRsvgConvertDoes() throws {
        let template = try TestSupport.template(
            "<svg xmlns='http://www.w3.org/2000/svg'><rect x='2' y='3' width='12' height='5'/></svg>")
        let size = try template.intrinsicSize()
        #expect(size.width == 12 && size.height == 5)
    }

    @Test(arguments: [0.0, -1.0, .infinity, .nan])
    func rejectsScalesThatAreNotFinitePositive(_ scale: Double) throws {
        let template = try TestSupport.template(Self.svg(width: "15", height: "15"))
        #expect(throws: IconrError.self) { try template.render(scale: scale) }
    }

    @Test func refusesRastersOverTheLimitBeforeDrawing() throws {
        let huge = try TestSupport.template(Self.svg(width: "100000", height: "100000"))
        #expect { try huge.render() } throws: { error in
            "\(error)" == "test.svg: a 100000x100000 raster exceeds the limit of 4096x4096"
        }
        let small = try TestSupport.template(Self.svg(width: "15", height: "15"))
        let limits = RenderLimits(maxSize: PixelSize(width: 100, height: 100))
        #expect(throws: IconrError.self) { try small.render(scale: 7, limits: limits) }
        #expect(try small.render(scale: 6, limits: limits).size == PixelSize(width: 90, height: 90))
        #expect(throws: IconrError.self) { try small.render(scale: 1e300) }
    }

    @Test func pixelsAreStraightRGBA() throws {
        // 50% black over nothing: straight alpha keeps the color at full strength.
        let icon = try TestSupport.template(
            "<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'><rect width='4' height='4' fill='#ff8000' fill-opacity='0.5'/></svg>"
        ).render()
        let pixel = icon.image[1, 1]
        #expect(
            pixel.red == 255 && abs(Int(pixel.green) - 128) <= 1 && pixel.blue == 0 && abs(Int(pixel.alpha) - 128) <= 1)
    }

    @Test func pngRoundTripsThroughLibpngAndPngcheck() throws {
        let flag = try IconSource(path: TestSupport.icons.appendingPathComponent("flag.svg").path)
        let icon = try flag.render(params: ["flag_color": "#800080"], scale: 2)
        let png = try icon.png
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(try PNGDecoder.decode(png) == icon.image)
        let pngcheck = try #require(
            TestSupport.which("pngcheck"), "pngcheck is not installed (apt-get install pngcheck)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "iconr-roundtrip-\(UUID().uuidString).png")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(png).write(to: file)
        let result = try TestSupport.run(pngcheck, [file.path])
        #expect(result.status == 0, "\(String(decoding: result.stdout, as: UTF8.self))")
        #expect(String(decoding: result.stdout, as: UTF8.self).contains("48x48, 32-bit RGB+alpha"))
    }

    @Test func isolatedAndInProcessRendersAgree() throws {
        let badge = try IconSource(path: TestSupport.icons.appendingPathComponent("badge.svg").path)
        for scale in [1.0, 2.0, 1.5] {
            let inProcess = try badge.render(params: ["badge_color": "orange"], scale: scale)
            let isolated = try badge.render(
                params: ["badge_color": "orange"], scale: scale, placement: .isolated(TestSupport.isolated))
            #expect(inProcess == isolated)
        }
    }

    @Test func concurrentRendersFromManyThreadsMatchSerialOnes() throws {
        let templates = try ["flag", "marker", "badge", "label"].map {
            try IconSource(path: TestSupport.icons.appendingPathComponent("\($0).svg").path)
        }
        let colors = ["red", "#800080", "yellow", "rgb(10, 200, 30)"]
        let jobs = templates.flatMap { template in colors.flatMap { color in [1.0, 2.0].map { (template, color, $0) } }
        }
        @Sendable func render(_ job: (IconSource, String, Double)) throws -> RasterImage {
            let name = job.0.parameters.first?.name ?? ""
            return try job.0.render(params: [name: job.1], scale: job.2).image
        }
        let serial = try jobs.map(render)
        let results = Results(count: jobs.count * 8)
        DispatchQueue.concurrentPerform(iterations: jobs.count * 8) { index in
            results.set(index, try? render(jobs[index % jobs.count]))
        }
        for index in 0..<(jobs.count * 8) {
            #expect(results.get(index) == serial[index % jobs.count], "job \(index)")
        }
    }
}

/// A lock-protected slot per job, written from concurrent threads.
private final class Results: @unchecked Sendable {
    private var images: [RasterImage?]
    private let lock = NSLock()

    init(count: Int) { images = Array(repeating: nil, count: count) }
    func set(_ index: Int, _ image: RasterImage?) { lock.withLock { images[index] = image } }
    func get(_ index: Int) -> RasterImage? { lock.withLock { images[index] } }
}
