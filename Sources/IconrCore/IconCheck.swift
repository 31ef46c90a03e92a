/// What a renderer will drop, or draw differently, in an icon: `iconr check`, before Mapbox
/// Studio (or MapLibre) sees it. Pure Swift: the SVG is scanned, not drawn.
///
/// Mapbox draws vector icons from a usvg tree with Canvas 2D, which ignores text, patterns,
/// blend modes, `spreadMethod` reflect and repeat, and embedded images (librsvg draws them
/// all, so an icon can look right in iconr and wrong in Mapbox); Studio silently drops SVGs
/// with `<style>` elements (mapbox-gl-js #13331) and takes icons up to 512 px a side, under
/// 400 KB, at most 1,000 a style, and draws icons in whole pixels (a fractional size is
/// rounded and the drawing stretched). MapLibre deforms SDF icons that are also stretchable
/// (maplibre-gl-js #6953).
public enum IconCheck {
    /// The renderer a finding is for.
    public enum Target: String, Sendable, CaseIterable {
        case mapbox, maplibre
    }

    /// One thing the target will drop or draw differently, with a one-line reason.
    public struct Finding: Hashable, Sendable, CustomStringConvertible {
        /// The renderer it is for.
        public var target: Target
        /// A short name of the rule (`style-element`, `text`, ...), for scripts.
        public var rule: String
        /// Why, in one line.
        public var message: String

        /// A finding of `rule` for `target`, saying `message`.
        public init(target: Target, rule: String, message: String) {
            self.target = target
            self.rule = rule
            self.message = message
        }

        /// `mapbox: <message>`.
        public var description: String { "\(target.rawValue): \(message)" }
    }

    /// Studio's largest icon side, in pixels at 1x.
    public static let studioMaxSide = 512.0
    /// Studio's largest SVG file, in bytes (under 400 KB).
    public static let studioMaxBytes = 400 * 1024
    /// Studio's most images in one style.
    public static let studioMaxImages = 1_000

    /// The findings for an icon file of `bytes` (its `template`, when it scans as one) for
    /// `targets`; `sdf` says whether it goes into a sprite as an SDF icon.
    public static func findings(
        bytes: [UInt8], template: SVGTemplate?, sdf: Bool, targets: Set<Target> = Set(Target.allCases)
    ) -> [Finding] {
        var found: [Finding] = []
        func add(_ target: Target, _ rule: String, _ message: String) {
            guard targets.contains(target), !found.contains(where: { $0.target == target && $0.rule == rule }) else {
                return
            }
            found.append(Finding(target: target, rule: rule, message: message))
        }
        if bytes.count >= studioMaxBytes {
            add(.mapbox, "studio-file-size", "\(bytes.count / 1024) KB: Studio takes SVG files under 400 KB")
        }
        let scan = Scan(bytes)
        if let size = scan.size, max(size.width, size.height) > studioMaxSide {
            add(
                .mapbox, "studio-size",
                "\(size.width.shortText) x \(size.height.shortText) px: Studio takes icons up to 512 px a side")
        }
        if let size = scan.size, let scale = fractionalScale(width: size.width, height: size.height) {
            let drawn = [size.width, size.height].map { max(1, ($0 * scale).rounded()).shortText }
            add(
                .mapbox, "fractional-size",
                "\(size.width.shortText) x \(size.height.shortText) px: Mapbox draws it in whole pixels, "
                    + "\(drawn[0]) x \(drawn[1]) at \(scale.shortText)x, stretched to fill them (give it a whole-pixel size)"
            )
        }
        if scan.styleElement {
            add(
                .mapbox, "style-element", "a <style> element: Studio drops SVGs with style sheets (mapbox-gl-js #13331)"
            )
        }
        for (rule, what) in scan.unsupported {
            add(.mapbox, rule, "\(what): Mapbox's renderer (usvg, Canvas 2D) does not draw it; iconr (librsvg) does")
        }
        if let template {
            for parameter in template.parameters {
                // Declared paints of the default's color are the author's to bind; an initial
                // value that some element takes, declared nowhere, is recolored unseen.
                let undeclared = initialPaints(of: parameter.defaultColor.rgb, in: template).filter {
                    scan.takesInitial($0)
                }
                guard !undeclared.isEmpty else { continue }
                add(
                    .mapbox, "shared-default",
                    "parameter \(parameter.name)'s default \(parameter.defaultColor.hexString) is also "
                        + undeclared.map { "the initial \($0.rawValue)" }.joined(separator: " and ")
                        + " of elements that declare none: a value for it recolors them too (declare their paint)")
            }
            let stretchable =
                !template.stretchX.isEmpty || !template.stretchY.isEmpty || !template.legacyAreaIDs.isEmpty
            if sdf && stretchable {
                add(
                    .maplibre, "sdf-stretch",
                    "an SDF icon with stretch areas: MapLibre deforms it when it stretches (maplibre-gl-js #6953)")
            }
        }
        return found
    }

    /// The first pixel ratio (1, then 2) at which an icon of `width` x `height` px at 1x is not
    /// a whole number of pixels: Mapbox rounds the raster's size there and stretches the
    /// drawing to fill it (a hundredth of a pixel is taken as whole).
    static func fractionalScale(width: Double, height: Double) -> Double? {
        [1.0, 2.0].first { scale in
            [width, height].contains { abs($0 * scale - ($0 * scale).rounded()) > 0.01 }
        }
    }

    /// A finding for a set of `count` images, when Studio takes fewer.
    public static func setFinding(count: Int) -> Finding? {
        guard count > studioMaxImages else { return nil }
        return Finding(
            target: .mapbox, rule: "studio-images",
            message: "\(count) images: Studio takes at most 1,000 images a style")
    }

