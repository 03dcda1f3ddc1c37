#!/usr/bin/env bash
# Runs the whole suite with Bun's test runner and ends with one plain summary line
# ("tests: N passed, N failed") that CI systems can read; the exit code is 0 when every bun test
# process it ran passed, else the first failing one's.
#
# With arguments, they go to one `bun test` (files, -t PATTERN, ...), as before.
#
# Without arguments, three passes, in four bun test processes ("lanes") run side by side, each
# with its output buffered to a file and printed whole when it ends (in the order they end), then
# the summary line, which adds every lane's counts:
#   - sqlite 1/2, sqlite 2/2: every test file (src/ and test/), on SQLite, split in two halves of
#     about equal duration by bun's --shard, balanced by tools/test-timings.json (per-file
#     durations in ms; a file missing from it still runs, in one of the halves; refresh it with
#     COLONY_TEST_UPDATE_TIMINGS=1 bash tools/test.sh, which writes what this run measured).
#   - postgres: the behaviour suites (test/*.test.ts files that start colonies with
#     startTestColony) again, with every colony on PostgreSQL (COLONY_TEST_BACKEND=postgres: one
#     throwaway server per test process, a fresh database per colony).
#   - replicas: the behaviour suites a third time, every colony made of two replicas on one such
#     database behind the round-robin proxy (COLONY_TEST_BACKEND=replicas, test/support/colony.ts):
#     each request the tests send may land on either replica. Reaching past the proxy, tests use
#     the first replica's service and store (shared, so the same for both); the worker calls reach
#     both replicas' workers; /metrics is scraped from each replica and summed (metrics.test.ts),
#     as Prometheus does, since request counters are per process; the draft-id timing check
#     (security.test.ts) times each replica on its own, as timing is a property of one process.
#     Nothing stays single-replica.
# Most of a serial run's time was spent waiting (timers, leases, retries, child processes,
# PostgreSQL), so the lanes overlap well on 2 cores (bench/RESULTS.md, "the test suite in four
# lanes"). Lanes share nothing but the machine (each takes ports from its own range,
# COLONY_TEST_LANE, test/support/ports.ts): every colony, PostgreSQL server and directory is
# made by its own test process on a free port and in a fresh directory; dist/colony is built by
# one process while the others wait (test/support/binary.ts). COLONY_TEST_SERIAL=1 runs the same
# lanes one after another (the old layout's timing, for checks that want a quiet machine).
#
# Not repeated in either PostgreSQL pass, because they work on SQLite's file itself: backup
# (copies it), disk-full (fills the filesystem under it), normalizer-upgrade and operator-series
# (rewind it to an older release's schema), export-import (the CLI imports into a stopped
# colony's file) and migrate (copies between a SQLite colony and PostgreSQL, both named by the
# test itself). Files without startTestColony (crash and crash-rounds: SIGKILL against SQLite's
# WAL; binary; fuzz; schema and source checks) run once; test/replicas.test.ts and
# test/races.test.ts have the multi-replica tests proper.
set -uo pipefail
cd "$(dirname "$0")/.."
bun=node_modules/.bin/bun
out=$(mktemp -d)

# The last "N pass" / "N fail" count of a bun test log, 0 when it has none (bun crashed).
count() {
  local n
  n=$(grep -Eo "^ *[0-9]+ $1\$" "$2" | tail -1 | grep -Eo '[0-9]+')
  echo "${n:-0}"
}

if [ "$#" -gt 0 ]; then
  "$bun" test --timeout 60000 "$@" 2>&1 | tee "$out/args.log"
  status=${PIPESTATUS[0]}
  passed=$(count pass "$out/args.log")
  failed=$(count fail "$out/args.log")
