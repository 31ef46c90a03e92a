import Testing

@testable import IconrCore

struct SpritePackerTests {
    /// Mixed sizes from a fixed generator: 8 to 64 px a side.
    static let mixed: [PixelSize] = {
        var state: UInt64 = 42
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33)
        }
        return (0..<300).map { _ in PixelSize(width: 8 + next() % 57, height: 8 + next() % 57) }
    }()

    static func check(_ sheet: SpritePacker.Sheet, _ sizes: [PixelSize], padding: Int) {
        #expect(sheet.placements.count == sizes.count)
        let rects = sizes.indices.compactMap { sheet.placements[$0] }
        #expect(rects.count == sizes.count, "every item has a place")
        // Checked in plain code, one expectation for all: an #expect per pair made this slow.
        var problems: [String] = []
        for (index, rect) in rects.enumerated() {
            if rect.width != sizes[index].width || rect.height != sizes[index].height {
                problems.append("\(rect) is not \(sizes[index])")
            }
            if rect.x < 0 || rect.y < 0 || rect.maxX > sheet.width || rect.maxY > sheet.height {
                problems.append("\(rect) is outside")
            }
        }
        problems += touching(rects, padding: padding)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// Pairs of rectangles that touch once grown by the padding.
    static func touching(_ rects: [PixelRect], padding: Int) -> [String] {
        var problems: [String] = []
        for a in rects.indices {
            let grownA = PixelRect(
                x: rects[a].x, y: rects[a].y, width: rects[a].width + padding, height: rects[a].height + padding)
            for b in rects.indices where b > a {
                let grownB = PixelRect(
                    x: rects[b].x, y: rects[b].y, width: rects[b].width + padding, height: rects[b].height + padding)
                if grownA.intersects(grownB) { problems.append("\(rects[a]) touches \(rects[b])") }
            }
        }
        return problems
    }

    static func fill(_ sheet: SpritePacker.Sheet, _ sizes: [PixelSize]) -> Double {
        Double(sizes.reduce(0) { $0 + $1.width * $1.height }) / Double(sheet.width * sheet.height)
    }

    @Test(arguments: [0, 1, 2])
    func placesEveryItemInsideWithoutOverlapOrTouching(_ padding: Int) throws {
        let sheet = try #require(SpritePacker.pack(Self.mixed, padding: padding, maxSide: 4096))
        Self.check(sheet, Self.mixed, padding: padding)
        #expect(SpritePacker.pack(Self.mixed, padding: padding, maxSide: 4096) == sheet, "deterministic")
    }

    @Test func fillsSheetsTightly() throws {
        let maki = [PixelSize](repeating: PixelSize(width: 15, height: 15), count: 214)
        let makiSheet = try #require(SpritePacker.pack(maki, padding: 0, maxSide: 4096))
        #expect(Self.fill(makiSheet, maki) >= 0.95, "maki: \(Self.fill(makiSheet, maki))")
        let mixedSheet = try #require(SpritePacker.pack(Self.mixed, padding: 0, maxSide: 4096))
        #expect(Self.fill(mixedSheet, Self.mixed) >= 0.90, "mixed: \(Self.fill(mixedSheet, Self.mixed))")
    }

    /// Items of one size (Maki's, Temaki's) go in a grid: every item placed, nothing touching,
    /// at most 2% more cells than the fullest grid and none squarer within that; past one
    /// sheet, `split`'s groups pack too (each grid holds as many as any packing of the sheet).
    /// Maki's 214 icons made a 15x3423 strip by smallest area alone.
    @Test(arguments: [(214, 15, 1, 4096), (214, 30, 2, 4096), (1000, 24, 1, 256), (7, 40, 3, 4096), (1, 8, 0, 8)])
    func itemsOfOneSizeGoInTheBestGrid(_ count: Int, _ side: Int, _ padding: Int, _ maxSide: Int) throws {
        let sizes = [PixelSize](repeating: PixelSize(width: side, height: side), count: count)
        let groups = SpritePacker.groups([SpritePacker.Layout(sizes: sizes, padding: padding)], maxSide: maxSide)
        #expect(groups.tooLarge.isEmpty && groups.groups.flatMap(\.members).count == count)
        for group in groups.groups {
            let members = group.members.map { sizes[$0] }
            let sheet = try #require(SpritePacker.pack(members, padding: padding, maxSide: maxSide))
            Self.check(sheet, members, padding: padding)
            #expect(sheet.width <= maxSide && sheet.height <= maxSide)
            let step = side + padding
            let grids = (1...members.count).compactMap { columns -> (cells: Int, squareness: Int)? in
                let rows = (members.count + columns - 1) / columns
                let width = columns * step - padding, height = rows * step - padding
                return width <= maxSide && height <= maxSide ? (columns * rows, abs(width - height)) : nil
            }
            let fewest = try #require(grids.map(\.cells).min())
            let cells = ((sheet.width + padding) / step) * ((sheet.height + padding) / step)
            #expect(cells <= fewest + fewest / 50)
            let squarest = grids.filter { $0.cells <= fewest + fewest / 50 }.map(\.squareness).min()
            #expect(abs(sheet.width - sheet.height) == squarest)
        }
        if count == 214 {
            let sheet = try #require(SpritePacker.pack(sizes, padding: padding, maxSide: maxSide))
            #expect(
                max(sheet.width, sheet.height) < 2 * min(sheet.width, sheet.height), "\(sheet.width)x\(sheet.height)")
        }
        // As few sheets as a full grid of the largest sheet allows.
        let perSheet = ((maxSide + padding) / (side + padding)) * ((maxSide + padding) / (side + padding))
        #expect(groups.groups.count == (count + perSheet - 1) / perSheet)
    }

    /// Seeded mixed sets of 120 icons of 6-72 px at 2x (padding 2): how full the sheet is,
    /// counting each icon's padding. Today 95.3-96.0% on seeds 1-5 (94.4-95.1% with the
    /// shortest-side rule alone); the sprite issue's goal is 97%, not met yet: this guards
    /// against a regression below 95%.
    @Test(arguments: [1, 2, 3, 4, 5])
    func packsMixedSetsTightly(_ seed: Int) throws {
        var state = UInt64(seed)
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33) % bound
        }
        let sizes = (0..<120).map { _ in PixelSize(width: (6 + next(67)) * 2, height: (6 + next(67)) * 2) }
        let sheet = try #require(SpritePacker.pack(sizes, padding: 2, maxSide: 4096))
        let padded = Double(sizes.reduce(0) { $0 + ($1.width + 2) * ($1.height + 2) })
        let packing = padded / Double((sheet.width + 2) * (sheet.height + 2))
        #expect(packing >= 0.95, "seed \(seed): \(packing)")
    }

    /// A 1x layout that is the 2x one halved (every size and the padding) takes the 2x
    /// places halved: packed once, and as full.
    @Test func aLayoutHalvedTakesThePlacesHalved() throws {
        let large = Self.mixed.map { PixelSize(width: $0.width * 2, height: $0.height * 2) }
        let layouts = [
            SpritePacker.Layout(sizes: large, padding: 2), SpritePacker.Layout(sizes: Self.mixed, padding: 1),
        ]
        let groups = SpritePacker.groups(layouts, maxSide: 4096)
        let group = try #require(groups.groups.first)
        #expect(groups.groups.count == 1 && group.members.count == Self.mixed.count)
        let (twice, once) = (group.sheets[0], group.sheets[1])
        #expect(once.width == (twice.width + 2) / 2 - 1 && once.height == (twice.height + 2) / 2 - 1)
        for item in group.members {
            let (big, small) = (try #require(twice.placements[item]), try #require(once.placements[item]))
            #expect(small == PixelRect(x: big.x / 2, y: big.y / 2, width: big.width / 2, height: big.height / 2))
        }
        let placed = SpritePacker.Sheet(
            width: once.width, height: once.height,
            placements: Dictionary(
                uniqueKeysWithValues: group.members.enumerated().map { ($0.offset, once.placements[$0.element]!) }))
        Self.check(placed, group.members.map { Self.mixed[$0] }, padding: 1)
    }

    /// Past `SpritePacker.manyItems` a skyline packs: every item placed apart, inside, and the
    /// sheet nearly as full (the seeded set of 1,800 icons of 8-40 px at padding 1).
    @Test func manyItemsPackByASkyline() throws {
        var state: UInt64 = 7
        func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33) % bound
        }
        let sizes = (0..<1800).map { _ in PixelSize(width: 8 + next(33), height: 8 + next(33)) }
        #expect(sizes.count > SpritePacker.manyItems)
        let sheet = try #require(SpritePacker.pack(sizes, padding: 1, maxSide: 4096))
        Self.check(sheet, sizes, padding: 1)
        let padded = Double(sizes.reduce(0) { $0 + ($1.width + 1) * ($1.height + 1) })
        let packing = padded / Double((sheet.width + 1) * (sheet.height + 1))
        #expect(packing >= 0.93, "\(packing)")
        // And split into sheets of at most 256 px, each of which packs.
        let split = SpritePacker.split(sizes, padding: 1, maxSide: 256)
        #expect(split.tooLarge.isEmpty && Set(split.groups.flatMap { $0 }).count == sizes.count)
        for group in split.groups {
            let groupSizes = group.map { sizes[$0] }
            Self.check(try #require(SpritePacker.pack(groupSizes, padding: 1, maxSide: 256)), groupSizes, padding: 1)
        }
    }

    /// Sheets hold ranges of names (items in index order), so adding an icon moves only a
    /// few icons between sheets, at the ends of the ranges: osm-carto's two sheets had their
    /// ids alternate 194 times in sorted order, and one new icon could move any of them.
    @Test func sheetsAreRangesOfNamesAndAnAddedIconMovesFew() throws {
        var generator = SpriteGroupingTests.Generator(state: 7)
        let sizes = (0..<400).map { _ in PixelSize(width: generator.next(8...47), height: generator.next(8...47)) }
        let before = SpritePacker.split(sizes, padding: 1, maxSide: 256)
        #expect(before.groups.count >= 3)
        #expect(before.groups.flatMap { $0 } == Array(sizes.indices), "each sheet a range, in order")
        var moves: [Int] = []
        for position in [0, 57, 200, 399] {
            var grown = sizes
            grown.insert(PixelSize(width: 20, height: 20), at: position)
            let after = SpritePacker.split(grown, padding: 1, maxSide: 256)
            #expect(after.groups.flatMap { $0 } == Array(grown.indices))
            guard after.groups.count == before.groups.count else { continue }
            func sheet(of item: Int, in groups: [[Int]]) -> Int? { groups.firstIndex { $0.contains(item) } }
            // Item i of the old set is item i (or i + 1, past the new one) of the new.
            let moved = sizes.indices.filter {
                sheet(of: $0, in: before.groups) != sheet(of: $0 < position ? $0 : $0 + 1, in: after.groups)
            }
            moves.append(moved.count)
        }
        #expect(!moves.isEmpty && moves.allSatisfy { $0 <= 3 * (before.groups.count - 1) }, "\(moves)")
    }

    @Test func splitsIntoSheetsThatFit() throws {
        let sizes = Self.mixed + [PixelSize(width: 300, height: 20)]
        let split = SpritePacker.split(sizes, padding: 1, maxSide: 256)
        #expect(split.tooLarge == [sizes.count - 1])
        #expect(split.groups.count > 1)
        #expect(Set(split.groups.flatMap { $0 }).count == sizes.count - 1)
        for group in split.groups {
            let groupSizes = group.map { sizes[$0] }
            let sheet = try #require(SpritePacker.pack(groupSizes, padding: 1, maxSide: 256))
            #expect(sheet.width <= 256 && sheet.height <= 256)
            Self.check(sheet, groupSizes, padding: 1)
        }
        #expect(SpritePacker.pack(sizes, padding: 1, maxSide: 256) == nil)
    }
}

