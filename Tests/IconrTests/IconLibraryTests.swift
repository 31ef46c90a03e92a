import Foundation
import IconrCore
import IconrRender
import IconrSystem
import IconrTestSupport
import Testing

@testable import Iconr

/// The renderer-facing library and its memory and disk caches.
struct IconLibraryTests {
    let folder: URL
    /// Removed with the test.
    private let scratch: TemporaryFolder

    init() throws {
        scratch = try TemporaryFolder("iconr-library")
        folder = scratch.url
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("icons"), withIntermediateDirectories: true)
        try TestSupport.copyBundledIcons(to: folder.appendingPathComponent("icons"))
    }

    private var icons: String { folder.appendingPathComponent("icons").path }
    private var cacheDirectory: String { folder.appendingPathComponent("cache").path }

    private func library(disk: Bool = true) throws -> IconLibrary {
        IconLibrary(directory: icons, cache: IconCache(disk: disk ? try DiskCache(directory: cacheDirectory) : nil))
    }

    @Test func servesVariantsWithMetadataAtTheirPixelRatio() throws {
        let library = try library(disk: false)
        #expect(library.names == ["badge", "flag", "label", "marker"])
        let label = try library.blockingIcon(named: "label", params: ["background_color": "#ffe"], scale: 2)
        #expect(label.size == PixelSize(width: 80, height: 48) && label.pixelRatio == 2)
        #expect(
            label.stretchX == [StretchArea(start: 16, end: 64)] && label.stretchY == [StretchArea(start: 16, end: 32)])
        #expect(label.content == ContentBox(left: 12, top: 10, right: 68, bottom: 38))
        #expect(label.key.description == "label?background_color=#ffffee@2x")
        #expect(try PNGDecoder.decode(label.png) == label.image)
        #expect(label.image.hex(x: 40, y: 24) == "#ffffeeff")
    }

    /// A folder that is not there is named as such, not as an unknown icon; one that
    /// appears later serves its icons.
    @Test func aMissingFolderIsNamed() throws {
        let later = folder.appendingPathComponent("later").path
        let library = IconLibrary(directory: later, cache: IconCache(disk: nil))
        let error = try #require(throws: IconrError.self) { try library.blockingIcon(named: "flag") }
        #expect(error.description == "\(later): no such folder", "\(error)")
        try FileManager.default.copyItem(atPath: icons, toPath: later)
        #expect(try library.blockingIcon(named: "flag").size == PixelSize(width: 24, height: 24))
        let unknown = try #require(throws: IconrError.self) { try library.blockingIcon(named: "flagg") }
        #expect("\(unknown)".contains("unknown icon \"flagg\""), "\(unknown)")
    }

    @Test func aSecondRequestIsAMemoryHit() throws {
        let library = try library(disk: false)
        let first = try library.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 2)
        let second = try library.blockingIcon(named: "flag", params: ["flag_color": "#f00"], scale: 2)
        #expect(first == second)
        let statistics = library.cache.statistics
        #expect(statistics.renders == 1 && statistics.memory.hits == 1 && statistics.memory.misses == 1)
    }

    @Test func theDiskCachePersistsAcrossInstances() throws {
        let first = try library()
        let rendered = try first.blockingIcon(named: "marker", params: ["fill_color": "teal"], scale: 1.5)
        #expect(first.cache.statistics.renders == 1)
        let second = try library()
        let restored = try second.blockingIcon(named: "marker", params: ["fill_color": "teal"], scale: 1.5)
        #expect(second.cache.statistics.renders == 0 && second.cache.statistics.diskHits == 1)
        #expect(restored == rendered)
        #expect(try DiskCache(directory: cacheDirectory).statistics().entries == 1)
    }

    /// A server's disk cache writes behind its answers, into its journal: every variant
    /// stored is on disk, whole and served by another server's cache with the PNG it was
    /// answered with, once `flush` returns, and no entry made a file of its own; a
    /// variant past what may wait (32 MiB of variants) is written at once.
    @Test func writesInBackgroundAllLandWhenFinished() throws {
        let disk = try DiskCache(directory: cacheDirectory, writesInBackground: true)
        let library = IconLibrary(directory: icons, cache: IconCache(disk: disk))
        let colors = (0..<40).map { "#" + String(format: "%06x", 0x30_0000 + $0 * 997) }
        let rendered = try colors.map { try library.blockingIcon(named: "flag", params: ["flag_color": $0], scale: 2) }
        disk.flush()
        let reader = try DiskCache(directory: cacheDirectory, writesInBackground: true)
        #expect(
            try rendered.allSatisfy {
                try reader.read($0.key)?.image == $0.image && reader.read($0.key)?.file == $0.png
            })
        #expect(reader.statistics().entries == colors.count)
        let folders = try FileManager.default.contentsOfDirectory(atPath: cacheDirectory + "/entries-v1")
        #expect(folders.sorted() == ["packs"], "no entry in a file of its own")
        // 2,048 x 2,048: 32 MiB of cost, past what may wait behind the answers.
        let large = try library.blockingIcon(named: "flag", params: ["flag_color": "#123456"], scale: 2048 / 24)
        #expect(large.size == PixelSize(width: 2048, height: 2048))
        #expect(reader.read(large.key)?.image == large.image, "written before the render returned")
    }

    private func journalLibrary(byteLimit: Int = 256 << 20) throws -> IconLibrary {
        let disk = try DiskCache(directory: cacheDirectory, byteLimit: byteLimit, writesInBackground: true)
        return IconLibrary(directory: icons, cache: IconCache(disk: disk))
    }

    private func flags(_ range: Range<Int>, from library: IconLibrary) throws -> [IconVariant] {
        try range.map { index in
            try library.blockingIcon(
                named: "flag", params: ["flag_color": "#" + String(format: "%06x", 0x40_0000 + index * 7919)], scale: 2)
        }
    }

    /// The journal's current file becomes the previous one when a write would take it past
    /// a quarter of the cache's limit, and the one before is dropped; an entry read from the
    /// previous file is written to the current one again, so it outlives the next turn,
    /// while the entries not read go. (Variants rendered beforehand and written when the test
    /// says, so the turns fall where it says.)
    @Test func theJournalTurnsAndKeepsWhatIsRead() throws {
        let variants = try flags(0..<90, from: try library(disk: false))
        let a = variants[0..<40], b = variants[40..<50], c = variants[50..<90]
        // A file may take 40 KiB: 40 flags at 2x take 34 KiB, 10 take 9 KiB. The journal
        // writes when told to.
        func journal() throws -> DiskCache {
            try DiskCache(
                directory: cacheDirectory, byteLimit: 160 << 10, writesInBackground: true, journalDelay: .seconds(600))
        }
        func store(_ variants: ArraySlice<IconVariant>) throws {
            let disk = try journal()
            for variant in variants { disk.store(variant) }
            disk.flush()
        }
        let packs = cacheDirectory + "/entries-v1/packs"
        try store(a)
        try store(b)
        #expect(try FileManager.default.contentsOfDirectory(atPath: packs).count == 2, "a current and a previous file")
        // A new server reads A from the previous file and writes it again: B + A turn, A stays.
        let reader = try journal()
        #expect(a.allSatisfy { reader.read($0.key)?.image == $0.image })
        reader.flush()
        // C turns the file of A into the previous one and drops B's.
        try store(c)
        let later = try journal()
        #expect(a.allSatisfy { later.read($0.key)?.image == $0.image }, "what was read stays")
        #expect(c.allSatisfy { later.read($0.key)?.image == $0.image })
        #expect(b.allSatisfy { later.read($0.key) == nil }, "what was not read goes")
        let sizes = try FileManager.default.contentsOfDirectory(atPath: packs).map { name in
            (try FileManager.default.attributesOfItem(atPath: packs + "/" + name)[.size] as? Int) ?? 0
        }
        #expect(sizes.count == 2 && sizes.allSatisfy { $0 <= 40 << 10 }, "\(sizes)")
    }

    /// A journal entry whose bytes were changed on disk is rendered again, never served; a
    /// journal removed under a running server (`iconr cache clear`) is made anew by its
    /// next write; and a server sees what another appended to the journal since it read it.
    @Test func journalEntriesProveWhatTheyAreAndSurviveTheirFile() throws {
        let writing = try journalLibrary()
        let first = try flags(0..<3, from: writing)
        writing.cache.disk?.flush()
        let packs = cacheDirectory + "/entries-v1/packs"
        let journal = packs + "/" + (try #require(FileManager.default.contentsOfDirectory(atPath: packs).first))
        let reading = try journalLibrary()
        #expect(try flags(0..<1, from: reading) == Array(first[0..<1]))
        // Another server's appends are read when a lookup misses.
        let appended = try flags(3..<5, from: writing)
        writing.cache.disk?.flush()
        #expect(try flags(3..<5, from: reading) == appended)
        #expect(reading.cache.statistics.renders == 0 && reading.cache.statistics.diskHits == 3)
        // One byte of the last record's PNG flipped: that entry is rendered again.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: journal)))
        bytes[bytes.count - 100] ^= 0x20
        try Data(bytes).write(to: URL(fileURLWithPath: journal))
        let damaged = try journalLibrary()
        #expect(try flags(0..<5, from: damaged) == first + appended)
        #expect(damaged.cache.statistics.renders == 1 && damaged.cache.statistics.diskHits == 4)
        // Removed under the writing server: its next entries go to a new file, read back.
        try DiskCache(directory: cacheDirectory).clear()
        let after = try flags(5..<7, from: writing)
        writing.cache.disk?.flush()
        #expect(FileManager.default.fileExists(atPath: journal))
        let fresh = try journalLibrary()
        #expect(try flags(5..<7, from: fresh) == after)
        #expect(fresh.cache.statistics.renders == 0, "\(fresh.cache.statistics)")
        _ = try flags(0..<1, from: fresh)
        #expect(fresh.cache.statistics.renders == 1, "the cleared entries are gone")
    }

    /// A journal is read in pieces of 4 MiB: a record that spans pieces (here one of 9 MiB)
    /// and the records after it are found, and half a record at its end stops nothing.
    @Test func aJournalIsReadPieceByPiece() throws {
        let flag = try flags(0..<1, from: try library(disk: false))[0]
        let writing = try DiskCache(directory: cacheDirectory, writesInBackground: true)
        writing.store(flag)
        writing.flush()
        let packs = cacheDirectory + "/entries-v1/packs"
        let path = packs + "/" + (try #require(FileManager.default.contentsOfDirectory(atPath: packs).first))
        let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let header = Array("iconr pack 3\n".utf8)
        // The large record first, then the flag's, then half a record.
        var journal = header + Self.packRecord(String(repeating: "0", count: 64), [UInt8](repeating: 7, count: 9 << 20))
        journal += written.dropFirst(header.count)
        journal += written.dropFirst(header.count).prefix(40)
        try Data(journal).write(to: URL(fileURLWithPath: path))
        let reading = try DiskCache(directory: cacheDirectory, writesInBackground: true)
        #expect(reading.read(flag.key)?.image == flag.image)
    }

    /// A server's disk cache whose journal writes only when flushed.
    private func journal() throws -> DiskCache {
        try DiskCache(
            directory: cacheDirectory, byteLimit: 256 << 20, writesInBackground: true, journalDelay: .seconds(600))
    }

    /// A journal written with `variants` (flushed), and the path of its one file.
    private func journalHolding(_ variants: ArraySlice<IconVariant>) throws -> (DiskCache, String) {
        let writing = try journal()
        for variant in variants { writing.store(variant) }
        writing.flush()
        let packs = cacheDirectory + "/entries-v1/packs"
        return (writing, packs + "/" + (try #require(FileManager.default.contentsOfDirectory(atPath: packs).first)))
    }

    /// A torn record at the journal's end (a crash mid-append, a full disk) is found once and
    /// cut off: the records before it are served, the records appended after it (by another
    /// server) are found when a lookup misses, and later misses do not read the tear again.
    @Test func aTornRecordIsCutOffOnceAndLaterAppendsAreRead() throws {
        let variants = try flags(0..<25, from: try library(disk: false))
        let (writing, path) = try journalHolding(variants[0..<3])
        // Half a record: its name and the first bytes of an entry that claims 4,000.
        var torn = Self.packRecord(String(repeating: "a", count: 64), [UInt8](repeating: 1, count: 4000))
        torn.removeLast(3900)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(torn))
        try handle.close()
        let reading = try journal()
        #expect(variants[0..<3].allSatisfy { reading.read($0.key)?.image == $0.image })
        #expect(reading.journalRepairs == 1)
        // Another server appends after the tear; a miss finds its records.
        for variant in variants[3..<5] { writing.store(variant) }
        writing.flush()
        #expect(variants[3..<5].allSatisfy { reading.read($0.key)?.image == $0.image }, "appends after the tear")
        #expect(variants[5...].allSatisfy { reading.read($0.key) == nil })
        #expect(reading.journalRepairs == 1, "the tear is found once")
    }

    /// Another server's append in progress (part of its record written while it holds the
    /// journal's lock, as the journal's writer does) is not a tear: nothing is cut off or
    /// counted, the records before it are served, and the record is read once it is whole
    /// (issue 64: two servers on one cache counted 30 false repairs in 20 s).
    @Test func anotherServersAppendInProgressIsNotATear() throws {
        let variants = try flags(0..<3, from: try library(disk: false))
        let (writing, path) = try journalHolding(variants[0..<2])
        let before = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The third variant's record, as the writer appends it; then the file as it was.
        writing.store(variants[2])
        writing.flush()
        let record = Array([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))).dropFirst(before.count))
        #expect(record.count > 100)
        try Data(before).write(to: URL(fileURLWithPath: path))

        let reading = try journal()
        #expect(variants[0..<2].allSatisfy { reading.read($0.key)?.image == $0.image })
        let appending = try FileDescriptor.open(path, O_WRONLY | O_APPEND)
        defer { try? appending.close() }
        guard case .taken = appending.lock(exclusive: true) else {
            Issue.record("this file system has no flock: the test cannot hold an append open")
            return
        }
        try appending.writeAll(Array(record.prefix(record.count / 2)))
        let halfServed = reading.read(variants[2].key) != nil
        #expect(!halfServed, "half a record is not served")
        #expect(reading.journalRepairs == 0, "an append in progress is no tear")
        try appending.writeAll(Array(record.dropFirst(record.count / 2)))
        appending.unlock()
        let readWhole = reading.read(variants[2].key)?.image == variants[2].image
        #expect(readWhole, "read once whole")
        #expect(variants[0..<2].allSatisfy { reading.read($0.key)?.image == $0.image })
        #expect(reading.journalRepairs == 0)
    }

    /// A pack record written by hand, as the format says (not by the code under test): the
    /// name's length, the name, the entry's length, the entry (little-endian 32-bit lengths).
    static func packRecord(_ name: String, _ entry: [UInt8]) -> [UInt8] {
        var record: [UInt8] = []
        withUnsafeBytes(of: UInt32(name.utf8.count).littleEndian) { record += $0 }
        record += name.utf8
        withUnsafeBytes(of: UInt32(entry.count).littleEndian) { record += $0 }
        return record + entry
    }

    @Test func aHitMakesAnEntryRecentWhenItIsAMinuteOld() throws {
        let disk = try DiskCache(directory: cacheDirectory)
        _ = try IconLibrary(directory: icons, cache: IconCache(disk: disk)).blockingIcon(named: "flag", scale: 2)
        let entry = try #require(
            FileManager.default.subpaths(atPath: cacheDirectory + "/entries-v1")?.first { $0.hasSuffix(".png") })
        let path = cacheDirectory + "/entries-v1/" + entry
        func modified() throws -> Date {
            try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as! Date
        }
        func age(_ seconds: Double) throws {
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -seconds)], ofItemAtPath: path)
        }
        try age(10)
        _ = try IconLibrary(directory: icons, cache: IconCache(disk: disk)).blockingIcon(named: "flag", scale: 2)
        #expect(try modified().timeIntervalSinceNow < -9, "a hit on an entry 10 s old leaves its time")
        try age(120)
        let reading = IconLibrary(directory: icons, cache: IconCache(disk: disk))
        _ = try reading.blockingIcon(named: "flag", scale: 2)
        #expect(reading.cache.statistics.diskHits == 1)
        #expect(try modified().timeIntervalSinceNow > -5, "a hit on an entry 2 minutes old makes it recent")
    }

    @Test func aBatchKeepsItsEntriesInOnePack() throws {
        let colors = ["red", "teal", "navy", "#abcdef"]
        func batchLibrary(_ batch: String?) throws -> IconLibrary {
            IconLibrary(
                directory: icons, cache: IconCache(disk: try DiskCache(directory: cacheDirectory, batch: batch)))
        }
        let writing = try batchLibrary("sprite a")
        let rendered = try colors.map { try writing.blockingIcon(named: "flag", params: ["flag_color": $0], scale: 2) }
        writing.cache.disk?.flush()
        #expect(try FileManager.default.contentsOfDirectory(atPath: cacheDirectory + "/entries-v1/packs").count == 1)
        #expect(try DiskCache(directory: cacheDirectory).statistics().entries == colors.count)
        let reading = try batchLibrary("sprite a")
        #expect(
            try colors.map { try reading.blockingIcon(named: "flag", params: ["flag_color": $0], scale: 2) } == rendered
        )
        #expect(reading.cache.statistics.renders == 0 && reading.cache.statistics.diskHits == 4)
        // Another batch, or no batch, does not see the pack.
        let other = try batchLibrary("sprite b")
        _ = try other.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 2)
        #expect(other.cache.statistics.renders == 1)
        // A damaged pack serves the entries before the damage and renders the others again.
        let pack = try FileManager.default.contentsOfDirectory(atPath: cacheDirectory + "/entries-v1/packs")[0]
        let packURL = URL(fileURLWithPath: cacheDirectory + "/entries-v1/packs/" + pack)
        var bytes = try Data(contentsOf: packURL)
        bytes[bytes.count - 30] ^= 0x55
        try bytes.write(to: packURL)
        let damaged = try batchLibrary("sprite a")
        #expect(
            try colors.map { try damaged.blockingIcon(named: "flag", params: ["flag_color": $0], scale: 2) } == rendered
        )
        #expect(damaged.cache.statistics.renders == 1 && damaged.cache.statistics.diskHits == 3)
    }

    /// A run that looked nothing up in its pack appends what it stored to the pack as it
    /// is (the bytes before stay), and a later run is served the old entries and the new.
    @Test func aRunThatReadNothingAppendsToItsPack() throws {
        func batchLibrary() throws -> IconLibrary {
            IconLibrary(
                directory: icons, cache: IconCache(disk: try DiskCache(directory: cacheDirectory, batch: "sprite a")))
        }
        let writing = try batchLibrary()
        let old = try ["red", "teal"].map {
            try writing.blockingIcon(named: "flag", params: ["flag_color": $0], scale: 2)
        }
        writing.cache.disk?.flush()
        let packs = cacheDirectory + "/entries-v1/packs/"
        let pack = packs + (try FileManager.default.contentsOfDirectory(atPath: packs)[0])
        let before = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pack)))
        let navy = try library(disk: false).blockingIcon(named: "flag", params: ["flag_color": "navy"], scale: 2)
        let appending = try DiskCache(directory: cacheDirectory, batch: "sprite a")
        appending.store(navy)
        appending.flush()
        let after = try [UInt8](Data(contentsOf: URL(fileURLWithPath: pack)))
        #expect(after.count > before.count && after.starts(with: before))
        let reading = try batchLibrary()
        let served = try ["red", "teal", "navy"].map {
            try reading.blockingIcon(named: "flag", params: ["flag_color": $0], scale: 2)
        }
        #expect(served == old + [navy])
        #expect(reading.cache.statistics.renders == 0 && reading.cache.statistics.diskHits == 3)
    }

    /// A pack entry is served only whole, of its key, within the size limit and with its
    /// digest: every other case is a miss.
    @Test func packEntriesProveWhatTheyAre() throws {
        let library = try library(disk: false)
        let red = try library.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 2)
        let blue = try library.blockingIcon(named: "flag", params: ["flag_color": "blue"], scale: 2)
        let image = red.image, limit = RenderLimits.default.maxSize
        let secret = [UInt8](repeating: 7, count: 32)
        let entry = PackEntry.make(image, key: red.key, secret: secret)
        #expect(PackEntry.image(of: entry[...], key: red.key, maxSize: limit, secret: secret) == image)
        #expect(PackEntry.image(of: entry[...], key: blue.key, maxSize: limit, secret: secret) == nil, "another key")
        // As a pack holds it: a slice in the middle of the pack's bytes, indexed from there.
        let inPack = [UInt8](repeating: 0xAB, count: 37) + entry + [1, 2, 3]
        #expect(
            PackEntry.image(of: inPack[37..<(37 + entry.count)], key: red.key, maxSize: limit, secret: secret) == image)
        #expect(
            PackEntry.image(of: inPack[36..<(36 + entry.count)], key: red.key, maxSize: limit, secret: secret) == nil)
        #expect(
            PackEntry.image(of: entry[...], key: red.key, maxSize: PixelSize(width: 1, height: 1), secret: secret)
                == nil)
        #expect(
            PackEntry.image(of: entry.dropLast(), key: red.key, maxSize: limit, secret: secret) == nil,
            "truncated")
        #expect(PackEntry.image(of: [][...], key: red.key, maxSize: limit, secret: secret) == nil)
        for offset in [red.key.identity.utf8.count + 1, entry.count / 2, entry.count - 1] {
            var damaged = entry
            damaged[offset] ^= 0x01
            #expect(
                PackEntry.image(of: damaged[...], key: red.key, maxSize: limit, secret: secret) == nil,
                "byte \(offset) flipped")
        }
        // A large image is stored deflated, and read back to the same pixels.
        let large = try library.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 12)
        #expect(large.image.pixels.count > PackEntry.rawLimit)
        let deflated = PackEntry.make(large.image, key: large.key, secret: secret)
        #expect(deflated.count < large.image.pixels.count / 2, "\(deflated.count) bytes")
        #expect(PackEntry.image(of: deflated[...], key: large.key, maxSize: limit, secret: secret) == large.image)
        var damaged = deflated
        damaged[deflated.count / 2] ^= 0x01
        #expect(PackEntry.image(of: damaged[...], key: large.key, maxSize: limit, secret: secret) == nil)
        // Made under another cache's key (or with a plain digest anyone can compute): refused.
        let forged = PackEntry.make(image, key: red.key, secret: [UInt8](repeating: 8, count: 32))
        #expect(PackEntry.image(of: forged[...], key: red.key, maxSize: limit, secret: secret) == nil)
    }

    /// The cache's key is made once, mode 0600, and shared by every process on the folder;
    /// an entry file forged with another key (a 20 x 28 image for a 24 x 24 flag, the red
    /// team's plant) is not served but rendered again.
    @Test func entriesCarryAnHMACUnderTheCachesOwnKey() throws {
        let keyed = folder.appendingPathComponent("keyed").path
        let first = try DiskCache(directory: keyed), second = try DiskCache(directory: keyed)
        var info = stat()
        #expect(stat(keyed + "/key", &info) == 0 && info.st_mode & 0o777 == 0o600)
        let library = IconLibrary(directory: icons, cache: IconCache(disk: first))
        let red = try library.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 2)
        #expect(second.read(red.key)?.image == red.image, "a second process reads it")
        let planted = RasterImage(
            size: PixelSize(width: 20, height: 28), pixels: [UInt8](repeating: 9, count: 20 * 28 * 4))
        let png = try PNGEncoder.encode(planted)
        let forged = try #require(
            CacheEntry.make(png, as: .png, key: red.key, secret: [UInt8](repeating: 1, count: 32)))
        let name = try #require(
            FileManager.default.enumerator(atPath: keyed + "/entries-v1")?.compactMap { $0 as? String }
                .first { $0.hasSuffix(".png") })
        try Data(forged).write(to: URL(fileURLWithPath: keyed + "/entries-v1/" + name))
        #expect(try DiskCache(directory: keyed).read(red.key) == nil, "the forged entry")
    }

    /// A pack whose records were swapped (each name beside another variant's sound pixels)
    /// is never served: each entry carries its key.
    @Test func swappedPackRecordsAreRenderedAgain() throws {
        func batchLibrary() throws -> IconLibrary {
            IconLibrary(
                directory: icons, cache: IconCache(disk: try DiskCache(directory: cacheDirectory, batch: "swap")))
        }
        let writing = try batchLibrary()
        let red = try writing.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 2)
        let blue = try writing.blockingIcon(named: "flag", params: ["flag_color": "blue"], scale: 2)
        writing.cache.disk?.flush()
        let packs = cacheDirectory + "/entries-v1/packs/"
        let packURL = URL(fileURLWithPath: packs + (try FileManager.default.contentsOfDirectory(atPath: packs)[0]))
        // Records: name length, name, entry length, entry (little-endian 32-bit lengths).
        let pack = [UInt8](try Data(contentsOf: packURL))
        let header = Array("iconr pack 3\n".utf8)
        #expect(pack.starts(with: header))
        var offset = header.count
        var fields: [[UInt8]] = []
        while offset + 4 <= pack.count {
            let length = pack[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            fields.append(Array(pack[(offset + 4)..<(offset + 4 + length)]))
            offset += 4 + length
        }
        #expect(fields.count == 4)
        fields.swapAt(1, 3)
        var swapped = header
        for field in fields {
            withUnsafeBytes(of: UInt32(field.count).littleEndian) { swapped += $0 }
            swapped += field
        }
        try Data(swapped).write(to: packURL)
        let reading = try batchLibrary()
        #expect(try reading.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 2) == red)
        #expect(try reading.blockingIcon(named: "flag", params: ["flag_color": "blue"], scale: 2) == blue)
        #expect(reading.cache.statistics.renders == 2 && reading.cache.statistics.diskHits == 0)
    }

    /// A pack past 64 MiB (a build of 50,000 images writes 122 MB) is read back and its
    /// entries served: such packs were written and never read, so every build rendered all.
    @Test func aPackPast64MiBIsReadBack() throws {
        let writing = try library(disk: true)
        let red = try writing.blockingIcon(named: "flag", params: ["flag_color": "red"], scale: 2)
        let disk = try #require(writing.cache.disk)
        let secret = try FileReader.read(cacheDirectory + "/key")
        let name = try #require(disk.entryPath(for: red.key).split(separator: "/").last?.dropLast(4))
        let pack =
            Array("iconr pack 3\n".utf8)
            + Self.packRecord(String(repeating: "0", count: 64), [UInt8](repeating: 0, count: 65 << 20))
            + Self.packRecord(String(name), PackEntry.make(red.image, key: red.key, secret: secret))
        let packs = cacheDirectory + "/entries-v1/packs"
        try FileReader.makeFolder(packs)
        try AtomicFile.write(pack, to: packs + "/" + SHA256.hex(Array("big".utf8)) + ".pack")
        #expect(pack.count > FileReader.maxSize)
        // The entry in a file of its own goes: only the pack can serve it now.
        #expect(unlink(disk.entryPath(for: red.key)) == 0)
        let reading = try DiskCache(directory: cacheDirectory, batch: "big")
        #expect(reading.read(red.key)?.image == red.image)
    }

    /// A PNG header may claim any size: the decoder refuses one past its limit before it
    /// allocates the pixels.
    @Test func aHugeHeaderIsRefusedBeforeAllocating() throws {
        let png = try PNGEncoder.encode(
            RasterImage(size: PixelSize(width: 2, height: 2), pixels: [UInt8](repeating: 255, count: 16)))
        #expect(throws: RenderError.tooLarge(PixelSize(width: 2, height: 2), limit: PixelSize(width: 1, height: 1))) {
            try PNGDecoder.decode(png, maxSize: PixelSize(width: 1, height: 1))
        }
        #expect(try PNGDecoder.decode(png).size == PixelSize(width: 2, height: 2))
    }

    @Test(arguments: ["truncate", "flip a bit", "empty", "garbage"])
    func corruptedEntriesAreDetectedAndRenderedAgain(_ damage: String) throws {
        let first = try library()
        let good = try first.blockingIcon(named: "badge", params: ["badge_color": "orange"], scale: 2)
        let entries = folder.appendingPathComponent("cache/entries-v1")
        let entry = try #require(
            try FileManager.default.subpathsOfDirectory(atPath: entries.path).first { $0.hasSuffix(".png") })
        let path = entries.appendingPathComponent(entry)
        var bytes = try Data(contentsOf: path)
        switch damage {
        case "truncate": bytes = bytes.prefix(bytes.count / 2)
        case "flip a bit": bytes[bytes.count / 2] ^= 0x10
        case "empty": bytes = Data()
        default: bytes = Data("not a png".utf8)
        }
        try bytes.write(to: path)
        let second = try library()
        let again = try second.blockingIcon(named: "badge", params: ["badge_color": "orange"], scale: 2)
        #expect(second.cache.statistics.renders == 1 && second.cache.statistics.diskHits == 0)
        #expect(again == good)
        // The damaged entry was replaced by a sound one.
        #expect(try PNGDecoder.decode([UInt8](Data(contentsOf: path))) == good.image)
    }

    /// The limit counts disk blocks, not file bytes: small entries took 6.8 times the limit
    /// on disk. Five 4 KiB blocks hold at most five of the flags (about 1 KiB each). Evicted
    /// by the write that crossed the limit, or (a server's cache) in the background.
    @Test(arguments: [false, true])
    func theDiskCacheEvictsLeastRecentlyUsedPastItsLimit(inBackground: Bool) throws {
        let disk = try DiskCache(directory: cacheDirectory, byteLimit: 5 * 4096, evictsInBackground: inBackground)
        let library = IconLibrary(directory: icons, cache: IconCache(disk: disk))
        var sizes: [Int] = []
        for color in ["red", "green", "blue", "yellow", "purple", "orange", "teal", "navy"] {
            sizes.append(try library.blockingIcon(named: "flag", params: ["flag_color": color], scale: 2).png.count)
        }
        disk.finishEvicting()
        let statistics = disk.statistics()
        #expect(sizes.allSatisfy { $0 < 4096 }, "\(sizes)")
        #expect(statistics.bytes <= 5 * 4096 && statistics.bytes >= statistics.entries * 4096, "\(statistics)")
        #expect(statistics.entries >= 2 && statistics.entries <= 5, "\(statistics)")
        // The newest is kept.
        let fresh = IconLibrary(directory: icons, cache: IconCache(disk: disk))
        _ = try fresh.blockingIcon(named: "flag", params: ["flag_color": "navy"], scale: 2)
        #expect(fresh.cache.statistics.diskHits == 1)
    }

    /// The file system stamps files from a coarse clock (one 4 ms tick): entries written in a
    /// row tied on their times, and an eviction could take the newest of them (the test above
    /// failed now and then). Each entry now carries the clock's time, to the nanosecond.
    @Test func entriesWrittenInARowKeepTheirOrder() throws {
        let disk = try DiskCache(directory: cacheDirectory)
        let flag = try IconLibrary(directory: icons, cache: IconCache()).blockingIcon(named: "flag", scale: 1)
        let params = try IconSource(path: icons + "/flag.svg").template.resolve(colors: [:])
        var times: [Int] = []
        for step in 1...20 {
            let key = VariantKey(
                name: "flag", templateDigest: flag.key.templateDigest, params: params, scale: Double(step))
            disk.write(try flag.png, for: key)
            var info = stat()
            #expect(stat(disk.entryPath(for: key), &info) == 0)
            times.append(info.st_mtim.nanoseconds)
        }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "\(times)")
    }

    /// Every write past the limit used to scan the whole cache (mean latency 16 -> 381 ms at
    /// the limit). An eviction frees a tenth of the limit, and writes while one runs leave
    /// the work to it: 300 writes past a limit of 60 blocks take a few dozen scans.
    @Test(arguments: [false, true])
    func writesPastTheLimitShareEvictions(inBackground: Bool) throws {
        let disk = try DiskCache(directory: cacheDirectory, byteLimit: 60 * 4096, evictsInBackground: inBackground)
        let library = IconLibrary(directory: icons, cache: IconCache(disk: disk))
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 360) { index in
            let color = "#" + String(format: "%06x", 0x10_0000 + index)
            if (try? library.blockingIcon(named: "flag", params: ["flag_color": color], scale: 2)) == nil {
                failures.withLock { $0 += 1 }
            }
        }
        disk.finishEvicting()
        let statistics = disk.statistics()
        #expect(failures.withLock { $0 } == 0)
        #expect(statistics.bytes <= 60 * 4096, "\(statistics)")
        #expect(
            disk.evictionScans >= 1 && disk.evictionScans <= 60,
            "\(disk.evictionScans) scans for 300 writes past the limit")
    }

    @Test func concurrentRequestsForOneMissingVariantRenderOnce() throws {
        let library = try library(disk: false)
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            do {
                // Two variants, eight requests each, all at once.
                _ = try library.blockingIcon(
                    named: "badge", params: ["badge_color": index % 2 == 0 ? "red" : "blue"], scale: 3)
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(library.cache.statistics.renders == 2)
    }

    @Test func manyThreadsManyVariantsMatchSerialRenders() throws {
        let library = try library(disk: true)
        let requests = (0..<200).map { index in
            (
                ["flag", "marker", "badge"][index % 3], ["red", "#00ff00", "blue", "black", "#123456"][index % 5],
                [1.0, 2.0][index % 2]
            )
        }
        let results = Locked<[Int: IconVariant]>([:])
        DispatchQueue.concurrentPerform(iterations: requests.count) { index in
            let (name, color, scale) = requests[index]
            let parameter = ["flag": "flag_color", "marker": "fill_color", "badge": "badge_color"][name]!
            if let variant = try? library.blockingIcon(named: name, params: [parameter: color], scale: scale) {
                results.withLock { $0[index] = variant }
            }
        }
        #expect(results.withLock { $0.count } == requests.count)
        #expect(library.cache.statistics.renders == 30)
        let serial = IconLibrary(directory: icons, cache: IconCache())
        for (index, variant) in results.withLock({ $0 }) where index < 30 {
            let (name, color, scale) = requests[index]
            let parameter = ["flag": "flag_color", "marker": "fill_color", "badge": "badge_color"][name]!
            #expect(try serial.blockingIcon(named: name, params: [parameter: color], scale: scale) == variant)
        }
    }

    @Test func templatesReloadWhenTheirFileChanges() throws {
        let clock = CacheClock()
        let library = IconLibrary(directory: icons, renderer: IconRenderer(), clock: clock)
        let before = try library.blockingIcon(named: "flag", scale: 1)
        #expect(before.image.hex(x: 13, y: 8) == "#000000ff")
        let path = folder.appendingPathComponent("icons/flag.svg")
        let edited = try String(contentsOf: path, encoding: .utf8)
            .replacingOccurrences(of: "fill=\"#000000\"", with: "fill=\"#00ff00\"")
            .replacingOccurrences(of: "m:value=\"#000000\"", with: "m:value=\"#00ff00\"")
        try edited.write(to: path, atomically: true, encoding: .utf8)
        clock.advance(by: .seconds(1.1))
        let after = try library.blockingIcon(named: "flag", scale: 1)
        #expect(after.image.hex(x: 13, y: 8) == "#00ff00ff")
        #expect(after.key.templateDigest != before.key.templateDigest)
        #expect(library.cache.statistics.renders == 2)
    }

    @Test func errorsAreTypedAndOneLine() throws {
        let library = try library(disk: false)
        #expect(
            performing: { try library.blockingIcon(named: "nope") },
            throws: { error in
                guard case IconrError.unknownIcon("nope", _) = error else { return false }
                return "\(error)" == "unknown icon \"nope\": no nope.svg in \(icons)"
            })
        #expect(
            performing: { try library.blockingIcon(named: "../flag") },
            throws: { error in
                if case IconrError.unknownIcon = error { return true } else { return false }
            })
        #expect(
            performing: { try library.blockingIcon(named: "flag", params: ["flag_color": "#12"]) },
            throws: { error in
                guard case IconrError.parameter = error else { return false }
                return "\(error)".contains("flag.svg: invalid color \"#12\" for parameter \"flag_color\" (expected")
            })
        // A name the icon does not declare: the server's and the command line's error.
        let unknownParameter =
            "flag.svg: unknown parameter 'flag_colour': icon \"flag\" declares flag_color (did you mean 'flag_color'?)"
        #expect(
            performing: { try library.blockingIcon(named: "flag", params: ["flag_colour": "red"]) },
            throws: { error in
                guard case IconrError.unknownParameter(let unknown, _) = error, unknown.name == "flag_colour" else {
                    return false
                }
                return "\(error)".hasSuffix(unknownParameter)
            })
        #expect(
            performing: {
                try library.blockingIcon(
                    named: "flag", params: IconParameters(["flag_colour": Color(red: 255, green: 0, blue: 0)]))
            },
            throws: { error in
                if case IconrError.unknownParameter = error { return true } else { return false }
            })
        try Data("<svg xmlns='http://www.w3.org/2000/svg' width='5000' height='5000'/>".utf8)
            .write(to: folder.appendingPathComponent("icons/huge.svg"))
        #expect(
            performing: { try library.blockingIcon(named: "huge") },
            throws: { error in
                if case IconrError.render(.tooLarge, _) = error { return true } else { return false }
            })
        #expect(library.cache.statistics.memory.entries == 0)
    }

    @Test func theAsyncAPIGivesTheSameVariants() async throws {
        let library = try library(disk: false)
        async let red = library.icon(named: "flag", params: ["flag_color": "red"], scale: 2)
        async let blue = library.icon(named: "flag", params: ["flag_color": "blue"], scale: 2)
        let (first, second) = try await (red, blue)
        #expect(first.image.hex(x: 26, y: 16) == "#ff0000ff" && second.image.hex(x: 26, y: 16) == "#0000ffff")
        let again = try await library.icon(named: "flag", params: ["flag_color": "red"], scale: 2)
        #expect(again == first && library.cache.statistics.renders == 2)
    }

    @Test(.enabled(if: TestSupport.corporaAvailable, Comment(rawValue: TestSupport.corporaMissing)))
    func isolatedLibrariesSurviveCrashers() throws {
        let crasher = TestSupport.corpora.appendingPathComponent("librsvg-2.54-crashers/empty-region.svg")
        try FileManager.default.copyItem(at: crasher, to: folder.appendingPathComponent("icons/crasher.svg"))
        let library = IconLibrary(directory: icons, cache: IconCache(), placement: .isolated(TestSupport.isolated))
        #expect(
            performing: { try library.blockingIcon(named: "crasher") },
            throws: { "\($0)".contains("crasher.svg: librsvg crashed on this document (") })
        #expect(try library.blockingIcon(named: "flag").size == PixelSize(width: 24, height: 24))
    }
}

