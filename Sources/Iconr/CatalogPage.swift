import IconrCore
import IconrRender

/// The icon catalog: one HTML page with every icon of some sprites at 1x and 2x, with its
/// id, size, parameters, SDF icons tinted, stretch and content areas drawn over it, each
/// icon's prebaked variants, a search box and a light/dark backdrop. The images are the
/// sprite's own sheets, fetched by URL and shown cut (only SDF icons, tinted in a canvas,
/// come inline), so a page of thousands of icons stays small. `iconr serve` answers it at
/// `/catalog` (and `/` for browsers), where a parameter's color input redraws the icon
/// through `/icons/`; `iconr sprite --catalog` writes it beside a built sprite, for review.
package enum CatalogPage {
    /// One sprite of the page: its name, its build, where its sheets are fetched from, the
    /// icon files it was built from (for the parameters they declare), and where the server
    /// draws its icons (`/icons/maki:`), or nil for a static page.
    package struct Section: Sendable {
        package var name: String
        package var build: SpriteBuild
        /// The URL of the PNG of a sheet (its ratio, its number from 0) as the page fetches it.
        package var sheetURL: @Sendable (Double, Int) -> String
        package var files: [(id: String, path: String)]
        package var liveIcons: String?
        /// The ids the section shows (a style's variants and the icons it names); nil for all.
        package var ids: Set<String>?
        /// The theme its icons are in (their parameters' defaults are its), shown on dark when
        /// they are light; nil for the files' own colors.
        package var theme: Theme?

        /// A section named `name` of `build`'s sheets, fetched from `sheetURL`.
        package init(
            name: String, build: SpriteBuild, sheetURL: @escaping @Sendable (Double, Int) -> String,
            files: [(id: String, path: String)], liveIcons: String?, ids: Set<String>? = nil, theme: Theme? = nil
        ) {
            self.theme = theme
            self.name = name
            self.build = build
            self.sheetURL = sheetURL
            self.files = files
            self.liveIcons = liveIcons
            self.ids = ids
        }
    }

    /// The page, titled `title`.
    package static func html(title: String, sections: [Section]) -> [UInt8] {
        var data: [JSONValue] = []
        for section in sections { data.append(json(section)) }
        // No `<` in the data (it is only ever inside a JSON string there): an id holding
        // `</script>` or `<!--` cannot close or change the data's script element.
        let payload = JSONValue.array(data).serialized.splitUTF8(separator: "<").joined(separator: "\\u003c")
        let escapedTitle = title.splitUTF8(separator: "&").joined(separator: "&amp;").splitUTF8(separator: "<")
            .joined(separator: "&lt;")
        return Array(
            template.splitUTF8(separator: "{{TITLE}}").joined(separator: escapedTitle)
                .splitUTF8(separator: "{{DATA}}").joined(separator: payload).utf8)
    }

    /// A section's icons: each base icon (its variants after it), where its image is in the
    /// 1x and 2x sheets (sheet, x, y, width, height, pixel ratio), what the page draws over
    /// it, and the backdrop its colors read best on.
    static func json(_ section: Section) -> JSONValue {
        let ratios = Set(section.build.sheets.map(\.ratio)).sorted()
        let low = ratios.first ?? 1, high = ratios.last ?? 1
        var sheets: [JSONValue] = []
        var places: [Double: [String: (entry: SpriteIndexEntry, place: JSONValue)]] = [:]
        var fields: [String: String] = [:]
        for ratio in [low, high] where places[ratio] == nil {
            var found: [String: (SpriteIndexEntry, JSONValue)] = [:]
            for sheet in section.build.sheets where sheet.ratio == ratio {
                let number = sheets.count
                sheets.append(
                    .object([
                        "url": .string(section.sheetURL(sheet.ratio, sheet.sheet)),
                        "width": .number(Double(sheet.size.width)), "height": .number(Double(sheet.size.height)),
                    ]))
                // A distance field is tinted in a canvas, which a page opened from a file may
                // not read from a sheet: its image comes inline.
                var decoded: RasterImage??
                for (id, entry) in sheet.entries where section.ids?.contains(id) ?? true {
                    let rect = entry.rect
                    let place = [
                        Double(number), Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height),
                    ]
                    found[id] = (
                        entry, .array((place + [entry.pixelRatio > 0 ? entry.pixelRatio : ratio]).map { .number($0) })
                    )
                    guard entry.sdf, ratio == high else { continue }
                    if decoded == nil { decoded = .some(try? PNGDecoder.decode(sheet.png, maxSize: sheet.size)) }
                    if let image = decoded??.cropped(to: rect), let png = try? PNGEncoder.encode(image) {
                        fields[id] = "data:image/png;base64," + base64(png)
                    }
                }
            }
            places[ratio] = found
        }
        var parameters: [String: [JSONValue]] = [:]
        for file in section.files where section.ids?.contains(file.id) ?? true {
            guard let bytes = try? IconrError.readingTemplate(file.path), let template = try? SVGTemplate(bytes: bytes)
            else { continue }
            parameters[file.id] = template.parameters.map { parameter in
                let value = section.theme.map { $0.params[parameter.name] ?? $0.map(parameter.defaultColor) }
                return .object([
                    "name": .string(parameter.name), "default": .string((value ?? parameter.defaultColor).hexString),
                ])
            }
        }
        let all = places[high] ?? [:]
        var icons: [JSONValue] = []
        for id in all.keys.sorted() {
            guard let (entry, place) = all[id] else { continue }
            let base = id.split(separator: "?", maxSplits: 1).first.map(String.init) ?? id
            let ratio = entry.pixelRatio > 0 ? entry.pixelRatio : high
            func areas(_ spans: [StretchArea]) -> JSONValue {
                .array(spans.map { .array([.number($0.start / ratio), .number($0.end / ratio)]) })
            }
            var icon: [String: JSONValue] = [
                "id": .string(id), "base": .string(base),
                "width": .number(Double(entry.rect.width) / ratio),
                "height": .number(Double(entry.rect.height) / ratio),
                "low": places[low]?[id]?.place ?? place, "high": place, "sdf": .bool(entry.sdf),
                "stretchX": areas(entry.stretchX), "stretchY": areas(entry.stretchY),
                "params": .array(id == base ? parameters[base] ?? [] : []),
            ]
            if let field = fields[id] { icon["field"] = .string(field) }
            if let content = entry.content {
                icon["content"] = .array(
                    [content.left, content.top, content.right, content.bottom].map { .number($0 / ratio) })
            }
            icons.append(.object(icon))
        }
        return .object([
            "name": .string(section.name), "live": section.liveIcons.map(JSONValue.string) ?? .null,
            "backdrop": .string(
                section.theme != nil && isLight(section.build, ratio: low, ids: section.ids) ? "dark" : "light"),
            "sheets": .array(sheets), "icons": .array(icons),
        ])
    }

    /// Whether the icons of `build`'s sheets at `ratio` are light on the whole (their mean
    /// luminance, weighted by opacity, above 0.6): a theme for dark maps, shown on dark. (The
    /// plain sets stay on light: openstreetmap-carto's are mostly light road shields with
    /// dark rims, drawn for a light map.)
    static func isLight(_ build: SpriteBuild, ratio: Double, ids: Set<String>?) -> Bool {
        var sum = 0.0, weight = 0.0
        for sheet in build.sheets where sheet.ratio == ratio {
            guard let image = try? PNGDecoder.decode(sheet.png, maxSize: sheet.size) else { continue }
            // A distance field's colors are the style's (icon-color), not the icon's.
            for (id, entry) in sheet.entries where !entry.sdf && ids?.contains(id) ?? true {
                let rect = entry.rect
                // Every other pixel each way is plenty for a mean.
                for y in stride(from: rect.y, to: min(rect.y + rect.height, image.size.height), by: 2) {
                    for x in stride(from: rect.x, to: min(rect.x + rect.width, image.size.width), by: 2) {
                        let pixel = image[x, y]
                        let alpha = Double(pixel.alpha) / 255
                        let luminance =
                            (0.2126 * Double(pixel.red) + 0.7152 * Double(pixel.green) + 0.0722 * Double(pixel.blue))
                            / 255
                        sum += luminance * alpha
                        weight += alpha
                    }
                }
            }
        }
        return weight > 0 && sum / weight > 0.6
    }

    /// Standard base64 with padding.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                output.append(
                    position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The page: styles, the search box, the backdrop switch, and the script that lays out
    /// `{{DATA}}`.
    static let template = #"""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{TITLE}}</title><link rel="icon" href="data:,">
        <style>
          body { font: 14px system-ui, sans-serif; margin: 0; background: #f4f4f2; color: #222 }
          header { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ddd; padding: 10px 16px; display: flex; gap: 16px; align-items: center; z-index: 1 }
          header h1 { font-size: 16px; margin: 0 }
          #search { font: inherit; padding: 5px 8px; width: 260px }
          #count { color: #666 }
          h2 { font-size: 15px; margin: 18px 16px 8px }
          .grid { display: flex; flex-wrap: wrap; gap: 10px; padding: 0 16px }
          .card { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 8px; min-width: 120px; max-width: 260px; content-visibility: auto; contain-intrinsic-size: 160px 120px }
          .card.hidden { display: none }
          .images { display: flex; gap: 10px; align-items: flex-end; min-height: 24px; background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 12px 12px; padding: 6px }
          .dark .images, .dark .variants { background: repeating-conic-gradient(#2b2b2b 0 25%, #3a3a3a 0 50%) 0 0 / 12px 12px }
          .frame { position: relative; line-height: 0 }
          .pixels { background-repeat: no-repeat; image-rendering: auto }
          .area { position: absolute; pointer-events: none }
          .stretch-x { top: 0; bottom: 0; background: rgba(0, 160, 255, 0.28) }
          .stretch-y { left: 0; right: 0; background: rgba(255, 120, 0, 0.28) }
          .content { outline: 1px dashed #d00 }
          .id { font-family: ui-monospace, monospace; font-size: 12px; margin-top: 6px; word-break: break-all }
          .meta { color: #666; font-size: 12px }
          .params label { display: flex; gap: 6px; align-items: center; font-size: 12px; margin-top: 4px }
          .variants { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 6px; padding: 2px }
          .variants .pixels { border: 1px solid #eee }
        </style></head>
        <body>
        <header><h1>{{TITLE}}</h1><input id="search" type="search" placeholder="Search icons" aria-label="Search icons"><span id="count"></span>
        <button id="backdrop" type="button" title="The backdrop behind the icons: each set's own (dark for light icons), light or dark">Backdrop: auto</button>
        <span class="meta">blue: stretch x, orange: stretch y, dashed: content; SDF icons tinted</span></header>
        <main id="sets"></main>
        <script type="application/json" id="iconr-catalog">{{DATA}}</script>
        <script>
        (function () {
          "use strict";
          var sections = JSON.parse(document.getElementById("iconr-catalog").textContent);
          var main = document.getElementById("sets");
          var cards = [], parts = [];
          function element(name, className, text) {
            var node = document.createElement(name);
            if (className) node.className = className;
            if (text !== undefined) node.textContent = text;
            return node;
          }
          // An SDF image as a renderer shows it: its distance field cut at the edge, tinted.
          function tinted(image, width, height, color) {
            var canvas = element("canvas");
            canvas.width = image.naturalWidth; canvas.height = image.naturalHeight;
            canvas.style.width = width + "px"; canvas.style.height = height + "px";
            var context = canvas.getContext("2d");
            context.drawImage(image, 0, 0);
            var pixels = context.getImageData(0, 0, canvas.width, canvas.height);
            for (var i = 0; i < pixels.data.length; i += 4) {
              var alpha = Math.min(1, Math.max(0, (pixels.data[i + 3] / 255 - 0.7) / 0.1));
              pixels.data[i] = color[0]; pixels.data[i + 1] = color[1]; pixels.data[i + 2] = color[2];
              pixels.data[i + 3] = Math.round(alpha * 255);
            }
            context.putImageData(pixels, 0, 0);
            return canvas;
          }
          // A cut of a sheet (place: sheet, x, y, width, height, pixel ratio) shown at `scale`
          // CSS pixels per icon unit; data-* say where its pixels come from.
          function show(node, sheets, place, scale) {
            var sheet = sheets[place[0]], factor = scale / place[5];
            node.style.width = Math.round(place[3] * factor) + "px"; node.style.height = Math.round(place[4] * factor) + "px";
            node.style.backgroundImage = "url(\"" + sheet.url.replace(/["\\]/g, "\\$&") + "\")";
            node.style.backgroundPosition = (-place[1] * factor) + "px " + (-place[2] * factor) + "px";
            node.style.backgroundSize = (sheet.width * factor) + "px " + (sheet.height * factor) + "px";
            node.dataset.src = sheet.url;
            node.dataset.cut = [place[1], place[2], place[3], place[4]].join(" ");
          }
          // A whole image (a redraw) in place of the cut.
          function replace(node, url) {
            node.style.backgroundImage = "url(\"" + url.replace(/["\\]/g, "\\$&") + "\")";
            node.style.backgroundPosition = "0 0"; node.style.backgroundSize = "100% 100%";
            node.dataset.src = url; node.dataset.cut = "";
          }
          // The icon at a scale, with its areas over it.
          function frame(icon, sheets, place, scale) {
            var box = element("div", "frame");
            var pixels = element("div", "pixels");
            pixels.setAttribute("role", "img"); pixels.setAttribute("aria-label", icon.id);
            show(pixels, sheets, place, scale);
            box.appendChild(pixels);
            if (icon.field) {
              var image = new Image();
              image.addEventListener("load", function () { box.replaceChild(tinted(image, pixels.style.width, pixels.style.height, [40, 90, 200]), pixels); }, {once: true});
              image.src = icon.field;
            }
            icon.stretchX.forEach(function (span) {
              var area = element("div", "area stretch-x"); area.style.left = span[0] * scale + "px"; area.style.width = (span[1] - span[0]) * scale + "px"; box.appendChild(area);
            });
            icon.stretchY.forEach(function (span) {
              var area = element("div", "area stretch-y"); area.style.top = span[0] * scale + "px"; area.style.height = (span[1] - span[0]) * scale + "px"; box.appendChild(area);
            });
            if (icon.content) {
              var content = element("div", "area content");
              content.style.left = icon.content[0] * scale + "px"; content.style.top = icon.content[1] * scale + "px";
              content.style.width = (icon.content[2] - icon.content[0]) * scale + "px"; content.style.height = (icon.content[3] - icon.content[1]) * scale + "px";
              box.appendChild(content);
            }
            return {box: box, pixels: pixels};
          }
          sections.forEach(function (section) {
            var part = element("section", section.backdrop === "dark" ? "dark" : "");
            part.dataset.backdrop = section.backdrop;
            parts.push(part);
            main.appendChild(part);
            part.appendChild(element("h2", "", section.name + " (" + section.icons.filter(function (icon) { return icon.id === icon.base; }).length + " icons)"));
            var grid = element("div", "grid");
            part.appendChild(grid);
            var byBase = Object.create(null);
            section.icons.forEach(function (icon) {
              if (icon.id !== icon.base && byBase[icon.base]) {
                var small = element("div", "pixels");
                small.title = icon.id; small.setAttribute("role", "img"); small.setAttribute("aria-label", icon.id);
                show(small, section.sheets, icon.low, 1);
                byBase[icon.base].variants.appendChild(small);
                byBase[icon.base].card.dataset.search += " " + icon.id.toLowerCase();
                return;
              }
              var card = element("div", "card");
              card.dataset.search = (section.name + " " + icon.id).toLowerCase();
              var images = element("div", "images");
              var one = frame(icon, section.sheets, icon.low, 1), two = frame(icon, section.sheets, icon.high, 2);
              images.appendChild(one.box); images.appendChild(two.box);
              card.appendChild(images);
              card.appendChild(element("div", "id", icon.id));
              card.appendChild(element("div", "meta", icon.width + " x " + icon.height + " px" + (icon.sdf ? ", SDF" : "")));
              if (icon.params.length) {
                var params = element("div", "params");
                var inputs = [];
                icon.params.forEach(function (param) {
                  var label = element("label", "", param.name);
                  var input = element("input");
                  input.type = "color"; input.value = param["default"].slice(0, 7); input.dataset.param = param.name;
                  input.disabled = !section.live;
                  input.title = section.live ? "redraw through the server" : "colors redraw in iconr serve's catalog";
                  inputs.push(input);
                  input.addEventListener("input", function () {
                    var query = inputs.map(function (each) { return encodeURIComponent(each.dataset.param) + "=" + encodeURIComponent(each.value); }).join("&");
                    replace(one.pixels, section.live + encodeURIComponent(icon.id) + ".png?" + query);
                    replace(two.pixels, section.live + encodeURIComponent(icon.id) + "@2x.png?" + query);
                  });
                  label.insertBefore(input, label.firstChild);
                  params.appendChild(label);
                });
                card.appendChild(params);
              }
              var variants = element("div", "variants");
              card.appendChild(variants);
              byBase[icon.base] = {card: card, variants: variants};
              cards.push(card);
              grid.appendChild(card);
            });
          });
          var search = document.getElementById("search"), count = document.getElementById("count");
          function filter() {
            var words = search.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0;
            cards.forEach(function (card) {
              var match = words.every(function (word) { return card.dataset.search.indexOf(word) >= 0; });
              card.classList.toggle("hidden", !match);
              if (match) shown += 1;
            });
            count.textContent = shown + " of " + cards.length + " icons";
          }
          search.addEventListener("input", filter);
          filter();
          // The backdrop: each section's own (auto), then light, then dark for all.
          var backdrop = document.getElementById("backdrop"), modes = ["auto", "light", "dark"], mode = 0;
          backdrop.addEventListener("click", function () {
            mode = (mode + 1) % modes.length;
            backdrop.textContent = "Backdrop: " + modes[mode];
            parts.forEach(function (part) {
              var dark = modes[mode] === "auto" ? part.dataset.backdrop === "dark" : modes[mode] === "dark";
              part.classList.toggle("dark", dark);
            });
          });
        })();
        </script>
        </body></html>
        """#
}
