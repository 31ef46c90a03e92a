import Dispatch
import IconrSystem

/// A rectangle in sheet pixels.
public struct PixelRect: Hashable, Sendable {
    /// The left edge.
    public var x: Int
    /// The top edge.
    public var y: Int
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int

    /// A rectangle with its top left corner at (`x`, `y`).
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The right edge (exclusive).
    public var maxX: Int { x + width }
    /// The bottom edge (exclusive).
    public var maxY: Int { y + height }

    func contains(_ other: PixelRect) -> Bool {
        other.x >= x && other.y >= y && other.maxX <= maxX && other.maxY <= maxY
    }

    func intersects(_ other: PixelRect) -> Bool {
        other.x < maxX && other.maxX > x && other.y < maxY && other.maxY > y
    }
}

/// Packs rectangles into sheets with MaxRects (best short side fit) and a search over sheet
/// widths for the smallest sheet. Deterministic: the same sizes give the same layout.
package enum SpritePacker {
    /// A packed sheet: where each item (by index into the input) goes, and the sheet's size.
    package struct Sheet: Hashable, Sendable {
        package var width: Int
        package var height: Int
        package var placements: [Int: PixelRect]

        package init(width: Int, height: Int, placements: [Int: PixelRect]) {
            self.width = width
            self.height = height
            self.placements = placements
        }
    }

    /// Places items of `sizes` (each grown by `padding` on its right and bottom, so that
    /// neighbours never touch) into one sheet no larger than `maxSide` a side, as small in
    /// area as the width search finds. Nil when they do not all fit.
    package static func pack(_ sizes: [PixelSize], padding: Int, maxSide: Int) -> Sheet? {
        guard !sizes.isEmpty else { return Sheet(width: 1, height: 1, placements: [:]) }
        let padded = sizes.map { PixelSize(width: $0.width + padding, height: $0.height + padding) }
        if padded.allSatisfy({ $0 == padded[0] }) {
            return grid(padded.count, of: padded[0], padding: padding, maxSide: maxSide)
        }
        let order = insertionOrder(padded)
        let area = padded.reduce(0) { $0 + $1.width * $1.height }
        let widest = padded.map(\.width).max() ?? 1
        let root = Int(Double(area).squareRoot())
        let low = max(widest, root * 9 / 10), high = min(maxSide + padding, max(low, root * 2))
        // The widest bin last: it is where `split` placed a group, so a group it made packs.
        // Each width both ways: the shortest-side rule fills gaps, the bottom-left one keeps
        // the bottom edge low (95.3-96.0% of a mixed set's sheet against 94.4-95.1% for the
        // first alone). Coarse widths first, then finer ones around the best of them.
        let coarse = max(1, (high - low) / 12)
        var best = bestSheet(
            of: Array(stride(from: low, through: high, by: coarse)) + [maxSide + padding], padded, order: order,
            padding: padding, maxSide: maxSide)
        if let found = best, coarse > 1 {
            let center = found.width + padding, fine = max(1, coarse / 6)
            let refined = bestSheet(
                of: Array(stride(from: max(low, center - coarse), through: min(high, center + coarse), by: fine)),
                padded, order: order, padding: padding, maxSide: maxSide)
            if let refined, better(refined, than: found) { best = refined }
        }
        return best
    }

    /// `count` items of one padded size (most icon sets are drawn on one grid) in rows, by
    /// index, found directly: the squarest grid with at most 2% more cells than the fewest
    /// (the fill counting padding), then the one with fewer cells. Smallest area alone made
    /// Maki's 214 icons a 15x3423 strip (214 cells) where 12 columns of 18 rows (216) are
    /// near square. No packing of equal rectangles fits more in a sheet, so a group that
    /// `split` made fits too.
    private static func grid(_ count: Int, of item: PixelSize, padding: Int, maxSide: Int) -> Sheet? {
        var grids: [(cells: Int, sheet: Sheet)] = []
        for columns in 1...count {
            let rows = (count + columns - 1) / columns
            // The last column and row need no padding after them.
            let width = columns * item.width - padding, height = rows * item.height - padding
            guard width <= maxSide else { break }
            guard height <= maxSide else { continue }
            grids.append((columns * rows, Sheet(width: width, height: height, placements: [:])))
        }
        guard let fewest = grids.map(\.cells).min() else { return nil }
        let full = grids.filter { $0.cells <= fewest + fewest / 50 }
        func squareness(_ sheet: Sheet) -> Int { abs(sheet.width - sheet.height) }
        guard
            var best = full.min(by: {
                (squareness($0.sheet), $0.cells, $0.sheet.width) < (squareness($1.sheet), $1.cells, $1.sheet.width)
            })?.sheet
        else { return nil }
        let columns = (best.width + padding) / item.width
        for index in 0..<count {
            best.placements[index] = PixelRect(
                x: index % columns * item.width, y: index / columns * item.height, width: item.width - padding,
                height: item.height - padding)
        }
        return best
    }

    /// The smallest sheet (then the squarest; then the first) of packing into bins of
    /// `widths`, each by both rules. The trials are independent: they run on every core,
    /// each into its own slot, and are compared in their order, so the result does not
    /// depend on the scheduling.
    private static func bestSheet(
        of widths: [Int], _ padded: [PixelSize], order: [Int], padding: Int, maxSide: Int
    ) -> Sheet? {
        // The widest bin by skyline too: `split` may have made the group with one.
        let choices = Placement.choices(for: padded.count)
        let trials =
            widths.flatMap { width in choices.map { (width, $0) } }
            + (widths.contains(maxSide + padding) && !choices.contains(.skyline) ? [(maxSide + padding, .skyline)] : [])
        let results = Locked<[Sheet?]>(Array(repeating: nil, count: trials.count))
        DispatchQueue.concurrentPerform(iterations: trials.count) { index in
            let (binWidth, placement) = trials[index]
            guard
                let placements = place(
                    padded, order: order, binWidth: binWidth, binHeight: maxSide + padding, placement: placement)
            else {
                return
            }
            // The last column and row need no padding after them.
            let width = (placements.values.map(\.maxX).max() ?? padding) - padding
            let height = (placements.values.map(\.maxY).max() ?? padding) - padding
            guard width <= maxSide, height <= maxSide else { return }
            let sheet = Sheet(
                width: width, height: height,
                placements: placements.mapValues {
                    PixelRect(x: $0.x, y: $0.y, width: $0.width - padding, height: $0.height - padding)
                })
            results.withLock { $0[index] = sheet }
        }
        var best: Sheet?
        for case let sheet? in results.withLock({ $0 }) where best.map({ better(sheet, than: $0) }) ?? true {
            best = sheet
        }
        return best
    }

    /// Smaller in area, or as small and squarer.
    private static func better(_ sheet: Sheet, than other: Sheet) -> Bool {
        let (area, otherArea) = (sheet.width * sheet.height, other.width * other.height)
        return area < otherArea
            || (area == otherArea && abs(sheet.width - sheet.height) < abs(other.width - other.height))
    }

    /// Splits items into groups that each fit a `maxSide` x `maxSide` sheet: runs of
    /// consecutive items (in index order, which for a sprite is its ids by name) of about
    /// equal area, as few as fit. A sheet is then a range of names: adding an icon moves none
    /// but a few at the ends of the ranges. Items larger than a sheet are returned apart.
    package static func split(_ sizes: [PixelSize], padding: Int, maxSide: Int) -> (groups: [[Int]], tooLarge: [Int]) {
        let padded = sizes.map { PixelSize(width: $0.width + padding, height: $0.height + padding) }
        let tooLarge = sizes.indices.filter { sizes[$0].width > maxSide || sizes[$0].height > maxSide }
        let excluded = Set(tooLarge)
        let items = sizes.indices.filter { !excluded.contains($0) }
        guard !items.isEmpty else { return ([], tooLarge) }
        /// Whether `run` fills one sheet, placed as `pack` tries them at its widest (so a
        /// group made here packs).
        func fits(_ run: [Int]) -> Bool {
            var bin = Bin(
                width: maxSide + padding, height: maxSide + padding,
                placement: run.count > manyItems ? .skyline : .shortSide)
            return insertionOrder(run.map { padded[$0] }).allSatisfy { bin.insert(padded[run[$0]]) != nil }
        }
        let areas = items.map { Double(padded[$0].width * padded[$0].height) }
        let total = areas.reduce(0, +), capacity = Double((maxSide + padding) * (maxSide + padding))
        var count = max(1, Int((total / capacity).rounded(.up)))
        while count < items.count {
            // Each item goes to the range its area's middle falls in.
            var groups = [[Int]](repeating: [], count: count)
            var before = 0.0
            for (position, item) in items.enumerated() {
                let middle = before + areas[position] / 2
                groups[min(count - 1, Int(middle / total * Double(count)))].append(item)
                before += areas[position]
            }
            groups.removeAll { $0.isEmpty }
            if groups.allSatisfy(fits) { return (groups, tooLarge) }
            count += 1
        }
        // One item a sheet: each is no larger than a sheet.
        return (items.map { [$0] }, tooLarge)
    }

    /// One way of drawing the items: their sizes, the padding between them, and which item's
    /// rectangle each one uses (`sharing[k] == k` for an item with its own; pixel-identical
    /// images share one with `--unique`). Nil `sharing`: every item has its own.
    package struct Layout: Sendable {
        package var sizes: [PixelSize]
        package var padding: Int
        package var sharing: [Int]?

        package init(sizes: [PixelSize], padding: Int, sharing: [Int]? = nil) {
            self.sizes = sizes
            self.padding = padding
            self.sharing = sharing
        }
    }

    /// Items that share one sheet at every layout (a sprite's ratios), and that sheet per layout.
    package struct Group: Sendable {
        /// The items, ascending.
        package var members: [Int]
        /// One sheet per layout; its placements are keyed by item, for every member (members
        /// that share an image share its rectangle).
        package var sheets: [Sheet]

        package init(members: [Int], sheets: [Sheet]) {
            self.members = members
            self.sheets = sheets
        }
    }

    /// Splits items into groups that each pack into one `maxSide` sheet in every layout, so
    /// that sheet N of every ratio holds the same items. The groups come from `split` at the
    /// first layout (the largest); a group that some layout cannot pack in one sheet (sizes
    /// and padding do not scale exactly across ratios) is halved until every part packs,
    /// which one item alone always does. Items larger than a sheet in any layout are
    /// returned apart. All layouts must have the same number of items.
    package static func groups(_ layouts: [Layout], maxSide: Int) -> (groups: [Group], tooLarge: [Int]) {
        guard let first = layouts.first else { return ([], []) }
        var tooLarge = first.sizes.indices.filter { item in
            layouts.contains { $0.sizes[item].width > maxSide || $0.sizes[item].height > maxSide }
        }
        let excluded = Set(tooLarge)
        // Split on the items with their own rectangle in the first layout.
        func owner(_ item: Int) -> Int {
            guard let sharing = first.sharing, sharing.indices.contains(sharing[item]) else { return item }
            let owner = sharing[item]
            return !excluded.contains(owner) && sharing[owner] == owner ? owner : item
        }
        let owners = first.sizes.indices.filter { !excluded.contains($0) && owner($0) == $0 }
        var membersOf: [Int: [Int]] = [:]
        for item in first.sizes.indices where !excluded.contains(item) {
            membersOf[owner(item), default: []].append(item)
        }
        let split = split(owners.map { first.sizes[$0] }, padding: first.padding, maxSide: maxSide)
        var pending = split.groups.map { group in group.flatMap { membersOf[owners[$0]] ?? [] }.sorted() }
        var groups: [Group] = []
        while !pending.isEmpty {
            let members = pending.removeFirst()
            if members.isEmpty { continue }
            if let sheets = pack(members, layouts: layouts, maxSide: maxSide) {
                groups.append(Group(members: members, sheets: sheets))
            } else if members.count == 1 {
                // Not reached (one item no larger than a sheet packs), but never loop on it.
                tooLarge.append(members[0])
            } else {
                let half = members.count / 2
                pending.insert(contentsOf: [Array(members[..<half]), Array(members[half...])], at: 0)
            }
        }
        return (groups, tooLarge.sorted())
    }

    /// The members' sheet in each layout, or nil when one layout cannot fit them in one. A
    /// layout whose rectangles are the first's divided by a whole factor (a 1x sheet after the
    /// 2x one: every size and the padding halve) takes the first's places divided by it, when
    /// they all divide: the same packing, found once (half of Temaki's packing time).
    private static func pack(_ members: [Int], layouts: [Layout], maxSide: Int) -> [Sheet]? {
        let inGroup = Set(members)
        var sheets: [Sheet] = []
        var firstOwners: [Int] = []
        for layout in layouts {
            // The item whose rectangle `item` uses: its own, unless it shares one in the group.
            func owner(_ item: Int) -> Int {
                guard let sharing = layout.sharing, sharing.indices.contains(sharing[item]) else { return item }
                let owner = sharing[item]
                return inGroup.contains(owner) && sharing[owner] == owner ? owner : item
            }
            let owners = members.filter { owner($0) == $0 }
            var sheet: Sheet
            if let first = sheets.first, owners == firstOwners,
                let scaled = divided(first, owners: owners, first: layouts[0], by: layout)
            {
                sheet = scaled
            } else {
                guard let packed = pack(owners.map { layout.sizes[$0] }, padding: layout.padding, maxSide: maxSide)
                else { return nil }
                sheet = Sheet(width: packed.width, height: packed.height, placements: [:])
                for (index, item) in owners.enumerated() { sheet.placements[item] = packed.placements[index] }
            }
            if sheets.isEmpty { firstOwners = owners }
            for item in members where owner(item) != item { sheet.placements[item] = sheet.placements[owner(item)] }
            sheets.append(sheet)
        }
        return sheets
    }

    /// The owners' places in `sheet` (of `first`, keyed by item) divided by the factor that
    /// makes each owner's size and the padding in `first` those of `layout`; nil when there
    /// is no such whole factor or a place does not divide by it, and for items of one size,
    /// whose best grid is found directly (Maki's 2x grid halved made a 1x sheet 3% larger).
    private static func divided(_ sheet: Sheet, owners: [Int], first: Layout, by layout: Layout) -> Sheet? {
        guard let item = owners.first, layout.sizes[item].width > 0,
            owners.contains(where: { layout.sizes[$0] != layout.sizes[item] })
        else { return nil }
        let factor = first.sizes[item].width / layout.sizes[item].width
        guard factor > 1, first.padding == layout.padding * factor,
            owners.allSatisfy({
                first.sizes[$0].width == layout.sizes[$0].width * factor
                    && first.sizes[$0].height == layout.sizes[$0].height * factor
            }),
            (sheet.width + first.padding) % factor == 0, (sheet.height + first.padding) % factor == 0
        else { return nil }
        var placements: [Int: PixelRect] = [:]
        for item in owners {
            guard let place = sheet.placements[item], place.x % factor == 0, place.y % factor == 0 else { return nil }
            placements[item] = PixelRect(
                x: place.x / factor, y: place.y / factor, width: place.width / factor, height: place.height / factor)
        }
        return Sheet(
            width: (sheet.width + first.padding) / factor - layout.padding,
            height: (sheet.height + first.padding) / factor - layout.padding, placements: placements)
    }

    /// Tallest first, then widest, then by index: a stable order that packs well.
    private static func insertionOrder(_ sizes: [PixelSize]) -> [Int] {
        sizes.indices.sorted { a, b in
            let (sa, sb) = (sizes[a], sizes[b])
            if sa.height != sb.height { return sa.height > sb.height }
            if sa.width != sb.width { return sa.width > sb.width }
            return a < b
        }
    }

    /// Past this many items a sheet is packed by a skyline, not MaxRects, whose free list grows
    /// with the items: 20,000 icons took 33 s to pack (5,000 took 0.8 s); a skyline keeps one
    /// edge and packs such sets in linear time, nearly as full.
    static let manyItems = 1500

    /// How items are placed in a bin: MaxRects by one of its rules, or a skyline.
    private enum Placement {
        case shortSide, bottomLeft, skyline

        /// The ways to try for `count` items.
        static func choices(for count: Int) -> [Placement] {
            count > manyItems ? [.skyline] : [.shortSide, .bottomLeft]
        }
    }

    /// One bin and the way it is filled.
    private struct Bin {
        private let placement: Placement
        private var maxRects: MaxRectsBin?
        private var skyline: SkylineBin?

        init(width: Int, height: Int, placement: Placement) {
            self.placement = placement
            if placement == .skyline {
                skyline = SkylineBin(width: width, height: height)
            } else {
                maxRects = MaxRectsBin(width: width, height: height)
            }
        }

        mutating func insert(_ size: PixelSize) -> PixelRect? {
            switch placement {
            case .shortSide: maxRects?.insert(size, rule: .shortSide)
            case .bottomLeft: maxRects?.insert(size, rule: .bottomLeft)
            case .skyline: skyline?.insert(size)
            }
        }
    }

    private static func place(
        _ sizes: [PixelSize], order: [Int], binWidth: Int, binHeight: Int, placement: Placement
    ) -> [Int: PixelRect]? {
        var bin = Bin(width: binWidth, height: binHeight, placement: placement)
        var placements: [Int: PixelRect] = [:]
        for index in order {
            guard let rect = bin.insert(sizes[index]) else { return nil }
            placements[index] = rect
        }
        return placements
    }
}

