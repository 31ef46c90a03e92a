import Foundation
import IconrCore
import IconrStyle
import IconrTestSupport
import Testing

/// The property table iconr checks emitted styles against is MapLibre GL JS's own: the
/// specification inside the `maplibre-gl.js` that the map tests load, printed by
/// `Tests/MapLibre/spec_table.py`, line for line.
struct MapLibrePropertiesTests {
    @Test func theTableIsTheOneMapLibreGLJSCarries() throws {
        let python = try #require(TestSupport.which("python3"), "python3 is needed for the MapLibre tests")
        let script = TestSupport.repository.appendingPathComponent("Tests/MapLibre/spec_table.py").path
        let result = try TestSupport.run(python, [script], timeout: 60)
        try #require(
            result.status == 0,
            "spec_table.py failed (pip install maplibre; .ci/install does): \(String(decoding: result.stderr, as: UTF8.self))"
        )
        let printed = String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let listed = MapLibreProperties.listing.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(printed.count > 100, "the specification has over 100 layout and paint properties")
        #expect(Set(listed).subtracting(printed).sorted() == [], "in iconr's table, not in GL JS's")
        #expect(Set(printed).subtracting(listed).sorted() == [], "in GL JS's, not in iconr's table")
    }
}

/// The document sections iconr validates a style by are GL JS's own: `spec_table.py
/// --document` prints them from `maplibre-gl.js`, and they equal `MapLibreDocument.listing`.
struct MapLibreDocumentTests {
    @Test func theDocumentSectionsAreTheOnesMapLibreGLJSCarries() throws {
        let python = try #require(TestSupport.which("python3"), "python3 is needed for the MapLibre tests")
        let script = TestSupport.repository.appendingPathComponent("Tests/MapLibre/spec_table.py").path
        let result = try TestSupport.run(python, [script, "--document"], timeout: 60)
        try #require(
            result.status == 0,
            "spec_table.py failed (pip install maplibre; .ci/install does): \(String(decoding: result.stderr, as: UTF8.self))"
        )
        let printed = try JSONValue.parse([UInt8](result.stdout))
        let listed = try JSONValue.parse(Array(MapLibreDocument.listing.utf8))
        #expect((listed["$root"]?.objectValue?.count ?? 0) > 10 && (listed["layer"]?.objectValue?.count ?? 0) > 5)
        for section in Set((printed.objectValue ?? [:]).keys).union((listed.objectValue ?? [:]).keys).sorted() {
            #expect(
                printed[section] == listed[section],
                "section \(section): GL JS \(printed[section]?.serialized ?? "none")")
        }
    }
}
