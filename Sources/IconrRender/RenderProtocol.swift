import IconrCore

/// What the parent asks a worker: to render at a scale, or (scale 0) only to measure the
/// document and the boxes of `elementIDs`. Little-endian, framed by `frame(_:)`.
struct RenderRequest {
    var svg: [UInt8]
    var scale: Double
    var maxSize: PixelSize
    var elementIDs: [String] = []
    /// Where the document's relative references resolve (its file); empty for none.
    var baseFile = ""
    /// The user stylesheet to draw with (`SVGTemplate.Restyling`); empty for none.
    var stylesheet: [UInt8] = []

    var isMeasurement: Bool { scale == 0 }

    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(svg.count + 32)
        bytes.append(littleEndian: scale.bitPattern)
        bytes.append(littleEndian: UInt64(maxSize.width))
        bytes.append(littleEndian: UInt64(maxSize.height))
        bytes.append(littleEndian: UInt64(elementIDs.count))
        for id in elementIDs {
            bytes.append(littleEndian: UInt64(id.utf8.count))
            bytes += Array(id.utf8)
        }
        bytes.append(littleEndian: UInt64(baseFile.utf8.count))
        bytes += Array(baseFile.utf8)
        bytes.append(littleEndian: UInt64(stylesheet.count))
        bytes += stylesheet
        return bytes + svg
    }

    init(
        svg: [UInt8], scale: Double, maxSize: PixelSize, elementIDs: [String] = [], baseFile: String? = nil,
        stylesheet: [UInt8]? = nil
    ) {
        self.svg = svg
        self.scale = scale
        self.maxSize = maxSize
        self.elementIDs = elementIDs
        self.baseFile = baseFile ?? ""
        self.stylesheet = stylesheet ?? []
    }

    init?(decoding bytes: [UInt8]) {
        var reader = ByteReader(bytes)
        guard let scale = reader.uint64(), let width = reader.uint64(), let height = reader.uint64(),
            let count = reader.uint64(), count < 1024
        else { return nil }
        self.scale = Double(bitPattern: scale)
        maxSize = PixelSize(width: Int(clamping: width), height: Int(clamping: height))
        for _ in 0..<count {
            guard let length = reader.uint64(), let id = reader.bytes(Int(clamping: length)) else { return nil }
            elementIDs.append(String(decoding: id, as: UTF8.self))
        }
        guard let length = reader.uint64(), length < 4096, let base = reader.bytes(Int(clamping: length)),
            !base.contains(0)
        else { return nil }
        baseFile = String(decoding: base, as: UTF8.self)
        guard let cssLength = reader.uint64(), let css = reader.bytes(Int(clamping: cssLength)) else { return nil }
        stylesheet = css
        svg = reader.rest()
    }
}

/// A worker's answer: a raster, a size, or the error the in-process renderer would have thrown.
enum RenderReply {
    case image(RasterImage)
    case measurement(SVGMeasurement)

    private enum Tag: UInt8 {
        case image, invalidDocument, noIntrinsicSize, invalidScale, tooLarge, drawingFailed, size, outOfMemory
    }

