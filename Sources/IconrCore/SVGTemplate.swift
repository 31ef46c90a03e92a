/// A parsed parameterized SVG icon: its Mapbox metadata, and every place a parameter can
/// change a paint. Pure Swift; librsvg never sees a template, only the bytes `apply` makes.
///
/// How parameters are applied: the template keeps the byte range of every paint color it
/// declares (presentation attributes, `style` attributes, `<style>` sheets) and, for the
/// initial values (black `fill` and `color` on the root, black `stop-color` on a stop that
/// sets none), a point to insert a presentation attribute. Applying parameters rewrites the
/// colors equal to a parameter's default and hands librsvg the new document, so librsvg's
/// own cascade decides which declaration wins, exactly as it would have for the default.
/// Where only presentation attributes and initial values declare the edited paints, the same
/// variant is drawn without a new parse: a user stylesheet on the loaded, marked template
/// (`restyling`), whose rules win exactly where the rewritten attributes would have, since
/// nothing else declares those paints. A user rule selects elements, not the color the
/// cascade resolved for them, so templates with style sheets or `style` paints are rewritten.
public struct SVGTemplate: Sendable {
    /// The XML namespace of Mapbox's icon metadata (`m:parameters`, `m:stretch-x`, ...).
    public static let mapboxNamespace = "https://www.mapbox.com"
    static let svgNamespace = "http://www.w3.org/2000/svg"

    /// The document as read.
    public let bytes: [UInt8]
    /// The color parameters the metadata declares, in document order.
    public let parameters: [TemplateParameter]
    /// Horizontal stretch areas from the metadata, in user units.
    public let stretchX: [StretchArea]
    /// Vertical stretch areas from the metadata, in user units.
    public let stretchY: [StretchArea]
    /// The content box from the metadata (where text goes), if it declares one.
    public let content: ContentBox?
    /// What scanning found that does not stop the template from rendering.
    public let warnings: [TemplateWarning]
    /// Ids of elements that mark areas in spritezero's older convention (`mapbox-stretch`,
    /// `mapbox-stretch-x`, `mapbox-stretch-y`, `mapbox-content`, optionally with `-N`); their
    /// boxes, which only librsvg can measure, are the areas (see `LegacyAreas`).
    public let legacyAreaIDs: [String]
    /// References to other files, as written: `href`/`xlink:href` values and CSS `url()`
    /// targets that are neither `#fragments` nor `data:` URLs.
    public let externalReferences: [String]
    let paintEdits: [PaintEdit]
    /// Where each parameter's `m:value` is in `bytes`, in the order of `parameters`.
    let parameterValueRanges: [Range<Int>]
    /// A declaration was seen that a user stylesheet could wrongly override (`restyling`).
    let restylingBlocked: Bool

    /// Parses `bytes` as a template. `file` only names the file in errors.
    public init(bytes: [UInt8], file: String? = nil) throws(TemplateError) {
        do {
            var parser = TemplateParser(bytes: bytes)
            try parser.parse()
            self.bytes = bytes
            parameters = parser.parameters.map(\.parameter)
            parameterValueRanges = parser.parameters.map(\.valueRange)
            stretchX = parser.stretchX
            stretchY = parser.stretchY
            content = parser.content
            warnings = parser.warnings
            legacyAreaIDs = parser.legacyAreaIDs
            externalReferences = parser.externalReferences
            paintEdits = parser.edits.sorted { $0.range.lowerBound < $1.range.lowerBound }
            restylingBlocked = parser.restylingBlocked
        } catch {
            var error = error
            error.file = file
            throw error
        }
    }

    /// Whether the template declares no parameters.
    public var isPlain: Bool { parameters.isEmpty }
}

/// Walks the document once, collecting metadata and paint edits.
private struct TemplateParser {
    struct DeclaredParameter {
        var parameter: TemplateParameter
        var location: SourceLocation
        /// Where its `m:value` is in the bytes.
        var valueRange: Range<Int> = 0..<0
    }

    let bytes: [UInt8]
    let lines: LineTable
    var scanner: XMLScanner
    var parameters: [DeclaredParameter] = []
    var stretchX: [StretchArea] = []
    var stretchY: [StretchArea] = []
    var content: ContentBox?
    var warnings: [TemplateWarning] = []
    var edits: [PaintEdit] = []
    /// A declaration was seen that a user stylesheet could wrongly override: a style sheet,
    /// a `style` attribute declaring a paint, a paint attribute with character references.
    var restylingBlocked = false
    var legacyAreaIDs: [String] = []
    var externalReferences: [String] = []

