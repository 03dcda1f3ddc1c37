#!/usr/bin/env bash
# Runs the whole suite with Bun's test runner and ends with one plain summary line
# ("tests: N passed, N failed") that CI systems can read; the exit code is bun's.
#
# Without arguments, the behaviour suites (test/*.test.ts files that start colonies with
# startTestColony) then run a second time with every colony on PostgreSQL
# (COLONY_TEST_BACKEND=postgres: one throwaway server per test process, a fresh database per
# colony), and a third time with every colony made of two replicas on one such database behind
# the round-robin proxy (COLONY_TEST_BACKEND=replicas, test/support/colony.ts): each request the
# tests send may land on either replica. Reaching past the proxy, tests use the first replica's
# service and store (shared, so the same for both); the worker calls reach both replicas' workers;
# /metrics is scraped from each replica and summed (metrics.test.ts), as Prometheus does, since
# request counters are per process; the draft-id timing check (security.test.ts) times each
# replica on its own, as timing is a property of one process. Nothing stays single-replica. Not repeated in either
# PostgreSQL pass, because they work on SQLite's file itself: backup (copies it), disk-full (fills
# the filesystem under it), normalizer-upgrade and operator-series (rewind it to an older
# release's schema), export-import (the CLI imports into a stopped colony's file) and migrate
# (copies between a SQLite colony and PostgreSQL, both named by the test itself). Files without
# startTestColony (crash and crash-rounds: SIGKILL against SQLite's WAL; binary; fuzz; schema and
# source checks) run once; test/replicas.test.ts and test/races.test.ts have the multi-replica tests proper.
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
    for backend in postgres replicas; do
      if [ "$backend" = postgres ]; then
        echo "== behaviour suites again, on PostgreSQL (${#behaviour[@]} files)"
      else
        echo "== behaviour suites again, through the round-robin proxy in front of two replicas on PostgreSQL (${#behaviour[@]} files)"
      fi
      COLONY_TEST_BACKEND=$backend node_modules/.bin/bun test --timeout 60000 "${behaviour[@]}" 2>&1 | tee "$log"
      pass_status=${PIPESTATUS[0]}
      pass_passed=$(grep -Eo '^ *[0-9]+ pass$' "$log" | tail -1 | grep -Eo '[0-9]+')
      pass_failed=$(grep -Eo '^ *[0-9]+ fail$' "$log" | tail -1 | grep -Eo '[0-9]+')
      passed=$((passed + ${pass_passed:-0}))
      failed=$((failed + ${pass_failed:-0}))
      [ "$status" -eq 0 ] && status=$pass_status
    done
  fi
fi
rm -f "$log"
echo "tests: ${passed} passed, ${failed} failed"
if [ "$status" -eq 0 ] && [ "${passed}" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi
exit "$status"
