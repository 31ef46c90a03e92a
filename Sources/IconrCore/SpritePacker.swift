/// A rectangle in sheet pixels.
public struct PixelRect: Hashable, Sendable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    var maxX: Int { x + width }
    var maxY: Int { y + height }

    func contains(_ other: PixelRect) -> Bool {
        other.x >= x && other.y >= y && other.maxX <= maxX && other.maxY <= maxY
    }

    func intersects(_ other: PixelRect) -> Bool {
        other.x < maxX && other.maxX > x && other.y < maxY && other.maxY > y
    }
}

/// Packs rectangles into sheets with MaxRects (best short side fit) and a search over sheet
/// widths for the smallest sheet. Deterministic: the same sizes give the same layout.
public enum SpritePacker {
    /// A packed sheet: where each item (by index into the input) goes, and the sheet's size.
    public struct Sheet: Hashable, Sendable {
        public var width: Int
        public var height: Int
        public var placements: [Int: PixelRect]
    }

    /// Places items of `sizes` (each grown by `padding` on its right and bottom, so that
    /// neighbours never touch) into one sheet no larger than `maxSide` a side, as small in
    /// area as the width search finds. Nil when they do not all fit.
    public static func pack(_ sizes: [PixelSize], padding: Int, maxSide: Int) -> Sheet? {
        guard !sizes.isEmpty else { return Sheet(width: 1, height: 1, placements: [:]) }
        let padded = sizes.map { PixelSize(width: $0.width + padding, height: $0.height + padding) }
        let order = insertionOrder(padded)
        let area = padded.reduce(0) { $0 + $1.width * $1.height }
        let widest = padded.map(\.width).max()!
        let root = Int(Double(area).squareRoot())
        let low = max(widest, root * 9 / 10), high = min(maxSide + padding, max(low, root * 2))
        let step = max(1, (high - low) / 48)
        var best: Sheet?
        for binWidth in stride(from: low, through: high, by: step) {
            guard let placements = place(padded, order: order, binWidth: binWidth, binHeight: maxSide + padding) else { continue }
            // The last column and row need no padding after them.
            let width = placements.values.map(\.maxX).max()! - padding
            let height = placements.values.map(\.maxY).max()! - padding
            guard width <= maxSide, height <= maxSide else { continue }
            let sheet = Sheet(width: width, height: height, placements: placements.mapValues {
                PixelRect(x: $0.x, y: $0.y, width: $0.width - padding, height: $0.height - padding)
            })
            if let current = best {
                let (area, currentArea) = (width * height, current.width * current.height)
                let squarer = abs(width - height) < abs(current.width - current.height)
                if area < currentArea || (area == currentArea && squarer) { best = sheet }
            } else {
                best = sheet
            }
        }
        return best
    }

    /// Splits items into groups that each fit a `maxSide` x `maxSide` sheet, filling each
    /// sheet before starting the next. Items larger than a sheet are returned apart.
    public static func split(_ sizes: [PixelSize], padding: Int, maxSide: Int) -> (groups: [[Int]], tooLarge: [Int]) {
        let padded = sizes.map { PixelSize(width: $0.width + padding, height: $0.height + padding) }
        let tooLarge = sizes.indices.filter { sizes[$0].width > maxSide || sizes[$0].height > maxSide }
        var remaining = insertionOrder(padded).filter { !tooLarge.contains($0) }
        var groups: [[Int]] = []
        while !remaining.isEmpty {
            var bin = MaxRectsBin(width: maxSide + padding, height: maxSide + padding)
            var placed: [Int] = [], left: [Int] = []
            for index in remaining {
                if bin.insert(padded[index]) != nil { placed.append(index) } else { left.append(index) }
            }
            groups.append(placed.sorted())
            remaining = left
        }
        return (groups, tooLarge)
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

    private static func place(_ sizes: [PixelSize], order: [Int], binWidth: Int, binHeight: Int) -> [Int: PixelRect]? {
        var bin = MaxRectsBin(width: binWidth, height: binHeight)
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

    /// Places `size` where it leaves the shortest leftover side (then the top-most,
    /// left-most such place), or returns nil when it fits nowhere.
    mutating func insert(_ size: PixelSize) -> PixelRect? {
        var best: PixelRect?
        var bestScore = (Int.max, Int.max, Int.max, Int.max)
        for rect in free where rect.width >= size.width && rect.height >= size.height {
            let leftoverX = rect.width - size.width, leftoverY = rect.height - size.height
            let score = (min(leftoverX, leftoverY), max(leftoverX, leftoverY), rect.y, rect.x)
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
            if placed.x > rect.x { split.append(PixelRect(x: rect.x, y: rect.y, width: placed.x - rect.x, height: rect.height)) }
            if placed.maxX < rect.maxX { split.append(PixelRect(x: placed.maxX, y: rect.y, width: rect.maxX - placed.maxX, height: rect.height)) }
            if placed.y > rect.y { split.append(PixelRect(x: rect.x, y: rect.y, width: rect.width, height: placed.y - rect.y)) }
            if placed.maxY < rect.maxY { split.append(PixelRect(x: rect.x, y: placed.maxY, width: rect.width, height: rect.maxY - placed.maxY)) }
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
