#!/usr/bin/env bash
# Real-client compatibility suite for localsqs (GitHub issue #7). See tests/compat/README.md.
#
#   bash tests/compat/run.sh
#
# Builds the server (cargo build --release), installs every pinned client (three Python
# virtualenvs, npm ci, Debian packages for the Go, PHP and Ruby SDKs, and builds the Go clients
# from Debian's sources and from the Go module proxy, and, with Maven, the Java clients of java/),
# starts the server on a free port, runs each client's scenario against it, stops the server,
# and prints one PASS/FAIL line per client and a closing "N passed, M failed" line. Exits
# non-zero if any client failed.
#
# Needs python3 (with venv and pip), node + npm, cargo, and java + mvn for the Java clients
# (Maven resolves them from Maven Central into ~/.m2 on the first run); on Debian, missing packages are
# installed with apt-get (as root). Environment knobs:
#   COMPAT_CLIENTS="boto3-current js-v3"  run only these clients
#   COMPAT_KEEP_LOG=1                     keep the server log even when everything passed
#   RUST_LOG=debug                        server log level (default info)
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
ALL_CLIENTS=(boto3-current boto3-query awscli js-v3 js-v2 sqs-consumer sqs-producer go-v1 go-v2 go-v2-current
  go-v2-proxy-query php-asyncaws ruby-v1 boto2 aiobotocore java-sdk2 java-sdk2-async java-sdk2-query
  spring-cloud-aws jms boto3-faults boto3-faults-query boto3-scopes sigv4 init-hooks
  sns-boto3 sns-awscli sns-js-v3 sns-go-v1)
read -r -a CLIENTS <<<"${COMPAT_CLIENTS:-${ALL_CLIENTS[*]}}"
T_START=$SECONDS

WORK="$(mktemp -d "${TMPDIR:-/tmp}/localsqs-compat.XXXXXX")"
SERVER_LOG="$WORK/server.log"
SERVER_PID=""
SETUP_PIDS=()

log() { printf '%s\n' "$*"; }

stop_server() {
  [ -n "$SERVER_PID" ] || return 0
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null
    for _ in $(seq 1 100); do
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
      log "server did not stop on SIGTERM within 10s; killing it"
      kill -KILL "$SERVER_PID" 2>/dev/null
    fi
  fi
  wait "$SERVER_PID" 2>/dev/null
  SERVER_PID=""
}

cleanup() {
  stop_server
  for pid in "${SETUP_PIDS[@]}"; do
    kill "$pid" 2>/dev/null
  done
  if [ -n "${KEEP_WORK:-}" ] || [ -n "${COMPAT_KEEP_LOG:-}" ]; then
    log "logs kept in $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The clients must see only what the scenarios give them: no profile, endpoint or region from the
# environment or ~/.aws, no proxy for the loopback server, no SDK banners.
while IFS= read -r var; do unset "$var"; done < <(compgen -e | grep '^AWS_')
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
export AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE=1
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"
export PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

wants() { # wants CLIENT... : true if any of them is selected
  local c w
  for c in "$@"; do
    for w in "${CLIENTS[@]}"; do [ "$c" = "$w" ] && return 0; done
  done
  return 1
}

hash_of() { cat "$@" | "$PYTHON" -c 'import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())'; }

# setup_venv NAME REQUIREMENTS: (re)creates tests/compat/.venv/NAME unless it was already built
# from the same requirements with the same interpreter.
setup_venv() {
  local name="$1" req="$2" dir="$HERE/.venv/$1"
  local stamp
  stamp="$(hash_of "$req") $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"
  if [ -x "$dir/bin/python" ] && [ "$(cat "$dir/.compat-stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "venv $name: up to date"
    return 0
  fi
  rm -rf "$dir"
  mkdir -p "$HERE/.venv"
  if ! "$PYTHON" -m venv "$dir"; then
    # Debian's python3 without python3-venv: fall back to virtualenv from PyPI.
    echo "python3 -m venv failed; using virtualenv"
    rm -rf "$dir" "$HERE/.venv/.virtualenv"
    "$PYTHON" -m pip install -q --target "$HERE/.venv/.virtualenv" virtualenv==20.26.6 || return 1
    PYTHONPATH="$HERE/.venv/.virtualenv" "$PYTHON" -m virtualenv -q "$dir" || return 1
  fi
  "$dir/bin/python" -m pip install -q --no-input --disable-pip-version-check -r "$req" || return 1
  "$dir/bin/python" -m pip check || return 1
  echo "$stamp" >"$dir/.compat-stamp"
  echo "venv $name: installed"
}

setup_npm() {
  local stamp
  stamp="$(hash_of "$HERE/package.json" "$HERE/package-lock.json") $(node --version)"
  if [ -d "$HERE/node_modules" ] && [ "$(cat "$HERE/node_modules/.compat-stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "node_modules: up to date"
    return 0
  fi
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error --omit=dev) || return 1
  echo "$stamp" >"$HERE/node_modules/.compat-stamp"
  echo "node_modules: installed"
}

# Debian packages each client needs (installed by setup_debian when missing).
debian_packages_for() {
  case "$1" in
    go-v1 | go-v2) echo golang-go golang-github-aws-aws-sdk-go-dev golang-github-aws-aws-sdk-go-v2-dev ;;
    php-asyncaws) echo php-cli php-async-aws-sqs ;;
    ruby-v1) echo ruby ruby-aws-sdk ;;
    boto2) echo python3 python3-boto ;;
    sns-go-v1) echo golang-go golang-github-aws-aws-sdk-go-dev ;;
  esac
}

