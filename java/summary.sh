#!/usr/bin/env bash
# Prints one "java: N passed, M failed, K skipped" line from the Surefire reports of the last
# `mvn verify` in java/ (which runs quietly with -q), and fails if no test ran.
set -euo pipefail
cd "$(dirname "$0")"
shopt -s nullglob
reports=(*/target/surefire-reports/TEST-*.xml)
[ "${#reports[@]}" -gt 0 ] || { echo "java: no Surefire reports (no test ran)"; exit 1; }
tests=0 failed=0 skipped=0
for f in "${reports[@]}"; do
  head="$(grep -m1 -o '<testsuite [^>]*>' "$f")"
  attr() { printf '%s' "$head" | grep -o " $1=\"[0-9]*\"" | grep -o '[0-9]*'; }
  tests=$((tests + $(attr tests)))
  failed=$((failed + $(attr failures) + $(attr errors)))
  skipped=$((skipped + $(attr skipped)))
done
[ "$tests" -gt 0 ] || { echo "java: no test ran"; exit 1; }
echo "java: $((tests - failed - skipped)) passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
