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
