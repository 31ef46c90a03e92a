import Iconr
import IconrCore
import IconrSystem

/// `iconr cache stats|clear [--cache-dir DIR]`
enum CacheCommand: Command {
    static let name = "cache"
    static let abstract = "Show or clear the disk cache of rendered icons."
    static let positionalUsage = "stats|clear"
    static let positionalWords = ["stats", "clear"]
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
        let directory = settings.directory ?? DiskCache.defaultDirectory
        // A cache that was never made is empty: looking at it or clearing it does not make it
        // (a mistyped --cache-dir leaves nothing behind).
        let cache = FileReader.exists(directory) ? try DiskCache(directory: directory) : nil
        let statistics = cache?.statistics() ?? (entries: 0, bytes: 0)
        if options.action == .stats {
            console.out("directory: \(directory)")
            console.out("entries: \(statistics.entries)")
            console.out("bytes: \(statistics.bytes)")
        } else {
            cache?.clear()
            console.out("removed \(statistics.entries) entries (\(statistics.bytes) bytes) from \(directory)")
        }
        return 0
    }
}
