#!/usr/bin/env bash
# Installs what the command line needs, and nothing else (librsvg and cairo, which iconr opens
# when it first renders; libpng's and libdeflate's headers to build; libmicrohttpd for
# `iconr serve`; make), builds iconr (`make`: the Makefile's release build), and renders the bundled flag in red, yellow and #800080 at
# 1x and 2x into out/flags. The test tools (Chromium, MapLibre, nginx, ...) are
# .ci/install's, which `swift test` needs.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
missing=()
for package in librsvg2-2 libcairo2 libpng-dev libdeflate-dev libmicrohttpd12 make; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "Installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The command line only: the benchmarks (iconr-bench) use Foundation, whose static library
# prints a link warning of its own.
make --no-print-directory
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
echo "Run iconr as $(pwd)/$iconr (try '$iconr --help'); 'sudo make install' puts it on PATH as iconr."
