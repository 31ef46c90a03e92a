#!/usr/bin/env bash
# Depends on iconr by version, as a project of one's own does: a clone of this checkout's
# commit, tagged with iconr's version (0.1.0), and examples/library with its path dependency
# rewritten to `.package(url: "file://<clone>", from: "<version>")`. SwiftPM refuses such a
# dependency if a target has unsafe flags. Builds and runs the example: four 48x48 flags, the
# last through the style engine (the IconrStyle product), colored by its feature.
# Run by .ci/run. (It builds the committed state: uncommitted changes are not in the clone.)
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/IconrCore/IconrVersion.swift)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone -q . "$scratch/iconr"
git -C "$scratch/iconr" tag -f "$version" >/dev/null
mkdir "$scratch/app"
cp -R examples/library/Package.swift examples/library/Sources "$scratch/app/"
sed -i "s|\.package(name: \"iconr\", path: \"\.\./\.\.\")|.package(url: \"file://$scratch/iconr\", from: \"$version\")|" \
    "$scratch/app/Package.swift"
grep -q "from: \"$version\"" "$scratch/app/Package.swift" || { echo "FAILED: the dependency was not rewritten"; exit 1; }
(cd "$scratch/app" && swift build -q 2>&1) || { echo "FAILED: a package depending on iconr $version does not build"; exit 1; }
mkdir "$scratch/out"
"$scratch/app/.build/debug/flag-icons" icons "$scratch/out" | tee "$scratch/printed"
# The style's flag takes its color from the feature (gold), as its key says.
grep -q "flag-from-style@2x.png flag?flag_color=#ffd700@2x 48x48" "$scratch/printed" \
    || { echo "FAILED: the style's flag is not flag?flag_color=#ffd700@2x"; exit 1; }
for name in flag-800080 flag-teal flag-ff8000 flag-from-style; do
    pngcheck -q "$scratch/out/$name@2x.png" || { echo "FAILED: $name@2x.png"; exit 1; }
    size=$(python3 -c "import struct,sys; print(struct.unpack('>II', open(sys.argv[1],'rb').read()[16:24]))" \
        "$scratch/out/$name@2x.png")
    [ "$size" = "(48, 48)" ] || { echo "FAILED: $name@2x.png is $size"; exit 1; }
done
echo "dependency: examples/library builds against iconr $version by version and draws its flags, one through the style engine"
