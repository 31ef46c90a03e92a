#!/usr/bin/env bash
# Tags a release of iconr after checking that its version strings agree:
#   scripts/release.sh VERSION          check, then tag VERSION (annotated, with its changelog)
#   scripts/release.sh --check VERSION  check only (CI runs this for the version in the source)
# The checks: VERSION is semantic (X.Y.Z); Sources/IconrCore/IconrVersion.swift says it (and so
# `iconr --version`); CHANGELOG.md has a "## VERSION" section, not empty; the README's .deb
# names carry it; and, to tag, the working tree is clean and no tag VERSION exists yet.
# Push the tag yourself (`git push origin VERSION`): SwiftPM finds releases by tag.
set -euo pipefail
cd "$(dirname "$0")/.."
check_only=no
if [ "${1:-}" = --check ]; then check_only=yes; shift; fi
version=${1:-}
fail() { echo "error: $*" >&2; exit 1; }
[ -n "$version" ] || fail "usage: scripts/release.sh [--check] VERSION"
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "'$version' is no semantic version (X.Y.Z)"
source_version=$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/IconrCore/IconrVersion.swift)
[ "$source_version" = "$version" ] ||
    fail "Sources/IconrCore/IconrVersion.swift says $source_version, not $version: change it first"
section=$(awk -v v="## $version" '$0 == v {on = 1; next} /^## / {on = 0} on' CHANGELOG.md)
[ -n "$(echo "$section" | tr -d '[:space:]')" ] || fail "CHANGELOG.md has no '## $version' section with text"
for file in README.md; do
    if grep -o 'iconr_[0-9][0-9.]*_' "$file" | grep -v "iconr_${version}_" >/dev/null; then
        fail "$file names a .deb of another version: $(grep -o 'iconr_[0-9][0-9.]*_' "$file" | sort -u | tr '\n' ' ')"
    fi
done
if [ "$check_only" = yes ]; then
    echo "release: $version checked (source, CHANGELOG.md, README.md)"
    exit 0
fi
[ -z "$(git status --porcelain)" ] || fail "the working tree has changes: commit them first"
! git rev-parse -q --verify "refs/tags/$version" >/dev/null || fail "tag $version exists"
printf 'iconr %s\n\n%s\n' "$version" "$section" | git tag -a "$version" -F -
echo "release: tagged $version at $(git rev-parse --short HEAD); push it with 'git push origin $version'"
