// What the test harness must undo when a test run ends: servers it started, directories it made.
// `bun test` runs no "exit" listener when the run ends (a plain `bun` script does), so the hooks run
// from the preloaded global afterAll (test/preload.ts, bunfig.toml) and from "exit" for scripts
// (benchmarks, child processes in tests); each hook runs once.
const hooks: (() => void)[] = [];
let ran = false;

/** Registers cleanup that must run when the test run (or the script) ends. Synchronous: it may run inside "exit". */
export function atRunEnd(hook: () => void): void {
  hooks.push(hook);
}

export function runEndHooks(): void {
  if (ran) return;
  ran = true;
  for (const hook of hooks) {
    try {
      hook();
    } catch {
      // one failed cleanup must not keep the others from running
    }
  }
}

process.on("exit", runEndHooks);

// A run ended by a signal (a CI job cancelled: SIGTERM; Ctrl-C: SIGINT; a closed terminal: SIGHUP)
// runs neither by default: its PostgreSQL servers kept running and its directories stayed until
// the next run reaped them.
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const) {
  process.once(signal, () => {
    runEndHooks();
    process.exit(code);
  });
}
