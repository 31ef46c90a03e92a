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

    struct Options: CommandOptions {
        enum Action { case stats, clear }
        var action: Action
        var cache: CacheSettings

        init(_ arguments: ScannedArguments) throws(UsageError) {
            switch arguments.positionals {
            case ["stats"]: action = .stats
            case ["clear"]: action = .clear
            case []: throw UsageError(message: "missing action: stats or clear")
            default:
                throw UsageError(
                    message: "unknown action '\(arguments.positionals.joined(separator: " "))': expected stats or clear"
                )
            }
            cache = try CacheSettings(arguments)
        }
    }

    static func run(_ options: Options, console: Console) throws -> Int32 {
        let settings = options.cache
        guard !settings.isDisabled else { return 0 }
        let cache = try DiskCache(directory: settings.directory ?? DiskCache.defaultDirectory)
        let statistics = cache.statistics()
        if options.action == .stats {
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
