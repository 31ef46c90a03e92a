import Foundation
import Iconr
import IconrCore
import IconrRender
import IconrSystem

// The tests have Swift Testing; iconr-bench, built with `make bench`'s static standard
// library, does not: the helpers that need it are the tests' alone.
#if canImport(Testing)
import Testing
#endif

/// What a run of the built `iconr` ended with and printed.
public struct IconrRun: Sendable {
    /// The exit status, or minus the signal that ended it.
    public let status: Int32
    /// Its stdout's bytes.
    public let output: Data
    /// Its stderr, decoded as UTF-8.
    public let stderr: String
    /// Its stdout, decoded as UTF-8.
    public var stdout: String { String(decoding: output, as: UTF8.self) }

    public init(status: Int32, output: Data, stderr: String) {
        self.status = status
        self.output = output
        self.stderr = stderr
    }
}

/// A new folder under the temporary directory, removed with everything in it when the last
/// reference goes (a Swift Testing suite holds one per test: the folder lives as long as the test).
public final class TemporaryFolder: Sendable {
    /// The folder.
    public let url: URL
    /// The folder's path.
    public var path: String { url.path }

    /// Makes `/tmp/<prefix>-<UUID>`.
    public init(_ prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Paths and helpers shared by the test targets.
public enum TestSupport {
    /// The repository root (this file is Tests/IconrTestSupport/TestSupport.swift).
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// `../shared/corpora` beside the checkout.
    public static let corpora = repository.deletingLastPathComponent().appendingPathComponent("shared/corpora")
    public static let icons = repository.appendingPathComponent("icons")

    /// Whether the tests that read `../shared/corpora` run: when it is there, and always in
    /// CI (`CI=true`), where a missing corpus must fail them rather than skip them. Elsewhere
    /// (a fresh clone) they are skipped, and Swift Testing prints `corporaMissing` for each.
    public static let corporaAvailable =
        FileManager.default.fileExists(atPath: corpora.path)
        || ProcessInfo.processInfo.environment["CI"] == "true"
    public static let corporaMissing = "needs ../shared/corpora beside the checkout (the project's shared/ folder)"

    /// The `iconr` executable built beside the test bundle: it serves isolated renders.
    public static let iconrExecutable = builtExecutable("iconr")

    /// The executable `name` that `swift build` put beside the test bundle, or a message
    /// saying it was not found (a path that runs nothing, so the tests using it fail with it).
    public static func builtExecutable(_ name: String) -> String {
        let testBinary = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0])
        var directory = testBinary.deletingLastPathComponent()
        // The bundle may be a directory (`iconrPackageTests.xctest/...`); walk up to the build folder.
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return "\(name) executable not found next to \(testBinary.path): run `swift build` first"
    }

    public static let isolated = IsolatedRenderer(executable: iconrExecutable)

    /// Copies the bundled icons (flag, marker, badge, label) into `folder`, which must exist.
    public static func copyBundledIcons(to folder: URL) throws {
        for name in ["flag", "marker", "badge", "label"] {
            try FileManager.default.copyItem(
                at: icons.appendingPathComponent("\(name).svg"),
                to: folder.appendingPathComponent("\(name).svg"))
        }
    }

    /// A new temporary folder named after `prefix` with the bundled icons in its `icons/`.
    public static func folderWithBundledIcons(_ prefix: String) throws -> TemporaryFolder {
        let folder = try TemporaryFolder(prefix)
        let icons = folder.url.appendingPathComponent("icons")
        try FileManager.default.createDirectory(at: icons, withIntermediateDirectories: true)
        try copyBundledIcons(to: icons)
        return folder
    }

    /// `XDG_CACHE_HOME` of the processes tests run: a folder of this test run.
    public static let testCacheHome = FileManager.default.temporaryDirectory
        .appendingPathComponent("iconr-test-cache-\(ProcessInfo.processInfo.processIdentifier)").path

    /// A corpus folder: `../shared/corpora/<name>`.
    public static func corpus(_ name: String) -> URL {
        corpora.appendingPathComponent(name)
    }

    /// The `.svg` files below `folder`, sorted; empty when there are none (a folder that is
    /// missing included). A URL, not a string: an absolute path once went under the corpora
    /// folder and found nothing, and the loops over it drew nothing. For `arguments:` lists;
    /// a loop takes `requiredSVGFiles`.
    public static func svgFiles(in folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        let files = (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "svg" }
        return files.sorted { $0.path < $1.path }
    }

    #if canImport(Testing)
    /// `svgFiles(in:)`, required to hold at least `atLeast`: a test that loops over nothing
    /// proves nothing, so an empty or short list fails the test that asked for it.
    public static func requiredSVGFiles(
        in folder: URL, atLeast: Int = 1, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> [URL] {
        let files = svgFiles(in: folder)
        try #require(
            files.count >= atLeast, "\(folder.path) holds \(files.count) SVG files, fewer than \(atLeast)",
            sourceLocation: sourceLocation)
        return files
    }
    #endif

    public static func template(_ svg: String, name: String = "test") throws -> IconSource {
        try IconSource(name: name, bytes: Array(svg.utf8), path: "\(name).svg")
    }