/// The one path to a variant: a cache hit through the renderer, the library or the CLI's
/// disk cache never loads librsvg, and no document outlives its renders.
struct OnePathTests {
    /// A new folder holding `icons/`, a copy of the bundled icons; `body` gets both, and the
    /// folder goes when it returns.
    private func withBundledIcons(_ body: (_ folder: URL, _ icons: URL) throws -> Void) throws {
        let temporary = try TemporaryFolder("iconr-onepath")
        defer { withExtendedLifetime(temporary) {} }
        let folder = temporary.url
        let icons = folder.appendingPathComponent("icons")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        try TestSupport.copyBundledIcons(to: icons)
        try body(folder, icons)
    }

    @Test func aCacheHitNeverLoadsLibrsvg() throws {
        try withBundledIcons { folder, _ in
            let disk = try DiskCache(directory: folder.appendingPathComponent("cache").path)
            let source = try IconSource(path: folder.appendingPathComponent("icons/flag.svg").path)
            // Reading and scanning a template loads nothing.
            // Counted on this thread: other tests load documents on theirs meanwhile.
            let before = LibrsvgCounters.documentsLoadedOnThisThread
            let first = try IconRenderer(cache: IconCache(disk: disk)).variant(
                of: source, params: IconParameters(["flag_color": Color(red: 255, green: 0, blue: 0)]), scale: 2)
            #expect(LibrsvgCounters.documentsLoadedOnThisThread > before)
            let afterRender = LibrsvgCounters.documentsLoadedOnThisThread
            // A new renderer over the same disk, and a library over the same folder and disk: hits.
            let again = try IconRenderer(cache: IconCache(disk: disk)).variant(
                of: try IconSource(path: source.path ?? ""),
                params: IconParameters(["flag_color": Color(red: 255, green: 0, blue: 0)]), scale: 2)
            let library = IconLibrary(
                directory: folder.appendingPathComponent("icons").path, cache: IconCache(disk: disk))
            let fromLibrary = try library.blockingIcon(
                named: "flag", params: ["flag_color": "rgb(255, 0, 0)"], scale: 2)
            #expect(LibrsvgCounters.documentsLoadedOnThisThread == afterRender, "a cache hit loaded librsvg")
            #expect(try again.png == first.png && fromLibrary.pixels == first.pixels)
        }
    }

