// CPU time of processes from /proc, for CPU-per-request figures that hold on a busy machine.
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_S = Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

interface Stat {
  ppid: number;
  /** utime + stime, ms (all threads). */
  own: number;
  /** cutime + cstime, ms: children that have exited and been waited for. */
  children: number;
}

function stat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces) start at state, field 3.
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ms = (i: number) => (Number(f[i]) * 1000) / TICKS_PER_S;
  return { ppid: Number(f[1]), own: ms(11) + ms(12), children: ms(13) + ms(14) };
}

/** CPU milliseconds one process has used so far (all its threads). */
export function cpuMs(pid: number): number {
  return stat(pid)?.own ?? NaN;
}

/**
 * CPU milliseconds of a process and all its descendants, those alive and those already exited and
 * reaped (their time is in the parent's cutime/cstime): a PostgreSQL postmaster with its backends,
 * or an nginx master with its workers. A backend that ends between two readings moves from "alive"
 * to its parent's children total, so the difference of two readings stays exact.
 */
export function treeCpuMs(root: number): number {
  const parentOf = new Map<number, number>();
  const stats = new Map<number, Stat>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (!s) continue;
    parentOf.set(pid, s.ppid);
    stats.set(pid, s);
  }
  // Each live process of the tree: its own time plus that of its children already reaped.
  let total = 0;
  for (const [pid, s] of stats) if (pid === root || descends(pid, root, parentOf)) total += s.own + s.children;
  return total;
}

function descends(pid: number, root: number, parentOf: Map<number, number>): boolean {
  let p = parentOf.get(pid);
  while (p !== undefined && p > 1) {
    if (p === root) return true;
    p = parentOf.get(p);
  }
  return false;
}

/** A named set of processes whose CPU is read together, before and after a measurement. */
export class CpuMeter {
  private readonly sources: { name: string; read: () => number }[] = [];
  add(name: string, read: () => number): this {
    this.sources.push({ name, read });
    return this;
  }
  names(): string[] {
    return this.sources.map((s) => s.name);
  }
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.sources.map((s) => [s.name, s.read()]));
  }
  /** CPU ms used by each source since `before`. */
  since(before: Record<string, number>): Record<string, number> {
    const now = this.snapshot();
    return Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - (before[k] ?? 0)]));
  }
}
