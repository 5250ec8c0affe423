#!/usr/bin/env bash
# Installing without a toolchain, checked: builds the Linux wheel with maturin around the
# static binary (the build scripts/static-build.sh makes, reused from its target directory),
# installs it into a fresh virtualenv whose PATH holds no cargo or rustc, and checks that
#   - the wheel is tagged manylinux and carries a static binary, and pip builds the same wheel
#     from python/ through the in-tree build backend when cargo is there;
#   - `localsqs --version` runs from the virtualenv and names the crate's version;
#   - a boto3 round trip works through the package's Server (create, send, receive, delete);
#   - installing the package from its sdist without cargo fails at once, with the message that
#     says how to get a wheel, having downloaded nothing (no maturin, no Rust toolchain).
# Ends with "N passed, N failed". Needs python3 with venv, cargo, PyPI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

python=${PYTHON:-python3}
target=x86_64-unknown-linux-gnu
export CARGO_TARGET_DIR="${STATIC_TARGET_DIR:-$root/target/static}"
work=$CARGO_TARGET_DIR/wheel-test
build_venv=$work/build-venv
passed=0
pip_quiet=(--quiet --disable-pip-version-check --no-input)
version=$(bash scripts/release-version.sh)

pass() { passed=$((passed + 1)); echo "== ok: $*"; }
fail() { echo "== FAILED: $*"; echo "$passed passed, 1 failed"; exit 1; }

# maturin, in a virtualenv kept between runs (re-made when requirements-build.txt changes).
stamp="$("$python" -c 'import sys; print(sys.version)' | head -1) $(sha256sum python/requirements-build.txt | cut -c1-64)"
if [[ ! -x $build_venv/bin/maturin || "$(cat "$build_venv/.stamp" 2>/dev/null)" != "$stamp" ]]; then
  rm -rf "$build_venv"
  "$python" -m venv "$build_venv"
  "$build_venv/bin/python" -m pip install "${pip_quiet[@]}" -r python/requirements-build.txt
  printf '%s' "$stamp" >"$build_venv/.stamp"
fi

# 1. The wheel and the sdist. The wheel's binary is built exactly as scripts/static-build.sh
# builds it (same target, flags and target directory), so cargo reuses that build. A static
# binary needs no glibc symbol at all, so maturin may tag it manylinux2014.
rm -rf "$work/dist"
RUSTFLAGS="-C target-feature=+crt-static" MATURIN="$build_venv/bin/maturin" \
  bash scripts/build-wheel.sh "$work/dist" "$target" manylinux2014 >"$work/build.log" 2>&1 \
  || { cat "$work/build.log"; fail "maturin build"; }
(cd python && "$build_venv/bin/maturin" sdist --out "$work/dist") >"$work/sdist.log" 2>&1 \
  || { cat "$work/sdist.log"; fail "maturin sdist"; }