# setup_debian PKG...: installs the packages that are not installed yet (apt-get update once,
# then apt-get install --no-install-recommends), and prints the version of each.
setup_debian() {
  local missing=() pkg
  if ! command -v dpkg-query >/dev/null; then
    echo "no dpkg-query: these clients need Debian packages ($*)"
    return 1
  fi
  for pkg in "$@"; do
    [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ] || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install --no-install-recommends ${missing[*]})"
      return 1
    fi
    echo "installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || return 1
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
  fi
  for pkg in "$@"; do
    echo "debian: $(dpkg-query -W -f='${Package} ${Version}' "$pkg")"
  done
}

# The Go clients: one binary (go/*.go) built in GOPATH mode against Debian's packaged sources
# in /usr/share/gocode (no go.mod, no module proxy), with its build cache under target/.
GO_OUT="$ROOT/target/compat-go"
GO_BIN="$GO_OUT/localsqs-compat-go"
setup_go() {
  local go=go
  [ -x /usr/lib/go/bin/go ] && go=/usr/lib/go/bin/go # Debian's Go, matching its packaged sources
  mkdir -p "$GO_OUT"
  "$go" version || return 1
  (cd "$HERE/go" && env GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= \
    GOTOOLCHAIN=local GOTELEMETRY=off CGO_ENABLED=0 GOCACHE="$GO_OUT/cache" \
    "$go" build -o "$GO_BIN" .) || return 1
  echo "go client built: $GO_BIN"
}

