#!/usr/bin/env bash
# Builds the .deb and `make install`, installs each into a temporary root, and runs the
# installed iconr from there, with an environment that has no Swift toolchain on PATH:
# --version, a render compared byte for byte with the in-tree build's, the package metadata.
# Run by .ci/run.
set -uo pipefail
cd "$(dirname "$0")/../.."
passed=0 failed=0
check() { # check NAME COMMAND...
    if "${@:2}"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $1"; fi
}
make --no-print-directory deb >/dev/null 2>&1 || { echo "FAILED: make deb"; echo "0 passed, 1 failed"; exit 1; }
version=$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/IconrCore/IconrVersion.swift)
deb="iconr_${version}_$(dpkg --print-architecture).deb"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# dpkg itself installs the package into an empty root (dependencies are this machine's).
root="$scratch/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status"
check "dpkg installs the package" dpkg --root="$root" --force-depends --force-script-chrootless -i "$deb" >/dev/null 2>&1
check "the Depends name the runtime libraries" bash -c "dpkg-deb -f '$deb' Depends | grep -q 'librsvg2-2.*libcairo2.*libpng16-16.*libdeflate0'"
installed="$root/usr/bin/iconr"
check "the binary is installed" test -x "$installed"
check "the binary is stripped" bash -c "! readelf -S '$installed' | grep -q '\.symtab'"
check "the binary needs no Swift library" bash -c "! readelf -d '$installed' | grep -q 'libswift'"
# The Makefile links libstdc++, libgcc, libpng, zlib and libdeflate in (loading the shared
# ones was most of a start).
check "the binary needs no shared libstdc++" bash -c "! readelf -d '$installed' | grep -q 'libstdc++'"
check "the binary needs no shared libgcc_s, libpng, zlib or libdeflate" bash -c "! readelf -d '$installed' | grep -E 'NEEDED' | grep -qE 'libgcc_s|libpng|libz|libdeflate'"
# Where the toolchain has lld, the Makefile links with it and packs the relative
# relocations (DT_RELR): the loader's part of every start.
if command -v ld.lld >/dev/null 2>&1; then
    check "the relative relocations are packed (DT_RELR)" bash -c "readelf -d '$installed' | grep -q '(RELR)'"
fi
# No RUNPATH: the Swift libraries are in the binary, and $ORIGIN had every start look for
# libc and libm in 20 folders beside it first.
check "the binary has no RPATH or RUNPATH" bash -c "! readelf -d '$installed' | grep -qE 'RPATH|RUNPATH'"
# Swift's regex engine (_StringProcessing, which `firstRange(of:)`, `contains(_:)` and
# `split(separator:)` of a string also pull in) added 3,100 relocations every start applied.
check "the binary links no regex engine" bash -c "! nm '.build/release/iconr' | grep -q _StringProcessing"
plain=(env -i PATH=/usr/bin:/bin HOME="$scratch")
check "--version" test "$("${plain[@]}" "$installed" --version)" = "$version"
check "a render from the installed binary" "${plain[@]}" "$installed" render icons/flag.svg -p flag_color=#800080 -s 2 \
    --no-cache -o "$scratch/flag.png" >/dev/null
check "the PNG is sound" pngcheck -q "$scratch/flag.png"
# The flag at 2x is 48x48; the cloth (at 26,16) is the parameter's color.
pixel() { python3 -c "
import struct,zlib,sys
data=open(sys.argv[1],'rb').read()
print(struct.unpack('>II',data[16:24]))" "$1"; }
check "the render is 48x48" test "$(pixel "$scratch/flag.png")" = "(48, 48)"
check "the render equals the in-tree build's" bash -c "'.build/release/iconr' render icons/flag.svg -p flag_color=#800080 -s 2 \
    --no-cache -o '$scratch/reference.png' >/dev/null && cmp -s '$scratch/flag.png' '$scratch/reference.png'"

# The installed binary serves: a variant over HTTP equals the render above, byte for byte.
serve_check() {
    "${plain[@]}" "$installed" serve --icons icons --listen 127.0.0.1:0 --no-cache >"$scratch/serve.out" 2>"$scratch/serve.err" &
    local server=$! url="" tries=0
    while [ -z "$url" ] && [ $tries -lt 100 ]; do url=$(head -1 "$scratch/serve.out" 2>/dev/null); sleep 0.05; tries=$((tries + 1)); done
    python3 -c "import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())" \
        "$url/icons/flag@2x.png?flag_color=%23800080" >"$scratch/served.png"
    kill -TERM $server && wait $server && cmp -s "$scratch/served.png" "$scratch/reference.png"
}
check "the installed iconr serves the same PNG over HTTP" serve_check
check "the Depends name libmicrohttpd12 for iconr serve" bash -c "dpkg-deb -f '$deb' Depends | grep -q 'libmicrohttpd12'"

# make install into a staging root, and uninstall.
check "make install" make --no-print-directory install DESTDIR="$scratch/staged" PREFIX=/usr/local >/dev/null
check "the installed iconr runs" test "$("${plain[@]}" "$scratch/staged/usr/local/bin/iconr" --version)" = "$version"
check "make uninstall" make --no-print-directory uninstall DESTDIR="$scratch/staged" PREFIX=/usr/local >/dev/null
check "uninstall removes it" test ! -e "$scratch/staged/usr/local/bin/iconr"

echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
