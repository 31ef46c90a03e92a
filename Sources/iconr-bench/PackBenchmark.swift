import IconrCore

/// The packer's figures on seeded sets: how full each sheet is (icon pixels, and counting
/// each icon's padding, the sprite issue's measure) and how long the packing took.
enum PackBenchmark {
    /// How a set's icons are drawn: width and height apart, or squares, from a range of 1x sides.
    enum Shape {
        case apart(ClosedRange<Int>)
        case square(ClosedRange<Int>)

        /// One icon at 2x.
        func next(_ generator: inout SeededSizes) -> PixelSize {
            switch self {
            case .apart(let sides):
                let width = generator.next(sides) * 2
                return PixelSize(width: width, height: generator.next(sides) * 2)
            case .square(let sides):
                let side = generator.next(sides) * 2
                return PixelSize(width: side, height: side)
            }
        }
    }

    /// Sets of `count` icons drawn by `shape` from a seeded generator, packed at 2x (padding 2).
    static let sets: [(name: String, count: Int, shape: Shape)] = [
        ("mixed 120 (6-72 px, w and h apart)", 120, .apart(6...72)),
        ("square 120 (6-72 px)", 120, .square(6...72)),
        ("mixed 400 (8-64 px)", 400, .apart(8...64)),
        ("mixed 1,000 (8-40 px)", 1000, .apart(8...40)),
    ]

    static func run(seeds: ClosedRange<Int>) {
        let clock = ContinuousClock()
        print("iconr-bench pack: sheet fill at 2x, padding 2 (icon pixels / counting padding), time per packing\n")
        for set in sets {
            var fills: [Double] = [], padded: [Double] = [], times: [Double] = []
            for seed in seeds {
                var generator = SeededSizes(seed: UInt64(seed))
                let sizes = (0..<set.count).map { _ in set.shape.next(&generator) }
                let start = clock.now
                guard let sheet = SpritePacker.pack(sizes, padding: 2, maxSide: 4096) else {
                    print("  \(set.name) seed \(seed): did not pack")
                    continue
                }
                let elapsed = clock.now - start
                times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
                let area = Double(sizes.reduce(0) { $0 + $1.width * $1.height })
                let withPadding = Double(sizes.reduce(0) { $0 + ($1.width + 2) * ($1.height + 2) })
                fills.append(area / Double(sheet.width * sheet.height))
                padded.append(withPadding / Double((sheet.width + 2) * (sheet.height + 2)))
            }
            func percent(_ values: [Double]) -> String {
                values.map { String(Double(Int(($0 * 1000).rounded())) / 10) }.joined(separator: " ")
            }
            print(set.name)
            print("  counting padding  \(percent(padded))   (least \(percent([padded.min() ?? 0])))")
            print("  icon pixels       \(percent(fills))")
            print("  ms                \(times.map { String(Int($0.rounded())) }.joined(separator: " "))")
        }
    }
}

/// The test suite's generator (a 64-bit LCG), so that the bench's sets are the tests' sets.
struct SeededSizes {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ range: ClosedRange<Int>) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return range.lowerBound + Int(state >> 33) % range.count
    }
}
