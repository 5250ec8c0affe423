#!/usr/bin/env bash
# The release workflow's steps that can run on Linux x86_64, run here (docs/releasing.md):
#   - the tag check refuses a tag that is not v<Cargo.toml's version>, and takes the right one;
#   - the static binary packs into its release archive, which unpacks and runs;
#   - SHA256SUMS over the archive, the wheel and the sdist (scripts/wheel-test.sh builds them);
#   - `cargo publish --dry-run`: the crate packages and builds from its tarball;
#   - actionlint (with shellcheck) on .github/workflows, and shellcheck on the scripts it runs.
# The builds for other targets, the multi-arch push and the publishing steps need GitHub's
# runners and credentials; this is the rest. Ends with "N passed, N failed".
#
#   scripts/release-check.sh [BINARY]   (default: scripts/static-build.sh's binary)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

static_dir=${STATIC_TARGET_DIR:-$root/target/static}
bin=${1:-$static_dir/x86_64-unknown-linux-gnu/release/localsqs}
work=$static_dir/release-check
# Pinned; the release workflow's syntax is checked against what this version knows.
actionlint_version=v1.7.12
passed=0
pass() { passed=$((passed + 1)); echo "== ok: $*"; }
fail() { echo "== FAILED: $*"; echo "$passed passed, 1 failed"; exit 1; }
rm -rf "$work"
mkdir -p "$work/dist"

# 1. The tag check.
version=$(bash scripts/release-version.sh)
[[ $(bash scripts/release-version.sh "v$version") == "$version" ]] || fail "the tag v$version is refused"
if bash scripts/release-version.sh "v$version.1" >/dev/null 2>&1; then fail "the tag v$version.1 is taken"; fi
pass "release-version.sh takes v$version and refuses v$version.1"

# 2. The archive unpacks and runs.
archive=$(bash scripts/release-archive.sh "$bin" x86_64-unknown-linux-gnu "$work/dist")
mkdir "$work/unpacked"
tar -C "$work/unpacked" -xzf "$archive"
got=$("$work/unpacked/localsqs-$version-x86_64-unknown-linux-gnu/localsqs" --version)
[[ $got == "localsqs $version" ]] || fail "the archive's binary printed '$got'"
for f in README.md install.md; do
  [[ -f $work/unpacked/localsqs-$version-x86_64-unknown-linux-gnu/$f ]] || fail "the archive lacks $f"
done
pass "$(basename "$archive") unpacks to a binary that prints '$got', with README.md and install.md"

# 3. Checksums over what a release attaches.
shopt -s nullglob
built=("$static_dir"/wheel-test/dist/*.whl "$static_dir"/wheel-test/dist/*.tar.gz)
shopt -u nullglob
[[ ${#built[@]} -eq 2 ]] || fail "run scripts/wheel-test.sh first (found ${#built[@]} of the wheel and the sdist)"
cp "${built[@]}" "$work/dist/"
bash scripts/release-checksums.sh "$work/dist" >/dev/null
[[ $(wc -l <"$work/dist/SHA256SUMS") -eq 3 ]] || fail "SHA256SUMS: $(cat "$work/dist/SHA256SUMS")"
pass "SHA256SUMS over the archive, the wheel and the sdist checks"

# 4. The crate: packaged, and built from the tarball (cargo's verification).
cargo publish --dry-run --locked -p localsqs >"$work/publish.log" 2>&1 \
  || { cat "$work/publish.log"; fail "cargo publish --dry-run"; }
# Expected: the dry run's own notice, and the test targets left out on purpose (include).
unexpected=$(grep "^warning" "$work/publish.log" \
  | grep -v -e "aborting upload due to dry run" -e "^warning: ignoring test \`[a-z_]*\` as \`tests/.*\` is not included in the published package" || true)
[[ -z $unexpected ]] || { cat "$work/publish.log"; fail "cargo publish --dry-run warns: $unexpected"; }
packaged=$(sed -n 's/^ *Packaged //p' "$work/publish.log")
grep -q "^ *Verifying localsqs v$version" "$work/publish.log" || fail "cargo did not verify the package"
pass "cargo publish --dry-run: localsqs $version packaged ($packaged) and built from its tarball"

# 5. actionlint, from the Go module proxy, into a directory kept between runs.
tools=$static_dir/tools
if [[ ! -x $tools/actionlint-$actionlint_version ]]; then
  mkdir -p "$tools"
  GOBIN=$tools GOTOOLCHAIN=local GOFLAGS=-mod=mod go install "github.com/rhysd/actionlint/cmd/actionlint@$actionlint_version"
  mv "$tools/actionlint" "$tools/actionlint-$actionlint_version"
fi
command -v shellcheck >/dev/null || fail "shellcheck is missing (.ci/run installs it with apt), so actionlint would skip the run: scripts"
"$tools/actionlint-$actionlint_version" -shellcheck "$(command -v shellcheck)" \
  || fail "actionlint found problems in .github/workflows"
pass "actionlint $actionlint_version with shellcheck: $(cd .github/workflows && echo *.yml)"
# The scripts the workflow runs on GitHub's runners (macOS and Windows too), and their checks here.
release_scripts=(scripts/release-*.sh scripts/build-wheel.sh scripts/smoke-test.sh scripts/image-*.sh
  scripts/wheel-test.sh scripts/static-build.sh)
shellcheck "${release_scripts[@]}" || fail "shellcheck found problems in the release scripts"
pass "shellcheck: ${release_scripts[*]}"

echo "$passed passed, 0 failed"
