import Iconr
import IconrCore
import IconrHTTP
import IconrRender

/// gzip for the JSON and HTML `iconr serve` answers (sprite indexes, styles, the catalog),
/// when a request accepts it: the compressed file has its own entity tag (the plain one with
/// `-gz` before its closing quote), and every answer of those types says `Vary:
/// Accept-Encoding`, so that caches keep the two apart. PNGs are compressed already.
struct ContentEncoding {
    /// The media types compressed.
    static let compressedTypes = ["application/json", "text/html"]
    /// Bodies smaller than this are sent as they are (gzip's own bytes would outweigh it).
    static let smallest = 256
    /// libdeflate's level: 6 compresses a Maki index about as well as 9, in a third of the time.
    static let level: Int32 = 6

    /// The request's `Accept-Encoding`, read only for an answer that could be compressed (an
    /// icon, the hot path, never is).
    let acceptEncoding: String?
    /// Whether the client holds a compressed file (a marked tag in `If-None-Match`).
    let holdsCompressed: Bool

    init(_ request: HTTPRequest) {
        acceptEncoding = request.headers["accept-encoding"]
        holdsCompressed = request.headers["if-none-match"]?.containsUTF8("-gz\"") == true
    }

    /// Whether the request accepts gzip (`Accept-Encoding: gzip`, not with `q=0`).
    var acceptsGzip: Bool {
        (acceptEncoding ?? "").split(separator: ",").contains { item in
            let parts = item.split(separator: ";").map { $0.trimmingSpaces.lowercased() }
            guard let coding = parts.first, ["gzip", "x-gzip", "*"].contains(coding) else { return false }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return weight > 0
        }
    }

    /// `request` with each tag of `If-None-Match` a compressed file's tag named by its plain
    /// one, which the routes compare.
    func plainTags(_ request: HTTPRequest) -> HTTPRequest {
        guard holdsCompressed, let match = request.headers["if-none-match"] else { return request }
        var request = request
        request.headers["if-none-match"] = match.split(separator: ",").map { tag in
            let text = tag.trimmingSpaces
            return text.hasSuffix("-gz\"") ? String(text.dropLast(4)) + "\"" : text
        }.joined(separator: ", ")
        return request
    }

    /// `response` as the client gets it: a 200 of a compressed type gzip-compressed when the
    /// request accepts it (from `cache`, by tag, when made before), its tag marked; a 304 of
    /// one with the marked tag; either with `Vary: Accept-Encoding`.
    func encoded(_ response: HTTPResponse, compressed cache: LRUCache<String, [UInt8]>) -> HTTPResponse {
        let type = response.headers.last { $0.name == "Content-Type" }?.value ?? ""
        let compressible = Self.compressedTypes.contains { type.hasPrefix($0) }
        let tag = response.headers.last { $0.name == "ETag" }?.value
        var response = response
        switch response.status {
        case 200 where compressible:
            response.headers.append(("Vary", "Accept-Encoding"))
            guard response.body.count >= Self.smallest, acceptsGzip else { return response }
            let body: [UInt8]
            if let tag, let known = cache.value(for: tag) {
                body = known
            } else {
                guard let made = try? Deflate.gzip(response.body, level: Self.level), made.count < response.body.count
                else { return response }
                if let tag { cache.insert(made, for: tag, cost: made.count) }
                body = made
            }
            response.body = body
            response.headers.append(("Content-Encoding", "gzip"))
            if let tag {
                response.headers = response.headers.map { $0.name == "ETag" ? ($0.name, Self.marked(tag)) : $0 }
            }
        case 304 where holdsCompressed && acceptsGzip:
            // Its representation's type is not in a 304: the tag the client holds says it.
            guard let tag else { return response }
            response.headers = response.headers.map { $0.name == "ETag" ? ($0.name, Self.marked(tag)) : $0 }
            response.headers.append(("Vary", "Accept-Encoding"))
        default:
            break
        }
        return response
    }

    /// A compressed file's tag: `"abc"` becomes `"abc-gz"`.
    static func marked(_ tag: String) -> String {
        tag.hasSuffix("\"") ? String(tag.dropLast()) + "-gz\"" : tag + "-gz"
    }
}
