// Progress of a long job (re-embedding, re-fingerprinting, imports, migrations): counts and rate.
// On a terminal (the stream is a TTY) one line is rewritten in place at most every 200 ms and
// ends with a newline; otherwise (a log file, a service manager) it becomes JSON log lines at
// most every 5 s, plus a last one when the job ends. One helper, so every job reads the same.
import type { Logger } from "./log";

/** Where the terminal line goes: process.stderr by default. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** What is being done, e.g. "re-embedding trails". Also the log message. */
  label: string;
  /** How many items there are, when known (a count alone is shown otherwise). */
  total?: number;
  /** The items' name in the terminal line ("trails"). */
  unit?: string;
  /** Receives the log lines when the stream is not a terminal. */
  logger: Logger;
  stream?: ProgressStream;
  /** Least time between two updates; 200 ms on a terminal, 5 s as log lines. */
  intervalMs?: number;
  /** The clock, in ms (tests pass their own). */
  now?: () => number;
}

export interface Progress {
  /** Counts `n` more items done (1 by default). */
  tick(n?: number): void;
  /** Sets or corrects the total once known. */
  setTotal(total: number): void;
  /** Ends the job: the final counts and rate, once. `fields` join the last log line. */
  finish(fields?: Record<string, unknown>): void;
  readonly done: number;
}

export interface ProgressState {
  label: string;
  unit: string;
  done: number;
  total: number | undefined;
  elapsedMs: number;
}

/** Items per second so far (0 before any time has passed). */
export function ratePerSecond(s: ProgressState): number {
  return s.elapsedMs > 0 ? (s.done * 1000) / s.elapsedMs : 0;
}

const count = (n: number) => n.toLocaleString("en-US");

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

/** The terminal line: "re-embedding trails: 1,200/5,000 trails (24%), 812/s, about 5 s left". */
export function formatProgress(s: ProgressState, finished = false): string {
  const rate = ratePerSecond(s);
  const rateText = `${rate >= 10 ? Math.round(rate) : rate.toFixed(1)}/s`;
  let line = `${s.label}: ${count(s.done)}`;
  if (s.total !== undefined) line += `/${count(s.total)} ${s.unit}`;
  else line += ` ${s.unit}`;
  if (s.total !== undefined && s.total > 0) line += ` (${Math.floor((100 * Math.min(s.done, s.total)) / s.total)}%)`;
  line += `, ${rateText}`;
  if (finished) line += `, done in ${duration(s.elapsedMs / 1000)}`;
  else if (s.total !== undefined && rate > 0 && s.done < s.total) line += `, about ${duration((s.total - s.done) / rate)} left`;
  return line;
}

export function startProgress(opts: ProgressOptions): Progress {
  const stream = opts.stream ?? process.stderr;
  const tty = stream.isTTY === true;
  const now = opts.now ?? (() => performance.now());
  const interval = opts.intervalMs ?? (tty ? 200 : 5000);
  const started = now();
  let done = 0;
  let total = opts.total;
  let lastShown = -Infinity;
  let finished = false;
  // A total found short (items added while the job runs) is raised to what is done: never "130/117".
  const state = (): ProgressState => ({
    label: opts.label,
    unit: opts.unit ?? "items",
    done,
    total: total === undefined ? undefined : Math.max(total, done),
    elapsedMs: now() - started,
  });
  const fields = (s: ProgressState) => ({
    done: s.done,
    ...(s.total !== undefined ? { total: s.total } : {}),
    rate_per_s: Math.round(ratePerSecond(s) * 10) / 10,
    elapsed_s: Math.round(s.elapsedMs / 100) / 10,
  });
  const show = (force: boolean) => {
    const t = now();
    if (!force && t - lastShown < interval) return;
    lastShown = t;
    const s = state();
    if (tty) stream.write(`\r${formatProgress(s)}\x1b[K`);
    else opts.logger.info(opts.label, fields(s));
  };
  show(true);
  return {
    tick(n = 1) {
      if (finished) return;
      done += n;
      show(false);
    },
    setTotal(n) {
      total = n;
    },
    finish(extra = {}) {
      if (finished) return;
      finished = true;
      const s = state();
      if (tty) stream.write(`\r${formatProgress(s, true)}\x1b[K\n`);
      else opts.logger.info(`${opts.label}: done`, { ...fields(s), ...extra });
    },
    get done() {
      return done;
    },
  };
}
