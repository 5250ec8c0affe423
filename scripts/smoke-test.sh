#!/usr/bin/env bash
# Starts a localsqs binary on a free loopback port with a fresh data directory and checks that
# it answers its health check and a CreateQueue, and stops cleanly on SIGTERM.
# scripts/static-build.sh runs it on the static binary; the release workflow on each binary it
# builds where it can run it (Linux, macOS).
#
#   scripts/smoke-test.sh BINARY
set -euo pipefail

bin=${1:?usage: $0 BINARY}
python=${PYTHON:-$(command -v python3 || command -v python)}
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
data=$(mktemp -d)
"$bin" --port "$port" --data-dir "$data" >"$data.log" 2>&1 &
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
grep -q "localsqs is serving endpoint=http://127.0.0.1:$port console=http://127.0.0.1:$port/_localsqs/ui/" "$data.log" \
  || { echo "== the startup log does not name the endpoint and the console:"; cat "$data.log"; exit 1; }
echo "== startup log: ok"
kill -TERM $pid
wait $pid
echo "== clean shutdown: ok"