    /// Namespace bindings and names of the open elements.
    private var scopes: [(name: String, namespaces: [String: String])] = []
    private var sawRoot = false

    init(bytes: [UInt8]) {
        self.bytes = bytes
        lines = LineTable(bytes)
        scanner = XMLScanner(bytes)
    }

    mutating func parse() throws(TemplateError) {
        do {
            while let event = try scanner.next() {
                switch event {
                case .start(let tag):
                    try startElement(tag)
                case .end:
                    if !scopes.isEmpty { scopes.removeLast() }
                case .text(let range, let isCDATA):
                    if let element = scopes.last?.name, isStyleElement(element) {
                        try collectStylesheet(range: range, isCDATA: isCDATA)
                    } else if !isCDATA {
                        warnAboutMarkupInEntities(range)
                    }
                }
            }
        } catch let error as XMLSyntaxError {
            throw TemplateError(location: lines.location(of: error.offset), message: error.message)
        } catch let error as TemplateError {
            throw error
        } catch {
            throw TemplateError(location: nil, message: "\(error)")
        }
        guard sawRoot else { throw TemplateError(location: nil, message: "no root element: not an SVG document") }
        warnAboutSharedDefaults()
    }

    /// Entities whose text holds elements were warned about (once each).
    private var entitiesWarnedAbout: Set<String> = []

