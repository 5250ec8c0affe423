#!/usr/bin/env bash
# The runtime image, tested for real: builds docker/Dockerfile.binary around the static binary
# of scripts/static-build.sh with podman (Docker format, so HEALTHCHECK is kept; FROM scratch,
# so nothing is pulled), runs it and checks what a user relies on:
#   - the image's health check passes and reports the container healthy;
#   - the server runs as a non-root user (read from the host's /proc, not from the image);
#   - the startup log names loopback and the container's own address, never 0.0.0.0;
#   - queue URLs carry the host's port through a port mapping (host port != 9324);
#   - SIGTERM (podman stop) answers a parked long poll and the server exits 0 by itself;
#   - a message in the /data volume is kept across a restart and read by a new container.
#
#   scripts/image-test.sh [BINARY]   (default: scripts/static-build.sh's binary)
#
# Needs podman (CI installs it), nsenter and ss, as root: containers run with `--runtime runc`
# and lowered nofile and nproc limits, as podman works on the CI machine. It skips, saying why, only when podman
# cannot run a container here at all. Ends with "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-${STATIC_TARGET_DIR:-target/static}/x86_64-unknown-linux-gnu/release/localsqs}
image=localhost/localsqs:image-test
tag=$$
volume=localsqs-image-test-$tag
passed=0
work=$(mktemp -d "${TMPDIR:-/tmp}/localsqs-image-test.XXXXXX")
containers=()