    /// Runs a program and returns its exit status (or minus the signal that ended it), stdout
    /// and stderr. A program still running after `timeout` seconds is killed (status -9): a
    /// hang fails its test instead of the run.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], stdin: Data? = nil,
        directory: URL? = nil, timeout: Double = 120
    ) throws -> (status: Int32, stdout: Data, stderr: Data) {
        // Output goes to files, so that a chatty process can never block on a full pipe.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inURL = scratch.appendingPathComponent("in"), outURL = scratch.appendingPathComponent("out")
        let errURL = scratch.appendingPathComponent("err")
        try (stdin ?? Data()).write(to: inURL)
        let child = try RunningProgram(
            executable, arguments, directory: directory, stdin: inURL.path, stdout: outURL.path,
            stderr: errURL.path)
        let status = child.wait(timeout: timeout) ?? -SIGKILL
        return (status, try Data(contentsOf: outURL), try Data(contentsOf: errURL))
    }

    /// Runs the built `iconr` with `arguments` in `directory` (see `run`).
    public static func iconr(
        _ arguments: [String], in directory: URL? = nil, stdin: Data? = nil, timeout: Double = 120
    ) throws -> IconrRun {
        let result = try run(iconrExecutable, arguments, stdin: stdin, directory: directory, timeout: timeout)
        return IconrRun(
            status: result.status, output: result.stdout, stderr: String(decoding: result.stderr, as: UTF8.self))
    }

    /// The fields of `/proc/<pid>/stat` after the command name: state, parent, ..., user and
    /// system time (fields 11 and 12, in clock ticks); none when the process is gone.
    public static func processStat(_ pid: pid_t) -> [Substring] {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return [] }
        return stat[stat.index(after: close)...].split(separator: " ")
    }

    /// The processes whose parent is `parent` (from /proc).
    public static func children(of parent: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }.filter {
            let fields = processStat($0)
            return fields.count > 1 && pid_t(fields[1]) == parent
        }
    }

    /// The full path of a program on PATH, or nil.
    public static func which(_ program: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let path = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// The largest difference of any channel between two images of one size (255 when sizes differ).
    public static func maxChannelDifference(_ a: RasterImage, _ b: RasterImage) -> Int {
        guard a.size == b.size else { return 255 }
        var worst = 0
        for index in 0..<a.pixels.count {
            worst = max(worst, abs(Int(a.pixels[index]) - Int(b.pixels[index])))
        }
        return worst
    }
}

extension RasterImage {
    /// The pixel at the center, as `#rrggbbaa`, for readable expectations.
    public var centerHex: String { hex(x: size.width / 2, y: size.height / 2) }

    /// The rectangle a sprite index entry (`x`, `y`, `width`, `height`) names in this sheet.
    public func cropped(to entry: [String: Any]) -> RasterImage {
        let (x, y, width, height) = (
            entry["x"] as! Int, entry["y"] as! Int, entry["width"] as! Int, entry["height"] as! Int
        )
        var rows: [UInt8] = []
        for row in y..<(y + height) {
            let start = (row * size.width + x) * 4
            rows += pixels[start..<(start + width * 4)]
        }
        return RasterImage(size: PixelSize(width: width, height: height), pixels: rows)
    }

    public func hex(x: Int, y: Int) -> String {
        let pixel = self[x, y]
        return String(format: "#%02x%02x%02x%02x", pixel.red, pixel.green, pixel.blue, pixel.alpha)
    }
}

/// A program started with `posix_spawn` and waited for with `waitpid` (IconrSystem's
/// `ChildProcess`). (Foundation's `Process` was used before: its `waitUntilExit` waits on a
/// run loop for a termination notice, and once, with both cores loaded, it never came: the
/// test run hung.)
public final class RunningProgram {
    public let pid: pid_t
    private var status: Int32?

    /// Starts `executable` with `arguments` in `directory`, its standard streams on the files
    /// named (nil: /dev/null), with a disk cache of this test run (never the user's).
    public init(
        _ executable: String, _ arguments: [String], directory: URL? = nil, stdin: String? = nil,
        stdout: String? = nil, stderr: String? = nil, environment extra: [String: String] = [:]
    ) throws {
        // `env -C` starts the program in the folder (posix_spawn has no portable chdir action).
        let command = (directory.map { ["/usr/bin/env", "-C", $0.path] } ?? []) + [executable] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = TestSupport.testCacheHome
        environment.merge(extra) { _, new in new }
        let written = O_WRONLY | O_CREAT | O_TRUNC
        pid = try ChildProcess.spawn(
            command[0], Array(command.dropFirst()),
            fileActions: [
                .open(stdin ?? "/dev/null", flags: O_RDONLY, as: 0),
                .open(stdout ?? "/dev/null", flags: written, as: 1),
                .open(stderr ?? "/dev/null", flags: written, as: 2),
            ],
            environment: environment.map { "\($0.key)=\($0.value)" })
    }

    public func signal(_ signal: Int32) {
        if status == nil { kill(pid, signal) }
    }

    /// Waits for the program to end and returns its exit status, or minus the signal that
    /// ended it; after `timeout` seconds, kills it and returns nil.
    @discardableResult
    public func wait(timeout: Double = 120) -> Int32? {
        if let status { return status }
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            guard case .success(let polled) = Result(catching: { () throws(SystemError) in try ChildProcess.poll(pid) })
            else { return nil }
            if let termination = polled { return record(termination) }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                _ = try? ChildProcess.wait(for: pid)
                status = -SIGKILL
                return nil
            }
            usleep(2_000)
        }
    }

    /// Whether the program is still running (it is reaped when it has ended).
    public var isRunning: Bool {
        guard status == nil else { return false }
        guard let termination = (try? ChildProcess.poll(pid)) ?? nil else { return true }
        _ = record(termination)
        return false
    }

    private func record(_ termination: Termination) -> Int32 {
        let code: Int32 =
            switch termination {
            case .exited(let code): code
            case .signaled(let signal): -signal
            }
        status = code
        return code
    }
}