# The Java clients: the scenario classes of java/compat (and java/sdk-query, the same SDK
# scenario compiled against a Query-era SDK), built with Maven, then run with plain `java -cp`.
# Maven works offline (-o) when ~/.m2 already holds everything, and resolves from Maven Central
# otherwise; a stamp of java/'s sources skips the build when nothing changed.
JAVA_DIR="$ROOT/java"
JAVA_CP_FILE=target/compat-classpath.txt
setup_java() {
  local stamp
  command -v mvn >/dev/null && command -v java >/dev/null || { echo "the Java clients need java and mvn on PATH"; return 1; }
  java -version 2>&1 | head -n 1
  stamp="$(cd "$JAVA_DIR" && find . -path '*/target' -prune -o -type f -print | LC_ALL=C sort | xargs cat | hash_of) $(java -version 2>&1 | head -n 1)"
  if [ -s "$JAVA_DIR/compat/$JAVA_CP_FILE" ] && [ -s "$JAVA_DIR/sdk-query/$JAVA_CP_FILE" ] &&
    [ "$(cat "$JAVA_DIR/compat/target/.compat-stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "java clients: up to date"
    return 0
  fi
  local args=(-q -B -Dstyle.color=never -f "$JAVA_DIR/pom.xml" -pl compat,sdk-query -am -Dmaven.test.skip=true
    -Dspotless.check.skip=true package dependency:build-classpath
    -Dmdep.outputFile="$JAVA_CP_FILE" -Dmdep.includeScope=runtime)
  if ! mvn -o "${args[@]}" >"$WORK/setup-java-offline.log" 2>&1; then
    echo "mvn -o could not build offline; resolving from Maven Central"
    mvn "${args[@]}" || return 1
  fi
  echo "$stamp" >"$JAVA_DIR/compat/target/.compat-stamp"
  echo "java clients: built"
}

# The Go clients from the Go module proxy: the same sources built in module mode with
# -tags modproxy, by the machine's own Go (not Debian's 1.19), twice: go.mod/go.sum pin the
# current aws-sdk-go-v2 (JSON), query.mod/query.sum service/sqs 1.26.0, the last Query release.
# Modules go to the Go module cache (GOMODCACHE, by default ~/go/pkg/mod), builds to Go's build
# cache (GOCACHE, by default ~/.cache/go-build).
GO_MOD_CURRENT="$GO_OUT/localsqs-compat-go-current"
GO_MOD_QUERY="$GO_OUT/localsqs-compat-go-proxy-query"
setup_gomod() {
  mkdir -p "$GO_OUT"
  go version || return 1
  # The default build cache and CGO_ENABLED=0, as .ci/run's go/ step: that step then finds
  # aws-sdk-go-v2 (the same versions) compiled already.
  local env=(env GO111MODULE=on GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local GOTELEMETRY=off
    CGO_ENABLED=0)
  if wants go-v2-current; then
    (cd "$HERE/go" && "${env[@]}" go build -tags modproxy -o "$GO_MOD_CURRENT" .) || return 1
    echo "go client built: $GO_MOD_CURRENT"
  fi
  if wants go-v2-proxy-query; then
    (cd "$HERE/go" && "${env[@]}" go build -modfile=query.mod -tags modproxy -o "$GO_MOD_QUERY" .) || return 1
    echo "go client built: $GO_MOD_QUERY"
  fi
}

# The SNS Go client (sns/go/), built the same way into its own binary.
GO_SNS_BIN="$GO_OUT/localsqs-compat-sns-go"
setup_go_sns() {
  local go=go
  [ -x /usr/lib/go/bin/go ] && go=/usr/lib/go/bin/go
  mkdir -p "$GO_OUT"
  (cd "$HERE/sns/go" && env GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off GOFLAGS= \
    GOTOOLCHAIN=local GOTELEMETRY=off CGO_ENABLED=0 GOCACHE="$GO_OUT/cache" \
    "$go" build -o "$GO_SNS_BIN" .) || return 1
  echo "go SNS client built: $GO_SNS_BIN"
}

# The SNS JavaScript client's own npm tree (sns/package-lock.json).
setup_npm_sns() {
  local stamp dir="$HERE/sns"
  stamp="$(hash_of "$dir/package.json" "$dir/package-lock.json") $(node --version)"
  if [ -d "$dir/node_modules" ] && [ "$(cat "$dir/node_modules/.compat-stamp" 2>/dev/null)" = "$stamp" ]; then
    echo "sns node_modules: up to date"
    return 0
  fi
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error --omit=dev) || return 1
  echo "$stamp" >"$dir/node_modules/.compat-stamp"
  echo "sns node_modules: installed"
}

# Debian packages first, then (when a Go client is selected) the Go build: one background job
# that reports as two setup steps, "debian" and "go".
setup_debian_then_go() {
  setup_debian "$@" >"$WORK/setup-debian.log" 2>&1
  echo $? >"$WORK/setup-debian.rc"
  if wants sns-go-v1; then
    setup_go_sns >"$WORK/setup-go-sns.log" 2>&1
    echo $? >"$WORK/setup-go-sns.rc"
  fi
  wants go-v1 go-v2 || return 0
  if [ "$(cat "$WORK/setup-debian.rc")" = 0 ]; then
    setup_go >"$WORK/setup-go.log" 2>&1
    echo $? >"$WORK/setup-go.rc"
  else
    echo "skipped: the Debian packages did not install" >"$WORK/setup-go.log"
    echo 1 >"$WORK/setup-go.rc"
  fi
}

# Runs a setup function in the background; its output goes to $WORK/setup-NAME.log and its exit
# status to $WORK/setup-NAME.rc.
start_setup() {
  local name="$1"
  shift
  ( "$@" >"$WORK/setup-$name.log" 2>&1; echo $? >"$WORK/setup-$name.rc" ) &
  SETUP_PIDS+=("$!")
}