/// The free space of one bin as maximal rectangles.
private struct MaxRectsBin {
    private var free: [PixelRect]

    init(width: Int, height: Int) {
        free = [PixelRect(x: 0, y: 0, width: width, height: height)]
    }

    /// Where `insert` puts an item among the free rectangles that hold it.
    enum Rule {
        /// Where it leaves the shortest leftover side (then the longest, top-most, left-most).
        case shortSide
        /// Where its bottom edge is highest (then left-most): rows fill from the top, so the
        /// sheet's ragged bottom edge is low.
        case bottomLeft
    }

    /// Places `size` by `rule`, or returns nil when it fits nowhere.
    mutating func insert(_ size: PixelSize, rule: Rule = .shortSide) -> PixelRect? {
        var best: PixelRect?
        var bestScore = (Int.max, Int.max, Int.max, Int.max)
        for rect in free where rect.width >= size.width && rect.height >= size.height {
            let leftoverX = rect.width - size.width, leftoverY = rect.height - size.height
            let score =
                switch rule {
                case .shortSide: (min(leftoverX, leftoverY), max(leftoverX, leftoverY), rect.y, rect.x)
                case .bottomLeft: (rect.y + size.height, rect.x, 0, 0)
                }
            if score < bestScore {
                bestScore = score
                best = PixelRect(x: rect.x, y: rect.y, width: size.width, height: size.height)
            }
        }
        guard let placed = best else { return nil }
        var kept: [PixelRect] = [], split: [PixelRect] = []
        for rect in free {
            guard rect.intersects(placed) else {
                kept.append(rect)
                continue
            }
            if placed.x > rect.x {
                split.append(PixelRect(x: rect.x, y: rect.y, width: placed.x - rect.x, height: rect.height))
            }
            if placed.maxX < rect.maxX {
                split.append(PixelRect(x: placed.maxX, y: rect.y, width: rect.maxX - placed.maxX, height: rect.height))
            }
            if placed.y > rect.y {
                split.append(PixelRect(x: rect.x, y: rect.y, width: rect.width, height: placed.y - rect.y))
            }
            if placed.maxY < rect.maxY {
                split.append(PixelRect(x: rect.x, y: placed.maxY, width: rect.width, height: rect.maxY - placed.maxY))
            }
        }
        // The kept rectangles contain none of each other already: only the new pieces need
        // checking, against each other and against the kept ones.
        var pieces: [PixelRect] = []
        for (index, piece) in split.enumerated() {
            let inKept = kept.contains { $0.contains(piece) }
            let inPiece = split.indices.contains { other in
                other != index && split[other].contains(piece) && (split[other] != piece || other < index)
            }
            if !inKept && !inPiece { pieces.append(piece) }
        }
        free = kept.filter { rect in !pieces.contains { $0.contains(rect) } } + pieces
        return placed
    }
}

