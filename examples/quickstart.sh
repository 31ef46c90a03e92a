#!/usr/bin/env bash
# Installs what iconr and its tests need (Debian packages in .ci/packages, and MapLibre
# Native's pymgl from PyPI for the sprite test), builds iconr, and renders the
# bundled flag in red, yellow and #800080 at 1x and 2x into out/flags.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
while read -r package; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done < .ci/packages
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    echo "Installing ${missing[*]}"
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python3 -c "import pymgl" 2>/dev/null || python3 -m pip install -q --disable-pip-version-check pymgl==0.5.0
swift build -c release --static-swift-stdlib
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