setup_ok() { # setup_ok NAME: true if that setup step succeeded (prints its log once if not)
  local name="$1"
  [ "$(cat "$WORK/setup-$name.rc" 2>/dev/null)" = "0" ] && return 0
  if [ ! -e "$WORK/setup-$name.reported" ]; then
    touch "$WORK/setup-$name.reported"
    log "setup $name FAILED:"
    sed 's/^/    /' "$WORK/setup-$name.log" 2>/dev/null | tail -n 40
  fi
  return 1
}

log "== compat: clients: ${CLIENTS[*]}"
log "== compat: installing pinned clients (in the background) and building the server"
wants boto3-current awscli boto3-faults boto3-scopes sigv4 init-hooks sns-boto3 sns-awscli && start_setup venv-current setup_venv current "$HERE/requirements-current.txt"
wants boto3-query boto3-faults-query && start_setup venv-query setup_venv query "$HERE/requirements-query.txt"
wants aiobotocore && start_setup venv-aio setup_venv aio "$HERE/requirements-aio.txt"
wants js-v3 js-v2 sqs-consumer sqs-producer && start_setup npm setup_npm
wants java-sdk2 java-sdk2-async java-sdk2-query spring-cloud-aws jms && start_setup java setup_java
wants go-v2-current go-v2-proxy-query && start_setup gomod setup_gomod
wants sns-js-v3 && start_setup npm-sns setup_npm_sns
DEBIAN_PKGS=()
for c in "${CLIENTS[@]}"; do
  for p in $(debian_packages_for "$c"); do
    case " ${DEBIAN_PKGS[*]} " in *" $p "*) ;; *) DEBIAN_PKGS+=("$p") ;; esac
  done
done
if [ "${#DEBIAN_PKGS[@]}" -gt 0 ]; then
  setup_debian_then_go "${DEBIAN_PKGS[@]}" &
  SETUP_PIDS+=("$!")
fi

# --- build --------------------------------------------------------------------------------------
T_BUILD=$SECONDS
if ! (cd "$ROOT" && cargo build --release --quiet); then
  log "cargo build --release failed"
  log "0 passed, ${#CLIENTS[@]} failed"
  exit 1
fi
TARGET_DIR="$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps 2>/dev/null |
  "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
BIN="${TARGET_DIR:-$ROOT/target}/release/localsqs"
[ -x "$BIN" ] || { log "no server binary at $BIN"; log "0 passed, ${#CLIENTS[@]} failed"; exit 1; }
log "server binary: $BIN (build step $((SECONDS - T_BUILD))s)"

T_SETUP=$SECONDS
for pid in "${SETUP_PIDS[@]}"; do wait "$pid"; done
SETUP_PIDS=()
for f in "$WORK"/setup-*.log; do
  [ -e "$f" ] && sed 's/^/    /' "$f" | grep -v '^    $' | tail -n 12
done
log "setup done (waited $((SECONDS - T_SETUP))s more after the build)"

# --- server -------------------------------------------------------------------------------------
free_port() {
  "$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

healthy() {
  "$PYTHON" - "$1" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen("http://127.0.0.1:%s/health" % sys.argv[1], timeout=1) as r:
        sys.exit(0 if r.status == 200 else 1)
except Exception:
    sys.exit(1)
PY
}

start_server() {
  local attempt
  for attempt in 1 2 3; do
    PORT="$(free_port)"
    RUST_LOG="${RUST_LOG:-info}" "$BIN" --host 127.0.0.1 --port "$PORT" >>"$SERVER_LOG" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 100); do
      if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
      if healthy "$PORT"; then return 0; fi
      sleep 0.1
    done
    log "server did not come up on port $PORT (attempt $attempt)"
    stop_server
  done
  return 1
}

if ! start_server; then
  log "could not start the server; its log:"
  tail -n 40 "$SERVER_LOG"
  log "0 passed, ${#CLIENTS[@]} failed"
  exit 1
fi
ENDPOINT="http://127.0.0.1:$PORT"
log "server: $ENDPOINT (pid $SERVER_PID, log $SERVER_LOG)"

