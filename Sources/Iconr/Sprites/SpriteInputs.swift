import Dispatch
import IconrCore
import IconrRender
import IconrSystem

/// The files a sprite build reads before it parses anything (every file of every icon and
/// its sidecar `name.json`), read once, on every core. The build draws exactly these bytes,
/// so a file edited while it runs cannot make its sheets disagree with `key`: the digest of
/// these bytes, their paths and ids, the options and the versions of iconr and librsvg,
/// under which the build's `SpriteRecord` is kept.
struct SpriteInputs: Sendable {
    /// Icon files' bytes (as stored: an `.svgz` still compressed), or why they could not be read.
    private let files: [String: Result<[UInt8], FileReadError>]
    /// Sidecars by their icon file's path: nil when there is none.
    private let sidecars: [String: Result<[UInt8]?, FileReadError>]
    /// The SHA-256 of each file read and of its sidecar (or that it has none), by the file's path.
    private let fileDigests: [String: String]
    /// `digests(of:)` of the icons not read, as a build read them when their files had the
    /// stamps they have (by id).
    private let unchanged: [String: String]
    /// The icon files not read (of `unchanged` icons) that have a sidecar.
    private let unreadSidecars: Set<String>
    /// Nil when a file could not be read, or when the build retries after a crash (a record
    /// is made by, and serves, whole builds only).
    let key: String?
    /// How many files were read (icon files and sidecars).
    let filesRead: Int

    /// Reads the files of `sources` (except those that failed an earlier attempt), and the
    /// sidecars among the files the listing `stamps`; each read is announced to `recovery`'s
    /// listeners, so that a supervisor's time limit covers it.
    init(
        _ sources: [SpriteSource], stamps: [String: FileStamp], options: SpriteOptions,
        recovery: SpriteBuildRecovery, unchanged: [String: String] = [:]
    ) {
        self.unchanged = unchanged
        let paths = sources.filter { unchanged[$0.id] == nil }.flatMap(\.paths).filter { recovery.failed[$0] == nil }
        unreadSidecars = Set(
            sources.filter { unchanged[$0.id] != nil }.flatMap(\.paths).filter {
                stamps[SpriteImageRenderer.sidecarPath(of: $0)] != nil
            })
        typealias Read = (
            file: Result<[UInt8], FileReadError>, sidecar: Result<[UInt8]?, FileReadError>, digests: String?
        )
        let read = Locked<[String: Read]>([:])
        DispatchQueue.concurrentPerform(iterations: paths.count) { index in
            let path = paths[index]
            let sidecarPath = SpriteImageRenderer.sidecarPath(of: path)
            let (file, sidecar) = recovery.watching(path) {
                (
                    Result { () throws(FileReadError) in try FileReader.readIcon(path) },
                    stamps[sidecarPath] != nil
                        ? Result { () throws(FileReadError) -> [UInt8]? in try FileReader.read(sidecarPath) }
                        : .success(nil)
                )
            }
            // Hashed here, on every core, as each file is read.
            var digests: String?
            if case .success(let bytes) = file, case .success(let sidecar) = sidecar {
                digests = SHA256.hex(bytes) + "\u{0}" + (sidecar.map { SHA256.hex($0) } ?? "none")
            }
            read.withLock { $0[path] = (file, sidecar, digests) }
        }
        let results = read.withLock { $0 }
        let sidecarsRead = results.values.filter {
            if case .success(nil) = $0.sidecar { false } else { true }
        }.count
        filesRead = results.count + sidecarsRead
        files = results.mapValues(\.file)
        sidecars = results.mapValues(\.sidecar)
        fileDigests = results.compactMapValues(\.digests)
        guard recovery.failed.isEmpty, recovery.suspects.isEmpty else {
            key = nil
            return
        }
        var text = "sprite build 1 iconr \(IconrVersion.string) \(Rasterizer.identity)\n"
        text += options.recordKeyText + "\n"
        for source in sources {
            text += "icon " + source.id + "\u{0}" + source.path + "\n"
            if let digests = unchanged[source.id] {
                text += digests
                continue
            }
            for path in source.paths {
                guard let digests = results[path]?.digests else {
                    key = nil
                    return
                }
                text += path + "\u{0}" + digests + "\n"
            }
        }
        key = SHA256.hex(Array(text.utf8))
    }