    /// A stamp record names the inputs' key only when sound: any flipped byte, another stamp
    /// key, a wrong length, or a key that is not 64 hex digits (it names a file) is refused.
    @Test func stampRecordsProveWhatTheyName() {
        let stampKey = SHA256.hex(Array("stamps".utf8)), key = SHA256.hex(Array("inputs".utf8))
        let record = StampRecord.sealed(key, key: stampKey)
        #expect(StampRecord.opened(record, key: stampKey) == key)
        #expect(StampRecord.opened(record, key: key) == nil)
        for index in record.indices {
            var damaged = record
            damaged[index] ^= 0x01
            #expect(StampRecord.opened(damaged, key: stampKey) == nil, "byte \(index)")
        }
        #expect(StampRecord.opened(Array(record.dropLast()), key: stampKey) == nil)
        #expect(StampRecord.opened(record + [0x0a], key: stampKey) == nil)
        let escaping = String(repeating: "../", count: 21) + "x"
        let planted = StampRecord.sealed(escaping, key: stampKey)
        #expect(escaping.utf8.count == 64 && StampRecord.opened(planted, key: stampKey) == nil)
    }

    /// A rebuild whose files all have the stamps (inode, size, times) the listing saw when a
    /// build was recorded reads none of them, and is served that build. Stamps are trusted
    /// once both times are 2 s old (a write within the clock's granularity could keep them):
    /// a build of files just written keeps no stamps, so the test moves its clock ahead. A
    /// file written since, even to the same size and modification time, and a new sidecar
    /// are read and built again.
    @Test func filesStampedAsRecordedAreNotReadAgain() throws {
        try withBundledIcons { folder, icons in
            let clock = CacheClock()
            func build(cache: Bool = true) throws -> SpriteBuild {
                let disk = cache ? try DiskCache(directory: folder.appendingPathComponent("cache").path) : nil
                return try SpriteBuilder(
                    options: SpriteOptions(), cache: IconCache(disk: disk), placement: .inProcess, clock: clock
                ).build(directories: [icons.path])
            }
            var copied = stat()
            #expect(stat(icons.appendingPathComponent("flag.svg").path, &copied) == 0)
            #expect(!FileStamp(copied).isSettled(at: FileStamp.now))
            #expect(FileStamp(copied).isSettled(at: FileStamp.now + 2_000_000_000))
            // Listed just after the copy: its stamps are not kept.
            let fresh = try build()
            #expect(!fresh.inputsUnchanged && fresh.filesRead == 4)
            clock.advance(by: .seconds(2.1))
            // No stamps kept: served the record, after reading the files; it keeps them.
            let settled = try build()
            #expect(settled.inputsUnchanged && settled.filesRead == 4)
            let trusted = try build()
            #expect(trusted.inputsUnchanged && trusted.filesRead == 0 && trusted.renders == 0)
            #expect(trusted.sheets.map(\.png) == fresh.sheets.map(\.png))
            #expect(trusted.sheets.map(\.entries) == fresh.sheets.map(\.entries))

            // Other bytes of the same size, the modification time set back: read, and drawn.
            let flag = icons.appendingPathComponent("flag.svg").path
            var before = stat()
            #expect(stat(flag, &before) == 0)
            let text = try String(contentsOfFile: flag, encoding: .utf8)
            try text.replacingOccurrences(of: "#5a5a5a", with: "#a05a5a").write(
                toFile: flag, atomically: false, encoding: .utf8)
            var times = [before.st_atim, before.st_mtim]
            #expect(utimensat(AT_FDCWD, flag, &times, 0) == 0)
            let edited = try build()
            #expect(!edited.inputsUnchanged && edited.filesRead == 4 && edited.renders == 2)
            #expect(edited.sheets.map(\.png) == (try build(cache: false)).sheets.map(\.png))
            #expect(edited.sheets.map(\.png) != fresh.sheets.map(\.png))

            // A new sidecar: read with its icon, and in the index. The three other icons have the
            // stamps the last build recorded (`SpriteSetRecord`): not read, and drawn from the
            // last (RGBA) sheets.
            try Data(#"{"sdf": true}"#.utf8).write(to: icons.appendingPathComponent("badge.json"))
            let withSidecar = try build()
            #expect(!withSidecar.inputsUnchanged && withSidecar.filesRead == 2)
            #expect(withSidecar.sheets[0].entries["badge"]?.sdf == true)
            #expect(withSidecar.sheets.map(\.png) == (try build(cache: false)).sheets.map(\.png))
            // The flag as it was: read alone; the badge, not read, is drawn again with its sidecar.
            try text.write(toFile: flag, atomically: false, encoding: .utf8)
            let flagAgain = try build()
            #expect(flagAgain.filesRead == 1 && flagAgain.sheets[0].entries["badge"]?.sdf == true)
            #expect(flagAgain.iconsReused == 3)
            #expect(flagAgain.sheets.map(\.png) == (try build(cache: false)).sheets.map(\.png))
            // The flag larger: another packing, so the icons not read are read now and drawn
            // from the cache, the badge with its sidecar.
            try text.replacingOccurrences(of: #"width="24" height="24""#, with: #"width="26" height="26""#)
                .write(toFile: flag, atomically: false, encoding: .utf8)
            let larger = try build()
            #expect(larger.filesRead == 1 && larger.iconsReused == 0 && larger.renders == 2)
            #expect(larger.sheets[0].entries["badge"]?.sdf == true)
            #expect(larger.sheets.map(\.png) == (try build(cache: false)).sheets.map(\.png))
        }
    }

    /// The sprite builder draws through the same renderer: built once, a second build over
    /// the same disk cache renders nothing, which a renderer that cannot render at all
    /// proves (its worker executable does not exist), and gives the same sheets.
    @Test func aWarmSpriteBuildRendersNothing() throws {
        try withBundledIcons { folder, icons in
            var options = SpriteOptions()
            options.variants = [
                "flag": [SpriteVariant(params: IconParameters(["flag_color": Color(red: 255, green: 0, blue: 0)]))]
            ]
            let cache = folder.appendingPathComponent("cache").path
            let cold = try SpriteBuilder(
                options: options, cache: IconCache(disk: try DiskCache(directory: cache)), placement: .inProcess
            )
            .build(directories: [icons.path])
            #expect(cold.renders == 10)
            let unable = IsolatedRenderer(executable: "/nonexistent/iconr")
            let warm = try SpriteBuilder(
                options: options, cache: IconCache(disk: try DiskCache(directory: cache)), placement: .isolated(unable)
            )
            .build(directories: [icons.path])
            #expect(warm.renders == 0 && warm.skipped.isEmpty && warm.inputsUnchanged)
            #expect(warm.sheets.map(\.png) == cold.sheets.map(\.png))
            // Another variant color is another build: not served the record.
            options.variants["flag"]?[0].params = IconParameters(["flag_color": Color(red: 0, green: 0, blue: 255)])
            let blue = try SpriteBuilder(
                options: options, cache: IconCache(disk: try DiskCache(directory: cache)), placement: .inProcess
            )
            .build(directories: [icons.path])
            #expect(!blue.inputsUnchanged && blue.renders == 2)
        }
    }

    /// One icon redrawn at its size: the rebuild renders that icon alone, takes the packing
    /// from the cache, and writes the bytes a cold build of the same icons writes.
    @Test func aRedrawnIconRebuildsToTheColdBuildsBytes() throws {
        try withBundledIcons { folder, icons in
            let cache = folder.appendingPathComponent("cache").path
            func build(cache: String) throws -> SpriteBuild {
                try SpriteBuilder(
                    options: SpriteOptions(), cache: IconCache(disk: try DiskCache(directory: cache)),
                    placement: .inProcess
                )
                .build(directories: [icons.path])
            }
            let first = try build(cache: cache)
            let marker = icons.appendingPathComponent("marker.svg")
            let text = try String(contentsOf: marker, encoding: .utf8)
            #expect(text.contains(#"r="3.5""#))
            try text.replacingOccurrences(of: #"r="3.5""#, with: #"r="2""#).write(
                to: marker, atomically: true, encoding: .utf8)
            // The packing file (the first build's only one) is read, not written again: its
            // time stays (a read refreshes it only when it is a minute old).
            let sheets = cache + "/entries-v1/sheets/"
            func packings() throws -> [String: Int] {
                var found: [String: Int] = [:]
                for name in try FileManager.default.contentsOfDirectory(atPath: sheets)
                where try Data(contentsOf: URL(fileURLWithPath: sheets + name)).starts(
                    with: Array(PackingArchive.kindLine.utf8))
                {
                    var status = stat()
                    stat(sheets + name, &status)
                    found[name] = status.st_mtim.tv_sec * 1_000_000_000 + status.st_mtim.tv_nsec
                }
                return found
            }
            let before = try packings()
            #expect(before.count == 1)
            let rebuilt = try build(cache: cache)
            #expect(rebuilt.renders == 2, "the marker at ratios 1 and 2")
            #expect(try packings() == before)
            let cold = try build(cache: folder.appendingPathComponent("cold").path)
            #expect(cold.renders == first.renders)
            #expect(rebuilt.sheets.map(\.png) == cold.sheets.map(\.png))
            #expect(rebuilt.sheets.map(\.png) != first.sheets.map(\.png))
            #expect(
                rebuilt.sheets.map { $0.json(minified: false) } == cold.sheets.map { $0.json(minified: false) })
        }
    }

    /// A rebuild takes the icons whose files did not change from the last build and draws
    /// the others into its sheets: the bytes a cold build writes, when the palette keeps its
    /// colors, gains some or loses some, goes past 256 colors, and on RGBA sheets. Another
    /// size or a damaged record is composed again, to the same bytes.
    @Test func aRebuildPatchesTheLastSheetsToTheColdBuildsBytes() throws {
        let temporary = try TemporaryFolder("iconr-patch")
        defer { withExtendedLifetime(temporary) {} }
        let icons = temporary.url.appendingPathComponent("icons")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        func square(_ name: String, _ color: String, size: Int = 16, inside: String = "") throws {
            try
                (##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(size)" height="\##(size)">"##
                + ##"<rect width="\##(size)" height="\##(size)" fill="\##(color)"/>\##(inside)</svg>"##)
                .write(to: icons.appendingPathComponent(name + ".svg"), atomically: true, encoding: .utf8)
        }
        for (index, color) in ["#e03c31", "#2a7de1", "#33aa55", "#ffcc00", "#7a1f1a", "#000000"].enumerated() {
            try square("icon\(index)", color)
        }
        let cache = temporary.url.appendingPathComponent("cache").path
        var colds = 0
        var options = SpriteOptions()
        func build(in folder: String) throws -> SpriteBuild {
            try SpriteBuilder(
                options: options, cache: IconCache(disk: try DiskCache(directory: folder)), placement: .inProcess
            )
            .build(directories: [icons.path])
        }
        func expectColdBytes(
            _ rebuilt: SpriteBuild, _ comment: Comment, sourceLocation: Testing.SourceLocation = #_sourceLocation
        ) throws {
            colds += 1
            let cold = try build(in: temporary.url.appendingPathComponent("cold \(colds)").path)
            #expect(rebuilt.sheets.map(\.png) == cold.sheets.map(\.png), comment, sourceLocation: sourceLocation)
            #expect(
                rebuilt.sheets.map { $0.json() } == cold.sheets.map { $0.json() }, comment,
                sourceLocation: sourceLocation)
        }
        let first = try build(in: cache)
        #expect(first.iconsReused == 0 && first.sheets.allSatisfy { PaletteImage(png: $0.png) != nil })
        // A dot in one icon: its pixels change, the five others are taken from the last build.
        try square("icon2", "#33aa55", inside: ##"<rect x="4" y="4" width="3" height="3" fill="#000000"/>"##)
        let dot = try build(in: cache)
        #expect(dot.iconsReused == 5 && dot.renders == 2 && dot.cacheHits == 10)
        try expectColdBytes(dot, "a dot")
        // A color the sheets did not have, and one (#e03c31) they no longer have.
        try square("icon0", "#123456")
        let recolored = try build(in: cache)
        #expect(recolored.iconsReused == 5 && recolored.renders == 2)
        try expectColdBytes(recolored, "a new color, one gone")
        // A damaged record of the last build is not followed.
        let sheets = cache + "/entries-v1/sheets/"
        var damagedRecords = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: sheets) {
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: sheets + name)))
            guard bytes.starts(with: Array(SpriteSetRecord.kindLine.utf8)) else { continue }
            bytes[bytes.count / 2] ^= 0x08
            try Data(bytes).write(to: URL(fileURLWithPath: sheets + name))
            damagedRecords += 1
        }
        #expect(damagedRecords > 0, "no set record was found to damage")
        try square("icon3", "#ffcc01")
        let damaged = try build(in: cache)
        #expect(damaged.iconsReused == 0 && damaged.renders == 2)
        try expectColdBytes(damaged, "a damaged record")
        // Another size: another packing, every icon drawn again (from the cache).
        try square("icon4", "#7a1f1a", size: 20)
        let larger = try build(in: cache)
        #expect(larger.iconsReused == 0 && larger.renders == 2)
        try expectColdBytes(larger, "another size")
        // Two gradients across each other: past 256 colors at 2x, no longer a palette.
        try square(
            "icon1", "#2a7de1",
            inside: ##"<defs><linearGradient id="x"><stop offset="0" stop-color="#000"/>"##
                + ##"<stop offset="1" stop-color="#f00"/></linearGradient><linearGradient id="y" x2="0" y2="1">"##
                + ##"<stop offset="0" stop-color="#00f" stop-opacity="0"/><stop offset="1" stop-color="#00f"/>"##
                + ##"</linearGradient></defs><rect width="16" height="16" fill="url(#x)"/>"##
                + ##"<rect width="16" height="16" fill="url(#y)"/>"##)
        let gradient = try build(in: cache)
        #expect(gradient.iconsReused == 5 && gradient.renders == 2)
        #expect(gradient.sheets.contains { PaletteImage(png: $0.png) == nil })
        try expectColdBytes(gradient, "past 256 colors: drawn into the decoded sheet")
        // An RGBA sheet takes a change as well.
        try square("icon5", "#000001")
        let rgba = try build(in: cache)
        #expect(rgba.iconsReused == 5 && rgba.renders == 2)
        try expectColdBytes(rgba, "an RGBA sheet")
        // Several sheets: those whose images did not change are the last ones.
        options.maxSize = 40
        let several = try build(in: cache)
        #expect(several.sheetCount > 2)
        try square("icon5", "#000002")
        let oneSheet = try build(in: cache)
        #expect(oneSheet.iconsReused == 5 && oneSheet.renders == 2)
        try expectColdBytes(oneSheet, "one sheet of several")
        let kept = zip(several.sheets, oneSheet.sheets).filter { $0.png == $1.png }.count
        #expect(kept == oneSheet.sheets.count - 2, "the sheet of icon5, at 1x and 2x, alone changed")
    }

    /// A set record read back is the record kept; damaged, cut short or for another key, it
    /// is not read.
    @Test func setRecordsProveWhatTheyHold() {
        let entry = SpriteIndexEntry(
            rect: PixelRect(x: 0, y: 0, width: 24, height: 20), pixelRatio: 2, sdf: true,
            content: ContentBox(left: 1, top: 2, right: 20, bottom: 18),
            stretchX: [StretchArea(start: 2, end: 4)], stretchY: [], textFitWidth: "stretchOnly",
            textFitHeight: nil, placeholder: nil, visible: false)
        let record = SpriteSetRecord(
            sheetsKey: "sheets", layoutsKey: "layouts",
            icons: [
                "flag": SpriteSetRecord.Icon(
                    digests: "flag.svg\u{0}abc\n", stamps: [1, 2, 3], warnings: ["a warning"],
                    images: [
                        SpriteSetRecord.Image(
                            id: "flag", ratio: 2, isVariant: false, contentKey: "digest:flag@2x", entry: entry),
                        SpriteSetRecord.Image(
                            id: "flag-red", ratio: 1.5, isVariant: true, contentKey: "digest:flag@1.5x",
                            entry: SpriteIndexEntry(
                                rect: PixelRect(x: 0, y: 0, width: 18, height: 15), pixelRatio: 1.5, sdf: false,
                                content: nil, stretchX: [], stretchY: [], textFitWidth: nil, textFitHeight: nil,
                                placeholder: nil, visible: nil)),
                    ]),
                "pin": SpriteSetRecord.Icon(digests: "pin.svg\u{0}def\n", stamps: [], warnings: [], images: []),
            ])
        let bytes = record.bytes(key: "key")
        let read = SpriteSetRecord(bytes: bytes, key: "key")
        #expect(read?.sheetsKey == "sheets" && read?.layoutsKey == "layouts")
        #expect(read?.icons.keys.sorted() == ["flag", "pin"])
        #expect(read?.icons["flag"]?.stamps == [1, 2, 3] && read?.icons["flag"]?.warnings == ["a warning"])
        #expect(read?.icons["flag"]?.images.map(\.entry) == record.icons["flag"]?.images.map(\.entry))
        #expect(read?.icons["flag"]?.images.map(\.contentKey) == ["digest:flag@2x", "digest:flag@1.5x"])
        #expect(read?.icons["flag"]?.images.map(\.ratio) == [2, 1.5])
        #expect(read?.icons["flag"]?.images.map(\.isVariant) == [false, true])
        #expect(SpriteSetRecord(bytes: bytes, key: "other") == nil)
        for index in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 60)) {
            var damaged = bytes
            damaged[index] ^= 0x20
            #expect(SpriteSetRecord(bytes: damaged, key: "key") == nil, "byte \(index)")
        }
        #expect(SpriteSetRecord(bytes: Array(bytes.dropLast(3)), key: "key") == nil)
    }

    /// A packing read back is the packing kept; damaged or for another key, it is not read.
    @Test func packingArchivesProveWhatTheyHold() {
        let layouts = [
            SpritePacker.Layout(
                sizes: (0..<40).map { PixelSize(width: 3 + $0 % 7, height: 5 + $0 % 4) }, padding: 1,
                sharing: (0..<40).map { $0 % 10 == 9 ? 0 : $0 }),
            SpritePacker.Layout(
                sizes: (0..<40).map { PixelSize(width: 6 + $0 % 7 * 2, height: 10 + $0 % 4 * 2) }, padding: 2),
        ]
        let packing = SpritePacker.groups(layouts, maxSide: 48)
        #expect(packing.groups.count > 1, "several sheets")
        let bytes = PackingArchive.sealed(packing, key: "key")
        let read = PackingArchive.opened(bytes, key: "key")
        #expect(read?.tooLarge == packing.tooLarge)
        #expect(read?.groups.map(\.members) == packing.groups.map(\.members))
        #expect(read?.groups.map(\.sheets) == packing.groups.map(\.sheets))
        #expect(PackingArchive.opened(bytes, key: "other") == nil)
        for index in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 50)) {
            var damaged = bytes
            damaged[index] ^= 0x20
            #expect(PackingArchive.opened(damaged, key: "key") == nil, "byte \(index)")
        }
        #expect(PackingArchive.opened(Array(bytes.dropLast(4)), key: "key") == nil)
    }

    /// Three 12 px squares in `folder/icons`; `square` redraws one (name, color) and `build`
    /// makes their sprite with a disk cache in the folder it is given.
    private func threeSquares(
        in folder: URL
    ) throws -> (square: (String, String) throws -> Void, build: (URL) throws -> SpriteBuild) {
        let icons = folder.appendingPathComponent("icons")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        func square(_ name: String, _ color: String) throws {
            try
                ##"<svg xmlns="http://www.w3.org/2000/svg" width="12" height="12"><rect width="12" height="12" fill="\##(color)"/></svg>"##
                .write(to: icons.appendingPathComponent(name + ".svg"), atomically: true, encoding: .utf8)
        }
        for (index, color) in ["#e03c31", "#2a7de1", "#33aa55"].enumerated() { try square("icon\(index)", color) }
        func build(in cache: URL) throws -> SpriteBuild {
            try SpriteBuilder(
                options: SpriteOptions(), cache: IconCache(disk: try DiskCache(directory: cache.path)),
                placement: .inProcess
            )
            .build(directories: [icons.path])
        }
        return (square, build)
    }

    /// Sprite records are sealed with the cache's key, as entries are (issue 64): a sheet
    /// archive planted with a sound digest (anyone can compute one) but without the key's MAC
    /// is a miss, never an output; so are the records of another cache, copied in.
    @Test func plantedAndForeignSpriteRecordsAreMisses() throws {
        let temporary = try TemporaryFolder("iconr-sealed")
        defer { withExtendedLifetime(temporary) {} }
        let (_, build) = try threeSquares(in: temporary.url)
        let cache = temporary.url.appendingPathComponent("cache")
        let cold = try build(cache)
        #expect(try build(cache).inputsUnchanged, "a warm build takes the recorded one")
        let sheets = cache.path + "/entries-v1/sheets/"
        let names = try FileManager.default.contentsOfDirectory(atPath: sheets)
        let magic = Array(SheetArchive.kindLine.utf8)
        let archivePath = try #require(
            names.map { sheets + $0 }.first {
                (try? Data(contentsOf: URL(fileURLWithPath: $0)))?.starts(with: magic) == true
            })
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: archivePath)))
        var keyReader = RecordReader(bytes: file, offset: magic.count + 64)
        let readKey = keyReader.string()
        let key = try #require(readKey)
        // The record without what follows it (the MAC), its body, one byte of a sheet's PNG
        // changed, sealed again as the record kind seals: a sound digest, no key.
        let record = SheetArchive.open(file, key: key) != nil ? file : Array(file.dropLast(DiskCache.blobMACLength))
        var body = Array(try #require(SheetArchive.open(record, key: key)))
        body[body.count - 20] ^= 0x55
        let planted = SheetArchive.seal(body, key: key)
        #expect(SheetArchive.opened(planted, key: key) != nil, "the planted record opens as its kind")
        try Data(planted).write(to: URL(fileURLWithPath: archivePath))
        let afterPlanting = try build(cache)
        let plantedIsIgnored = afterPlanting.sheets.map(\.png) == cold.sheets.map(\.png)
        #expect(plantedIsIgnored, "the planted sheet is not written out")

        // Another cache's records, copied in: none is taken.
        let other = temporary.url.appendingPathComponent("other")
        _ = try DiskCache(directory: other.path)
        try FileManager.default.createDirectory(
            atPath: other.path + "/entries-v1/sheets", withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: sheets) {
            try FileManager.default.copyItem(atPath: sheets + name, toPath: other.path + "/entries-v1/sheets/" + name)
        }
        let foreign = try build(other)
        let tookForeignRecord = foreign.inputsUnchanged
        #expect(!tookForeignRecord, "another cache's build record is not taken")
        let sameAsCold = foreign.sheets.map(\.png) == cold.sheets.map(\.png)
        #expect(sameAsCold)
    }

    /// A sheet archive is read only with whole, in-range counts and sizes: a planted one with a
    /// sound digest and a width of 1e300 (which `Int(_:)` traps on), 1.5, -1 or 1e10 is not read.
    @Test func sheetArchivesTakeOnlyWholeSizes() {
        func archive(width: String) -> [UInt8] {
            var body = RecordWriter()
            func field(_ bytes: [UInt8]) { body.data(bytes) }
            field(Array("1".utf8))
            field(
                Array(
                    #"{"ratio":1,"sheet":0,"width":\#(width),"height":2,"ids":1,"images":1,"fill":1,"packing":1}"#
                        .utf8))
            field(Array("{}".utf8))
            field(Array("{}".utf8))
            field([1, 2, 3])
            return SheetArchive.seal(body.bytes, key: "key")
        }
        #expect(
            SheetArchive.opened(archive(width: "2"), key: "key")?.files.first?.size
                == PixelSize(width: 2, height: 2))
        for width in ["1e300", "1.5", "-1", "1e10"] {
            #expect(SheetArchive.opened(archive(width: width), key: "key") == nil, "width \(width)")
        }
    }

    /// A packing planted in the cache under a build's layouts key, with a sound digest, is
    /// not followed when it does not fit the build: a sheet past `maxSize`, a ratio without
    /// its sheet, an item the build does not have. The build packs again, to a cold build's
    /// bytes, instead of allocating the sheet asked for or indexing past its images.
    @Test func aPlantedPackingIsNotFollowed() throws {
        let temporary = try TemporaryFolder("iconr-planted")
        defer { withExtendedLifetime(temporary) {} }
        let (square, build) = try threeSquares(in: temporary.url)
        let cache = temporary.url.appendingPathComponent("cache")
        _ = try build(cache)
        let sheets = cache.path + "/entries-v1/sheets/"
        let magic = Array(PackingArchive.kindLine.utf8)
        let archives = try FileManager.default.contentsOfDirectory(atPath: sheets).compactMap {
            name -> (path: String, key: String, packing: Packing)? in
            // The record, without the cache's MAC after it.
            let bytes = Array(
                try [UInt8](Data(contentsOf: URL(fileURLWithPath: sheets + name))).dropLast(DiskCache.blobMACLength))
            // The key follows the kind's line and the digest, after its 32-bit length.
            let keyStart = magic.count + 64 + 4
            guard bytes.starts(with: magic), bytes.count > keyStart + 64 else { return nil }
            let key = String(decoding: bytes[keyStart..<keyStart + 64], as: UTF8.self)
            return PackingArchive.opened(bytes, key: key).map { (sheets + name, key, $0) }
        }
        let archive = try #require(archives.first)
        #expect(archives.count == 1)
        let secret = [UInt8](try Data(contentsOf: cache.appendingPathComponent("key")))
        var huge = archive.packing
        huge.groups[0].sheets[0].width = 5000
        huge.groups[0].sheets[0].height = 5000
        var ratioMissing = archive.packing
        ratioMissing.groups[0].sheets.removeLast()
        var strangeItem = archive.packing
        strangeItem.groups[0].members.append(99)
        for sheet in strangeItem.groups[0].sheets.indices {
            strangeItem.groups[0].sheets[sheet].placements[99] = PixelRect(x: 0, y: 0, width: 1, height: 1)
        }
        for (index, (planted, what)) in [
            (huge, "a 5000 px sheet"), (ratioMissing, "a ratio without its sheet"), (strangeItem, "an item not built"),
        ].enumerated() {
            // With the cache's own MAC (read from its key file), so that what is proven here
            // is the check behind it: a planted record without it is not even opened.
            let sealed = PackingArchive.sealed(planted, key: archive.key)
            try Data(sealed + SHA256.hmac(key: secret, sealed)).write(to: URL(fileURLWithPath: archive.path))
            #expect(PackingArchive.opened(sealed, key: archive.key) != nil)
            try square("icon1", "#2a7de\(index)")
            let rebuilt = try build(cache)
            let cold = try build(temporary.url.appendingPathComponent("cold \(index)"))
            let sameBytes = rebuilt.sheets.map(\.png) == cold.sheets.map(\.png)
            #expect(sameBytes, "\(what)")
            #expect(rebuilt.sheets.allSatisfy { $0.size.width <= 4096 && $0.size.height <= 4096 }, "\(what)")
        }
    }

    /// Every option of a sprite build is in the key of its record: changing any one changes
    /// the key's text, and a new option fails here until it joins the key.
    @Test func everySpriteOptionKeysTheRecord() {
        let plain = SpriteOptions()
        #expect(Mirror(reflecting: plain).children.count == 17, "a new option must join recordKeyText")
        var changed: [SpriteOptions] = Array(repeating: plain, count: 18)
        changed[0].ratios = [1, 3]
        changed[1].padding = 2
        changed[2].maxSize = 1024
        changed[3].recursive = false
        changed[4].unique = true
        changed[5].skipInvalid = true
        changed[6].firstFolderWins = true
        changed[7].sanitizeIDs = true
        changed[8].sdf = ["a*"]
        changed[9].variants = ["flag": [SpriteVariant(params: IconParameters([:]), scale: 2)]]
        changed[10].limits = RenderLimits(maxSize: PixelSize(width: 64, height: 64))
        changed[11].optimize = true
        changed[12].followsLinksOut = false
        changed[13].theme = Theme.builtIn("grayscale")
        changed[14].sdfField.radius = 12
        changed[15].sdfField.buffer = 2
        changed[16].halo = Halo(width: 2)
        changed[17].folderNames = ["icons": "base"]
        let texts = [plain.recordKeyText] + changed.map(\.recordKeyText)
        #expect(Set(texts).count == texts.count)
    }
}