# --- clients ------------------------------------------------------------------------------------
client_cmd() { # prints nothing; sets CMD (array) and DEP for a client
  case "$1" in
    boto3-current) DEP=venv-current; PROTO=JSON
      CMD=("$HERE/.venv/current/bin/python" "$HERE/python/boto3_scenario.py" --endpoint "$ENDPOINT" --name boto3-current --protocol json) ;;
    boto3-query) DEP=venv-query; PROTO=QUERY
      CMD=("$HERE/.venv/query/bin/python" "$HERE/python/boto3_scenario.py" --endpoint "$ENDPOINT" --name boto3-query --protocol query) ;;
    awscli) DEP=venv-current; PROTO=JSON
      CMD=("$HERE/.venv/current/bin/python" "$HERE/python/awscli_scenario.py" --endpoint "$ENDPOINT" --name awscli --protocol json) ;;
    go-v1) DEP=go; PROTO=QUERY
      CMD=("$GO_BIN" -sdk v1 -endpoint "$ENDPOINT" -name go-v1) ;;
    go-v2) DEP=go; PROTO=QUERY
      CMD=("$GO_BIN" -sdk v2 -endpoint "$ENDPOINT" -name go-v2) ;;
    go-v2-current) DEP=gomod; PROTO=JSON
      CMD=("$GO_MOD_CURRENT" -sdk v2 -protocol json -endpoint "$ENDPOINT" -name go-v2-current) ;;
    go-v2-proxy-query) DEP=gomod; PROTO=QUERY
      CMD=("$GO_MOD_QUERY" -sdk v2 -protocol query -endpoint "$ENDPOINT" -name go-v2-proxy-query) ;;
    php-asyncaws) DEP=debian; PROTO=QUERY
      CMD=(php "$HERE/php/asyncaws_scenario.php" --endpoint "$ENDPOINT" --name php-asyncaws) ;;
    ruby-v1) DEP=debian; PROTO=QUERY
      CMD=(ruby "$HERE/ruby/aws_sdk_v1_scenario.rb" --endpoint "$ENDPOINT" --name ruby-v1) ;;
    boto2) DEP=debian; PROTO=QUERY # Debian's own python3, where python3-boto is installed
      CMD=(/usr/bin/python3 "$HERE/python/boto2_scenario.py" --endpoint "$ENDPOINT" --name boto2) ;;
    aiobotocore) DEP=venv-aio; PROTO=JSON
      CMD=("$HERE/.venv/aio/bin/python" "$HERE/python/aiobotocore_scenario.py" --endpoint "$ENDPOINT" --name aiobotocore) ;;
    boto3-scopes) DEP=venv-current; PROTO=JSON
      CMD=("$HERE/.venv/current/bin/python" "$HERE/python/scopes_scenario.py" --endpoint "$ENDPOINT" --name boto3-scopes) ;;
    sigv4) DEP=venv-current; PROTO=JSON
      CMD=("$HERE/.venv/current/bin/python" "$HERE/python/sigv4_scenario.py" --binary "$BIN" --name sigv4) ;;
    init-hooks) DEP=venv-current; PROTO=JSON
      CMD=("$HERE/.venv/current/bin/python" "$HERE/python/init_hooks_scenario.py" --binary "$BIN" --name init-hooks) ;;
    boto3-faults) DEP=venv-current; PROTO=JSON
      CMD=("$HERE/.venv/current/bin/python" "$HERE/python/faults_scenario.py" --endpoint "$ENDPOINT" --name boto3-faults --protocol json) ;;
    boto3-faults-query) DEP=venv-query; PROTO=QUERY
      CMD=("$HERE/.venv/query/bin/python" "$HERE/python/faults_scenario.py" --endpoint "$ENDPOINT" --name boto3-faults-query --protocol query) ;;
    js-v3) DEP=npm; PROTO=JSON
      CMD=(node "$HERE/js/v3.js" --endpoint "$ENDPOINT") ;;
    js-v2) DEP=npm; PROTO=QUERY
      CMD=(node "$HERE/js/v2.js" --endpoint "$ENDPOINT") ;;
    sqs-consumer) DEP=npm; PROTO=JSON
      CMD=(node "$HERE/js/consumer.js" --endpoint "$ENDPOINT") ;;
    java-sdk2 | java-sdk2-async) DEP=java; PROTO=JSON
      local kind=sync; [ "$1" = java-sdk2-async ] && kind=async
      CMD=(java -cp "$(java_cp compat)" dev.localsqs.compat.sdk.SdkMain --endpoint "$ENDPOINT" --name "$1" --client "$kind" --protocol json) ;;
    java-sdk2-query) DEP=java; PROTO=QUERY
      CMD=(java -cp "$(java_cp sdk-query)" dev.localsqs.compat.sdk.SdkMain --endpoint "$ENDPOINT" --name "$1" --client sync --protocol query) ;;
    spring-cloud-aws) DEP=java; PROTO=JSON
      CMD=(java -cp "$(java_cp compat)" dev.localsqs.compat.spring.SpringMain --endpoint "$ENDPOINT" --name "$1") ;;
    jms) DEP=java; PROTO=JSON
      CMD=(java -cp "$(java_cp compat)" dev.localsqs.compat.jms.JmsMain --endpoint "$ENDPOINT" --name "$1") ;;
    sqs-producer) DEP=npm; PROTO=JSON
      CMD=(node "$HERE/js/producer.js" --endpoint "$ENDPOINT") ;;
    sns-boto3) DEP=venv-current; PROTO=QUERY
      CMD=("$HERE/.venv/current/bin/python" "$HERE/sns/python/sns_boto3.py" --endpoint "$ENDPOINT") ;;
    sns-awscli) DEP=venv-current; PROTO=QUERY
      CMD=("$HERE/.venv/current/bin/python" "$HERE/sns/python/sns_awscli.py" --endpoint "$ENDPOINT") ;;
    sns-js-v3) DEP=npm-sns; PROTO=QUERY
      CMD=(node "$HERE/sns/js/v3.js" --endpoint "$ENDPOINT") ;;
    sns-go-v1) DEP=go-sns; PROTO=QUERY
      CMD=("$GO_SNS_BIN" -endpoint "$ENDPOINT") ;;
    *) return 1 ;;
  esac
}

