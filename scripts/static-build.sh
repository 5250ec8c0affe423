#!/usr/bin/env bash
# The Docker image's build steps, without Docker: build localsqs as a static binary, prove it
# is static, start it, and check that it answers. CI runs this; no Docker engine is needed.
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

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
data=$(mktemp -d)
"$bin" --port "$port" --data-dir "$data" > "$data.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -rf "$data" "$data.log"' EXIT
for _ in $(seq 1 100); do
  if "$bin" --healthcheck --port "$port"; then break; fi
  sleep 0.05
done
"$bin" --healthcheck --port "$port" || { echo "== health check failed"; cat "$data.log"; exit 1; }
echo "== health check: ok"
resp=$(curl -s "http://127.0.0.1:$port/?Action=CreateQueue&QueueName=static-check")
echo "$resp" | grep -q "<QueueUrl>http://127.0.0.1:$port/000000000000/static-check</QueueUrl>" \
  || { echo "== CreateQueue failed: $resp"; exit 1; }
echo "== CreateQueue: ok"
kill -TERM $pid
wait $pid
echo "== clean shutdown: ok"
echo "1 passed, 0 failed"
