import Glibc
import IconrCore
import IconrSystem

/// An icon and its files: a base file (`name.svg`, `.svgz` or `.png`) and files for single
/// ratios (`name@2x.svg`), as sprite-one and spreet users lay them out.
struct SpriteSource: Sendable {
    struct File: Sendable {
        let path: String
        /// The ratio the file is drawn for at scale 1: 1 for the base file, R for `name@Rx`.
        let unit: Double
    }

    let id: String
    /// The path that names the icon in messages: the base file, else the first ratio's.
    let path: String
    let base: File?
    let perRatio: [Double: File]

    /// Every file of the icon.
    var paths: [String] { (base.map { [$0.path] } ?? []) + perRatio.values.map(\.path).sorted() }

    /// Which file draws which of `ratios`: a ratio's own file, else the base, else (no base)
    /// the file of the lowest ratio.
    func files(for ratios: [Double]) -> [(file: File, ratios: [Double])] {
        let fallback = base ?? perRatio.min { $0.key < $1.key }.map(\.value)
        var groups: [(file: File, ratios: [Double])] = []
        for ratio in ratios.sorted() {
            guard let file = perRatio[ratio] ?? fallback else { continue }
            if let index = groups.firstIndex(where: { $0.file.path == file.path }) {
                groups[index].ratios.append(ratio)
            } else {
                groups.append((file, [ratio]))
            }
        }
        return groups
    }
}

enum SpriteSources {
    /// The icon files of `directories` (and their subfolders when `recursive`), by id:
    /// `.svg`, `.svgz` and `.png` in any letter case, hidden files left out.
    /// An SVG and a PNG of one id: the SVG draws it, with a warning. `stamps` holds what the
    /// listing's `stat` said of every icon file and every `.json` file (sidecars among them).
    /// A folder named in `names` (`DIR=NAME` on the command line) gives its icons ids
    /// `NAME/id`, so that two folders' icons of one name are told apart.
    static func find(
        in directories: [String], recursive: Bool,
        sanitizeIDs: Bool, firstFolderWins: Bool = false, followsLinksOut: Bool = true, names: [String: String] = [:]
    ) throws(SpriteBuildError) -> (sources: [SpriteSource], warnings: [String], stamps: [String: FileStamp]) {
        var files: [(id: String, ratio: Double?, path: String)] = []
        var stamps: [String: FileStamp] = [:]
        var folderOf: [String: Int] = [:]
        var linkedOut: [String] = []
        var undecodable: [String] = []
        for (index, directory) in directories.enumerated() {
            let root = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
            let before = files.count
            collect(
                root, prefix: names[directory].map { $0 + "/" } ?? "", recursive: recursive, into: &files,
                stamps: &stamps, undecodable: &undecodable)
            if !followsLinksOut, let base = FileReader.realPath(root) {
                let outside = Set(files[before...].filter { !FileReader.isWithin(base, $0.path) }.map(\.path))
                linkedOut += outside
                files.removeAll { outside.contains($0.path) }
            }
            for file in files[before...] where folderOf[file.path] == nil { folderOf[file.path] = index }
        }
        guard !files.isEmpty else { throw SpriteBuildError.noIcons(directories) }
        // Ids keep `/` for folders; what breaks `["image", id]`, `id:name` prefixes or
        // legacy `{token}` strings is an error, or replaced (collisions are then duplicates).
        for index in files.indices {
            guard let bad = files[index].id.unicodeScalars.first(where: isForbiddenInID) else { continue }
            guard sanitizeIDs else {
                throw SpriteBuildError.badID(path: files[index].path, character: "\"\(String(bad).escapedForMessage)\"")
            }
            files[index].id = String(
                String.UnicodeScalarView(files[index].id.unicodeScalars.map { isForbiddenInID($0) ? "_" : $0 }))
        }
        var sources: [SpriteSource] = [], warnings: [String] = []
        warnings += undecodable.sorted().map { "\($0): its name is not UTF-8: left out (rename it)" }
        for (id, all) in Dictionary(grouping: files, by: \.id).sorted(by: { $0.key < $1.key }) {
            var group = all
            if firstFolderWins, let first = all.compactMap({ folderOf[$0.path] }).min() {
                group = all.filter { folderOf[$0.path] == first }
                for other in all where folderOf[other.path] != first {
                    warnings.append(
                        "\(other.path): left out, \(directories[first]) comes first and has the id \"\(id)\"")
                }
            }
            var bases = group.filter { $0.ratio == nil }
            let vectors = bases.filter { !$0.path.lowercased().hasSuffix(".png") }
            if vectors.count == 1, bases.count > 1 {
                for bitmap in bases where bitmap.path != vectors[0].path {
                    warnings.append("\(bitmap.path): left out, \(vectors[0].path) draws the id \"\(id)\"")
                }
                bases = vectors
            }
            if bases.count > 1 { throw SpriteBuildError.duplicateID(id, bases.map(\.path).sorted()) }
            var perRatio: [Double: SpriteSource.File] = [:]
            for file in group {
                guard let ratio = file.ratio else { continue }
                if let other = perRatio[ratio] {
                    throw SpriteBuildError.duplicateID("\(id)@\(ratio.shortText)x", [other.path, file.path].sorted())
                }
                perRatio[ratio] = SpriteSource.File(path: file.path, unit: ratio)
            }
            let base = bases.first.map { SpriteSource.File(path: $0.path, unit: 1) }
            guard let path = base?.path ?? perRatio.min(by: { $0.key < $1.key })?.value.path else { continue }
            sources.append(SpriteSource(id: id, path: path, base: base, perRatio: perRatio))
        }
        warnings += linkedOut.sorted().map {
            "\($0): left out, a symbolic link out of its folder (iconr serve --follow-links reads it)"
        }
        return (sources.sorted { $0.id < $1.id }, warnings, stamps)
    }

