import Dispatch
import Glibc
import Iconr
import IconrCore
import IconrRender
import IconrSystem

/// The `iconr` command line. `main` returns the process's exit code: 0 on success, 1 when
/// the work failed, 64 for a usage mistake.
public enum CLI {
    static let commands: [any Command.Type] = [
        RenderCommand.self, InspectCommand.self, CheckCommand.self, SpriteCommand.self, CacheCommand.self,
        ExpressionCommand.self, StyleCommand.self, ServeCommand.self,
    ]
    /// The hidden command that serves isolated renders (see `IsolatedRenderer`).
    static let workerCommand = "render-worker"

    /// `iconr --help`: the commands and their abstracts, from `commands`.
    static var rootHelp: String {
        let commandLines = commands.map { command in
            "  " + command.name + String(repeating: " ", count: max(1, 24 - command.name.count)) + command.abstract
        }
        return """
            OVERVIEW: Render parameterized SVG icons (Mapbox vector icons) to PNG.

            USAGE: iconr <command> [options]

            COMMANDS:
            \(commandLines.joined(separator: "\n"))

            OPTIONS:
              --version               Show the version.
              -h, --help              Show help information.
              help --man              Print the man page (roff).
              help --completions SHELL
                                      Print bash, zsh or fish completions.

              See 'iconr <command> --help' for detailed help.
            """
    }

    /// Runs `iconr arguments...` and returns the exit code (0, 1, or 64 for a usage mistake).
    public static func main(_ arguments: [String]) -> Int32 {
        Console.prepareStandardStreams()
        let console = Console()
        // Results that did not reach stdout are a failure, whatever the command thought.
        return console.checkingStdout(run(arguments, console: console))
    }

    /// Runs a command line with `console` (one that records, in tests): the exit code.
    static func run(_ arguments: [String], console: Console) -> Int32 {
        guard let first = arguments.first else {
            console.error("missing command")
            console.note("Usage: iconr <command> [options]\n  See 'iconr --help'.")
            return 64
        }
        switch first {
        case "help" where arguments.count == 2 && arguments[1] == "--man":
            // The man page, from the same tables as --help (`make install` writes it).
            console.out(Manual.page(version: IconrVersion.string))
            return 0
        case "help" where arguments.count >= 2 && arguments[1] == "--completions":
            guard arguments.count == 3, let script = Manual.completions(shell: arguments[2]) else {
                console.error("expected 'help --completions bash|zsh|fish'")
                return 64
            }
            console.outBytes(Array(script.utf8))
            return 0
        case "help" where arguments.count > 1:
            // `iconr help sprite` is `iconr sprite --help`.
            return run([arguments[1], "--help"], console: console)
        case "--help", "-h", "help":
            console.out(rootHelp)
            return 0
        case "--version":
            console.out(IconrVersion.string)
            return 0
        case workerCommand:
            RenderWorker.serve()
        default:
            break
        }
        guard let command = commands.first(where: { $0.name == first }) else {
            console.error(
                first.hasPrefix("-")
                    ? "unknown option '\(first)'" + didYouMean(first, among: ["--help", "--version"])
                    : "unknown command '\(first)'" + didYouMean(first, among: commands.map { $0.name }))
            console.note("Usage: iconr <command> [options]\n  See 'iconr --help'.")
            return 64
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            console.out(command.helpText)
            return 0
        }
        do {
            return try command.run(arguments: rest, console: console)
        } catch let error as UsageError {
            console.error(error.message)
            console.note(command.usageLines("Usage: ") + "\n  See 'iconr \(command.name) --help'.")
            return 64
        } catch {
            console.error("\(error)")
            return 1
        }
    }

    /// On SIGINT, SIGTERM or SIGHUP, remove the temporary files of writes under way and exit
    /// as the signal would have (128 + signal), so an interrupted run leaves no partial output.
    static func removeTemporaryFilesOnInterrupt() {
        for signalNumber in CrashSignals.interrupts {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                AtomicFile.removeTemporaryFiles()
                exit(128 + signalNumber)
            }
            source.resume()
            interruptSources.append(source)
        }
    }

    nonisolated(unsafe) private static var interruptSources: [any DispatchSourceSignal] = []
}
