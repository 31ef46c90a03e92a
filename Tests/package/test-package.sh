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

# The deployment kit: the systemd unit (valid, as systemd-analyze reads it), its settings as a
# conffile, the man page and the completions, all made from the binary's own tables.
unit="$root/usr/lib/systemd/system/iconr.service"
check "the package has the systemd unit" test -f "$unit"
check "the unit runs the installed binary" grep -q '^ExecStart=/usr/bin/iconr serve ' "$unit"
check "the settings are a conffile" bash -c "dpkg-deb -I '$deb' conffiles | grep -qx /etc/default/iconr"
check "the settings serve the bundled icons" grep -q '^ICONR_ARGS="--icons /usr/share/iconr/icons' "$root/etc/default/iconr"
# /etc/default files are shell by convention: sh reads the settings as systemd does.
check "the settings are valid sh" sh -c ". '$root/etc/default/iconr' && test \"\$ICONR_LISTEN\" = 127.0.0.1:8080 && test \"\$ICONR_ARGS\" = '--icons /usr/share/iconr/icons --request-log -'"
check "the unit reads the settings from /etc/default/iconr" grep -qx 'EnvironmentFile=-/etc/default/iconr' "$unit"
check "the unit has a log folder for a request log in a file" grep -qx 'LogsDirectory=iconr' "$unit"
check "the package reloads systemd after install and removal" bash -c "dpkg-deb -I '$deb' postinst | grep -q 'systemctl daemon-reload' && dpkg-deb -I '$deb' postrm | grep -q 'systemctl daemon-reload'"
check "the logrotate file is a conffile that reloads the service" bash -c "dpkg-deb -I '$deb' conffiles | grep -qx /etc/logrotate.d/iconr && grep -q 'systemctl reload iconr' '$root/etc/logrotate.d/iconr'"
# logrotate reads it as valid (.ci/packages installs logrotate).
check "logrotate reads the logrotate file" bash -c "logrotate -d '$root/etc/logrotate.d/iconr' >'$scratch/logrotate.out' 2>&1 && grep -q '/var/log/iconr/\*.log' '$scratch/logrotate.out' || { cat '$scratch/logrotate.out'; false; }"
check "the README and docs are in /usr/share/doc/iconr" bash -c "test -f '$root/usr/share/doc/iconr/README.md' && test -f '$root/usr/share/doc/iconr/CHANGELOG.md' && test -f '$root/usr/share/doc/iconr/docs/server.md' && test -f '$root/usr/share/doc/iconr/docs/images/catalog.png'"
check "the bundled icons are installed" test -f "$root/usr/share/iconr/icons/flag.svg"
if command -v systemd-analyze >/dev/null 2>&1; then
    # A copy whose ExecStart is the binary installed under the temporary root (systemd checks
    # that it exists); the rest as packaged.
    mkdir -p "$scratch/unit" && sed "s|=/usr/bin/iconr |=$installed |" "$unit" >"$scratch/unit/iconr.service"
    # systemd-analyze exits 0 for a setting it cannot parse, and says so: nothing said passes.
    check "systemd-analyze verifies the unit" bash -c "systemd-analyze verify --man=no '$scratch/unit/iconr.service' 2>'$scratch/verify.err' && test ! -s '$scratch/verify.err' || { cat '$scratch/verify.err'; false; }"