/// Property test of the sheet split across ratios: random sets, ratios, paddings, limits and
/// sharing, thousands of cases; every item lands in exactly one group, and every group packs
/// in every layout (`iconr sprite` trapped on groups that did not: issue "Sprites from real
/// icon sets").
struct SpriteGroupingTests {
    struct Generator {
        var state: UInt64
        mutating func next(_ range: ClosedRange<Int>) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int(state >> 33) % (range.count)
        }
    }

    static func layouts(
        _ generator: inout Generator, count: Int, largest: Int, ratios: [Double], padding: Int,
        shared: Bool
    ) -> [SpritePacker.Layout] {
        let base = (0..<count).map { _ in (generator.next(1...largest), generator.next(1...largest)) }
        // With sharing, about one item in four has the pixels of an earlier one.
        let sharing = (0..<count).map { item in
            shared && item > 0 && generator.next(0...3) == 0 ? generator.next(0...(item - 1)) : item
        }
        return ratios.sorted(by: >).map { ratio in
            let sizes = base.map {
                PixelSize(
                    width: max(1, Int((Double($0.0) * ratio).rounded())),
                    height: max(1, Int((Double($0.1) * ratio).rounded())))
            }
            // An item shares only with an owner of the same size (same pixels).
            let resolved = sharing.indices.map { item in
                let owner = sharing[item] == item ? item : sharing[sharing[item]]
                return sizes[owner] == sizes[item] ? owner : item
            }
            return SpritePacker.Layout(
                sizes: sizes, padding: Int((Double(padding) * ratio).rounded(.up)),
                sharing: shared ? resolved : nil)
        }
    }

    static func check(_ layouts: [SpritePacker.Layout], maxSide: Int, _ label: String) {
        let result = SpritePacker.groups(layouts, maxSide: maxSide)
        let count = layouts[0].sizes.count
        let expectedTooLarge = (0..<count).filter { item in
            layouts.contains { $0.sizes[item].width > maxSide || $0.sizes[item].height > maxSide }
        }
        #expect(result.tooLarge == expectedTooLarge, "\(label)")
        let members = result.groups.flatMap(\.members)
        #expect(members.sorted() == (0..<count).filter { !expectedTooLarge.contains($0) }, "\(label): each item once")
        var problems: [String] = []
        for group in result.groups {
            if group.sheets.count != layouts.count {
                problems.append("\(group.sheets.count) sheets for \(layouts.count) layouts")
            }
            for (layout, sheet) in zip(layouts, group.sheets) {
                if sheet.width > maxSide || sheet.height > maxSide {
                    problems.append("sheet \(sheet.width)x\(sheet.height)")
                }
                var owned: [PixelRect: Int] = [:]
                for item in group.members {
                    guard let rect = sheet.placements[item] else {
                        problems.append("item \(item) has no place")
                        continue
                    }
                    if rect.width != layout.sizes[item].width || rect.height != layout.sizes[item].height {
                        problems.append("item \(item) is \(rect), not \(layout.sizes[item])")
                    }
                    if rect.x < 0 || rect.y < 0 || rect.maxX > sheet.width || rect.maxY > sheet.height {
                        problems.append("item \(item) at \(rect) is outside")
                    }
                    if let other = owned[rect] {
                        if !(layout.sharing?[item] == other || layout.sharing?[other] == item
                            || layout.sharing?[item] == layout.sharing?[other])
                        {
                            problems.append("\(item) on \(other)'s place")
                        }
                    } else {
                        owned[rect] = item
                    }
                }
                problems += SpritePackerTests.touching(Array(owned.keys), padding: layout.padding)
            }
        }
        #expect(problems.isEmpty, "\(label): \(problems.prefix(5))")
    }

    @Test func everyRandomSetPacksAtEveryRatio() {
        var generator = Generator(state: 2026)
        let ratioSets: [[Double]] = [[1], [1, 2], [1, 2, 3], [1.5], [1, 1.01], [0.5, 3]]
        for index in 0..<2000 {
            let maxSide = generator.next(8...300)
            let ratios = ratioSets[generator.next(0...(ratioSets.count - 1))]
            let count = generator.next(1...24)
            let largest = max(1, maxSide / Int(ratios.max()!.rounded(.up)) + generator.next(-4...4))
            let padding = generator.next(0...3)
            let shared = generator.next(0...1) == 1
            let layouts = Self.layouts(
                &generator, count: count, largest: max(1, largest), ratios: ratios,
                padding: padding, shared: shared)
            Self.check(
                layouts, maxSide: maxSide,
                "case \(index): \(count) items, max \(maxSide), ratios \(ratios), padding \(padding)")
        }
    }

    /// The shape that crashed `iconr sprite` (osm-carto's 660 shields at `--max-size` 800 to
    /// 1900), scaled down: many small items in a limit that needs several sheets, at 1x
    /// alone and at 1x, 2x and 3x. The real set is an end-to-end test (`SpriteCommandTests`).
    @Test(arguments: [160, 180, 200, 220, 240, 280, 340, 380])
    func splitsOfManySmallItemsPack(_ maxSide: Int) {
        var generator = Generator(state: UInt64(maxSide))
        for ratios in [[1.0], [1.0, 2.0, 3.0]] {
            let layouts = Self.layouts(&generator, count: 150, largest: 24, ratios: ratios, padding: 1, shared: false)
            Self.check(layouts, maxSide: maxSide, "max \(maxSide), ratios \(ratios)")
        }
    }
}

