import Glibc

// Nothing but a Swift program's start: its runtime's constructors and the loader's work on a
// statically linked standard library. `make bench` builds it as it builds iconr, and
// `iconr-bench render` sets an `iconr` cache hit beside it.
_exit(0)
