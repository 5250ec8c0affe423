#!/usr/bin/env bash
# Packs one release binary for download: localsqs-<version>-<target>.tar.gz (a .zip for Windows)
# holding the binary, README.md and docs/install.md, into OUT. The release workflow runs it for
# every target; .ci/run for the static Linux binary.
#
#   scripts/release-archive.sh BINARY TARGET OUT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

bin=${1:?usage: $0 BINARY TARGET OUT}
target=${2:?usage: $0 BINARY TARGET OUT}
out=${3:?usage: $0 BINARY TARGET OUT}
version=$(bash "$root/scripts/release-version.sh")
name=localsqs-$version-$target
python=${PYTHON:-$(command -v python3 || command -v python)}

[[ -f $bin ]] || { echo "$0: no binary at $bin" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
exe=localsqs
[[ $target == *windows* ]] && exe=localsqs.exe
cp "$bin" "$stage/$name/$exe"
chmod 0755 "$stage/$name/$exe"
cp "$root/README.md" "$root/docs/install.md" "$stage/$name/"
if [[ $target == *windows* ]]; then
  archive=$out/$name.zip
  (cd "$stage" && "$python" -m zipfile -c "$archive" "$name")
else
  archive=$out/$name.tar.gz
  tar -C "$stage" -czf "$archive" "$name"
fi
echo "$archive"