    /// The key of `sources` as their listing stamped them: the options, the versions, and the
    /// `FileStamp` of every icon file and of its sidecar (or that it has none). Nil on a retry
    /// after a crash, or when a stamp is missing or not settled. A build keeps its `key` under
    /// this one (`StampRecord`), so that a rebuild of files with the same stamps, which hold
    /// the same bytes, finds its `SpriteRecord` without reading them. `now` is the wall clock
    /// the stamps are settled by.
    static func stampKey(
        _ sources: [SpriteSource], stamps: [String: FileStamp], options: SpriteOptions,
        recovery: SpriteBuildRecovery, now: Int
    ) -> String? {
        guard recovery.failed.isEmpty, recovery.suspects.isEmpty else { return nil }
        var bytes = Array("sprite stamps 1 iconr \(IconrVersion.string) \(Rasterizer.identity)\n".utf8)
        bytes += options.recordKeyText.utf8
        for source in sources {
            bytes += "\nicon ".utf8
            bytes += source.id.utf8
            bytes.append(0)
            bytes += source.path.utf8
            guard let stamped = Self.stamps(of: source, stamps: stamps, now: now) else { return nil }
            bytes += stamped
        }
        return SHA256.hex(bytes)
    }

    /// The stamps of the files of `source` and of their sidecars (or that there is none) as
    /// the listing saw them; nil when one is missing or not settled at `now`.
    static func stamps(of source: SpriteSource, stamps: [String: FileStamp], now: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        for path in source.paths {
            guard let stamp = stamps[path], stamp.isSettled(at: now) else { return nil }
            bytes.append(0)
            bytes += path.utf8
            bytes.append(0)
            stamp.append(to: &bytes)
            if let sidecar = stamps[SpriteImageRenderer.sidecarPath(of: path)] {
                guard sidecar.isSettled(at: now) else { return nil }
                bytes.append(1)
                sidecar.append(to: &bytes)
            } else {
                bytes.append(0)
            }
        }
        return bytes
    }

    /// The digests of the files of `source` (and of their sidecars), nil when one was not read.
    func digests(of source: SpriteSource) -> String? {
        if let digests = unchanged[source.id] { return digests }
        var text = ""
        for path in source.paths {
            guard let digests = fileDigests[path] else { return nil }
            text += path + "\u{0}" + digests + "\n"
        }
        return text
    }

    /// The bytes of the icon file at `path` as read up front (a file that failed an earlier
    /// attempt, or of an icon known unchanged, and was not read then, is read now).
    func bytes(of path: String) -> Result<[UInt8], FileReadError> {
        files[path] ?? Result { () throws(FileReadError) in try FileReader.readIcon(path) }
    }

    /// The bytes of the sidecar of the icon file at `path`, nil when it has none (the
    /// sidecar of a file not read up front is read now).
    func sidecar(of path: String) -> Result<[UInt8]?, FileReadError> {
        if let read = sidecars[path] { return read }
        guard unreadSidecars.contains(path) else { return .success(nil) }
        return Result { () throws(FileReadError) -> [UInt8]? in
            try FileReader.read(SpriteImageRenderer.sidecarPath(of: path))
        }
    }
}

extension SpriteOptions {
    /// Every option, as text for `SpriteInputs.key`: a new option must join it, or builds
    /// that differ in it would be served each other's sheets.
    var recordKeyText: String {
        let variants = variants.keys.sorted().map { id in
            id + ": "
                + (self.variants[id] ?? []).map { variant in
                    (variant.id ?? "-") + " " + variant.scale.shortText + " "
                        + (variant.recolor.map { "recolor \($0.rulesKey) " } ?? "")
                        + (variant.halo.map { "halo \($0.text) " } ?? "")
                        + variant.params.colors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.hexString)" }
                        .joined(separator: "&")
                }.joined(separator: ", ")
        }
        return "ratios \(ratios.map(\.shortText)) padding \(padding) max \(maxSize) recursive \(recursive) "
            + "unique \(unique) skip \(skipInvalid) first \(firstFolderWins) sanitize \(sanitizeIDs) "
            + "sdf \(sdf.sorted())\(sdfField.keyText)\(halo?.keyText ?? "") limits \(limits.maxSize) \(limits.timeout.shortText) optimize \(optimize)"
            // Only when set, so that the keys of builds that follow links stay what they were.
            + (followsLinksOut ? "" : " links confined") + (theme.map { " theme \($0.rulesKey)" } ?? "")
            + (folderNames.isEmpty
                ? ""
                : " names "
                    + folderNames.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))
            + "\n"
            + "variants " + variants.joined(separator: "; ")
    }
}