else
  timings=tools/test-timings.json
  names=()
  declare -A title env args
  for i in 1 2; do
    lane_timings=(--timings="$timings")
    [ -n "${COLONY_TEST_UPDATE_TIMINGS:-}" ] && lane_timings=(--timings="$out/sqlite-$i.json" --timings="$timings" --update-timings)
    names+=("sqlite-$i")
    title[sqlite-$i]="every test file on SQLite, half $i of 2 (bun test --shard=$i/2)"
    env[sqlite-$i]="COLONY_TEST_LANE=$((i - 1))"
    args[sqlite-$i]="--shard=$i/2 ${lane_timings[*]}"
  done

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
    names+=(postgres replicas)
    title[postgres]="behaviour suites again, on PostgreSQL (${#behaviour[@]} files)"
    title[replicas]="behaviour suites again, through the round-robin proxy in front of two replicas on PostgreSQL (${#behaviour[@]} files)"
    env[postgres]="COLONY_TEST_BACKEND=postgres COLONY_TEST_LANE=2"
    env[replicas]="COLONY_TEST_BACKEND=replicas COLONY_TEST_LANE=3"
    args[postgres]="${behaviour[*]}"
    args[replicas]="${behaviour[*]}"
  fi

  # Starts a lane in the background: its bun test's output goes to $out/NAME.log, its exit code
  # to $out/NAME.rc once it ends; $out/NAME.pid names the bun process (to stop it on a signal).
  start_lane() {
    local name=$1
    (
      # shellcheck disable=SC2086 # word splitting of the lane's env and arguments is intended
      env ${env[$name]} "$bun" test --timeout 60000 ${args[$name]} >"$out/$name.log" 2>&1 &
      echo $! >"$out/$name.pid"
      wait $!
      echo $? >"$out/$name.rc"
    ) &
  }
  status=0
  passed=0
  failed=0
  # Prints a finished lane's output whole, and adds its counts.
  finish_lane() {
    local name=$1 rc
    rc=$(cat "$out/$name.rc")
    echo "== ${title[$name]}"
    cat "$out/$name.log"
    passed=$((passed + $(count pass "$out/$name.log")))
    failed=$((failed + $(count fail "$out/$name.log")))
    [ "$status" -eq 0 ] && status=$rc
  }
  # A cancelled run (Ctrl-C, a CI job's SIGTERM) stops every lane's bun test, which stops the
  # servers it started (test/support/run-end.ts), then ends as the signal asks.
  stop_lanes() {
    for f in "$out"/*.pid; do [ -e "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done
    wait
    rm -rf "$out"
    exit "$1"
  }
  trap 'stop_lanes 130' INT
  trap 'stop_lanes 143' TERM
  trap 'stop_lanes 129' HUP

  if [ -n "${COLONY_TEST_SERIAL:-}" ]; then
    for name in "${names[@]}"; do
      start_lane "$name"
      wait
      finish_lane "$name"
    done
  else
    echo "${#names[@]} lanes side by side (${names[*]}); each lane's output follows when it ends"
    for name in "${names[@]}"; do start_lane "$name"; done
    pending=("${names[@]}")
    while [ "${#pending[@]}" -gt 0 ]; do
      wait -n 2>/dev/null || sleep 1
      left=()
      for name in "${pending[@]}"; do
        if [ -s "$out/$name.rc" ]; then finish_lane "$name"; else left+=("$name"); fi
      done
      pending=("${left[@]}")
    done
  fi

  if [ -n "${COLONY_TEST_UPDATE_TIMINGS:-}" ]; then
    "$bun" -e '
      const [target, ...parts] = process.argv.slice(1);
      const files = {};
      for (const p of parts) Object.assign(files, (await Bun.file(p).json()).files);
      const sorted = Object.fromEntries(Object.keys(files).sort().map((k) => [k, files[k]]));
      await Bun.write(target, `${JSON.stringify({ version: 1, files: sorted }, null, 2)}\n`);
      console.log(`${target}: ${Object.keys(sorted).length} files`);
    ' "$timings" "$out"/sqlite-*.json
  fi
fi
rm -rf "$out"
echo "tests: ${passed} passed, ${failed} failed"
if [ "$status" -eq 0 ] && [ "${passed}" -eq 0 ]; then
  echo "no test ran" >&2
  exit 1
fi
exit "$status"