# The same wheel through pip and the in-tree backend, as `pip install ./python` builds it where
# cargo is found (maturin pinned by requirements-build.txt, the same cargo build reused).
(
  RUSTFLAGS="-C target-feature=+crt-static" PIP_CONSTRAINT="$root/python/requirements-build.txt" \
    MATURIN_PEP517_ARGS="--target $target --compatibility manylinux2014" \
    "$build_venv/bin/python" -m pip wheel "${pip_quiet[@]}" --no-deps -w "$work/dist/pep517" ./python
) >"$work/pep517.log" 2>&1 || { cat "$work/pep517.log"; fail "pip wheel ./python (with cargo)"; }
shopt -s nullglob
wheels=("$work/dist/localsqs-$version-"*manylinux*_x86_64.whl)
sdists=("$work/dist/localsqs-$version.tar.gz")
shopt -u nullglob
[[ ${#wheels[@]} -eq 1 ]] || fail "expected one manylinux wheel of $version in $work/dist: $(ls "$work/dist")"
[[ ${#sdists[@]} -eq 1 ]] || fail "expected the sdist of $version in $work/dist: $(ls "$work/dist")"
wheel=${wheels[0]}
sdist=${sdists[0]}
rm -rf "$work/unpacked" && mkdir -p "$work/unpacked"
"$python" -m zipfile -e "$wheel" "$work/unpacked"
inner=$(find "$work/unpacked" -path '*.data/scripts/localsqs' -type f)
[[ -n $inner ]] || fail "the wheel carries no localsqs script"
if readelf -l "$inner" | grep -q INTERP; then fail "the wheel's binary is dynamically linked"; fi
pass "$(basename "$wheel") ($(du -h "$wheel" | cut -f1)) carries a static binary"
[[ -f $work/dist/pep517/$(basename "$wheel") ]] \
  || fail "pip wheel ./python built $(ls "$work/dist/pep517"), not $(basename "$wheel")"
pass "with cargo, pip builds the same wheel through the in-tree backend"

# 2. A fresh virtualenv, and a PATH without cargo or rustc.
venv=$work/venv
rm -rf "$venv"
"$python" -m venv "$venv"
bare_path=$venv/bin
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [[ -n $d && ! -e $d/cargo && ! -e $d/rustc && ! -e $d/rustup ]] && bare_path+=":$d"
done
no_rust=(env -u CARGO -u RUSTC -u VIRTUAL_ENV PATH="$bare_path" CARGO_HOME=/nonexistent RUSTUP_HOME=/nonexistent)
"${no_rust[@]}" sh -c '! command -v cargo && ! command -v rustc' >/dev/null \
  || fail "the stripped PATH still finds cargo or rustc"
# --only-binary: nothing may be built from source on the way.
"${no_rust[@]}" "$venv/bin/python" -m pip install "${pip_quiet[@]}" --only-binary=:all: \
  -c python/requirements-test.txt "$wheel" boto3
pass "the wheel and boto3 install into a fresh virtualenv with no cargo on PATH"

got=$("${no_rust[@]}" localsqs --version)
[[ $got == "localsqs $version" ]] || fail "localsqs --version printed '$got'"
[[ $("${no_rust[@]}" sh -c 'command -v localsqs') == "$venv/bin/localsqs" ]] \
  || fail "localsqs on PATH is not the virtualenv's"
pass "localsqs --version from the virtualenv: $got"

# 3. A boto3 round trip through the installed package, run from outside the source tree.
(
  cd "$work"
  "${no_rust[@]}" "$venv/bin/python" - <<'PY'
import localsqs, os, sys
binary = localsqs.find_binary()
assert binary.startswith(os.path.dirname(sys.executable)), binary
with localsqs.Server() as server:
    sqs = server.client()
    url = sqs.create_queue(QueueName="wheel-test")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="from the wheel")
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    assert [m["Body"] for m in got] == ["from the wheel"], got
    sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    print(f"round trip through {url} with {binary}")
PY
) || fail "the boto3 round trip through the installed wheel"
pass "boto3 round trip (create, send, receive, delete) through the wheel's server"

# 4. From source without cargo: stops at once, before any download, saying how to get a wheel.
set +e
"${no_rust[@]}" "$venv/bin/python" -m pip install --disable-pip-version-check --no-input \
  --no-cache-dir "$sdist" >"$work/from-source.log" 2>&1
status=$?
set -e
[[ $status -ne 0 ]] || fail "pip install of the sdist without cargo succeeded"
grep -q "pip install --only-binary=localsqs localsqs" "$work/from-source.log" \
  || { cat "$work/from-source.log"; fail "the failure does not say how to get a wheel"; }
if grep -Eiq "Collecting (maturin|puccinialin)|Downloading|installing rust" "$work/from-source.log"; then
  cat "$work/from-source.log"
  fail "pip downloaded something before stopping"
fi
pass "the sdist without cargo stops at once with how to get a wheel, downloading nothing"

echo "$passed passed, 0 failed"
