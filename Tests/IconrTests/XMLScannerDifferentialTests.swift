import Foundation
import IconrTestSupport
import Testing

@testable import IconrCore

/// The XML scanner against libxml2 (the parser librsvg uses, opened here with dlopen) on every
/// SVG of the corpora: on each document libxml2 accepts, the scanner must see the same
/// elements in the same order, each with the same attributes and values (after XML's
/// attribute-value normalization and entity expansion), since paint edits are made on what
/// the scanner sees and librsvg draws what libxml2 sees. Documents libxml2 rejects librsvg
/// rejects too, so what the scanner makes of them does not matter. The one known difference,
/// elements inside an entity's text, must come with the template's warning about it.
struct XMLScannerDifferentialTests {
    /// One element as a parser reports it: qualified name and `name=value` attributes,
    /// sorted (their order means nothing in XML, and libxml2 lists `xmlns` ones first).
    struct Element: Equatable, CustomStringConvertible {
        var name: String
        var attributes: [String] {
            didSet { attributes.sort() }
        }
        init(name: String, attributes: [String]) {
            self.name = name
            self.attributes = attributes.sorted()
        }
        var description: String { "<\(name) \(attributes.joined(separator: " "))>" }
    }

    @Test(
        .enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)),
        arguments: ["maki", "temaki", "osm-carto-symbols", "resvg-svg", "librsvg-2.54-crashers"])
    func theScannerSeesWhatLibxml2Sees(_ corpus: String) throws {
        let libxml2 = try #require(
            LibXML2.load(), "libxml2.so.2 (Debian's libxml2, which librsvg needs) could not be opened")
        let files = try TestSupport.requiredSVGFiles(in: TestSupport.corpus(corpus))
        try #require(!files.isEmpty, "no SVG files in \(corpus)")
        var compared = 0, rejected = 0, knownDifferences = 0
        var mismatches: [String] = []
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            guard let reference = libxml2.elements(of: bytes) else {
                rejected += 1
                continue
            }
            compared += 1
            let scanned = Self.elements(scanning: bytes)
            guard scanned != reference else { continue }
            // Elements that come from an entity's text are not in the bytes the scanner edits:
            // a known difference, which the template must name in a warning.
            if let template = try? SVGTemplate(bytes: bytes),
                template.warnings.contains(where: { $0.message.contains("holds elements") })
            {
                knownDifferences += 1
                continue
            }
            let first = zip(scanned ?? [], reference).first { $0 != $1 }
            mismatches.append(
                "\(file.lastPathComponent): scanner \(first.map { "\($0.0)" } ?? (scanned == nil ? "failed" : "\(scanned?.count ?? 0) elements")), "
                    + "libxml2 \(first.map { "\($0.1)" } ?? "\(reference.count) elements")")
        }
        #expect(
            mismatches.count == 0,
            "\(mismatches.count) of \(compared) documents differ: \(mismatches.prefix(3).joined(separator: "; "))")
        #expect(compared > 0)
        print(
            "XML scanner against libxml2, \(corpus): \(compared - knownDifferences - mismatches.count) of \(compared) documents agree, "
                + "\(knownDifferences) with elements from entities (warned about), \(mismatches.count) differ; \(rejected) rejected by libxml2"
        )
    }

    /// The same on 3,000 seeded mutations of Maki and Temaki icons (a byte replaced by XML
    /// punctuation, deleted, or doubled): wherever libxml2 still accepts the document, the
    /// scanner must see what it sees.
    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func mutatedDocumentsThatLibxml2AcceptsAreSeenAlike() throws {
        let libxml2 = try #require(LibXML2.load(), "libxml2.so.2 could not be opened")
        let sources = try
            (TestSupport.requiredSVGFiles(in: TestSupport.corpus("maki"), atLeast: 214)
            + TestSupport.requiredSVGFiles(in: TestSupport.corpus("temaki"), atLeast: 539)).map {
                [UInt8](try Data(contentsOf: $0))
            }
        try #require(!sources.isEmpty)
        var state: UInt64 = 2026
        func random(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
        let punctuation = Array("<>&;\"'=/!?- \n#x".utf8)
        var accepted = 0
        var mismatches: [String] = []
        for round in 0..<3000 {
            var bytes = sources[random(sources.count)]
            for _ in 0..<(1 + random(3)) where !bytes.isEmpty {
                let at = random(bytes.count)
                switch random(3) {
                case 0: bytes[at] = punctuation[random(punctuation.count)]
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
            }
            guard let reference = libxml2.elements(of: bytes) else { continue }
            accepted += 1
            if Self.elements(scanning: bytes) != reference {
                mismatches.append("mutation \(round): \(String(decoding: bytes.prefix(200), as: UTF8.self))")
            }
        }
        #expect(accepted > 100, "only \(accepted) mutations were well-formed")
        print(
            "XML scanner against libxml2: \(accepted) of 3000 mutations well-formed, \(mismatches.count) seen differently"
        )
        #expect(
            mismatches.count == 0,
            "\(mismatches.count) of \(accepted) accepted mutations differ: \(mismatches.prefix(2).joined(separator: "; "))"
        )
    }

    /// What the scanner sees, or nil when it stops with an error.
    static func elements(scanning bytes: [UInt8]) -> [Element]? {
        var scanner = XMLScanner(bytes)
        var elements: [Element] = []
        do {
            while let event = try scanner.next() {
                guard case .start(let tag) = event else { continue }
                let attributes = try tag.attributes.map { "\($0.name)=\(normalized(try scanner.value(of: $0)))" }
                elements.append(Element(name: tag.name, attributes: attributes))
            }
        } catch {
            return nil
        }
        return elements
    }

    /// A value with its white space runs made one space and trimmed: XML normalizes literal
    /// tabs and line ends in attribute values but not those from character references, and
    /// no SVG attribute iconr reads (colors, ids, hrefs) gives white space a meaning.
    static func normalized(_ value: String) -> String {
        value.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}

/// libxml2's reader API, opened with dlopen (the test links nothing new).
struct LibXML2 {
    typealias Reader = OpaquePointer
    let readerForMemory:
        @convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32) -> Reader?
    let read: @convention(c) (Reader?) -> Int32
    let nodeType: @convention(c) (Reader?) -> Int32
    let constName: @convention(c) (Reader?) -> UnsafePointer<UInt8>?
    let constValue: @convention(c) (Reader?) -> UnsafePointer<UInt8>?
    let moveToNextAttribute: @convention(c) (Reader?) -> Int32
    let moveToElement: @convention(c) (Reader?) -> Int32
    let free: @convention(c) (Reader?) -> Void

    static func load() -> LibXML2? {
        guard let library = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<T>(_ name: String, as _: T.Type) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: T.self) }
        }
        guard
            let readerForMemory = symbol(
                "xmlReaderForMemory",
                as: (@convention(c) (UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32)
                    -> Reader?).self),
            let read = symbol("xmlTextReaderRead", as: (@convention(c) (Reader?) -> Int32).self),
            let nodeType = symbol("xmlTextReaderNodeType", as: (@convention(c) (Reader?) -> Int32).self),
            let constName = symbol(
                "xmlTextReaderConstName", as: (@convention(c) (Reader?) -> UnsafePointer<UInt8>?).self),
            let constValue = symbol(
                "xmlTextReaderConstValue", as: (@convention(c) (Reader?) -> UnsafePointer<UInt8>?).self),
            let moveToNextAttribute = symbol(
                "xmlTextReaderMoveToNextAttribute", as: (@convention(c) (Reader?) -> Int32).self),
            let moveToElement = symbol("xmlTextReaderMoveToElement", as: (@convention(c) (Reader?) -> Int32).self),
            let free = symbol("xmlFreeTextReader", as: (@convention(c) (Reader?) -> Void).self)
        else { return nil }
        return LibXML2(
            readerForMemory: readerForMemory, read: read, nodeType: nodeType, constName: constName,
            constValue: constValue,
            moveToNextAttribute: moveToNextAttribute, moveToElement: moveToElement, free: free)
    }

    /// The elements libxml2 reads (entities substituted, no network, no DTD loading), or
    /// nil when it rejects the document.
    func elements(of bytes: [UInt8]) -> [XMLScannerDifferentialTests.Element]? {
        // XML_PARSE_NOENT | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_NONET
        let options: Int32 = 2 | 32 | 64 | 2048
        guard
            let reader = bytes.withUnsafeBufferPointer({ buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    readerForMemory($0.baseAddress, Int32(buffer.count), "icon.svg", nil, options)
                }
            })
        else { return nil }
        defer { free(reader) }
        func text(_ pointer: UnsafePointer<UInt8>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        var elements: [XMLScannerDifferentialTests.Element] = []
        while true {
            let status = read(reader)
            if status == 0 { return elements }
            if status < 0 { return nil }
            guard nodeType(reader) == 1 else { continue }
            var element = XMLScannerDifferentialTests.Element(name: text(constName(reader)), attributes: [])
            while moveToNextAttribute(reader) == 1 {
                element.attributes.append(
                    "\(text(constName(reader)))=\(XMLScannerDifferentialTests.normalized(text(constValue(reader))))")
            }
            _ = moveToElement(reader)
            elements.append(element)
        }
    }
}
