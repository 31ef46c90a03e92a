import Glibc
import IconrSystem

// iconr-crash-probe MODE: crashes as set up by `CrashSignals.endProcessAtOnce` (the sprite
// build's child, the render workers), for the tests to see how each one ends.
//   own      a trap in iconr's own code (an index out of range): exits with ownFaultStatus
//   abort    abort(), as a Rust panic in librsvg ends: dies by SIGABRT
//   library  a bad access inside the C library: dies by SIGSEGV
CrashSignals.endProcessAtOnce()
let mode = CommandLine.arguments.dropFirst().first ?? ""
// Values the compiler cannot know, so that no check is decided at build time.
let nowhere = CommandLine.arguments.count * 8
switch mode {
case "own":
    let empty = [Int](repeating: 0, count: CommandLine.arguments.count - 2)
    print(empty[nowhere])
case "abort":
    abort()
case "library":
    if let bad = UnsafePointer<CChar>(bitPattern: nowhere) { print(strlen(bad)) }
default:
    print("usage: iconr-crash-probe own|abort|library")
}
exit(2)