    /// The paints whose initial value (black, where nothing declares them) is `rgb` in
    /// `template`'s edits: those a parameter of that default would replace.
    static func initialPaints(of rgb: UInt32, in template: SVGTemplate) -> [PaintProperty] {
        var found: [PaintProperty] = []
        for edit in template.paintEdits {
            guard let property = edit.target?.property, edit.target?.value == nil, !found.contains(property),
                edit.pieces.contains(where: { if case .color(rgb, _) = $0 { true } else { false } })
            else { continue }
            found.append(property)
        }
        return found.sorted { $0.rawValue < $1.rawValue }
    }

    /// What one pass over the document finds.
    private struct Scan {
        var styleElement = false
        /// A shape that declares no fill, itself or by an ancestor (attribute or `style`).
        var undeclaredFill = false
        /// `currentColor` anywhere: the initial `color` is then painted.
        var currentColor = false
        /// A gradient stop without a `stop-color`.
        var undeclaredStopColor = false
        /// Rules and what was seen, in document order, once each.
        var unsupported: [(rule: String, what: String)] = []
        /// The root's size in pixels at 1x, when its width and height (or viewBox) say it.
        var size: (width: Double, height: Double)?

        init(_ bytes: [UInt8]) {
            var scanner = XMLScanner(bytes)
            var isRoot = true
            func note(_ rule: String, _ what: String) {
                if !unsupported.contains(where: { $0.rule == rule }) { unsupported.append((rule, what)) }
            }
            // In an attribute or a style sheet (a comment too: that errs on the safe side).
            currentColor = String(decoding: bytes, as: UTF8.self).lowercased().containsUTF8("currentcolor")
            // Whether each open element, or one around it, declares a fill; clip paths draw none.
            var declaresFill: [Bool] = []
            var clipping = 0
            while let event = try? scanner.next() {
                if case .end(let name, _) = event {
                    _ = declaresFill.popLast()
                    if (name.split(separator: ":").last.map(String.init) ?? name) == "clipPath" { clipping -= 1 }
                    continue
                }
                guard case .start(let tag) = event else { continue }
                let name = tag.name.split(separator: ":").last.map(String.init) ?? tag.name
                func value(_ attribute: String) -> String? {
                    tag.attributes.first {
                        ($0.name.split(separator: ":").last.map(String.init) ?? $0.name) == attribute
                    }
                    .flatMap { try? scanner.value(of: $0) }
                }
                if isRoot {
                    isRoot = false
                    size = Self.size(width: value("width"), height: value("height"), viewBox: value("viewBox"))
                }
                switch name {
                case "style": styleElement = true
                case "text", "tspan", "textPath": note("text", "text (<\(name)>)")
                case "pattern": note("pattern", "a <pattern> paint")
                case "image": note("image", "an embedded <image>")
                default: break
                }
                if let spread = value("spreadMethod")?.trimmingASCIIWhitespace,
                    spread == "reflect" || spread == "repeat"
                {
                    note("spread-method", "a gradient's spreadMethod \(spread)")
                }
                let style = value("style") ?? ""
                let compactStyle = String(style.lowercased().filter { !$0.isWhitespace })
                let fill = (declaresFill.last ?? false) || value("fill") != nil || compactStyle.containsUTF8("fill:")
                if Self.shapes.contains(name), !fill, clipping == 0 { undeclaredFill = true }
                if name == "stop", value("stop-color") == nil, !compactStyle.containsUTF8("stop-color:") {
                    undeclaredStopColor = true
                }
                if name == "clipPath", !tag.isSelfClosing { clipping += 1 }
                if !tag.isSelfClosing { declaresFill.append(fill) }
                if value("mix-blend-mode").map({ $0.trimmingASCIIWhitespace != "normal" }) == true
                    || (style.lowercased().containsIgnoringWhitespace("mix-blend-mode")
                        && !style.lowercased().containsIgnoringWhitespace("mix-blend-mode:normal"))
                {
                    note("blend-mode", "a blend mode (mix-blend-mode)")
                }
            }
        }

        /// The elements a fill paints.
        static let shapes: Set<String> = ["path", "rect", "circle", "ellipse", "polygon", "polyline", "text"]

        /// Whether an element takes the initial value of `property` (with a style sheet, which
        /// may declare it or not, assumed so).
        func takesInitial(_ property: PaintProperty) -> Bool {
            switch property {
            case .fill: undeclaredFill || styleElement
            case .color: currentColor
            case .stopColor: undeclaredStopColor || styleElement
            case .stroke: false
            }
        }

        /// Pixels at 1x from `width` and `height` (numbers, or with `px`), else the viewBox.
        static func size(width: String?, height: String?, viewBox: String?) -> (width: Double, height: Double)? {
            func pixels(_ text: String?) -> Double? {
                guard var text = text?.trimmingASCIIWhitespace else { return nil }
                if text.hasSuffix("px") { text = text.dropLast(2) }
                return Double(text).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            }
            if let width = pixels(width), let height = pixels(height) { return (width, height) }
            let numbers = (viewBox ?? "").split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" })
                .compactMap { Double($0) }
            guard numbers.count == 4, numbers[2] > 0, numbers[3] > 0 else { return nil }
            return (pixels(width) ?? numbers[2], pixels(height) ?? numbers[3])
        }
    }
}

extension String {
    /// Whether `text` occurs in this string, ignoring white space in this string.
    fileprivate func containsIgnoringWhitespace(_ text: String) -> Bool {
        String(self.filter { !$0.isWhitespace }).containsUTF8(text)
    }
}
