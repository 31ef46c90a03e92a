import Iconr
import IconrCore

/// `iconr cache stats|clear [--cache-dir DIR]`
enum CacheCommand: Command {
    static let name = "cache"
    static let abstract = "Show or clear the disk cache of rendered icons."
    static let positionalUsage = "stats|clear"
    static let arguments: [(name: String, help: String)] = [
        ("stats", "Print the cache's directory, entries and bytes."),
        ("clear", "Remove every entry."),
    ]
    static let options: [OptionSpec] = [CacheSettings.options[0]]

    static func run(_ arguments: ScannedArguments, console: Console) throws -> Int32 {
        guard arguments.positionals.count == 1, let action = arguments.positionals.first,
            action == "stats" || action == "clear"
        else {
            throw UsageError(
                message: arguments.positionals.isEmpty
                    ? "missing action: stats or clear"
                    : "unknown action '\(arguments.positionals.joined(separator: " "))': expected stats or clear")
        }
        let settings = CacheSettings(arguments)
        guard !settings.isDisabled else { return 0 }
        let cache = try DiskCache(directory: settings.directory ?? DiskCache.defaultDirectory)
        let statistics = cache.statistics()
        if action == "stats" {
            console.out("directory: \(cache.directory)")
            console.out("entries: \(statistics.entries)")
            console.out("bytes: \(statistics.bytes)")
        } else {
            cache.clear()
            console.out("removed \(statistics.entries) entries (\(statistics.bytes) bytes) from \(cache.directory)")
        }
        return 0
    }
}