    /// An entity reference in content whose replacement holds elements (`<!ENTITY r
    /// "<rect fill='#000'/>">`): librsvg draws them, but they are not in this document's
    /// bytes, so parameters do not reach their paints. A warning, once per entity.
    private mutating func warnAboutMarkupInEntities(_ range: Range<Int>) {
        guard !scanner.entities.isEmpty, bytes[range].contains(UInt8(ascii: "&")) else { return }
        var index = range.lowerBound
        while index < range.upperBound {
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: "&"),
                let end = bytes[index..<range.upperBound].firstIndex(of: UInt8(ascii: ";"))
            else { continue }
            let name = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
            guard let replacement = scanner.entities[name], replacement.contains("<"),
                entitiesWarnedAbout.insert(name).inserted
            else { continue }
            warnings.append(
                TemplateWarning(
                    location: lines.location(of: index),
                    message:
                        "the entity &\(name); holds elements: they are drawn, but parameters do not reach their paints")
            )
        }
    }

    private mutating func startElement(_ tag: XMLStartTag) throws {
        var namespaces = scopes.last?.namespaces ?? [:]
        for attribute in tag.attributes {
            if attribute.name == "xmlns" {
                namespaces[""] = try scanner.value(of: attribute)
            } else if attribute.name.hasPrefix("xmlns:") {
                namespaces[String(attribute.name.dropFirst(6))] = try scanner.value(of: attribute)
            }
        }
        let (namespace, localName) = Self.resolve(tag.name, in: namespaces)
        let isRoot = !sawRoot
        sawRoot = true
        scopes.append((tag.name, namespaces))
        if tag.isSelfClosing { scopes.removeLast() }

        if namespace == SVGTemplate.mapboxNamespace {
            try readMetadata(localName, tag, namespaces: namespaces)
            return
        }
        guard namespace == SVGTemplate.svgNamespace || namespace == nil else { return }
        if isRoot {
            guard localName == "svg" else {
                throw TemplateError(
                    location: lines.location(of: tag.offset),
                    message: "root element is <\(tag.name)>, not <svg>: not an SVG document")
            }
            for property in [PaintProperty.fill, .color] where tag.attribute(property.rawValue) == nil {
                edits.append(.insertion(of: property, at: tag.attributeInsertionPoint))
            }
        }
        if localName == "stop", tag.attribute(PaintProperty.stopColor.rawValue) == nil {
            edits.append(.insertion(of: .stopColor, at: tag.attributeInsertionPoint))
        }
        for attribute in tag.attributes {
            if attribute.name == "id", case let id = try scanner.value(of: attribute), LegacyAreas.kind(of: id) != nil {
                legacyAreaIDs.append(id)
            }
            if attribute.name == "href" || attribute.name.hasSuffix(":href") {
                noteReference(try scanner.value(of: attribute))
            } else if bytes[attribute.valueRange].contains(UInt8(ascii: "(")) {
                noteURLs(in: try scanner.value(of: attribute))
            }
            if let property = PaintProperty(name: attribute.name) {
                let count = edits.count
                try collectAttribute(attribute) { decoded in
                    PaintEdit.colorToken(in: decoded, value: CSSDeclarations.trimmed(decoded, 0..<decoded.count))
                        .map { [$0] } ?? []
                }
                if attribute.hasReferences {
                    restylingBlocked = true
                } else if edits.count > count {
                    edits[count].target = RestyleTarget(
                        element: tag.attributeInsertionPoint, property: property, value: attribute.valueRange)
                }
            } else if attribute.name == "style" {
                var declaresPaint = false
                try collectAttribute(attribute) { decoded in
                    let declarations = CSSDeclarations.inList(decoded)
                    declaresPaint = declarations.contains { PaintProperty(name: $0.name) != nil }
                    return Self.paintTokens(in: decoded, declarations: declarations)
                }
                if declaresPaint { restylingBlocked = true }
            }
        }
    }

    /// Keeps a reference to another file (not `#fragment`, not `data:`).
    private mutating func noteReference(_ raw: String) {
        let reference = String(raw.trimmingASCIIWhitespace)
        guard !reference.isEmpty, !reference.hasPrefix("#"), !reference.lowercased().hasPrefix("data:"),
            !externalReferences.contains(reference)
        else { return }
        externalReferences.append(reference)
    }

    /// Keeps the targets of CSS `url(...)` in `text`.
    private mutating func noteURLs(in text: String) {
        let bytes = Array(text.utf8)
        var from = 0
        while let start = bytes.firstOffset(of: Array("url(".utf8), from: from) {
            guard let end = bytes[(start + 4)...].firstIndex(of: UInt8(ascii: ")")) else { return }
            let target = bytes[(start + 4)..<end].filter { $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "'") }
            noteReference(String(String(decoding: target, as: UTF8.self).trimmingASCIIWhitespace))
            from = end + 1
        }
    }

    private func isStyleElement(_ qualifiedName: String) -> Bool {
        let namespaces = scopes.last?.namespaces ?? [:]
        let (namespace, localName) = Self.resolve(qualifiedName, in: namespaces)
        return localName == "style" && (namespace == SVGTemplate.svgNamespace || namespace == nil)
    }

    private static func resolve(_ qualifiedName: String, in namespaces: [String: String]) -> (String?, String) {
        if let colon = qualifiedName.firstIndex(of: ":") {
            let prefix = String(qualifiedName[..<colon])
            return (namespaces[prefix], String(qualifiedName[qualifiedName.index(after: colon)...]))
        }
        return (namespaces[""], qualifiedName)
    }

    private static func paintTokens(
        in bytes: [UInt8], declarations: [CSSDeclaration]
    ) -> [(range: Range<Int>, color: Color)] {
        declarations.compactMap { declaration in
            guard PaintProperty(name: declaration.name) != nil else { return nil }
            return PaintEdit.colorToken(in: bytes, value: declaration.valueRange)
        }
    }

    private mutating func collectAttribute(
        _ attribute: XMLAttribute,
        tokens: ([UInt8]) -> [(range: Range<Int>, color: Color)]
    ) throws(XMLSyntaxError) {
        if attribute.hasReferences {
            let decoded = Array(try scanner.value(of: attribute).utf8)
            let quote = bytes[attribute.valueRange.lowerBound - 1]
            if let edit = PaintEdit.rewritingWhole(
                rawRange: attribute.valueRange, decoded: decoded,
                tokens: tokens(decoded),
                escape: { xmlEscaped($0, quote: quote) })
            {
                edits.append(edit)
            }
        } else {
            let raw = Array(bytes[attribute.valueRange])
            edits += PaintEdit.inPlace(tokens: tokens(raw), raw: raw, offset: attribute.valueRange.lowerBound)
        }
    }

    private mutating func collectStylesheet(range: Range<Int>, isCDATA: Bool) throws(XMLSyntaxError) {
        // Its rules may set the paints a user stylesheet would override.
        restylingBlocked = true
        let raw = Array(bytes[range])
        if isCDATA || !raw.contains(UInt8(ascii: "&")) {
            edits += PaintEdit.inPlace(
                tokens: Self.paintTokens(in: raw, declarations: CSSDeclarations.inStylesheet(raw)),
                raw: raw, offset: range.lowerBound)
        } else {
            let decoded = Array(try scanner.decode(range).utf8)
            let tokens = Self.paintTokens(in: decoded, declarations: CSSDeclarations.inStylesheet(decoded))
            if let edit = PaintEdit.rewritingWhole(
                rawRange: range, decoded: decoded, tokens: tokens,
                escape: { xmlEscaped($0, quote: nil) })
            {
                edits.append(edit)
            }
        }
    }
}