struct SpriteIndexTests {
    @Test func writesSortedDeterministicJSON() {
        let entries = [
            "b": SpriteIndexEntry(rect: PixelRect(x: 0, y: 0, width: 30, height: 30), pixelRatio: 2),
            "a \"q\"": SpriteIndexEntry(
                rect: PixelRect(x: 31, y: 0, width: 80, height: 48), pixelRatio: 1.5, sdf: true,
                content: ContentBox(left: 9, top: 7.5, right: 51, bottom: 28.5),
                stretchX: [StretchArea(start: 12, end: 48)], stretchY: [StretchArea(start: 12, end: 24)]),
        ]
        let expected = """
            {
              "a \\"q\\"": {"content": [9, 7.5, 51, 28.5], "height": 48, "pixelRatio": 1.5, "sdf": true, "stretchX": [[12, 48]], "stretchY": [[12, 24]], "width": 80, "x": 31, "y": 0},
              "b": {"height": 30, "pixelRatio": 2, "width": 30, "x": 0, "y": 0}
            }

            """
        #expect(String(decoding: SpriteIndex.json(entries, minified: false), as: UTF8.self) == expected)
        #expect(
            String(decoding: SpriteIndex.json(["b": entries["b"]!], minified: true), as: UTF8.self)
                == #"{"b":{"height":30,"pixelRatio":2,"width":30,"x":0,"y":0}}"#)
    }

