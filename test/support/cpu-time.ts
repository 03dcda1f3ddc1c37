// Time budgets of "hostile input costs linear time" checks, in this process's CPU time. The suite
// runs in several processes side by side (tools/test.sh) on machines doing other work: wall time
// then counts the waits for a core too, and a 44 ms line was seen taking over 500 ms. A
// catastrophic backtrack costs its seconds in CPU time as well, so the checks catch what they did.

/** Milliseconds of CPU (user and system, every thread of this process) since `since`. */
export function cpuMsSince(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}