/// What a sprite build made of its inputs, kept in the disk cache under `SpriteInputs.key`:
/// the composition key of its sheets (their `SheetArchive` holds them), its counts and
/// warnings, and the references its icons make to other files, with a digest of what they
/// led to. A build whose inputs have that key again, and whose references lead to the same
/// files, is that build: its sheets are read back without parsing, rendering or composing.
struct SpriteRecord: Equatable, SealedRecordKind {
    static let kindLine = "iconr build 2\n"

    /// The composition key its sheets' archive is stored under.
    let sheetsKey: String
    let icons: Int
    let variants: Int
    /// Images in the sheets (what a rebuild serves from the cache).
    let images: Int
    /// The build's warnings, except those of finding the files (which a rebuild finds again).
    let warnings: [String]
    /// The references to other files, by the path of the icon file that makes them.
    let references: [String: [String]]
    /// `IconReferences.fingerprint(of: references)` when the build ran.
    let referenced: String

    /// Whether the references lead to the same files, with the same bytes, as when recorded.
    var isCurrent: Bool { IconReferences.fingerprint(of: references) == referenced }

    /// The record as stored, sealed under `key` (`SealedRecordKind`): JSON.
    func bytes(key: String) -> [UInt8] {
        let payload = JSONValue.object([
            "sheets": .string(sheetsKey),
            "icons": .number(Double(icons)), "variants": .number(Double(variants)),
            "images": .number(Double(images)), "warnings": .array(warnings.map(JSONValue.string)),
            "references": .object(references.mapValues { .array($0.map(JSONValue.string)) }),
            "referenced": .string(referenced),
        ])
        return Self.seal(Array(payload.serialized.utf8), key: key)
    }

    /// The record in `bytes`, or nil when they are not a sound record of `key`.
    init?(bytes: [UInt8], key: String) {
        guard let body = Self.open(bytes, key: key), let json = try? JSONValue.parse(Array(body)),
            let sheetsKey = json["sheets"]?.stringValue, let referenced = json["referenced"]?.stringValue,
            let warnings = json["warnings"]?.arrayValue?.compactMap(\.stringValue),
            let references = json["references"]?.objectValue?.mapValues({ $0.arrayValue?.compactMap(\.stringValue) })
        else { return nil }
        func count(_ name: String) -> Int? {
            guard case .number(let value)? = json[name], value >= 0, value < 1e15, value == value.rounded() else {
                return nil
            }
            return Int(value)
        }
        guard let icons = count("icons"), let variants = count("variants"),
            let images = count("images")
        else { return nil }
        self.init(
            sheetsKey: sheetsKey, icons: icons, variants: variants, images: images,
            warnings: warnings, references: references.compactMapValues { $0 }, referenced: referenced)
    }

    init(
        sheetsKey: String, icons: Int, variants: Int, images: Int, warnings: [String],
        references: [String: [String]], referenced: String
    ) {
        self.sheetsKey = sheetsKey
        self.icons = icons
        self.variants = variants
        self.images = images
        self.warnings = warnings
        self.references = references
        self.referenced = referenced
    }
}

/// What the stamp level keeps under a listing's stamp key (`SpriteInputs.stampKey`): the
/// inputs' key, sealed under the stamp key, so that one planted under another name is never
/// followed.
enum StampRecord: RebuildRecord {
    static let kindLine = "iconr stamps 2\n"

    static func sealed(_ inputsKey: String, key: String) -> [UInt8] {
        seal(Array(inputsKey.utf8), key: key)
    }

    /// The inputs' key, when it is 64 hex digits, as the records it names are.
    static func opened(_ bytes: [UInt8], key: String) -> String? {
        guard let inputsKey = open(bytes, key: key), CacheSpace.isDigest(inputsKey) else { return nil }
        return String(decoding: inputsKey, as: UTF8.self)
    }
}