/// A library user writes a built sprite as `iconr sprite` does, under the names MapLibre reads.
struct SpriteWritingTests {
    @Test func aBuildWritesItsSheetsUnderTheNamesMapLibreReads() throws {
        let scratch = try TemporaryFolder("iconr-sprite-write")
        var options = SpriteOptions()
        options.ratios = [1, 2]
        let build = try SpriteBuilder(options: options, cache: IconCache(memoryLimit: 0), placement: .inProcess)
            .build(directories: [TestSupport.icons.path])
        let prefix = scratch.url.appendingPathComponent("out/nested/sprite").path
        let written = try build.write(to: prefix, alongWith: [(Array("{}".utf8), scratch.url.path + "/style.json")])
        #expect(
            written == [
                prefix + ".png", prefix + ".json", prefix + "@2x.png", prefix + "@2x.json",
                scratch.url.path + "/style.json",
            ])
        let index = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: prefix + "@2x.json")))
                as? [String: [String: Any]])
        #expect(index["flag"]?["pixelRatio"] as? Int == 2)
        let sheet = try PNGDecoder.decode([UInt8](try Data(contentsOf: URL(fileURLWithPath: prefix + "@2x.png"))))
        #expect(sheet.size == build.sheets.first { $0.ratio == 2 }?.size)
    }
}
