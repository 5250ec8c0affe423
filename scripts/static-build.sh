#!/usr/bin/env bash
# The Docker image's build steps, without Docker: build localsqs as a static binary, prove it
# is static, start it, and check that it answers (scripts/smoke-test.sh). CI runs this; no
# Docker engine is needed. scripts/wheel-test.sh and scripts/image-test.sh reuse its build.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-gnu
export CARGO_TARGET_DIR="${STATIC_TARGET_DIR:-target/static}"
RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --locked --bin localsqs --target "$target"
bin="$CARGO_TARGET_DIR/$target/release/localsqs"

echo "== binary: $bin ($(stat -c %s "$bin") bytes)"
if ldd "$bin" 2>&1 | grep -qE "not a dynamic executable|statically linked"; then
  echo "== static: yes"
else
  echo "== static: NO"; ldd "$bin"; exit 1
fi
if readelf -l "$bin" | grep -q INTERP; then
  echo "== has a program interpreter: not static"; exit 1
fi

bash scripts/smoke-test.sh "$bin"
echo "1 passed, 0 failed"