fi
check "the man page is there and reads" bash -c "zcat '$root/usr/share/man/man1/iconr.1.gz' | grep -q '^.SS serve' && man -l '$root/usr/share/man/man1/iconr.1.gz' 2>/dev/null | grep -q -- '--request-log'"
check "bash completion parses and knows serve's options" bash -c "bash -n '$root/usr/share/bash-completion/completions/iconr' && grep -q -- '--follow-links' '$root/usr/share/bash-completion/completions/iconr'"
check "zsh completion" grep -q '^#compdef iconr' "$root/usr/share/zsh/vendor-completions/_iconr"
check "fish completion" grep -q "__fish_seen_subcommand_from sprite" "$root/usr/share/fish/vendor_completions.d/iconr.fish"
# The unit's own command line, its variables as systemd would set them (the listen address
# a free port, the cache a scratch folder), from the installed binary: it serves, and stops 0.
unit_check() {
    local line args listen
    line=$(sed -n 's/^ExecStart=//p' "$unit")
    args=$(. "$root/etc/default/iconr" && echo "$ICONR_ARGS" | sed "s|/usr/share/|$root/usr/share/|g")
    line=${line//'${ICONR_LISTEN}'/127.0.0.1:0}
    line=${line//'${CACHE_DIRECTORY}'/$scratch/unit-cache}
    line=${line//'$ICONR_ARGS'/$args}
    line=${line//\/usr\/bin\/iconr/$installed}
    # shellcheck disable=SC2086
    "${plain[@]}" $line >"$scratch/unit.out" 2>"$scratch/unit.err" &
    local server=$! url="" tries=0
    while [ -z "$url" ] && [ $tries -lt 100 ]; do url=$(head -1 "$scratch/unit.out" 2>/dev/null); sleep 0.05; tries=$((tries + 1)); done
    python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/icons/flag@2x.png').read()" "$url" \
        && grep -q '"GET /icons/flag@2x.png" 200' "$scratch/unit.err" && kill -TERM $server && wait $server
}
check "the unit's command line serves and logs its requests" unit_check

# An upgrade over an older version, with the administrator's settings changed, run without a
# terminal (as apt in a script): no conffile prompt, the settings kept, the package configured.
upgrade_check() {
    local old="$scratch/old" older
    make --no-print-directory deb VERSION=0.0.1 >/dev/null 2>&1 || return 1
    older="iconr_0.0.1_$(dpkg --print-architecture).deb"
    mkdir -p "$old/var/lib/dpkg/info" "$old/var/lib/dpkg/updates" && touch "$old/var/lib/dpkg/status"
    dpkg --root="$old" --force-depends --force-script-chrootless -i "$older" </dev/null >/dev/null 2>&1 || return 1
    rm -f "$older"
    sed -i 's|^ICONR_LISTEN=.*|ICONR_LISTEN="0.0.0.0:9000"|' "$old/etc/default/iconr"
    dpkg --root="$old" --force-depends --force-script-chrootless -i "$deb" </dev/null >"$scratch/upgrade.out" 2>&1 ||
        { cat "$scratch/upgrade.out"; return 1; }
    grep -qx 'ICONR_LISTEN="0.0.0.0:9000"' "$old/etc/default/iconr" &&
        dpkg-query --admindir="$old/var/lib/dpkg" -W -f='${Status} ${Version}' iconr | grep -qx "install ok installed $version"
}
check "an upgrade keeps changed settings, without a terminal" upgrade_check

# make install into a staging root, and uninstall: the settings follow the prefix (/etc is
# the system's, and the .deb's), never outside DESTDIR.
check "make install" make --no-print-directory install DESTDIR="$scratch/staged" PREFIX=/usr/local >/dev/null
check "the installed iconr runs" test "$("${plain[@]}" "$scratch/staged/usr/local/bin/iconr" --version)" = "$version"
check "make install puts the unit, the man page and the settings" bash -c "test -f '$scratch/staged/usr/local/lib/systemd/system/iconr.service' && test -f '$scratch/staged/usr/local/share/man/man1/iconr.1.gz' && grep -q '/usr/local/share/iconr/icons' '$scratch/staged/usr/local/etc/default/iconr'"
check "PREFIX=/usr/local writes nothing in /etc" test ! -e "$scratch/staged/etc"
check "the unit reads the settings beside the prefix" grep -qx 'EnvironmentFile=-/usr/local/etc/default/iconr' "$scratch/staged/usr/local/lib/systemd/system/iconr.service"
check "make install PREFIX=/opt/x" make --no-print-directory install DESTDIR="$scratch/opt" PREFIX=/opt/x >/dev/null
check "PREFIX=/opt/x puts the settings in /opt/x/etc" bash -c "test -f '$scratch/opt/opt/x/etc/default/iconr' && test ! -e '$scratch/opt/etc'"
check "SYSCONFDIR overrides" make --no-print-directory install DESTDIR="$scratch/sys" PREFIX=/opt/x SYSCONFDIR=/etc/iconr-x >/dev/null
check "the settings go to SYSCONFDIR" bash -c "test -f '$scratch/sys/etc/iconr-x/default/iconr' && grep -qx 'EnvironmentFile=-/etc/iconr-x/default/iconr' '$scratch/sys/opt/x/lib/systemd/system/iconr.service'"
check "make uninstall" make --no-print-directory uninstall DESTDIR="$scratch/staged" PREFIX=/usr/local >/dev/null
check "uninstall removes it" test ! -e "$scratch/staged/usr/local/bin/iconr"
check "uninstall removes the unit and the man page" bash -c "test ! -e '$scratch/staged/usr/local/lib/systemd/system/iconr.service' && test ! -e '$scratch/staged/usr/local/share/man/man1/iconr.1.gz'"

# The release step's checks hold for the source's version (a version string left behind fails).
check "scripts/release.sh --check agrees with the source's version" bash scripts/release.sh --check "$version"
check "scripts/release.sh refuses another version" bash -c "! bash scripts/release.sh --check 99.0.0 2>/dev/null"

echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
