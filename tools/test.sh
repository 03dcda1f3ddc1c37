#!/usr/bin/env bash
# Runs the whole suite with Bun's test runner and ends with one plain summary line
# ("tests: N passed, N failed") that CI systems can read; the exit code is bun's.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
node_modules/.bin/bun test --timeout 60000 "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+')
failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+')
rm -f "$log"
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
if [ "$status" -eq 0 ] && [ "${passed:-0}" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi
exit "$status"
