#!/usr/bin/env bash
# Prints the version being released: the crate's (Cargo.toml), which is also the Python
# package's (maturin reads it). Given a tag, fails unless the tag is v<that version>, so a tag
# cannot publish a version the sources do not carry.
#
#   scripts/release-version.sh [TAG]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)
[[ -n $version ]] || { echo "$0: no version in Cargo.toml" >&2; exit 1; }
if [[ $# -gt 0 && $1 != "v$version" ]]; then
  echo "$0: the tag is '$1' but Cargo.toml's version is $version: tag v$version, or change the version first" >&2
  exit 1
fi
echo "$version"
