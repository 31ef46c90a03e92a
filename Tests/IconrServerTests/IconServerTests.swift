import Dispatch
import Foundation
import Iconr
import IconrCore
import IconrHTTP
import IconrRender
import IconrServer
import IconrSystem
import IconrTestSupport
import Synchronization
import Testing

/// The routes of `iconr serve`, called in process (no sockets): what each answers, how it
/// caches, and how it refuses. Renders run in process here; the end-to-end tests run the
/// binary with isolated workers.
struct IconServerTests {
    let directory: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder
    let icons: URL
    let server: IconServer
    /// Moved ahead where a test would otherwise wait for a recheck.
    let clock = CacheClock()

    init() throws {
        scratch = try TemporaryFolder("iconr-server")
        directory = scratch.url
        icons = directory.appendingPathComponent("icons")
        try FileManager.default.createDirectory(
            at: icons.appendingPathComponent("roads"), withIntermediateDirectories: true)
        try TestSupport.copyBundledIcons(to: icons)
        try FileManager.default.copyItem(
            at: icons.appendingPathComponent("marker.svg"),
            to: icons.appendingPathComponent("roads/shield.svg"))
        try "secret".write(to: directory.appendingPathComponent("secret.svg"), atomically: true, encoding: .utf8)
        let style = #"""
            {"version": 8, "sources": {"points": {"type": "geojson", "data": {"type": "FeatureCollection", "features": [
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"c": "red"}}]}}},
             "layers": [{"id": "flags", "type": "symbol", "source": "points",
                         "layout": {"icon-image": ["image", "flag", {"params": {"flag_color": ["get", "c"]}}]}}]}
            """#
        try style.write(to: directory.appendingPathComponent("flags.json"), atomically: true, encoding: .utf8)
        var options = ServerOptions()
        options.iconSets = [("bundled", icons.path)]
        options.styles = [("flags", directory.appendingPathComponent("flags.json").path)]
        options.corsOrigin = "*"
        options.clock = clock
        server = try IconServer(options: options, placement: .inProcess)
    }

    private func get(_ target: String, headers: [String: String] = [:], method: String = "GET") -> HTTPResponse {
        let parts = target.split(separator: "?", maxSplits: 1)
        let query: [(name: String, value: String)] =
            parts.count > 1
            ? parts[1].split(separator: "&").map { pair in
                let halves = pair.split(separator: "=", maxSplits: 1)
                return (name: String(halves[0]), value: halves.count > 1 ? String(halves[1]) : "")
            } : []
        return server.respond(to: HTTPRequest(method: method, path: String(parts[0]), query: query, headers: headers))
    }

    private func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    private func errorMessage(_ response: HTTPResponse) throws -> String {
        let json = try JSONValue.parse(response.body)
        return try #require(
            json.objectValue?["error"]?.stringValue,
            "a one-line JSON error: \(String(decoding: response.body, as: UTF8.self))")
    }

    @Test func anIconIsTheVariantItsParamsAndScaleName() throws {
        let response = get("/icons/flag@2x.png?flag_color=%23800080")
        #expect(response.status == 200)
        #expect(header(response, "Content-Type") == "image/png")
        let served = try PNGDecoder.decode(response.body)
        let expected = try IconSource(path: icons.appendingPathComponent("flag.svg").path)
            .render(params: ["flag_color": "#800080"], scale: 2).image
        #expect(served.size == expected.size)
        #expect(TestSupport.maxChannelDifference(served, expected) == 0)
        // What addImage needs rides along; CORS lets a page read it.
        let metadata = try JSONValue.parse(Array(try #require(header(response, "Iconr-Image")).utf8))
        #expect(metadata.objectValue?["pixelRatio"] == .number(2))
        #expect(header(response, "Access-Control-Allow-Origin") == "*")
        #expect(header(response, "Access-Control-Expose-Headers")?.contains("Iconr-Image") == true)
        // Colors in any of the specification's syntaxes, URL-encoded; a fractional scale.
        let rgb = get("/icons/flag@1.5x.png?flag_color=rgb(128%2C%200%2C%20128)")
        #expect(rgb.status == 200)
        #expect(try PNGDecoder.decode(rgb.body).size == PixelSize(width: 36, height: 36))
        // Hex without "#", as sprite ids write it: the same variant.
        let bare = get("/icons/flag@2x.png?flag_color=800080")
        #expect(bare.status == 200 && bare.body == response.body)
        // A folder's icon by its id, and one with a set prefix.
        #expect(get("/icons/roads/shield.png").status == 200)
        #expect(get("/icons/bundled:flag.png").status == 200)
    }

    /// What iconr.js passes to addImage: stretch areas and content box in pixels at the
    /// scale, equal to what the sprite index says of the same icon.
    @Test func theImageHeaderCarriesStretchAndContentAtTheScale() throws {
        let response = get("/icons/label@2x.png")
        let text = try #require(header(response, "Iconr-Image"))
        let metadata = try #require(try JSONValue.parse(Array(text.utf8)).objectValue)
        let label = try IconSource(path: icons.appendingPathComponent("label.svg").path).render(scale: 2)
        #expect(
            metadata["width"] == .number(Double(label.size.width))
                && metadata["height"] == .number(Double(label.size.height)))
        #expect(metadata["stretchX"] == .array(label.stretchX.map { .array([.number($0.start), .number($0.end)]) }))
        #expect(metadata["stretchY"] == .array(label.stretchY.map { .array([.number($0.start), .number($0.end)]) }))
        let content = try #require(label.content)
        #expect(
            metadata["content"]
                == .array([content.left, content.top, content.right, content.bottom].map { .number($0) }))
        // The label is [8, 32] x [8, 16] stretchable at 1x (docs/cli.md): 16 to 64 at 2x.
        #expect(metadata["stretchX"] == .array([.array([.number(16), .number(64)])]))
        let index = try #require(
            try JSONValue.parse(get("/sprites/bundled/sprite@2x.json").body).objectValue?["label"]?.objectValue)
        #expect(
            index["stretchX"] == metadata["stretchX"] && index["stretchY"] == metadata["stretchY"]
                && index["content"] == metadata["content"])
    }

    /// `halo=W[,COLOR[,BLUR]]` bakes a ring around the icon as `render --halo` does: the image
    /// grows by the ring on every side, stretch areas and content move with it, and each halo
    /// is a file of its own (its own tag); a bad one is the client's mistake.
    @Test func aHaloIsBakedAroundAServedIcon() throws {
        let response = get("/icons/label@2x.png?halo=2,%23ff0000")
        try #require(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let served = try PNGDecoder.decode(response.body)
        let label = try IconSource(path: icons.appendingPathComponent("label.svg").path).render(scale: 2)
        let halo = try #require(Halo(parsing: "2,#ff0000"))
        let expected = halo.apply(to: label.image, scale: 2)
        // 2 px at 1x is 4 px at 2x on every side.
        #expect(served.size == PixelSize(width: label.size.width + 8, height: label.size.height + 8))
        #expect(TestSupport.maxChannelDifference(served, expected) == 0)
        #expect(served.hex(x: 1, y: served.size.height / 2) == "#ff0000ff", "the ring beside the label")
        let text = try #require(header(response, "Iconr-Image"))
        let metadata = try #require(try JSONValue.parse(Array(text.utf8)).objectValue)
        #expect(metadata["width"] == .number(Double(served.size.width)))
        #expect(metadata["stretchX"] == .array([.array([.number(16 + 4), .number(64 + 4)])]))
        let content = try #require(label.content)
        #expect(
            metadata["content"]
                == .array([content.left, content.top, content.right, content.bottom].map { .number($0 + 4) }))
        // Again: the same file from memory; another halo, or none, is another file.
        let again = get("/icons/label@2x.png?halo=2,%23ff0000")
        #expect(again.body == response.body && header(again, "ETag") == header(response, "ETag"))
        #expect(header(again, "Iconr-Cache") == "memory")
        let other = get("/icons/label@2x.png?halo=3")
        #expect(other.status == 200 && header(other, "ETag") != header(response, "ETag"))
        #expect(try PNGDecoder.decode(other.body).size.width == label.size.width + 12)
        #expect(header(get("/icons/label@2x.png"), "ETag") != header(response, "ETag"))
        // With params, and the params still checked.
        let flag = get("/icons/flag.png?flag_color=%23800080&halo=1")
        let flagSize = try PNGDecoder.decode(flag.body).size
        #expect(flag.status == 200 && flagSize.width == 24 + 2)
        #expect(get("/icons/flag.png?colour=red&halo=1").status == 400)
        for bad in ["abc", "0", "40", "2,nope", "2,red,1,4"] {
            let refused = get("/icons/flag.png?halo=\(bad)")
            #expect(refused.status == 400, "\(bad)")
            #expect(try errorMessage(refused).hasPrefix("invalid halo '\(bad)'"), "\(bad)")
        }
    }

    /// JSON and HTML go gzip-compressed to a client that accepts it, under a tag of their own
    /// (`-gz`), revalidated by it; `Vary: Accept-Encoding` on both forms; PNGs as they are.
    @Test func jsonAndHTMLAreCompressedForClientsThatAcceptIt() throws {
        let plain = get("/sprites/bundled/sprite@2x.json")
        try #require(plain.status == 200)
        #expect(header(plain, "Vary") == "Accept-Encoding" && header(plain, "Content-Encoding") == nil)
        let zipped = get("/sprites/bundled/sprite@2x.json", headers: ["accept-encoding": "br, gzip;q=0.8"])
        #expect(header(zipped, "Content-Encoding") == "gzip" && header(zipped, "Vary") == "Accept-Encoding")
        #expect(zipped.body.count < plain.body.count)
        #expect(try Gzip.decompress(zipped.body) == plain.body)
        let tag = try #require(header(zipped, "ETag"))
        #expect(tag == String(try #require(header(plain, "ETag")).dropLast()) + "-gz\"", "\(tag)")
        // Revalidated by its own tag: 304, with that tag; the plain tag still works too.
        let again = get(
            "/sprites/bundled/sprite@2x.json", headers: ["accept-encoding": "gzip", "if-none-match": tag])
        #expect(again.status == 304 && header(again, "ETag") == tag)
        let plainAgain = get(
            "/sprites/bundled/sprite@2x.json", headers: ["if-none-match": try #require(header(plain, "ETag"))])
        #expect(plainAgain.status == 304)
        // Refused with q=0; the catalog page (HTML) too; a PNG never.
        let refused = get("/sprites/bundled/sprite@2x.json", headers: ["accept-encoding": "gzip;q=0, identity"])
        #expect(header(refused, "Content-Encoding") == nil && refused.body == plain.body)
        let page = get("/catalog", headers: ["accept": "text/html", "accept-encoding": "gzip"])
        #expect(page.status == 200 && header(page, "Content-Encoding") == "gzip")
        let png = get("/icons/flag.png", headers: ["accept-encoding": "gzip"])
        #expect(png.status == 200 && header(png, "Content-Encoding") == nil && header(png, "Vary") == nil)
    }

    /// `--trusted-proxy`: the client is the peer, unless the peer is a trusted proxy; then
    /// the first address from the right of `X-Forwarded-For` that is not one.
    @Test func aTrustedProxyNamesTheClient() throws {
        let proxies = try #require(TrustedProxies(parsing: ["10.0.0.0/8", "::1", "192.168.1.7/32"]))
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "203.0.113.9") == "203.0.113.9")
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "198.51.100.1, 203.0.113.9, 10.9.9.9") == "203.0.113.9")
        #expect(proxies.client(peer: "::1", forwardedFor: "2001:db8::5") == "2001:db8::5")
        #expect(proxies.client(peer: "192.168.1.8", forwardedFor: "203.0.113.9") == "192.168.1.8", "not trusted")
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "10.2.2.2, 10.3.3.3") == "10.2.2.2", "all proxies")
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: "203.0.113.9, junk") == "10.1.2.3")
        #expect(proxies.client(peer: "10.1.2.3", forwardedFor: nil) == "10.1.2.3")
        #expect(TrustedProxies().client(peer: "10.1.2.3", forwardedFor: "203.0.113.9") == "10.1.2.3")
        for bad in ["10.0.0.0/33", "::/129", "host", "10.0.0.0/x", ""] {
            #expect(TrustedProxies(parsing: [bad]) == nil, "\(bad)")
        }
    }

    /// `/metrics` has Prometheus' process series, and the open connections the HTTP server
    /// counts once it is told how.
    @Test func metricsHaveTheProcessAndTheOpenConnections() throws {
        let before = String(decoding: get("/metrics").body, as: UTF8.self)
        #expect(before.contains("process_cpu_seconds_total ") && before.contains("process_open_fds "))
        #expect(!before.contains("iconr_http_connections_open"), "no HTTP server told it")
        server.countConnections { 7 }
        let after = String(decoding: get("/metrics").body, as: UTF8.self)
        #expect(after.contains("\niconr_http_connections_open 7\n"), "\(after)")
        let descriptors = after.split(separator: "\n").first { $0.hasPrefix("process_open_fds ") }
        #expect((descriptors.flatMap { Int($0.split(separator: " ")[1]) } ?? 0) > 2)
    }

    @Test func iconsCacheAsBrowsersExpect() throws {
        let first = get("/icons/flag.png?flag_color=red")
        let tag = try #require(header(first, "ETag"))
        #expect(tag.hasPrefix("\"") && tag.hasSuffix("\"") && !tag.hasPrefix("W/"))
        #expect(header(first, "Cache-Control") == "public, max-age=300")
        let again = get("/icons/flag.png?flag_color=red", headers: ["if-none-match": tag])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(header(again, "ETag") == tag)
        #expect(get("/icons/flag.png?flag_color=red", headers: ["if-none-match": "\"other\""]).status == 200)
        // Another color is another variant, another tag.
        #expect(header(get("/icons/flag.png?flag_color=blue"), "ETag") != tag)
    }

    @Test func badRequestsAreNamedInOneLineOfJSON() throws {
        let cases: [(target: String, status: Int, mentions: String)] = [
            ("/icons/flag.png?flag_color=nope", 400, "expected #rrggbb or rrggbb"),
            // An unencoded "#" starts the URL's fragment: the color arrives empty.
            ("/icons/flag.png?flag_color=", 400, "write it as %23, or leave it out"),
            ("/icons/flag.png?stroke=red", 400, "stroke"),
            (
                "/icons/flag.png?flag_colour=red", 400,
                #"unknown parameter 'flag_colour': icon "flag" declares flag_color (did you mean 'flag_color'?)"#
            ),
            ("/icons/flag@0x.png", 400, "scale"),
            ("/icons/flag@5x.png", 400, "from 0.01 to 4"),
            ("/icons/flag@0.001x.png", 400, "from 0.01 to 4"),
            ("/icons/flag@0x10x.png", 400, "0x10"),
            ("/icons/flag@1e1x.png", 400, "1e1"),
            ("/icons/nothing.png", 404, "nothing"),
            ("/icons/flag.svg", 404, ".png"),
            ("/sprites/none/sprite.json", 404, "none"),
            ("/styles/none.json", 404, "none"),
            ("/nowhere", 404, "/nowhere"),
            ("/icons/%zz.png", 400, "percent"),
        ]
        for (target, status, mentions) in cases {
            let response = get(target)
            #expect(response.status == status, "\(target)")
            let message = try errorMessage(response)
            #expect(message.contains(mentions), "\(target): \(message)")
            #expect(!message.contains("\n") && !message.contains(directory.path), "\(target): \(message)")
        }
        let post = get("/icons/flag.png", method: "POST")
        #expect(post.status == 405)
        #expect(header(post, "Allow") == "GET, HEAD")
        #expect(get("/" + String(repeating: "a", count: 9000)).status == 414)
        #expect(get("/health", headers: ["x-big": String(repeating: "b", count: 20000)]).status == 431)
    }

    /// A set whose folder holds no icons has no sprite: 404, in words that name none of the
    /// server's folders.
    /// A set without icons is an empty sprite, not an error: `{}` and a 1x1 transparent
    /// sheet (MapLibre fails a style's whole sprite array on one sprite that does not load),
    /// counted by `/metrics`; icons added later are served once the folder is checked again.
    @Test func aSetWithoutIconsIsAnEmptySprite() throws {
        let empty = directory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        var options = ServerOptions()
        options.iconSets = [("empty", empty.path)]
        options.clock = clock
        let server = try IconServer(options: options, placement: .inProcess)
        func get(_ path: String) -> HTTPResponse {
            server.respond(to: HTTPRequest(method: "GET", path: path, query: [], headers: [:]))
        }
        func metricsSay(_ line: String) -> Bool {
            String(decoding: get("/metrics").body, as: UTF8.self).contains(line + "\n")
        }
        let index = get("/sprites/empty/sprite.json")
        #expect(index.status == 200)
        #expect(try JSONValue.parse(index.body) == .object([:]))
        for file in ["sprite.png", "sprite@2x.png"] {
            let sheet = get("/sprites/empty/" + file)
            #expect(sheet.status == 200, "\(file)")
            let image = try PNGDecoder.decode(sheet.body)
            #expect(image.size == PixelSize(width: 1, height: 1) && image[0, 0].alpha == 0)
        }
        #expect(get("/sprites/empty/sprite@2x.json").status == 200)
        #expect(metricsSay("iconr_sprites_empty 1"))
        try FileManager.default.copyItem(
            at: icons.appendingPathComponent("flag.svg"), to: empty.appendingPathComponent("flag.svg"))
        #expect(
            try JSONValue.parse(get("/sprites/empty/sprite.json").body) == .object([:]), "checked at most every 2 s")
        clock.advance(by: .seconds(2.2))
        #expect(try JSONValue.parse(get("/sprites/empty/sprite.json").body)["flag"] != nil)
        #expect(metricsSay("iconr_sprites_empty 0"))
    }

    /// A set whose icons all fail is an empty sprite too (its reasons logged), not built again
    /// for every request, and built again when the folder is checked again.
    @Test func aSetOfInvalidIconsIsAnEmptySpriteNotBuiltAgainForEveryRequest() throws {
        let broken = directory.appendingPathComponent("broken")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try Data("<svg".utf8).write(to: broken.appendingPathComponent("a.svg"))
        var options = ServerOptions()
        options.iconSets = [("broken", broken.path)]
        options.clock = clock
        let server = try IconServer(options: options, placement: .inProcess)
        let sprite = HTTPRequest(method: "GET", path: "/sprites/broken/sprite.json", query: [], headers: [:])
        func metricsSay(_ line: String) -> Bool {
            let metrics = server.respond(to: HTTPRequest(method: "GET", path: "/metrics"))
            return String(decoding: metrics.body, as: UTF8.self).contains(line + "\n")
        }
        #expect(server.respond(to: sprite).status == 200)
        #expect(try JSONValue.parse(server.respond(to: sprite).body) == .object([:]))
        #expect(metricsSay(#"iconr_sprite_builds_total{result="failed"} 1"#), "built again for the second request")
        #expect(metricsSay("iconr_sprites_empty 1"))
        try Data("<svg xmlns='http://www.w3.org/2000/svg' width='4' height='4'/>".utf8).write(
            to: broken.appendingPathComponent("a.svg"))
        clock.advance(by: .seconds(2.2))
        #expect(try JSONValue.parse(server.respond(to: sprite).body)["a"] != nil)
        #expect(metricsSay(#"iconr_sprite_builds_total{result="built"} 1"#))
        #expect(metricsSay("iconr_sprites_empty 0"))
    }

    /// A style that no longer parses when its sprite is first built: a 500 that says why, in
    /// words that name the style as clients know it, not the server's file.
    @Test func aBrokenStyleIsNamedWithoutItsPath() throws {
        try #"{"version": 8, "layers": ["#.write(
            to: directory.appendingPathComponent("flags.json"), atomically: true, encoding: .utf8)
        let response = get("/styles/flags.json")
        #expect(response.status == 500)
        let message = try errorMessage(response)
        #expect(message.hasPrefix("the style: not a JSON style: "), "\(message)")
        #expect(!message.contains(directory.path), "\(message)")
    }

    @Test func namesCannotLeaveTheirFolders() throws {
        for target in [
            "/icons/../secret.png", "/icons/%2e%2e/secret.png", "/icons/%2E%2E%2Fsecret.png",
            "/icons/roads/../../secret.png",
            "/icons//etc/passwd.png", "/icons/%2Fetc%2Fpasswd.png", "/icons/flag%00.png", "/icons/.hidden.png",
            "/sprites/..%2F..%2Fetc/sprite.json", "/styles/..%2Fflags.json",
        ] {
            let response = get(target)
            #expect([400, 404].contains(response.status), "\(target): \(response.status)")
            #expect(header(response, "Content-Type") == "application/json", "\(target)")
        }
    }

    @Test func aSpriteIsBuiltOnceAndServedWithItsIndex() throws {
        let index = get("/sprites/bundled/sprite@2x.json")
        #expect(index.status == 200)
        let entries = try #require(try JSONValue.parse(index.body).objectValue)
        #expect(Set(entries.keys) == ["badge", "flag", "label", "marker", "roads/shield"])
        let sheet = get("/sprites/bundled/sprite@2x.png")
        #expect(sheet.status == 200)
        let image = try PNGDecoder.decode(sheet.body)
        let flag = try #require(entries["flag"]?.objectValue)
        guard case .number(let x)? = flag["x"], case .number(let y)? = flag["y"] else {
            Issue.record("no x, y")
            return
        }
        let rect = (x: Int(x), y: Int(y))
        let expected = try IconSource(path: icons.appendingPathComponent("flag.svg").path).render(scale: 2).image
        #expect(image.hex(x: rect.x + 24, y: rect.y + 12) == expected.hex(x: 24, y: 12))
        #expect(get("/sprites/bundled/sprite@3x.json").status == 404)
        // Unhashed names are revalidated on every use: no cache pairs one build's index with
        // the next build's sheet.
        #expect(header(index, "Cache-Control") == "no-cache")
        #expect(header(sheet, "Cache-Control") == "no-cache")
    }

    @Test func aStyleNamesItsSpriteByHashAndColorsNobodyPrebakedByRuntimeIds() throws {
        let response = get("/styles/flags.json", headers: ["host": "example.test:8080"])
        #expect(response.status == 200)
        let style = try #require(try JSONValue.parse(response.body).objectValue)
        let sprite = try #require(style["sprite"]?.stringValue)
        #expect(sprite.hasPrefix("http://example.test:8080/styles/flags/sprite."))
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("\"flag?flag_color=ff0000\""), "the prebaked variant of the feature's color")
        #expect(text.contains("iconr:flag?"), "a runtime id for colors from data")
        // The hashed sprite is immutable, and has the variant the feature shows.
        let path = String(sprite.dropFirst("http://example.test:8080".count))
        let index = get(path + "@2x.json")
        #expect(index.status == 200)
        #expect(header(index, "Cache-Control") == "public, max-age=31536000, immutable")
        #expect(try JSONValue.parse(index.body).objectValue?["flag?flag_color=ff0000"] != nil)
        let stale = get("/styles/flags/sprite.000000000000@2x.json")
        #expect(stale.status == 404)
        // The URLs inside follow Host: caches keep one copy per Host; a hostile one is refused.
        #expect(header(response, "Vary") == "Host")
        #expect(get("/styles/flags.json", headers: ["host": "evil.test\"/><script>"]).status == 400)
    }

    /// A folder moved away (or emptied) for a moment: its last good sprite stays served, the
    /// same file under the same tag, and so does the style made from it; when the folder is
    /// back, its new state is served; SIGHUP (`recheck`) takes it as it is, empty.
    @Test func theLastGoodSpriteStaysWhileTheFolderIsAway() throws {
        let good = get("/sprites/bundled/sprite.json")
        try #require(good.status == 200)
        let style = get("/styles/flags.json")
        try #require(style.status == 200)
        let away = directory.appendingPathComponent("away")
        try FileManager.default.moveItem(at: icons, to: away)
        clock.advance(by: .seconds(2.2))
        let held = get("/sprites/bundled/sprite.json")
        #expect(held.status == 200 && held.body == good.body && header(held, "ETag") == header(good, "ETag"))
        #expect(get("/styles/flags.json").body == style.body)
        // Held without building again at every check.
        clock.advance(by: .seconds(2.2))
        #expect(get("/sprites/bundled/sprite@2x.png").status == 200)
        // Back, with one icon more: the new state.
        try FileManager.default.moveItem(at: away, to: icons)
        try FileManager.default.copyItem(
            at: icons.appendingPathComponent("badge.svg"), to: icons.appendingPathComponent("pin.svg"))
        clock.advance(by: .seconds(2.2))
        let back = try JSONValue.parse(get("/sprites/bundled/sprite.json").body).objectValue ?? [:]
        #expect(back["pin"] != nil && back["flag"] != nil)
        // Away again, then SIGHUP: the folder as it is, an empty sprite.
        try FileManager.default.moveItem(at: icons, to: away)
        clock.advance(by: .seconds(2.2))
        let stillHeld = try JSONValue.parse(get("/sprites/bundled/sprite.json").body).objectValue ?? [:]
        #expect(stillHeld["pin"] != nil)
        server.recheck()
        let emptied = get("/sprites/bundled/sprite.json")
        let emptiedIndex = try JSONValue.parse(emptied.body).objectValue ?? [:]
        #expect(emptied.status == 200 && emptiedIndex.isEmpty)
        try FileManager.default.moveItem(at: away, to: icons)
    }

    @Test func aChangedFolderGivesANewSprite() throws {
        let before = try JSONValue.parse(get("/sprites/bundled/sprite.json").body).objectValue ?? [:]
        #expect(before["pin"] == nil)
        try FileManager.default.copyItem(
            at: icons.appendingPathComponent("badge.svg"), to: icons.appendingPathComponent("pin.svg"))
        clock.advance(by: .seconds(2.2))
        let after = try JSONValue.parse(get("/sprites/bundled/sprite.json").body).objectValue ?? [:]
        #expect(after["pin"] != nil)
    }

    /// A style file edited while the server runs is served as edited within the recheck (2 s),
    /// or at once after SIGHUP (`recheck`); an edit that breaks it is answered from the last
    /// good style, never a 500. (An edit that changed no sheet was never picked up: the
    /// emitted style was kept by the sprite's hash.)
    @Test func anEditedStyleIsServedAndABrokenEditKeepsTheLastGoodOne() throws {
        let path = directory.appendingPathComponent("flags.json")
        let before = try JSONValue.parse(get("/styles/flags.json", headers: ["host": "h.test"]).body)
        #expect(before["name"] == nil)
        var edited = try #require(try JSONValue.parse(Array(try Data(contentsOf: path))).objectValue)
        edited["name"] = .string("Edited")
        try Data(JSONValue.object(edited).serialized.utf8).write(to: path)
        clock.advance(by: .seconds(2.2))
        #expect(
            try JSONValue.parse(get("/styles/flags.json", headers: ["host": "h.test"]).body)["name"]
                == .string("Edited"))
        edited["name"] = .string("Again")
        try Data(JSONValue.object(edited).serialized.utf8).write(to: path)
        server.recheck()
        #expect(
            try JSONValue.parse(get("/styles/flags.json", headers: ["host": "h.test"]).body)["name"] == .string("Again")
        )
        try Data("{broken".utf8).write(to: path)
        clock.advance(by: .seconds(2.2))
        let broken = get("/styles/flags.json", headers: ["host": "h.test"])
        #expect(broken.status == 200)
        #expect(try JSONValue.parse(broken.body)["name"] == .string("Again"), "the last good style")
    }

    /// A style's hashed sprite URLs outlive an icon edit that rebuilds the sprite: the style
    /// that names them is cached for max-age (300 s), so the replaced build's files are
    /// answered that long (and a minute more), then 404.
    @Test func aReplacedBuildsHashedFilesStayForTheStylesMaxAge() throws {
        let style = try JSONValue.parse(get("/styles/flags.json", headers: ["host": "h.test"]).body)
        let old = try #require(style["sprite"]?.stringValue).dropFirst("http://h.test".count)
        let oldIndex = get(old + ".json")
        #expect(oldIndex.status == 200)
        try FileManager.default.copyItem(
            at: icons.appendingPathComponent("badge.svg"), to: icons.appendingPathComponent("pin.svg"))
        clock.advance(by: .seconds(2.2))
        let new = try JSONValue.parse(get("/styles/flags.json", headers: ["host": "h.test"]).body)
        #expect(new["sprite"]?.stringValue?.hasSuffix(String(old.suffix(12))) == false, "a new build, a new hash")
        for file in [".json", ".png", "@2x.json", "@2x.png"] {
            #expect(get(old + file).status == 200, "\(old)\(file) after the rebuild")
        }
        #expect(get(old + ".json").body == oldIndex.body, "the replaced build's own index")
        clock.advance(by: .seconds(300 + 61))
        _ = get("/styles/flags.json", headers: ["host": "h.test"])
        #expect(get(old + ".json").status == 404, "gone once no cached style can name it")
    }

    /// Many threads at once, as the HTTP server's pool calls it: every answer right, and
    /// each variant rendered once (also run under ThreadSanitizer by CI).
    @Test func manyThreadsAtOnceGetTheSameAnswers() throws {
        let targets = [
            "/icons/flag.png?flag_color=red", "/icons/flag@2x.png?flag_color=blue", "/icons/marker.png",
            "/sprites/bundled/sprite.json", "/styles/flags.json", "/icons/nothing.png", "/metrics",
        ]
        let expected = targets.map { get($0).status }
        let server = server
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let target = targets[index % targets.count]
            let parts = target.split(separator: "?", maxSplits: 1)
            let query =
                parts.count > 1
                ? [(name: String(parts[1].split(separator: "=")[0]), value: String(parts[1].split(separator: "=")[1]))]
                : []
            let response = server.respond(to: HTTPRequest(method: "GET", path: String(parts[0]), query: query))
            if response.status != expected[index % targets.count] { mismatches.add(1, ordering: .relaxed) }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
        let metrics = String(decoding: get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("iconr_cache_misses_total 3"), "\(metrics)")
    }

    /// A rebuild holds one thread: while it runs, other requests get the last build.
    @Test func requestsDuringARebuildGetTheLastBuild() throws {
        #expect(get("/sprites/bundled/sprite.json").status == 200)
        // An icon that takes librsvg seconds (a dilation of a large raster) makes the rebuild long.
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="400" height="400">
              <filter id="b" x="-50%" y="-50%" width="200%" height="200%"><feMorphology radius="40"/><feGaussianBlur stdDeviation="30"/></filter>
              <g filter="url(#b)"><circle cx="200" cy="200" r="120"/></g>
            </svg>
            """.utf8
        ).write(to: icons.appendingPathComponent("slow.svg"))
        clock.advance(by: .seconds(2.2))
        let order = Locked<[String]>([])
        let server = server
        let rebuilt = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let index = server.respond(to: HTTPRequest(method: "GET", path: "/sprites/bundled/sprite.json"))
            order.withLock {
                $0.append(String(decoding: index.body, as: UTF8.self).contains(#""slow""#) ? "new" : "old")
            }
            rebuilt.signal()
        }
        Thread.sleep(forTimeInterval: 0.3)
        let during = get("/sprites/bundled/sprite.json")
        order.withLock { $0.append(String(decoding: during.body, as: UTF8.self).contains(#""slow""#) ? "new" : "old") }
        #expect(rebuilt.wait(timeout: .now() + 120) == .success)
        #expect(order.withLock { $0 } == ["old", "new"], "the request during the rebuild got the last build at once")
    }

    /// Two sets that share an icon name: /icons/ and a style's sprite both take the first
    /// set's (the second's is named in a warning), and the server starts.
    @Test func setsThatShareANameServeTheFirstOnes() throws {
        let other = directory.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        // Another "flag": a 10 x 10 green square.
        try Data(
            "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'><rect width='10' height='10' fill='#00ff00'/></svg>"
                .utf8
        )
        .write(to: other.appendingPathComponent("flag.svg"))
        var options = ServerOptions()
        options.iconSets = [("bundled", icons.path), ("other", other.path)]
        options.styles = [("flags", directory.appendingPathComponent("flags.json").path)]
        let both = try IconServer(options: options, placement: .inProcess)
        let flag = try PNGDecoder.decode(both.respond(to: HTTPRequest(method: "GET", path: "/icons/flag.png")).body)
        #expect(flag.size == PixelSize(width: 24, height: 24), "the first set's flag")
        let green = try PNGDecoder.decode(
            both.respond(to: HTTPRequest(method: "GET", path: "/icons/other:flag.png")).body)
        #expect(green.hex(x: 5, y: 5) == "#00ff00ff", "the second set's, by its prefix")
        let style = both.respond(to: HTTPRequest(method: "GET", path: "/styles/flags.json", headers: ["host": "h"]))
        #expect(style.status == 200)
        let sprite = try #require(try JSONValue.parse(style.body).objectValue?["sprite"]?.stringValue)
        let index = both.respond(
            to: HTTPRequest(method: "GET", path: String(sprite.dropFirst("http://h".count)) + ".json"))
        let entry = try #require(try JSONValue.parse(index.body).objectValue?["flag"]?.objectValue)
        #expect(entry["width"] == .number(24), "the style's sprite has the first set's flag")
    }

    @Test func metricsCountRequestsRendersAndCacheHits() throws {
        _ = get("/icons/flag.png?flag_color=green")
        _ = get("/icons/flag.png?flag_color=green")
        _ = get("/icons/nothing.png")
        let metrics = get("/metrics")
        #expect(metrics.status == 200)
        #expect(header(metrics, "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains(#"iconr_requests_total{route="icons",status="200"} 2"#))
        #expect(text.contains(#"iconr_requests_total{route="icons",status="404"} 1"#))
        #expect(text.contains("iconr_cache_misses_total 1"))
        #expect(text.contains(#"iconr_cache_hits_total{cache="memory"} 1"#))
        #expect(text.contains("iconr_render_seconds_count 1"))
        #expect(text.contains("iconr_worker_crashes_total 0"))
        #expect(text.contains(#"iconr_sprite_builds_total{result="failed"} 0"#))
        #expect(get("/health").status == 200)
        let script = get("/iconr.js")
        #expect(header(script, "Content-Type")?.hasPrefix("text/javascript") == true)
        #expect(String(decoding: script.body, as: UTF8.self).contains("global.iconr = "))
        // The same plugin as an ES module, for MapLibre GL JS 6.
        let module = get("/iconr.mjs")
        #expect(header(module, "Content-Type")?.hasPrefix("text/javascript") == true)
        let moduleText = String(decoding: module.body, as: UTF8.self)
        #expect(moduleText.contains("export const attach") && moduleText.contains("import.meta.url"))
        #expect(header(module, "ETag") != header(script, "ETag"))
    }

    /// A repeated icon URL is answered whole from memory (issue 65's hit path), and that
    /// answer follows its file as a lookup would: kept within the recheck interval, dropped
    /// when the file is checked again, forgotten at once on SIGHUP; a 304 for a client that
    /// holds it; counted as a memory hit every time.
    @Test func aRepeatedIconURLIsAnsweredFromMemoryUntilItsFileChanges() throws {
        let dot = icons.appendingPathComponent("dot.svg")
        func draw(_ color: String) throws {
            try Data(
                """
                <svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="\(color)"/></svg>
                """.utf8
            ).write(to: dot)
        }
        /// The middle pixel (a halo's ring lies around it).
        func pixel(_ response: HTTPResponse) throws -> (red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8) {
            let image = try PNGDecoder.decode(response.body)
            return image[image.size.width / 2, image.size.height / 2]
        }
        try draw("#ff0000")
        let first = get("/icons/dot@2x.png")
        #expect(header(first, "Iconr-Cache") == "render")
        for _ in 0..<3 {
            let again = get("/icons/dot@2x.png")
            #expect(again.status == 200 && again.body == first.body && header(again, "Iconr-Cache") == "memory")
            #expect(header(again, "ETag") == header(first, "ETag") && header(again, "Iconr-Image") != nil)
        }
        let tag = try #require(header(first, "ETag"))
        let notModified = get("/icons/dot@2x.png", headers: ["if-none-match": "\"other\", " + tag])
        #expect(notModified.status == 304 && notModified.body.isEmpty && header(notModified, "ETag") == tag)
        #expect(header(notModified, "Iconr-Cache") == "memory" && header(notModified, "Iconr-Image") != nil)
        let metrics = String(decoding: get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"iconr_cache_hits_total{cache="memory"} 4"#), "every answer from memory counted")
        // With what an icon URL meets: a halo is an answer of its own, a set prefix the same
        // variant's, each remembered by its URL.
        let haloed = get("/icons/dot@2x.png?halo=2,white")
        let haloedAgain = get("/icons/dot@2x.png?halo=2,white")
        #expect(haloed.status == 200 && haloedAgain.body == haloed.body && haloed.body != first.body)
        #expect(header(haloedAgain, "Iconr-Cache") == "memory")
        #expect(header(haloedAgain, "Iconr-Image") == header(haloed, "Iconr-Image"))
        #expect(header(haloed, "Iconr-Image") != header(first, "Iconr-Image"), "the halo grows the image")
        let prefixed = get("/icons/bundled:dot@2x.png")
        #expect(prefixed.body == first.body && header(get("/icons/bundled:dot@2x.png"), "Iconr-Cache") == "memory")

        // Within the recheck interval the file is not looked at, as before; after it, it is.
        try draw("#0000ff")
        #expect(try pixel(get("/icons/dot@2x.png")).red == 255)
        clock.advance(by: .seconds(2.2))
        let redrawn = get("/icons/dot@2x.png")
        #expect(try pixel(redrawn).blue == 255 && header(redrawn, "Iconr-Cache") == "render")
        #expect(header(redrawn, "ETag") != tag)
        #expect(try pixel(get("/icons/dot@2x.png")).blue == 255)
        #expect(try pixel(get("/icons/dot@2x.png?halo=2,white")).blue == 255, "the haloed answer follows the file")
        #expect(try pixel(get("/icons/bundled:dot@2x.png")).blue == 255)
        // SIGHUP: checked at once.
        try draw("#00ff00")
        server.recheck()
        #expect(try pixel(get("/icons/dot@2x.png")).green == 255)
        // An old tag is no longer the file's: a 200, not a 304.
        #expect(get("/icons/dot@2x.png", headers: ["if-none-match": tag]).status == 200)
    }

    /// One disk cache for the whole server (issue 64): its sprites' caches obey
    /// `--cache-limit` with its icons' (they had a 256 MiB limit and an eviction each), and
    /// a folder edited again and again keeps the sprites' packs within their share of the
    /// limit (each rebuild wrote every entry of every build before it).
    @Test func aServedFolderEditedManyTimesStaysWithinTheCacheLimit() throws {
        let folder = directory.appendingPathComponent("edited")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // Icons of 48 px in cells of many colors: images that compress little.
        func icon(_ name: String, seed: Int) throws {
            var cells = ""
            for cell in 0..<144 {
                let value = (cell + 1) * 2_654_435_761 &+ seed * 40_503
                cells += "<rect x='\(cell % 12 * 4)' y='\(cell / 12 * 4)' width='4' height='4' fill='#"
                cells += String(format: "%06x", value & 0xFFFFFF) + "'/>"
            }
            try Data("<svg xmlns='http://www.w3.org/2000/svg' width='48' height='48'>\(cells)</svg>".utf8).write(
                to: folder.appendingPathComponent(name + ".svg"))
        }
        for index in 0..<4 { try icon("icon\(index)", seed: index) }
        let cache = directory.appendingPathComponent("cache")
        let limit = 1 << 20
        var options = ServerOptions()
        options.iconSets = [("edited", folder.path)]
        options.themes = [try #require(Theme.builtIn("grayscale"))]
        options.cacheDirectory = cache.path
        options.cacheByteLimit = limit
        options.clock = clock
        let server = try IconServer(options: options, placement: .inProcess)
        func askForEverySprite() -> Bool {
            ["/sprites/edited/", "/sprites/edited/grayscale/"].allSatisfy { base in
                ["sprite.json", "sprite.png", "sprite@2x.json", "sprite@2x.png"].allSatisfy {
                    server.respond(to: HTTPRequest(method: "GET", path: base + $0)).status == 200
                }
            }
        }
        /// The disk space of the cache's files and of its largest pack, in 4 KiB blocks as
        /// the cache counts them.
        func diskSpace() -> (all: Int, pack: Int) {
            var all = 0, pack = 0
            for path in FileManager.default.subpaths(atPath: cache.path + "/entries-v1") ?? [] {
                var info = stat()
                guard lstat(cache.path + "/entries-v1/" + path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG
                else { continue }
                all += Int(info.st_blocks) * 512
                if path.hasSuffix(".pack") { pack = max(pack, Int(info.st_blocks) * 512) }
            }
            return (all, pack)
        }
        #expect(askForEverySprite())
        /// The sprites' packs: each file's inode and size, by name.
        func packs() -> [String: (inode: UInt, size: Int)] {
            let folder = cache.path + "/entries-v1/packs/"
            var found: [String: (inode: UInt, size: Int)] = [:]
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                var info = stat()
                if lstat(folder + name, &info) == 0 { found[name] = (UInt(info.st_ino), Int(info.st_size)) }
            }
            return found
        }
        // One edit: each sprite's pack gets the new images appended, it is not written anew.
        let before = packs()
        #expect(before.count == 2, "a pack for the set's sprite and one for its theme's")
        try icon("icon0", seed: 99)
        server.recheck()
        #expect(askForEverySprite())
        let after = packs()
        let appended = before.filter { name, pack in
            after[name].map { $0.inode == pack.inode && $0.size > pack.size } == true
        }
        #expect(appended.count == 2, "appended to: \(appended.keys.sorted())")
        for edit in 1...16 {
            try icon("icon0", seed: 100 + edit)
            server.recheck()
            #expect(askForEverySprite(), "edit \(edit)")
        }
        server.finishWriting()
        let (all, pack) = diskSpace()
        #expect(all <= limit, "the cache folder holds \(all) bytes under a limit of \(limit)")
        #expect(pack <= limit / 4 + (64 << 10), "a sprite's pack holds \(pack) bytes (its share: \(limit / 4))")
        // What was evicted is built again, to the same sprite.
        let index = server.respond(to: HTTPRequest(method: "GET", path: "/sprites/edited/sprite.json"))
        #expect(try JSONValue.parse(index.body)["icon0"] != nil)
    }

    /// `--theme`: each set's sprite in a theme's colors at `/sprites/<set>/<theme>/`; the
    /// untheme'd sprite as it was; an unknown theme a 404 naming the themes.
    @Test func aThemedSpriteIsServedUnderItsName() throws {
        var options = ServerOptions()
        options.iconSets = [("bundled", icons.path)]
        var white = Theme(name: "white")
        white.paint = Color(red: 255, green: 255, blue: 255)
        options.themes = [white]
        let themed = try IconServer(options: options, placement: .inProcess)
        func get(_ path: String) -> HTTPResponse {
            themed.respond(to: HTTPRequest(method: "GET", path: path, query: [], headers: [:]))
        }
        let index = try JSONValue.parse(get("/sprites/bundled/white/sprite.json").body)
        let flag = try #require(index["flag"], "the themed index has the flag")
        let sheet = try PNGDecoder.decode(get("/sprites/bundled/white/sprite.png").body)
        let plain = try PNGDecoder.decode(get("/sprites/bundled/sprite.png").body)
        let plainFlag = try #require(try JSONValue.parse(get("/sprites/bundled/sprite.json").body)["flag"])
        func opaque(_ image: RasterImage, _ entry: JSONValue) -> [(UInt8, UInt8, UInt8)] {
            guard case .number(let x)? = entry["x"], case .number(let y)? = entry["y"],
                case .number(let width)? = entry["width"], case .number(let height)? = entry["height"]
            else { return [] }
            var colors: [(UInt8, UInt8, UInt8)] = []
            for row in Int(y)..<Int(y + height) {
                for column in Int(x)..<Int(x + width) where image[column, row].alpha == 255 {
                    let pixel = image[column, row]
                    colors.append((pixel.red, pixel.green, pixel.blue))
                }
            }
            return colors
        }
        let themedColors = opaque(sheet, flag), plainColors = opaque(plain, plainFlag)
        #expect(!themedColors.isEmpty && themedColors.allSatisfy { $0 == (255, 255, 255) })
        #expect(plainColors.contains { $0 != (255, 255, 255) }, "the plain sprite keeps its colors")
        let unknown = get("/sprites/bundled/dark/sprite.json")
        #expect(unknown.status == 404)
        #expect(try errorMessage(unknown) == #"unknown theme "dark" (themes: white)"#)
    }

    /// The catalog: every set, each theme's sprite (on dark when its icons are light), each
    /// style's own ids only; images are cuts of the sheets by their hashed URLs, which the
    /// server answers; made once per set of builds (the same bytes and ETag until one changes).
    @Test func theCatalogShowsThemesAndStyleVariantsFromTheSheets() throws {
        var options = ServerOptions()
        options.iconSets = [("bundled", icons.path)]
        options.styles = [("flags", directory.appendingPathComponent("flags.json").path)]
        var white = Theme(name: "white")
        white.paint = Color(red: 255, green: 255, blue: 255)
        options.themes = [white]
        options.clock = clock
        let server = try IconServer(options: options, placement: .inProcess)
        func get(_ path: String, host: String = "localhost") -> HTTPResponse {
            server.respond(to: HTTPRequest(method: "GET", path: path, query: [], headers: ["host": host]))
        }
        let page = get("/catalog")
        #expect(page.status == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        let start = try #require(html.range(of: #"id="iconr-catalog">"#)),
            end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let sections = try #require(
            try JSONValue.parse(
                Array(html[start.upperBound..<end.lowerBound].replacingOccurrences(of: "\\u003c", with: "<").utf8)
            ).arrayValue)
        #expect(
            sections.compactMap { $0["name"]?.stringValue } == [
                "bundled", "bundled (theme white)", "style flags (its icons and variants)",
            ])
        #expect(sections.compactMap { $0["backdrop"]?.stringValue } == ["light", "dark", "light"])
        // The style's section lists what the style shows, not every icon of the folders.
        let styleIDs = (sections[2]["icons"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(styleIDs == ["flag?flag_color=ff0000"], "\(styleIDs)")
        #expect(sections[0]["icons"]?.arrayValue?.count == 5)
        // No image inline: each sheet by URL, and every one of them answered.
        #expect(!html.contains("data:image/png"))
        for section in sections {
            let sheets = section["sheets"]?.arrayValue ?? []
            #expect(!sheets.isEmpty)
            for sheet in sheets {
                let url = try #require(sheet["url"]?.stringValue)
                let answer = get(url)
                #expect(answer.status == 200, "\(url)")
                let image = try PNGDecoder.decode(answer.body)
                #expect(.number(Double(image.size.width)) == sheet["width"], "\(url)")
            }
        }
        #expect(header(page, "ETag") != nil)
        let again = get("/catalog")
        #expect(again.body == page.body && header(again, "ETag") == header(page, "ETag"))
    }

    /// A sprite file of a build that needs no check is answered at once, on the caller's
    /// thread: the build queue and the document queue (the catalog, styles) never hold it.
    @Test func aBuiltSpritesFilesAreAnsweredAtOnce() throws {
        let request = HTTPRequest(
            method: "GET", path: "/sprites/bundled/sprite.json", query: [], headers: ["host": "x"])
        guard case .later = server.answer(to: request) else {
            Issue.record("the first request builds, later")
            return
        }
        #expect(get("/sprites/bundled/sprite.json").status == 200)
        guard case .now(let response) = server.answer(to: request) else {
            Issue.record("a built sprite's file waited for a queue")
            return
        }
        #expect(response.status == 200)
        #expect(get("/styles/flags.json").status == 200)
        let styleSprite = HTTPRequest(
            method: "GET", path: "/styles/flags/sprite@2x.png", query: [], headers: ["host": "x"])
        guard case .now(let sheet) = server.answer(to: styleSprite) else {
            Issue.record("a built style sprite's file waited for a queue")
            return
        }
        #expect(sheet.status == 200)
        // After the recheck interval, a file is checked on the build queue again.
        clock.advance(by: .seconds(2.2))
        guard case .later = server.answer(to: request) else {
            Issue.record("a file due for a check was answered without one")
            return
        }
    }

    /// A style's copy for another Host is the same document with only its base URL changed.
    @Test func anotherHostChangesOnlyTheURLs() throws {
        let first = get("/styles/flags.json", headers: ["host": "a.test:8080"])
        let second = get("/styles/flags.json", headers: ["host": "tiles.b.test"])
        #expect(first.status == 200 && second.status == 200)
        let a = String(decoding: first.body, as: UTF8.self), b = String(decoding: second.body, as: UTF8.self)
        #expect(a.contains("http://a.test:8080/styles/flags/sprite.") && !a.contains("iconr-base.invalid"))
        #expect(b.replacingOccurrences(of: "http://tiles.b.test", with: "http://a.test:8080") == a)
        #expect(header(first, "ETag") != header(second, "ETag"))
    }

    /// `--strict`: a style that shows an icon the sets lack stops the server at start, naming
    /// the icons; without it the server starts (the style's warnings go to its log).
    @Test func aStrictServerRefusesAStyleWithMissingIcons() throws {
        let style = #"""
            {"version": 8, "sources": {"p": {"type": "geojson", "data": {"type": "FeatureCollection", "features": []}}},
             "layers": [{"id": "a", "type": "symbol", "source": "p", "layout": {"icon-image": "aeroport"}}]}
            """#
        try style.write(to: directory.appendingPathComponent("missing.json"), atomically: true, encoding: .utf8)
        var options = ServerOptions()
        options.iconSets = [("bundled", icons.path)]
        options.styles = [("missing", directory.appendingPathComponent("missing.json").path)]
        _ = try IconServer(options: options, placement: .inProcess)
        options.strictStyles = true
        let error = #expect(throws: (any Error).self) { try IconServer(options: options, placement: .inProcess) }
        #expect("\(error.map { "\($0)" } ?? "")".hasSuffix("--strict: the style shows icons the sets lack: aeroport"))
    }
}
