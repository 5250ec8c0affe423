#!/usr/bin/env bash
# Writes DIR/SHA256SUMS for every file in DIR (archives, wheels, the sdist) and checks it, as a
# user would with `sha256sum -c SHA256SUMS`. The release workflow attaches it to the release.
#
#   scripts/release-checksums.sh DIR
set -euo pipefail

dir=${1:?usage: $0 DIR}
cd "$dir"
rm -f SHA256SUMS
shopt -s nullglob
files=(*)
[[ ${#files[@]} -gt 0 ]] || { echo "$0: nothing to sum in $dir" >&2; exit 1; }
sha256sum -- "${files[@]}" >SHA256SUMS.tmp
mv SHA256SUMS.tmp SHA256SUMS
sha256sum --quiet -c SHA256SUMS
echo "== SHA256SUMS: ${#files[@]} files"
