#!/usr/bin/env bash
# Builds the Python wheel, which carries the localsqs binary, for one Rust target with maturin
# (python/pyproject.toml): the release workflow runs it on every platform, scripts/wheel-test.sh
# for the static Linux binary. RUSTFLAGS and CARGO_TARGET_DIR pass through to cargo; MATURIN
# names the maturin to run (default: the one on PATH, pinned by python/requirements-build.txt).
#
#   scripts/build-wheel.sh OUT TARGET [PLATFORM_TAG ...]
#   scripts/build-wheel.sh dist x86_64-unknown-linux-musl manylinux2014 musllinux_1_2
#
# A static musl binary runs on any Linux, so its wheel carries both a manylinux and a
# musllinux tag (maturin allows the pair only for musl targets); other targets take maturin's
# own tag when none is given.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

out=${1:?usage: $0 OUT TARGET [PLATFORM_TAG ...]}
target=${2:?usage: $0 OUT TARGET [PLATFORM_TAG ...]}
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
compat=()
[[ $# -gt 0 ]] && compat=(--compatibility "$@")
cd "$root/python"
"${MATURIN:-maturin}" build --release --locked --target "$target" "${compat[@]}" --out "$out"
