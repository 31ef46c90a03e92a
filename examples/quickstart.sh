#!/usr/bin/env bash
# Installs what iconr and its tests need (.ci/install: Debian packages in .ci/packages, and
# MapLibre Native's pymgl from PyPI for the sprite tests), builds iconr, and renders the
# bundled flag in red, yellow and #800080 at 1x and 2x into out/flags.
set -euo pipefail
cd "$(dirname "$0")/.."

bash .ci/install
# The command line only: the benchmarks (iconr-bench) use Foundation, whose static library
# prints a link warning of its own.
swift build -c release --static-swift-stdlib --product iconr
iconr=.build/release/iconr
out=out/flags
mkdir -p "$out"
for color in red yellow '#800080'; do
    name="flag-${color#\#}"
    "$iconr" render icons/flag.svg --param "flag_color=$color" -o "$out/$name.png" >/dev/null
    "$iconr" render icons/flag.svg --param "flag_color=$color" --scale 2 -o "$out/$name@2x.png" >/dev/null
done
echo "Rendered $(ls "$out" | wc -l | tr -d ' ') flags into $(pwd)/$out:"
ls "$out"
