import Glibc
import IconrCore
import Testing

@testable import IconrRender

/// The C door itself: the worker protocol, and librsvg handles that never outlive their use.
struct RenderTests {
    static let square = Array(
        "<svg xmlns='http://www.w3.org/2000/svg' width='8' height='6'><rect width='8' height='6' fill='#c00'/></svg>"
            .utf8)

    /// The name cache keys give librsvg's file is the one its own links lead to, relative or
    /// absolute, in another folder or the same.
    @Test func aLibraryFilesNameFollowsItsOwnLinks() throws {
        var template = Array("/tmp/iconr-links-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            Issue.record("mkdtemp: \(errno)")
            return
        }
        let folder = String(cString: made)
        let real = folder + "/real/libx.so.2.1.0"
        defer {
            for name in ["/libx.so.2", "/libx.so.2.1", "/libx.so", "/real/libx.so.2.1.0"] { unlink(folder + name) }
            rmdir(folder + "/real")
            rmdir(folder)
        }
        #expect(mkdir(folder + "/real", 0o755) == 0)
        let file = open(real, O_CREAT | O_WRONLY, 0o644)
        #expect(file >= 0)
        close(file)
        // libx.so.2 -> libx.so.2.1 (relative, same folder) -> .../real/libx.so.2.1.0 (absolute)
        #expect(symlink("libx.so.2.1", folder + "/libx.so.2") == 0)
        #expect(symlink(real, folder + "/libx.so.2.1") == 0)
        // libx.so -> real/libx.so.2.1.0 (relative, into a folder)
        #expect(symlink("real/libx.so.2.1.0", folder + "/libx.so") == 0)
        #expect(Librsvg.fileName(of: folder + "/libx.so.2") == "libx.so.2.1.0")
        #expect(Librsvg.fileName(of: folder + "/libx.so") == "libx.so.2.1.0")
        #expect(Librsvg.fileName(of: real) == "libx.so.2.1.0")
        #expect(Librsvg.fileName(of: folder + "/missing.so") == "missing.so")
    }

    @Test func libxmlsErrorPrefixIsShortenedToThePlace() throws {
        #expect(
            withoutLibxmlPrefix("Error domain 1 code 77 on line 3 column 1 of data: Premature end of data")
                == "line 3 column 1: Premature end of data")
        #expect(
            withoutLibxmlPrefix("parse: Error domain 1 code 4 on line 1 column 9 of data: Start tag expected; é")
                == "parse: line 1 column 9: Start tag expected; é")
        // Only the first prefix is cut, and only a whole one: digits, then `code`, `on` and `of data: `.
        let twice = "Error domain 1 code 2 on a of data: x; Error domain 3 code 4 on b of data: y"
        #expect(withoutLibxmlPrefix(twice) == "a: x; Error domain 3 code 4 on b of data: y")
        for untouched in [
            "Error domain code 2 on a of data: x", "Error domain 1 code 2 on a", "Error domain 12",
            "Error domain 1 code x on a of data: y", "no prefix", "",
        ] {
            #expect(withoutLibxmlPrefix(untouched) == untouched)
        }
        #expect(withoutLibxmlPrefix("Error domain 1 code 2 on  of data: z") == ": z")
    }

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

    /// Frames come back whole however the stream splits them: several in one read, one over
    /// many reads of a byte, a message larger than a read asks for; a stream that ends
    /// inside a frame is `.end`, and a length over the limit is refused before its bytes.
    @Test func framesSurviveAnySplitOfTheStream() throws {
        let messages: [[UInt8]] = [[], [7], Array(0..<200).map { UInt8($0) }, [UInt8](repeating: 9, count: 40_000)]
        let stream = messages.flatMap(frame)
        for chunkLimit in [1, 3, 8, 9, 4096, Int.max] {
            var offset = 0
            var reader = FrameReader()
            func read(_ buffer: UnsafeMutableRawBufferPointer) -> Int {
                let count = min(buffer.count, chunkLimit, stream.count - offset)
                buffer.copyBytes(from: stream[offset..<offset + count])
                offset += count
                return count
            }
            for message in messages {
                guard case .message(let received) = reader.next(limit: 1 << 20, read: read) else {
                    Issue.record("no message \(message.count) with reads of at most \(chunkLimit) bytes")
                    return
                }
                #expect(received == message, "reads of at most \(chunkLimit) bytes")
            }
            guard case .end = reader.next(limit: 1 << 20, read: read) else {
                Issue.record("more than the messages sent")
                return
            }
        }
        var cut = Array(frame([1, 2, 3]).dropLast())
        var reader = FrameReader()
        let end = reader.next(limit: 1 << 20) { buffer in
            let count = min(buffer.count, cut.count)
            buffer.copyBytes(from: cut.prefix(count))
            cut.removeFirst(count)
            return count
        }
        guard case .end = end else {
            Issue.record("a frame cut short came back as \(end)")
            return
        }
        var long = FrameReader()
        let header = frame([UInt8](repeating: 0, count: 2000)).prefix(8)
        let refused = long.next(limit: 1999) { buffer in
            buffer.copyBytes(from: header)
            return header.count
        }
        guard case .tooLong(2000) = refused else {
            Issue.record("a length over the limit came back as \(refused)")
            return
        }
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
