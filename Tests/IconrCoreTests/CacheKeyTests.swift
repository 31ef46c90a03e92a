import IconrSystem
import Testing

@testable import IconrCore

struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func matchesTheStandardVectors(_ text: String, _ digest: String) {
        #expect(SHA256.hex(Array(text.utf8)) == digest)
    }

    @Test func handlesLongInputs() {
        // One million 'a's: the FIPS 180-2 long-message vector.
        #expect(
            SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// The CPU's SHA instructions and the Swift code give the same digests: the vectors above
    /// through both, and seeded random inputs of every length around the block edges, fed
    /// whole and in uneven pieces (the pending-block path).
    @Test func hardwareAndSwiftAgree() {
        func digest(_ bytes: [UInt8], hardware: Bool, piece: Int? = nil) -> [UInt8] {
            var hasher = SHA256(usingHardware: hardware)
            if let piece {
                var start = 0
                while start < bytes.count {
                    hasher.update(bytes[start..<min(bytes.count, start + piece)])
                    start += piece
                }
            } else {
                hasher.update(bytes)
            }
            return hasher.finalize()
        }
        var state: UInt64 = 7
        func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        let abc = Array("abc".utf8)
        #expect(
            digest(abc, hardware: false) == digest(abc, hardware: true)
                && SHA256.hex(abc) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        var mismatches: [Int] = []
        for length in Array(0...300) + [1000, 4096, 65_537, 1_000_003] {
            let bytes = (0..<length).map { _ in next() }
            let swift = digest(bytes, hardware: false)
            if swift != digest(bytes, hardware: true) || swift != digest(bytes, hardware: true, piece: 37) {
                mismatches.append(length)
            }
        }
        #expect(mismatches.isEmpty, "lengths \(mismatches.prefix(10))")
        // The check (asked of glibc) agrees with the kernel's reading of the CPU: a CPU with
        // the extensions that went unnoticed would hash at a sixth of the speed.
        if let cpuinfo = try? FileReader.read("/proc/cpuinfo"),
            let flags = String(decoding: cpuinfo, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix("flags")
            })
        {
            let names = Set(flags.split(separator: " "))
            #expect(HardwareSHA256.isAvailable == ["sha_ni", "sse4_1", "ssse3"].allSatisfy { names.contains($0[...]) })
        }
        if !HardwareSHA256.isAvailable {
            print("SHA256Tests: this CPU has no SHA extensions; only the Swift code was checked")
        }
    }
}

struct VariantKeyTests {
    private let template = try! SVGTemplate(
        bytes: Array(
            """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:m="https://www.mapbox.com" width="4" height="4">
              <m:metadata><m:parameters>
                <m:parameter m:name="flag_color" m:type="color" m:value="#000000"/>
                <m:parameter m:name="edge" m:type="color" m:value="#ffffff"/>
              </m:parameters></m:metadata>
            </svg>
            """.utf8))

    private func key(_ params: [String: String], scale: Double = 1) throws -> VariantKey {
        VariantKey(
            name: "flag", templateDigest: "d1", params: try template.resolve(IconParameters(parsing: params)),
            scale: scale)
    }

    @Test(
        arguments: [
            ([:], 1.0, "flag@1x"),
            (["flag_color": "#800080"], 2.0, "flag?flag_color=#800080@2x"),
            (["flag_color": "red"], 1.5, "flag?flag_color=#ff0000@1.5x"),
            (["flag_color": "rgba(255, 0, 0, 0.5)"], 3.0, "flag?flag_color=#ff000080@3x"),
            (["flag_color": "#000000"], 2.0, "flag@2x"),
            (["flag_color": "black", "edge": "white"], 1.0, "flag@1x"),
            (["flag_color": "purple", "edge": "RED"], 1.0, "flag?edge=#ff0000&flag_color=#800080@1x"),
            (["unknown": "red"], 1.0, "flag@1x"),
            (["edge": "red", "flag_color": "purple"], 0.25, "flag?edge=#ff0000&flag_color=#800080@0.25x"),
        ] as [([String: String], Double, String)])
    func readableCanonicalForm(_ params: [String: String], _ scale: Double, _ expected: String) throws {
        #expect(try key(params, scale: scale).description == expected)
    }

    @Test func spellingsOfOneColorAreOneKey() throws {
        let spellings = ["red", "#f00", "#ff0000", "rgb(255,0,0)", "RED", "rgba(100%, 0%, 0%, 1)", "hsl(0, 100%, 50%)"]
        let keys = Set(try spellings.map { try key(["flag_color": $0]) })
        #expect(keys.count == 1)
        #expect(try key(["flag_color": "red"]) != key(["flag_color": "red"], scale: 2))
    }

    @Test func theTemplateDigestIsPartOfTheIdentity() throws {
        let resolved = try template.resolve(IconParameters(parsing: ["flag_color": "red"]))
        let a = VariantKey(name: "flag", templateDigest: "aaa", params: resolved, scale: 1)
        let b = VariantKey(name: "flag", templateDigest: "bbb", params: resolved, scale: 1)
        #expect(a.description == b.description && a != b)
        #expect(a.identity == "aaa:flag?flag_color=#ff0000@1x")
    }
}