    /// The index is written directly, not through `JSONValue`: it must be the text that
    /// `JSONValue` writes for the same values, for every field and for ids that need escapes.
    @Test func writesWhatJSONValueWrites() throws {
        let full = SpriteIndexEntry(
            rect: PixelRect(x: 3, y: 1_000_001, width: 7, height: 9), pixelRatio: 0.1 + 0.2, sdf: true,
            content: ContentBox(left: 0.5, top: 1e-7, right: 6, bottom: 8.25),
            stretchX: [StretchArea(start: 1, end: 2), StretchArea(start: 3, end: 4.5)],
            stretchY: [StretchArea(start: 0, end: 9)], textFitWidth: "stretchOnly", textFitHeight: "proportional",
            placeholder: ContentBox(left: 1, top: 2, right: 3, bottom: 4), visible: false)
        let entries = [
            "full": full,
            "tab\tand \u{1}": SpriteIndexEntry(rect: PixelRect(x: 0, y: 0, width: 1, height: 1), pixelRatio: 3),
            "é \\ \"": SpriteIndexEntry(
                rect: PixelRect(x: 0, y: 2, width: 1, height: 1), pixelRatio: 1, textFitWidth: "a\"b", visible: true),
        ]
        for minified in [false, true] {
            let written = SpriteIndex.json(entries, minified: minified)
            let value = try JSONValue.parse(written)
            let expected = minified ? value.text(.minified) : value.text(.memberPerLine) + "\n"
            #expect(String(decoding: written, as: UTF8.self) == expected)
            #expect(SpriteIndex.entries(fromJSON: written) == entries)
        }
        #expect(String(decoding: SpriteIndex.json([:], minified: false), as: UTF8.self) == "{}\n")
        #expect(String(decoding: SpriteIndex.json([:], minified: true), as: UTF8.self) == "{}")
    }

