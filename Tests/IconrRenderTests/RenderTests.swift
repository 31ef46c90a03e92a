import IconrCore
import Testing

@testable import IconrRender

/// The C door itself: the worker protocol, and librsvg handles that never outlive their use.
struct RenderTests {
    static let square = Array(
        "<svg xmlns='http://www.w3.org/2000/svg' width='8' height='6'><rect width='8' height='6' fill='#c00'/></svg>"
            .utf8)

    @Test func requestsRoundTrip() throws {
        let request = RenderRequest(
            svg: Self.square, scale: 1.5, maxSize: PixelSize(width: 300, height: 200),
            elementIDs: ["a", "mapbox-content"])
        let decoded = try #require(RenderRequest(decoding: request.encoded()))
        #expect(
            decoded.svg == request.svg && decoded.scale == 1.5 && decoded.maxSize == request.maxSize
                && decoded.elementIDs == request.elementIDs && !decoded.isMeasurement)
        #expect(RenderRequest(decoding: [1, 2, 3]) == nil)
    }

    @Test(arguments: [
        RenderError.invalidDocument("line 3: unexpected end"), .noIntrinsicSize, .invalidScale(-1),
        .tooLarge(PixelSize(width: 50_000, height: 2), limit: PixelSize(width: 4096, height: 4096)),
        .outOfMemory(PixelSize(width: 30_000, height: 30_000)), .drawingFailed("cairo: out of memory"),
    ])
    func everyErrorAWorkerReportsRoundTrips(_ error: RenderError) throws {
        let decoded = try RenderReply.decode(RenderReply.encode(.failure(error)))
        guard case .failure(let again) = decoded else {
            Issue.record("an error came back as a success")
            return
        }
        #expect(again == error)
    }

    @Test func repliesRoundTrip() throws {
        let image = try Rasterizer.render(Self.square, scale: 2)
        guard case .success(.image(let back)) = try RenderReply.decode(RenderReply.encode(.success(.image(image))))
        else {
            Issue.record("no image came back")
            return
        }
        #expect(back == image)
        let measurement = SVGMeasurement(
            width: 8, height: 6, elementBoxes: ["a": .init(x: 1, y: 2, width: 3, height: 4)])
        guard
            case .success(.measurement(let measured)) = try RenderReply.decode(
                RenderReply.encode(.success(.measurement(measurement))))
        else {
            Issue.record("no measurement came back")
            return
        }
        #expect(measured == measurement)
        #expect(throws: RenderError.self) { try RenderReply.decode([0, 1]) }
    }

    /// 10,000 loads and renders (default colors through one loaded document, new colors
    /// through one-shot loads, failures too) leave no librsvg handle alive. Other tests of the
    /// process hold a few handles at any moment; a handle kept per render would be thousands.
    @Test func noHandleOutlivesItsRenders() throws {
        let alive = LibrsvgCounters.documentsAlive
        let loads = LibrsvgCounters.documentsLoadedOnThisThread
        let document = try LoadedSVG(bytes: Self.square)
        for index in 0..<10_000 {
            switch index % 4 {
            case 0: _ = try document.render(scale: 1)
            case 1: _ = try Rasterizer.render(Self.square, scale: 0.5)
            case 2: #expect(throws: RenderError.self) { try Rasterizer.render(Array("<svg".utf8), scale: 1) }
            default:
                #expect(throws: RenderError.self) {
                    try Rasterizer.render(
                        Self.square, scale: 1, limits: RenderLimits(maxSize: PixelSize(width: 2, height: 2)))
                }
            }
        }
        #expect(LibrsvgCounters.documentsLoadedOnThisThread - loads >= 2_500)
        #expect(
            abs(LibrsvgCounters.documentsAlive - alive) < 500,
            "\(LibrsvgCounters.documentsAlive - alive) more handles alive")
    }
}