/// The free space of one bin as a skyline: the top edge of what is placed, as segments from
/// left to right. Each item goes where its top is highest (then left-most) over the span it
/// covers; space under an overhang is not used again.
private struct SkylineBin {
    private let width: Int
    private let height: Int
    /// Contiguous segments covering `0..<width`: where each starts, its top, its width.
    private var segments: [(x: Int, y: Int, width: Int)]

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        segments = [(0, 0, width)]
    }

    mutating func insert(_ size: PixelSize) -> PixelRect? {
        guard size.width <= width, size.height <= height else { return nil }
        var best: (index: Int, y: Int)?
        for start in segments.indices {
            let x = segments[start].x
            guard x + size.width <= width else { break }
            // The highest top under the span `x..<x + size.width`.
            var top = 0, covered = 0, index = start
            while covered < size.width {
                top = max(top, segments[index].y)
                covered += segments[index].x + segments[index].width - max(x, segments[index].x)
                index += 1
            }
            if top + size.height <= height, top < best?.y ?? .max { best = (start, top) }
        }
        guard let (start, top) = best else { return nil }
        let x = segments[start].x, end = x + size.width
        var replaced = [(x: x, y: top + size.height, width: size.width)]
        var index = start
        while index < segments.count, segments[index].x + segments[index].width <= end { index += 1 }
        if index < segments.count, segments[index].x < end {
            let cut = segments[index]
            replaced.append((end, cut.y, cut.x + cut.width - end))
            index += 1
        }
        segments.replaceSubrange(start..<index, with: replaced)
        // Neighbours at one height become one segment.
        var merged: [(x: Int, y: Int, width: Int)] = []
        merged.reserveCapacity(segments.count)
        for segment in segments {
            if let last = merged.last, last.y == segment.y {
                merged[merged.count - 1].width += segment.width
            } else {
                merged.append(segment)
            }
        }
        segments = merged
        return PixelRect(x: x, y: top, width: size.width, height: size.height)
    }
}