    @Test func validatesMetadataAgainstTheImage() {
        var entry = SpriteIndexEntry(
            rect: PixelRect(x: 5, y: 5, width: 40, height: 24), pixelRatio: 1,
            content: ContentBox(left: 6, top: 5, right: 34, bottom: 19),
            stretchX: [StretchArea(start: 8, end: 32)])
        #expect(entry.metadataProblem == nil)
        entry.stretchX = [StretchArea(start: 20, end: 30), StretchArea(start: 8, end: 12)]
        #expect(entry.metadataProblem == "stretchX [8, 12] is not ordered inside the 40x24 image")
        entry.stretchX = []
        entry.content = ContentBox(left: 6, top: 5, right: 44, bottom: 19)
        #expect(entry.metadataProblem == "content [6, 5, 44, 19] is not inside the 40x24 image")
        // Validation leaves out what does not fit, and keeps the rest.
        entry.stretchX = [StretchArea(start: 20, end: 30), StretchArea(start: 8, end: 12)]
        entry.stretchY = [StretchArea(start: 2, end: 20)]
        let (valid, problems) = entry.validated()
        #expect(
            problems == [
                "stretchX [8, 12] is not ordered inside the 40x24 image",
                "content [6, 5, 44, 19] is not inside the 40x24 image",
            ])
        #expect(valid.stretchX.isEmpty && valid.content == nil && valid.stretchY == [StretchArea(start: 2, end: 20)])
        #expect(valid.metadataProblem == nil)
    }
}