# podman's messages (here: no systemd to time health checks, harmless) go to a log shown on
# failure.
pod() { podman "$@" 2>>"$work/podman.log"; }
pass() { passed=$((passed + 1)); echo "== ok: $*"; }
fail() {
  echo "== FAILED: $*"
  for c in "${containers[@]}"; do
    echo "-- podman logs $c:"
    podman logs "$c" 2>&1 | tail -30 || true
  done
  [[ -s $work/podman.log ]] && { echo "-- podman's messages:"; tail -20 "$work/podman.log"; }
  echo "$passed passed, 1 failed"
  exit 1
}
skip() {
  echo "== image test skipped: $*"
  echo "$passed passed, 0 failed, 1 skipped"
  exit 0
}
cleanup() {
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
  podman rmi -f "$image" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

command -v podman >/dev/null || skip "podman is not installed (.ci/run installs it with apt)"
[[ -x $bin ]] || fail "no binary at $bin (run scripts/static-build.sh first)"
if ! podman info >"$work/info" 2>&1; then
  skip "podman cannot work on this machine: $(tail -1 "$work/info")"
fi

# Containers here: runc, and limits the host allows (podman's defaults for open files and
# processes are above this machine's hard limits, and runc then cannot start the container).
limit() {
  local hard=$1 want=4096
  if [[ $hard != unlimited && $hard -lt $want ]]; then want=$hard; fi
  echo "$want:$want"
}
run_opts=(--runtime runc --ulimit "nofile=$(limit "$(ulimit -Hn)")" --ulimit "nproc=$(limit "$(ulimit -Hu)")")

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# A Query-protocol call through the host's port: prints the answer's body.
sqs() { curl -sS --max-time 30 "http://127.0.0.1:$1/$2"; }

# The two Dockerfiles describe one image from USER on.
if ! diff <(sed -n '/^USER /,$p' docker/Dockerfile) <(sed -n '/^USER /,$p' docker/Dockerfile.binary) >"$work/drift"; then
  cat "$work/drift"
  fail "docker/Dockerfile and docker/Dockerfile.binary differ from USER on"
fi
pass "docker/Dockerfile and docker/Dockerfile.binary describe the same runtime image"

# 1. Build: Docker format, no pull.
bash scripts/image-context.sh "$work/ctx" "amd64=$bin" >/dev/null
podman build -q --layers=false --format docker --pull=never --platform linux/amd64 \
  -f docker/Dockerfile.binary -t "$image" "$work/ctx" >"$work/build" 2>&1 \
  || { cat "$work/build"; fail "podman build"; }
size=$(podman image inspect -f '{{.Size}}' "$image")
health=$(podman image inspect -f '{{json .Config.Healthcheck}}' "$image")
[[ $health == *'--healthcheck'* ]] || fail "the image has no HEALTHCHECK: $health"
user=$(podman image inspect -f '{{.Config.User}}' "$image")
[[ $user == 65534:65534 ]] || fail "the image's user is '$user'"
pass "built $image ($((size / 1024 / 1024)) MB) with its HEALTHCHECK and USER 65534:65534"

pod volume create "$volume" >/dev/null

# start NAME HOST_PORT: runs a container on the volume, durable, with 9324 mapped to the host
# port; waits until the health check passes.
start() {
  local name=$1 port=$2 status
  containers+=("$name")
  set +e
  podman run -d --name "$name" "${run_opts[@]}" -p "127.0.0.1:$port:9324" \
    -v "$volume:/data" -e LOCALSQS_DATA_DIR=/data "$image" >"$work/run" 2>&1
  status=$?
  set -e
  [[ $status -eq 0 ]] || { cat "$work/run"; fail "podman run $name (exit $status)"; }
  wait_healthy "$name"
}
wait_healthy() {
  local name=$1
  for _ in $(seq 1 100); do
    if pod healthcheck run "$name" >/dev/null; then
      return 0
    fi
    [[ $(podman inspect -f '{{.State.Running}}' "$name") == true ]] || fail "$name exited"
    sleep 0.1
  done
  fail "$name never passed its health check"
}

# Can podman run a container here at all? The image's binary, printing its version: when podman
# or its OCI runtime refuses (exit 125, or 126 with the runtime's error), nothing below can run.
set +e
probe=$(podman run --rm "${run_opts[@]}" "$image" --version 2>&1)
status=$?
set -e
if [[ $status -eq 125 || ($status -eq 126 && $probe == *OCI*) ]]; then
  skip "podman cannot run containers on this machine: $(grep -v 'level=' <<<"$probe" | tail -1)"
fi
[[ $status -eq 0 && $probe == *"localsqs "* ]] || fail "the image's binary: $probe (exit $status)"
pass "a container runs: $(tail -1 <<<"$probe")"

# 2. Health, user, startup log.
port1=$(free_port)
while [[ $port1 == 9324 ]]; do port1=$(free_port); done
start c1-$tag "$port1"
state=$(podman inspect -f '{{.State.Health.Status}}' "c1-$tag")
[[ $state == healthy ]] || fail "podman reports the container '$state', not healthy"
pass "the health check passes and podman reports the container healthy"

pid=$(podman inspect -f '{{.State.Pid}}' "c1-$tag")
uid=$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")
gid=$(awk '/^Gid:/ {print $2}' "/proc/$pid/status")
[[ $uid == 65534 && $gid == 65534 ]] || fail "the server runs as uid $uid gid $gid"
pass "the server process runs as uid 65534, gid 65534, not root"

ip=$(podman inspect -f '{{.NetworkSettings.IPAddress}}' "c1-$tag")
logs=$(podman logs "c1-$tag" 2>&1)
want="localsqs is serving endpoint=http://127.0.0.1:9324 console=http://127.0.0.1:9324/_localsqs/ui/"
[[ $logs == *"$want"* ]] || fail "the startup log lacks '$want'"
if [[ -n $ip ]]; then
  [[ $logs == *"endpoint=http://$ip:9324 console=http://$ip:9324/_localsqs/ui/"* ]] \
    || fail "the startup log does not name the container's address $ip"
fi
[[ $logs != *"0.0.0.0"* ]] || fail "the startup log names 0.0.0.0"
pass "the startup log names http://127.0.0.1:9324 and http://${ip:-?}:9324 with the console, never 0.0.0.0"

# 3. Queue URLs through the port mapping.
resp=$(sqs "$port1" "?Action=CreateQueue&QueueName=kept")
url="http://127.0.0.1:$port1/000000000000/kept"
[[ $resp == *"<QueueUrl>$url</QueueUrl>"* ]] || fail "CreateQueue through host port $port1: $resp"
resp=$(sqs "$port1" "000000000000/kept?Action=SendMessage&MessageBody=kept-across-restarts")
[[ $resp == *"<MessageId>"* ]] || fail "SendMessage: $resp"
pass "queue URLs use the host's port ($url, container port 9324)"

# 4. SIGTERM answers a parked long poll. The poll is parked once its connection, inside the
# container, has received bytes and holds none unread (Recv-Q 0): the server read the request.
sqs "$port1" "?Action=CreateQueue&QueueName=parked" >/dev/null
curl -sS --max-time 30 -o "$work/poll" -w '%{http_code}' \
  "http://127.0.0.1:$port1/000000000000/parked?Action=ReceiveMessage&WaitTimeSeconds=20" \
  >"$work/poll.status" 2>"$work/poll.err" &
poll=$!
parked=no
for _ in $(seq 1 100); do
  if nsenter -t "$pid" -n ss -Htni state established '( sport = :9324 )' \
    | awk '/^[0-9]/ {unread = $1} /bytes_received:[1-9]/ && unread == 0 {f = 1} END {exit !f}'; then
    parked=yes
    break
  fi
  sleep 0.05
done
[[ $parked == yes ]] || fail "the long poll never reached the server"
pod stop -t 15 "c1-$tag" >/dev/null
set +e
wait "$poll"
poll_exit=$?
set -e
[[ $poll_exit -eq 0 ]] || fail "the parked long poll got no answer (curl exit $poll_exit: $(cat "$work/poll.err"))"
[[ $(cat "$work/poll.status") == 200 ]] || fail "the parked long poll got HTTP $(cat "$work/poll.status")"
grep -q "<ReceiveMessageResponse" "$work/poll" || fail "the parked long poll's answer: $(cat "$work/poll")"
code=$(podman inspect -f '{{.State.ExitCode}}' "c1-$tag")
[[ $code == 0 ]] || fail "the server exited with $code after SIGTERM (137: killed after the grace period)"
pass "podman stop: the parked long poll got a 200 ReceiveMessageResponse and the server exited 0"

# 5. The volume keeps the message across a restart, and for a new container.
receive_kept() {
  local port=$1 resp
  resp=$(sqs "$port" "000000000000/kept?Action=ReceiveMessage&VisibilityTimeout=0")
  [[ $resp == *"<Body>kept-across-restarts</Body>"* ]] || fail "after $2, ReceiveMessage: $resp"
}
pod start "c1-$tag" >/dev/null
wait_healthy "c1-$tag"
receive_kept "$port1" "podman restart"
pass "the message is kept across a restart of the container"
pod stop -t 15 "c1-$tag" >/dev/null
pod rm "c1-$tag" >/dev/null
port2=$(free_port)
start c2-$tag "$port2"
receive_kept "$port2" "a new container on the same volume"
pass "a new container on the same /data volume reads the message"
pod stop -t 15 "c2-$tag" >/dev/null

echo "$passed passed, 0 failed"
