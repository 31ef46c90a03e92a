/// What a renderer will drop, or draw differently, in an icon: `iconr check`, before Mapbox
/// Studio (or MapLibre) sees it. Pure Swift: the SVG is scanned, not drawn.
///
/// Mapbox draws vector icons from a usvg tree with Canvas 2D, which ignores text, patterns,
/// blend modes, `spreadMethod` reflect and repeat, and embedded images (librsvg draws them
/// all, so an icon can look right in iconr and wrong in Mapbox); Studio silently drops SVGs
/// with `<style>` elements (mapbox-gl-js #13331) and takes icons up to 512 px a side, under
/// 400 KB, at most 1,000 a style. MapLibre deforms SDF icons that are also stretchable
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
                let uses = paintUses(of: parameter.defaultColor.rgb, in: template)
                guard uses.count > 1 else { continue }
                add(
                    .mapbox, "shared-default",
                    "parameter \(parameter.name)'s default \(parameter.defaultColor.hexString) paints "
                        + uses.sorted().joined(separator: ", ")
                        + ": a value for it recolors them all (give the others another color)")
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

    /// A finding for a set of `count` images, when Studio takes fewer.
    public static func setFinding(count: Int) -> Finding? {
        guard count > studioMaxImages else { return nil }
        return Finding(
            target: .mapbox, rule: "studio-images",
            message: "\(count) images: Studio takes at most 1,000 images a style")
    }

    /// The kinds of paint that declare `rgb` in `template`: `the fill of an element`, `a
    /// stroke`, `a stop-color`, `the initial fill` (undeclared black), `a style sheet's paint`.
    static func paintUses(of rgb: UInt32, in template: SVGTemplate) -> Set<String> {
        var uses: Set<String> = []
        for edit in template.paintEdits {
            guard edit.pieces.contains(where: { if case .color(rgb, _) = $0 { true } else { false } }) else {
                continue
            }
            switch (edit.target?.property, edit.target?.value) {
            case (let property?, nil): uses.insert("the initial \(property.rawValue) (no paint declared)")
            case (let property?, _): uses.insert("a \(property.rawValue)")
            case (nil, _): uses.insert("a paint in a style sheet or style attribute")
            }
        }
        return uses
    }

    /// What one pass over the document finds.
    private struct Scan {
        var styleElement = false
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
            while let event = try? scanner.next() {
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
                if value("mix-blend-mode").map({ $0.trimmingASCIIWhitespace != "normal" }) == true
                    || (style.lowercased().containsIgnoringWhitespace("mix-blend-mode")
                        && !style.lowercased().containsIgnoringWhitespace("mix-blend-mode:normal"))
                {
                    note("blend-mode", "a blend mode (mix-blend-mode)")
                }
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
