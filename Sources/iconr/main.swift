import Glibc
import IconrCLI

// `_exit`: everything is written with unbuffered writes by now, and skipping exit handlers
// and teardown saves milliseconds on every run.
_exit(CLI.main(Array(CommandLine.arguments.dropFirst())))
