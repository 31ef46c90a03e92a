import IconrCore

/// Packed layouts as bytes, for the disk cache: a build whose images kept their sizes (an
/// icon redrawn, a color changed) takes the places found before instead of searching for
/// them again (the packer's search was a third of such a rebuild's CPU time on Temaki).
/// The bytes are 32-bit numbers: the items too large, then each group's members and, per
/// layout, its sheet's size and each member's rectangle; sealed (`SealedRecordKind`) under
/// the layouts' key it was made for.
enum PackingArchive: RebuildRecord {
    static let kindLine = "iconr packing 2\n"

    static func sealed(_ packing: Packing, key: String) -> [UInt8] {
        var numbers = [packing.tooLarge.count] + packing.tooLarge + [packing.groups.count]
        for group in packing.groups {
            numbers += [group.members.count] + group.members + [group.sheets.count]
            for sheet in group.sheets {
                numbers += [sheet.width, sheet.height]
                for member in group.members {
                    let place = sheet.placements[member] ?? PixelRect(x: -1, y: -1, width: -1, height: -1)
                    numbers += [place.x, place.y, place.width, place.height]
                }
            }
        }
        var body = RecordWriter()
        numbers.forEach { body.count($0) }
        return seal(body.bytes, key: key)
    }

    /// The packing in `bytes`, or nil when they are not a sound archive made for `key`.
    static func opened(_ bytes: [UInt8], key: String) -> Packing? {
        guard let body = open(bytes, key: key), body.count % 4 == 0 else { return nil }
        var offset = body.startIndex
        func number() -> Int? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            let value = bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            return value < 1 << 31 ? value : nil
        }
        // A count is never more than the numbers left.
        func count() -> Int? {
            number().flatMap { $0 <= (bytes.count - offset) / 4 ? $0 : nil }
        }
        func numbers(_ count: Int) -> [Int]? {
            var values: [Int] = []
            for _ in 0..<count {
                guard let value = number() else { return nil }
                values.append(value)
            }
            return values
        }
        guard let tooLargeCount = count(), let tooLarge = numbers(tooLargeCount), let groupCount = count()
        else { return nil }
        var groups: [SpritePacker.Group] = []
        for _ in 0..<groupCount {
            guard let memberCount = count(), let members = numbers(memberCount), let sheetCount = count()
            else { return nil }
            var sheets: [SpritePacker.Sheet] = []
            for _ in 0..<sheetCount {
                guard let width = number(), let height = number() else { return nil }
                var placements: [Int: PixelRect] = [:]
                for member in members {
                    guard let place = numbers(4) else { return nil }
                    placements[member] = PixelRect(x: place[0], y: place[1], width: place[2], height: place[3])
                }
                sheets.append(SpritePacker.Sheet(width: width, height: height, placements: placements))
            }
            groups.append(SpritePacker.Group(members: members, sheets: sheets))
        }
        return offset == bytes.count ? (groups, tooLarge) : nil
    }
}

/// Which items share each sheet and where they go, and the items too large for any sheet.
typealias Packing = (groups: [SpritePacker.Group], tooLarge: [Int])