    private static func isForbiddenInID(_ scalar: Unicode.Scalar) -> Bool {
        scalar == ":" || scalar == "{" || scalar == "}" || scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The icon id and ratio of a file name (`flag.svg`: flag; `flag@2x.SVGZ`: flag at 2),
    /// or nil for a file that is not an icon.
    static func icon(fileName: String) -> (id: String, ratio: Double?)? {
        let lowered = fileName.lowercased()
        guard let suffix = iconSuffixes.first(where: { lowered.hasSuffix($0) }) else { return nil }
        let stem = String(fileName.dropLast(suffix.count))
        guard !stem.isEmpty else { return nil }
        if let at = stem.lastIndex(of: "@"), stem[stem.index(after: at)...].hasSuffix("x"),
            let ratio = Double(stem[stem.index(after: at)...].dropLast()), ratio.isFinite, ratio > 0,
            at != stem.startIndex
        {
            return (String(stem[..<at]), ratio)
        }
        return (stem, nil)
    }

    /// The endings of icon files, in lower case.
    private static let iconSuffixes = [".svg", ".svgz", ".png"]

    /// Whether a file name ends like an icon or in `.json`, in any letter case: the files
    /// `collect` keeps (icons, and sidecars among the JSON files).
    private static func isListed(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".json") || iconSuffixes.contains { lowered.hasSuffix($0) }
    }

    /// `ancestors` are the folders (device, inode) being read above this one: a link back to
    /// one of them (`loop -> .`) is not followed again.
    private static func collect(
        _ directory: String, prefix: String, recursive: Bool,
        into files: inout [(id: String, ratio: Double?, path: String)], stamps: inout [String: FileStamp],
        undecodable: inout [String], ancestors: Set<[UInt64]> = []
    ) {
        var own = stat()
        guard stat(directory, &own) == 0 else { return }
        let identity = [UInt64(own.st_dev), UInt64(own.st_ino)]
        guard !ancestors.contains(identity) else { return }
        // Names that are not UTF-8 cannot be ids (nor opened by a decoded name): said, not dropped unseen.
        let listing = FileReader.listing(of: directory, folders: recursive, wanted: isListed) { name in
            if isListed(name) { undecodable.append(directory + "/" + name) }
        }
        for entry in listing.sorted(by: { $0.name < $1.name }) {
            let path = directory + "/" + entry.name
            if entry.isFolder {
                collect(
                    path, prefix: prefix + entry.name + "/", recursive: true, into: &files, stamps: &stamps,
                    undecodable: &undecodable, ancestors: ancestors.union([identity]))
                continue
            }
            // Icon files and JSON files (the sidecars among them) alike.
            stamps[path] = entry.stamp
            if let icon = icon(fileName: entry.name) { files.append((prefix + icon.id, icon.ratio, path)) }
        }
    }
}
