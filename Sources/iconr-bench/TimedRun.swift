import Glibc

/// Runs a program to its end with posix_spawn and waitpid and returns its wall time in
/// seconds: spawn to exit, with nothing of Foundation's `Process` in between (whose
/// `waitUntilExit` polls a run loop and added tens of milliseconds to short runs).
/// Its stdout and stderr go to the file `stdout` (iconr prints results on one and its
/// summary on the other).
func timedRun(_ executable: String, _ arguments: [String], stdout: String = "/dev/null") -> Double {
    var pid: pid_t = 0
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let start = ContinuousClock.now
    guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { fail("cannot run \(executable)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    guard status == 0 else { fail("\(executable) \(arguments.joined(separator: " ")) failed") }
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
