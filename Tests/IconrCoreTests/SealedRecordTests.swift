import Testing

@testable import IconrCore

/// The one framing of the disk cache's records: what `open` gives back, and everything it
/// refuses (another key, another kind or version, a flipped bit, a cut).
struct SealedRecordTests {
    enum Notes: SealedRecordKind { static let kindLine = "iconr notes 1\n" }
    enum NewNotes: SealedRecordKind { static let kindLine = "iconr notes 2\n" }

    @Test func aRecordOpensOnlyAsItWasSealed() throws {
        let body: [UInt8] = Array("the body".utf8) + [0, 255, 7]
        let sealed = Notes.seal(body, key: "k1")
        #expect(sealed.starts(with: Array("iconr notes 1\n".utf8)))
        let opened = try #require(Notes.open(sealed, key: "k1"))
        #expect(Array(opened) == body)
        #expect(opened.endIndex == sealed.endIndex, "the body is the record's tail")
        #expect(Notes.open(sealed, key: "k2") == nil, "planted under another key")
        #expect(Notes.open(sealed, key: "k") == nil && Notes.open(sealed, key: "k1x") == nil)
        #expect(NewNotes.open(sealed, key: "k1") == nil, "another version")
        for index in [0, 20, sealed.count - 1] {
            var damaged = sealed
            damaged[index] ^= 0x10
            #expect(Notes.open(damaged, key: "k1") == nil, "a bit flipped at \(index)")
        }
        #expect(Notes.open(Array(sealed.dropLast()), key: "k1") == nil, "cut")
        #expect(Notes.open([], key: "k1") == nil)
        #expect(Array(try #require(Notes.open(Notes.seal([], key: ""), key: ""))) == [])
    }
}
