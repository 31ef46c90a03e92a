import Foundation
import Glibc
import IconrSystem

/// Runs a program to its end with posix_spawn and waitpid and returns its wall time in
/// seconds: spawn to exit, with nothing of Foundation's `Process` in between (whose
/// `waitUntilExit` polls a run loop and added tens of milliseconds to short runs).
/// Its stdout and stderr go to the file `stdout` (iconr prints results on one and its
/// summary on the other).
func timedRun(_ executable: String, _ arguments: [String], stdout: String = "/dev/null") -> Double {
    let start = ContinuousClock.now
    let ended = Result { () throws(SystemError) -> Termination in
        let pid = try ChildProcess.spawn(
            executable, arguments,
            fileActions: [
                .open(stdout, flags: O_WRONLY | O_CREAT | O_TRUNC, as: 1),
                .duplicate(FileDescriptor(rawValue: 1), as: 2),
            ])
        return try ChildProcess.wait(for: pid)
    }
    switch ended {
    case .success(.exited(0)): break
    case .success: fail("\(executable) \(arguments.joined(separator: " ")) failed")
    case .failure(let error): fail("cannot run \(executable): \(error)")
    }
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// One timed run: wall and CPU seconds, and the page faults it took (minor and major).
typealias TimedSample = (wall: Double, cpu: Double, faults: Int)

/// `timedRun`, and the CPU seconds (user + system) and page faults of the run: its own and
/// those of the processes it waited for (`iconr render` of many icons renders in a child).
func timedRunWithCPU(_ executable: String, _ arguments: [String], stdout: String = "/dev/null") -> TimedSample {
    func children() -> (cpu: Double, faults: Int) {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return (cpu, usage.ru_minflt + usage.ru_majflt)
    }
    let before = children()
    let wall = timedRun(executable, arguments, stdout: stdout)
    let after = children()
    return (wall, after.cpu - before.cpu, after.faults - before.faults)
}

/// Builds `Benchmarks/<name>.c` (a C program doing the same work with raw librsvg, cairo
/// and libpng) into `folder`; nil when there is no compiler or librsvg2-dev.
func compileFloorProgram(_ name: String, into folder: String) -> String? {
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    let source = repository.appendingPathComponent("Benchmarks/\(name).c").path
    let binary = folder + "/" + name
    let command =
        "cc -O2 -o '\(binary)' '\(source)' $(pkg-config --cflags --libs librsvg-2.0 cairo libpng) -lm -pthread"
    let status = Result { () throws(SystemError) -> Termination in
        try ChildProcess.wait(for: ChildProcess.spawn("/bin/sh", ["-c", command + " 2>/dev/null"]))
    }
    guard case .success(.exited(0)) = status else { return nil }
    return binary
}