// MARK: - Metadata

extension TemplateParser {
    private mutating func readMetadata(_ localName: String, _ tag: XMLStartTag, namespaces: [String: String]) throws {
        let location = lines.location(of: tag.offset)
        let scanner = scanner
        func value(_ name: String) throws -> (text: String, offset: Int, range: Range<Int>)? {
            let attribute = tag.attributes.first { attribute in
                let (namespace, local) = Self.resolve(attribute.name, in: namespaces)
                // Unprefixed attributes carry no namespace in XML; accept them too.
                return local == name
                    && (namespace == SVGTemplate.mapboxNamespace || attribute.name.firstIndex(of: ":") == nil)
            }
            guard let attribute else { return nil }
            return (try scanner.value(of: attribute), attribute.offset, attribute.valueRange)
        }
        func number(_ name: String) throws -> Double {
            guard let attribute = try value(name) else {
                throw TemplateError(location: location, message: "\(tag.name) has no m:\(name)")
            }
            guard let number = Double(attribute.text.trimmingASCIIWhitespace), number.isFinite, number >= 0 else {
                throw TemplateError(
                    location: lines.location(of: attribute.offset),
                    message: "\(tag.name) has an invalid m:\(name) \"\(attribute.text)\" (expected a number >= 0)")
            }
            return number
        }
        switch localName {
        case "parameter":
            try readParameter(tag, location: location, value: value)
        case "stretch-x-area":
            let left = try number("left")
            stretchX.append(StretchArea(start: left, end: left + (try number("width"))))
        case "stretch-y-area":
            let top = try number("top")
            stretchY.append(StretchArea(start: top, end: top + (try number("height"))))
        case "content":
            guard content == nil else {
                throw TemplateError(location: location, message: "more than one \(tag.name)")
            }
            let left = try number("left"), top = try number("top")
            content = ContentBox(
                left: left, top: top, right: left + (try number("width")), bottom: top + (try number("height")))
        default:
            break
        }
    }

    private mutating func readParameter(
        _ tag: XMLStartTag, location: SourceLocation,
        value: (String) throws -> (text: String, offset: Int, range: Range<Int>)?
    ) throws {
        guard let name = try value("name")?.text, !name.isEmpty else {
            throw TemplateError(location: location, message: "\(tag.name) has no m:name")
        }
        if let first = parameters.first(where: { $0.parameter.name == name }) {
            throw TemplateError(
                location: location,
                message: "duplicate \(tag.name) \"\(name)\" (first declared at \(first.location))")
        }
        guard let type = try value("type") else {
            throw TemplateError(
                location: location, message: "\(tag.name) \"\(name)\" has no m:type (expected \"color\")")
        }
        guard type.text == "color" else {
            throw TemplateError(
                location: lines.location(of: type.offset),
                message: "\(tag.name) \"\(name)\" has unsupported m:type \"\(type.text)\" (only \"color\" exists)")
        }
        guard let defaultValue = try value("value") else {
            throw TemplateError(location: location, message: "\(tag.name) \"\(name)\" has no m:value")
        }
        guard let color = Color(css: defaultValue.text) else {
            throw TemplateError(
                location: lines.location(of: defaultValue.offset),
                message: "\(tag.name) \"\(name)\" has an invalid m:value \"\(defaultValue.text)\"")
        }
        parameters.append(
            DeclaredParameter(
                parameter: TemplateParameter(name: name, defaultColor: color), location: location,
                valueRange: defaultValue.range))
    }

    mutating func warnAboutSharedDefaults() {
        var firstByColor: [UInt32: DeclaredParameter] = [:]
        for declared in parameters {
            let rgb = declared.parameter.defaultColor.rgb
            if let first = firstByColor[rgb] {
                warnings.append(
                    TemplateWarning(
                        location: declared.location,
                        message:
                            "parameters \"\(first.parameter.name)\" and \"\(declared.parameter.name)\" share the default "
                            + "color \(declared.parameter.defaultColor.hexString), so they cannot be set independently "
                            + "(the one declared last wins)"))
            } else {
                firstByColor[rgb] = declared
            }
        }
    }
}
