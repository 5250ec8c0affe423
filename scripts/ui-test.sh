#!/usr/bin/env bash
# Browser tests of the web console (tests/ui/): Debian's Chromium driven by playwright-core,
# against the built binary. Run as root on Debian; installs what is missing.
#
#   bash scripts/ui-test.sh
#
# Steps: install chromium with apt if /usr/bin/chromium is missing; npm ci in tests/ui (the
# pinned playwright-core, which downloads no browser); cargo build --release --bin localsqs;
# node --test tests/ui/*.test.mjs. Prints node's test summary; exits non-zero on any failure.
#
# Knobs: LOCALSQS_UI_PROFILE=debug tests the debug build instead (quicker to build, slower to
# run); CHROMIUM=/path/to/chromium; UI_TESTS="console.test.mjs" runs only those files.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
PROFILE="${LOCALSQS_UI_PROFILE:-release}"
started=$SECONDS

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x "$CHROMIUM" ]; then
  echo "== installing chromium (apt)"
  apt_install chromium
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "== installing node and npm (apt)"
  apt_install nodejs npm
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "Node.js $(node --version) is too old: the UI tests need Node.js 20 or later." >&2
  exit 1
fi
echo "== $("$CHROMIUM" --version 2>/dev/null | head -n1), node $(node --version)"

echo "== npm ci (tests/ui)"
(cd tests/ui && npm ci --no-audit --no-fund --loglevel=error)

echo "== cargo build --bin localsqs ($PROFILE)"
if [ "$PROFILE" = "release" ]; then
  cargo build --release --bin localsqs
else
  cargo build --bin localsqs
fi
export LOCALSQS_BIN="$ROOT/target/$PROFILE/localsqs"

echo "== browser tests (tests/ui)"
cd tests/ui
read -r -a files <<<"${UI_TESTS:-console.test.mjs workbench.test.mjs token.test.mjs scale.test.mjs}"
status=0
node --test --test-concurrency=1 "${files[@]}" || status=$?
echo "== ui tests finished in $((SECONDS - started)) s (exit $status); screenshots in tests/ui/screenshots/"
exit "$status"