java_cp() { # java_cp MODULE: the module's classes and its runtime dependencies
  printf '%s:%s' "$JAVA_DIR/$1/target/classes" "$(cat "$JAVA_DIR/$1/$JAVA_CP_FILE" 2>/dev/null)"
}

PASSED=0
FAILED=0
SUMMARY=()
EVIDENCE=()
KNOWN_BUG_LINES=()
for client in "${CLIENTS[@]}"; do
  log ""
  log "== client: $client"
  if ! client_cmd "$client"; then
    log "unknown client '$client' (known: ${ALL_CLIENTS[*]})"
    FAILED=$((FAILED + 1)); SUMMARY+=("FAIL  $client (unknown client)")
    continue
  fi
  if ! setup_ok "$DEP"; then
    FAILED=$((FAILED + 1)); SUMMARY+=("FAIL  $client (setup $DEP failed)")
    continue
  fi
  t0=$SECONDS
  (cd "$HERE" && timeout 300 "${CMD[@]}") 2>&1 | tee "$WORK/$client.out"
  rc=${PIPESTATUS[0]}
  ev="$(grep -m1 '^EVIDENCE ' "$WORK/$client.out")"
  [ -n "$ev" ] && EVIDENCE+=("$ev")
  while IFS= read -r line; do
    KNOWN_BUG_LINES+=("$client: ${line#"${line%%[! ]*}"}")
  done < <(grep 'KNOWN_BUG skip ' "$WORK/$client.out")
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    log "the server died during $client; restarting it for the remaining clients"
    tail -n 20 "$SERVER_LOG"
    rc=1
    start_server && ENDPOINT="http://127.0.0.1:$PORT"
  fi
  if [ "$rc" = "0" ]; then
    PASSED=$((PASSED + 1)); SUMMARY+=("PASS  $client ($PROTO expected, $((SECONDS - t0))s)")
  else
    FAILED=$((FAILED + 1)); SUMMARY+=("FAIL  $client ($PROTO expected, exit $rc, $((SECONDS - t0))s)")
    KEEP_WORK=1
  fi
done

stop_server
if [ -n "${KEEP_WORK:-}" ]; then
  log ""
  log "== server log (last 30 lines)"
  tail -n 30 "$SERVER_LOG"
fi

log ""
log "== compat summary ($((SECONDS - T_START))s in all)"
for line in "${EVIDENCE[@]}"; do log "$line"; done
if [ "${#KNOWN_BUG_LINES[@]}" -gt 0 ]; then
  log "checks skipped for reported server bugs (KNOWN_BUG; see the scenarios):"
  for line in "${KNOWN_BUG_LINES[@]}"; do log "  $line"; done
fi
for line in "${SUMMARY[@]}"; do log "$line"; done
log "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
