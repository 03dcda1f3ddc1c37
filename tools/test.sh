#!/usr/bin/env bash
# Runs the whole suite with Bun's test runner and ends with one plain summary line
# ("tests: N passed, N failed") that CI systems can read; the exit code is bun's.
#
# Without arguments, the behaviour suites (test/*.test.ts files that start colonies with
# startTestColony) then run a second time with every colony on PostgreSQL
# (COLONY_TEST_BACKEND=postgres: one throwaway server per test process, a fresh database per
# colony). Not repeated there, because they work on SQLite's file itself: backup (copies it),
# disk-full (fills the filesystem under it), normalizer-upgrade and operator-series (rewind it to
# an older release's schema), export-import (the CLI imports into a stopped colony's file) and
# migrate (copies between a SQLite colony and PostgreSQL, both named by the test itself). Files without startTestColony (crash and
# crash-rounds: SIGKILL against SQLite's WAL; binary; fuzz; schema and source checks) run once.
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
node_modules/.bin/bun test --timeout 60000 "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+')
failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+')
passed=${passed:-0}
failed=${failed:-0}

if [ "$#" -eq 0 ]; then
  pg_bin=$(ls -d ${COLONY_TEST_PG_BIN:-} /usr/lib/postgresql/*/bin 2>/dev/null | while read -r d; do [ -x "$d/postgres" ] && echo "$d" && break; done)
  if [ -z "$pg_bin" ]; then
    echo "PostgreSQL pass skipped: no PostgreSQL server binaries (install postgresql-15 or set COLONY_TEST_PG_BIN)"
  else
    behaviour=()
    for f in $(grep -l "startTestColony" test/*.test.ts); do
      case "$(basename "$f")" in
        backup.test.ts | disk-full.test.ts | normalizer-upgrade.test.ts | operator-series.test.ts | export-import.test.ts | migrate.test.ts) ;;
        *) behaviour+=("$f") ;;
      esac
    done
    echo "== behaviour suites again, on PostgreSQL (${#behaviour[@]} files)"
    COLONY_TEST_BACKEND=postgres node_modules/.bin/bun test --timeout 60000 "${behaviour[@]}" 2>&1 | tee "$log"
    pg_status=${PIPESTATUS[0]}
    pg_passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+')
    pg_failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+')
    passed=$((passed + ${pg_passed:-0}))
    failed=$((failed + ${pg_failed:-0}))
    [ "$status" -eq 0 ] && status=$pg_status
  fi
fi
rm -f "$log"
echo "tests: ${passed} passed, ${failed} failed"
if [ "$status" -eq 0 ] && [ "${passed}" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi
exit "$status"
