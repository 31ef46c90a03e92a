import Foundation
import Iconr
import IconrRender

/// Paths and helpers shared by the test targets.
public enum TestSupport {
    /// The repository root (this file is Tests/IconrTestSupport/TestSupport.swift).
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    /// `../shared/corpora` beside the checkout.
    public static let corpora = repository.deletingLastPathComponent().appendingPathComponent("shared/corpora")
    public static let icons = repository.appendingPathComponent("icons")

    /// The `iconr` executable built beside the test bundle: it serves isolated renders.
    public static let iconrExecutable: String = {
        let testBinary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                             ?? CommandLine.arguments[0])
        var directory = testBinary.deletingLastPathComponent()
        // The bundle may be a directory (`iconrPackageTests.xctest/...`); walk up to the build folder.
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("iconr").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return "iconr executable not found next to \(testBinary.path): run `swift build` first"
    }()

    public static let isolated = IsolatedRenderer(executable: iconrExecutable)

    /// Copies the bundled icons (flag, marker, badge, label) into `folder`, which must exist.
    public static func copyBundledIcons(to folder: URL) throws {
        for name in ["flag", "marker", "badge", "label"] {
            try FileManager.default.copyItem(at: icons.appendingPathComponent("\(name).svg"),
                                             to: folder.appendingPathComponent("\(name).svg"))
        }
    }

    /// `XDG_CACHE_HOME` of the processes tests run: a folder of this test run.
    public static let testCacheHome = FileManager.default.temporaryDirectory
        .appendingPathComponent("iconr-test-cache-\(ProcessInfo.processInfo.processIdentifier)").path

    /// SVG files below a corpus folder, sorted.
    public static func svgFiles(in folder: String) -> [URL] {
        let root = corpora.appendingPathComponent(folder)
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        let files = (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "svg" }
        return files.sorted { $0.path < $1.path }
    }

    public static func template(_ svg: String, name: String = "test") throws -> IconTemplate {
        try IconTemplate(name: name, bytes: Array(svg.utf8), path: "\(name).svg")
    }

    /// Runs a program and returns its exit status, stdout and stderr. A program still running
    /// after `timeout` seconds is killed (status -9): a hang fails its test instead of the run.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil,
                           directory: URL? = nil, timeout: Double = 120) throws -> (status: Int32, stdout: Data, stderr: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        // Commands under test use a disk cache of their own, never the user's.
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = testCacheHome
        process.environment = environment
        // Output goes to files, so that a chatty process can never block on a full pipe.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iconr-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        waitForExit(process, timeout: timeout)
        try out.close()
        try err.close()
        let status = process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
        return (status, try Data(contentsOf: outURL), try Data(contentsOf: errURL))
    }

    /// Waits for `process` to end; after `timeout` seconds kills it (SIGKILL) and returns false.
    @discardableResult
    public static func waitForExit(_ process: Process, timeout: Double = 120) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(2_000) }
        let ended = !process.isRunning
        if !ended { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return ended
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
        let (x, y, width, height) = (entry["x"] as! Int, entry["y"] as! Int, entry["width"] as! Int, entry["height"] as! Int)
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