    static func encode(_ result: Result<RenderReply, RenderError>) -> [UInt8] {
        var bytes: [UInt8] = []
        switch result {
        case .success(.measurement(let measurement)):
            bytes = [Tag.size.rawValue]
            bytes.append(littleEndian: measurement.width.bitPattern)
            bytes.append(littleEndian: measurement.height.bitPattern)
            let boxes = measurement.elementBoxes.sorted { $0.key < $1.key }
            bytes.append(littleEndian: UInt64(boxes.count))
            for (id, box) in boxes {
                bytes.append(littleEndian: UInt64(id.utf8.count))
                bytes += Array(id.utf8)
                for value in [box.x, box.y, box.width, box.height] { bytes.append(littleEndian: value.bitPattern) }
            }
        case .success(.image(let image)):
            bytes.reserveCapacity(image.pixels.count + 17)
            bytes.append(Tag.image.rawValue)
            bytes.append(littleEndian: UInt64(image.size.width))
            bytes.append(littleEndian: UInt64(image.size.height))
            bytes += image.pixels
        case .failure(.invalidDocument(let message)):
            bytes = [Tag.invalidDocument.rawValue] + Array(message.utf8)
        case .failure(.noIntrinsicSize):
            bytes = [Tag.noIntrinsicSize.rawValue]
        case .failure(.invalidScale(let scale)):
            bytes = [Tag.invalidScale.rawValue]
            bytes.append(littleEndian: scale.bitPattern)
        case .failure(.tooLarge(let size, let limit)):
            bytes = [Tag.tooLarge.rawValue]
            for value in [size.width, size.height, limit.width, limit.height] {
                bytes.append(littleEndian: UInt64(value))
            }
        case .failure(.outOfMemory(let size)):
            bytes = [Tag.outOfMemory.rawValue]
            for value in [size.width, size.height] { bytes.append(littleEndian: UInt64(value)) }
        case .failure(.drawingFailed(let message)):
            bytes = [Tag.drawingFailed.rawValue] + Array(message.utf8)
        case .failure(let other):
            bytes = [Tag.drawingFailed.rawValue] + Array(other.description.utf8)
        }
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws(RenderError) -> Result<RenderReply, RenderError> {
        var reader = ByteReader(bytes)
        guard let tagByte = reader.byte(), let tag = Tag(rawValue: tagByte) else {
            throw RenderError.workerFailed("unreadable reply")
        }
        switch tag {
        case .image:
            guard let width = reader.uint64(), let height = reader.uint64(),
                case let pixels = reader.rest(), pixels.count == Int(width) * Int(height) * 4
            else {
                throw RenderError.workerFailed("truncated image in reply")
            }
            return .success(
                .image(RasterImage(size: PixelSize(width: Int(width), height: Int(height)), pixels: pixels)))
        case .size:
            guard let width = reader.uint64(), let height = reader.uint64(), let count = reader.uint64(), count < 1024
            else {
                throw RenderError.workerFailed("truncated size in reply")
            }
            var boxes: [String: SVGMeasurement.Box] = [:]
            for _ in 0..<count {
                guard let length = reader.uint64(), let id = reader.bytes(Int(clamping: length)),
                    let x = reader.uint64(), let y = reader.uint64(), let boxWidth = reader.uint64(),
                    let boxHeight = reader.uint64()
                else {
                    throw RenderError.workerFailed("truncated element boxes in reply")
                }
                boxes[String(decoding: id, as: UTF8.self)] = SVGMeasurement.Box(
                    x: Double(bitPattern: x), y: Double(bitPattern: y),
                    width: Double(bitPattern: boxWidth), height: Double(bitPattern: boxHeight))
            }
            return .success(
                .measurement(
                    SVGMeasurement(
                        width: Double(bitPattern: width), height: Double(bitPattern: height),
                        elementBoxes: boxes)))
        case .invalidDocument:
            return .failure(.invalidDocument(String(decoding: reader.rest(), as: UTF8.self)))
        case .noIntrinsicSize:
            return .failure(.noIntrinsicSize)
        case .invalidScale:
            return .failure(.invalidScale(Double(bitPattern: reader.uint64() ?? 0)))
        case .tooLarge:
            let values = (0..<4).map { _ in Int(clamping: reader.uint64() ?? 0) }
            return .failure(
                .tooLarge(
                    PixelSize(width: values[0], height: values[1]),
                    limit: PixelSize(width: values[2], height: values[3])))
        case .outOfMemory:
            let values = (0..<2).map { _ in Int(clamping: reader.uint64() ?? 0) }
            return .failure(.outOfMemory(PixelSize(width: values[0], height: values[1])))
        case .drawingFailed:
            return .failure(.drawingFailed(String(decoding: reader.rest(), as: UTF8.self)))
        }
    }
}

struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint64() -> UInt64? {
        guard offset + 8 <= bytes.count else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        offset += 8
        return value
    }

    mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, offset + count <= bytes.count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

extension Array where Element == UInt8 {
    mutating func append(littleEndian value: UInt64) {
        for index in 0..<8 { append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}

/// Framed messages read from a stream, as `frame` writes them: an 8-byte little-endian
/// length, then that many bytes. Each read asks for up to 16 KiB more than the frame still
/// needs, so that a small message comes with its header in one read (a server's miss was
/// two reads and two polls); bytes past a frame are kept for the next.
struct FrameReader {
    enum Frame {
        case message([UInt8])
        /// The stream ended before a whole frame.
        case end
        /// A length over the limit.
        case tooLong(UInt64)
    }

    private static let readAhead = 16 << 10
    /// Bytes read: those from `start` to `end` are not returned yet.
    private var buffer: [UInt8] = []
    private var start = 0, end = 0

    /// The next frame, its length at most `limit`, read with `read`: it fills the start of
    /// the buffer it is given and returns how many bytes it read, 0 at the stream's end.
    mutating func next<Failure: Error>(
        limit: UInt64, read: (UnsafeMutableRawBufferPointer) throws(Failure) -> Int
    ) throws(Failure) -> Frame {
        // A long-lived reader (a render worker's) does not keep the room of its largest frame.
        if start == end, buffer.count > 1 << 20 { (buffer, start, end) = ([], 0, 0) }
        // The bytes from `start` the frame takes: its header's, then (once the header is in) all.
        var needed = 8
        while true {
            if needed == 8, end - start >= 8 {
                let length = buffer.withUnsafeBytes {
                    UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: start, as: UInt64.self))
                }
                guard length <= limit else { return .tooLong(length) }
                needed = 8 + Int(length)
            }
            if end - start >= needed {
                let message = Array(buffer[start + 8..<start + needed])
                start += needed
                return .message(message)
            }
            // What is pending moves to the front, and the buffer grows to hold the frame and the read-ahead.
            if start > 0 {
                buffer.withUnsafeMutableBytes { bytes in
                    guard let base = bytes.baseAddress else { return }
                    // copyMemory is a memmove: the two may overlap.
                    base.copyMemory(from: base + start, byteCount: end - start)
                }
                end -= start
                start = 0
            }
            if buffer.count < needed + Self.readAhead {
                buffer.append(contentsOf: repeatElement(0, count: needed + Self.readAhead - buffer.count))
            }
            let filled = end
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(Failure) -> Int in
                    try read(UnsafeMutableRawBufferPointer(rebasing: bytes[filled...]))
                }
            }
            let count = try result.get()
            guard count > 0 else { return .end }
            end += min(count, buffer.count - end)
        }
    }
}
