#!/usr/bin/env bash
# Build the localsqs wheel (maturin, from the Rust crate at the repository root), install it into
# a FRESH virtualenv with the pinned test dependencies, and run python/tests against the
# installed package from outside the source tree.
#
# Needs python3 (3.9+; CI uses 3.11) with venv and pip, cargo, and PyPI/crates.io. Cargo's target
# dir (target/, or $CARGO_TARGET_DIR) is reused, and so is the virtualenv that holds maturin
# (target/python-ci/build-venv, re-made when requirements-build.txt changes), so a second run
# does not rebuild. Exits non-zero when anything fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
python=${PYTHON:-python3}
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/python-ci
build_venv=$work/build-venv
wheels=$work/wheels
test_venv=$work/test-venv
started=$SECONDS

say() { printf '==> %s\n' "$*" >&2; }
pip_quiet=(--quiet --disable-pip-version-check --no-input)

if ! "$python" -c 'import ensurepip, venv' 2>/dev/null; then
    say "$python cannot create virtualenvs (on Debian: apt-get install python3-venv)"
    exit 1
fi

# 1. maturin, in a virtualenv kept between runs.
stamp="$("$python" -c 'import sys; print(sys.version)' | head -1) $(sha256sum "$here/requirements-build.txt" | cut -c1-64)"
if [[ ! -x $build_venv/bin/maturin || "$(cat "$build_venv/.stamp" 2>/dev/null)" != "$stamp" ]]; then
    say "creating the build virtualenv ($build_venv)"
    rm -rf "$build_venv"
    "$python" -m venv "$build_venv"
    "$build_venv/bin/python" -m pip install "${pip_quiet[@]}" -r "$here/requirements-build.txt"
    printf '%s' "$stamp" >"$build_venv/.stamp"
fi

# 2. The wheel: the release binary plus python/src/localsqs. Cargo reuses $target.
say "building the wheel ($("$build_venv/bin/maturin" --version))"
rm -rf "$wheels"
(cd "$here" && "$build_venv/bin/maturin" build --release --locked --out "$wheels")
shopt -s nullglob
built=("$wheels"/localsqs-*.whl)
shopt -u nullglob
if [[ ${#built[@]} -ne 1 ]]; then
    say "expected one wheel in $wheels, found ${#built[@]}"
    exit 1
fi
wheel=${built[0]}
say "built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

# 3. A fresh virtualenv with the wheel and the pinned test dependencies.
say "creating a fresh test virtualenv ($test_venv)"
rm -rf "$test_venv"
"$python" -m venv "$test_venv"
"$test_venv/bin/python" -m pip install "${pip_quiet[@]}" -r "$here/requirements-test.txt" "$wheel"

# 4. The suite, copied out of the source tree so that `import localsqs` can only find the
# installed package, and run with the venv's python without activating it (the binary must be
# found next to the interpreter, not through PATH).
run_dir=$(mktemp -d "${TMPDIR:-/tmp}/localsqs-python-ci.XXXXXX")
trap 'rm -rf "$run_dir"' EXIT
cp -r "$here/tests" "$run_dir/tests"
printf '[pytest]\n' >"$run_dir/pytest.ini" # stops pytest's search for a config above run_dir
say "running the tests in $run_dir"
set +e
(
    cd "$run_dir"
    unset LOCALSQS_BIN LOCALSQS_BINARY PYTEST_DISABLE_PLUGIN_AUTOLOAD PYTEST_ADDOPTS
    export PYTHONDONTWRITEBYTECODE=1
    export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"
    "$test_venv/bin/python" -m pytest -p no:cacheprovider -ra tests
)
status=$?
set -e
say "python/ci.sh: pytest exited with $status after $((SECONDS - started))s in all"
exit "$status"
