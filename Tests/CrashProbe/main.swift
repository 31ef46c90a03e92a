import Glibc
import Iconr
import IconrCLI
import IconrSystem

// iconr-crash-probe MODE: crashes of each kind, under each of iconr's crash handlers, for
// the tests to see how each one is reported (CrashAttributionTests). The kinds:
//   own      a trap in iconr's own code (an index out of range)
//   abort    abort(), as a Rust panic in librsvg ends
//   library  a bad access inside the C library (strlen)
// as MODE alone, set up as a render worker is (`CrashSignals.endProcessAtOnce`); as
// `guarded-KIND`, under `CrashGuard` for a file probe.svg (as `iconr render`); as
// `supervised-KIND`, while rendering probe.svg in a build child that `Supervisor` watches
// (as `iconr sprite`): the next attempt prints the reason probe.svg failed and exits 0.
let mode = CommandLine.arguments.dropFirst().first ?? ""
// A value the compiler cannot know, so that no check is decided at build time.
let nowhere = CommandLine.arguments.count * 8

func crash(_ kind: Substring) {
    switch kind {
    case "own":
        let empty = [Int](repeating: 0, count: CommandLine.arguments.count - 2)
        print(empty[nowhere])
    case "abort":
        abort()
    case "library":
        if let bad = UnsafePointer<CChar>(bitPattern: nowhere) { print(strlen(bad)) }
    default:
        break
    }
}

let parts = mode.split(separator: "-", maxSplits: 1)
switch (parts.count == 2 ? parts[0] : "", parts.last ?? "") {
case ("", let kind):
    CrashSignals.endProcessAtOnce()
    crash(kind)
case ("guarded", let kind):
    exit(
        CrashGuard.run(file: "probe.svg", timeout: 10, console: Console()) { _ in
            crash(kind)
            return 2
        })
case ("supervised", let kind):
    exit(
        Supervisor.runBuild(timeout: 10, console: Console()) { recovery, console in
            if let reason = recovery.failed["probe.svg"] {
                console.error("probe.svg: " + reason)
                return 0
            }
            recovery.willRender?("probe.svg")
            crash(kind)
            return 2
        })
default:
    break
}
print("usage: iconr-crash-probe [guarded-|supervised-]own|abort|library")
exit(2)
