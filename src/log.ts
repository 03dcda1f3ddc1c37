// One JSON object per line on stderr, invisible characters escaped. Callers pass fields, never bodies or tokens.
// Lines are gathered and written once per event-loop turn (one syscall instead of one per line);
// flush() writes what is pending at once, and runs on exit.
import { writeSync } from "node:fs";
import type { LogLevel } from "./config";
import { escapeHiddenInJson } from "./core/hidden-json";

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether lines of this level are written (so hot paths can skip building them). */
  enabled(level: LogLevel): boolean;
  /** Writes pending lines now. */
  flush(): void;
}

const MAX_PENDING_BYTES = 64 * 1024;
let pending: string[] = [];
let pendingBytes = 0;
let scheduled = false;

function writeStderr(text: string): void {
  try {
    writeSync(2, text);
  } catch {
    // stderr closed or full: logs are best effort, requests are not
  }
}

function flushPending(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const text = pending.join("");
  pending = [];
  pendingBytes = 0;
  writeStderr(text);
}

process.on("exit", flushPending);

function bufferedWrite(line: string): void {
  pending.push(line);
  pendingBytes += line.length;
  if (pendingBytes >= MAX_PENDING_BYTES) flushPending();
  else if (!scheduled) {
    scheduled = true;
    setImmediate(flushPending);
  }
}

export function createLogger(level: LogLevel, write: (line: string) => void = bufferedWrite): Logger {
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    // Fields may quote a client's text: its invisible and 8-bit control characters are escaped,
    // as in every other text Colony writes for a terminal (src/core/hidden-json.ts).
    write(`${escapeHiddenInJson(JSON.stringify({ t: new Date().toISOString(), level: lvl, msg, ...fields }))}\n`);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    enabled: (lvl) => ORDER[lvl] >= ORDER[level],
    flush: flushPending,
  };
}
