// What the PostgreSQL fault tests (pg-faults, pg-failover) wait for and expect of a colony while its
// database is away.
import { expect } from "bun:test";
import { agent, json, sampleTrail } from "./trails";

/** Polls `check` until it returns a value other than undefined, or fails after `ms`. */
export async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(25);
  }
}

export const publish = (base: string, error: string, id = "agent-fault-1") =>
  fetch(`${base}/v1/trails`, json(sampleTrail({ error, commands: [`pip install fault-fix==${error.length}`] }), agent(id)));

export async function statusOf(base: string, trailId: string): Promise<string> {
  return (((await (await fetch(`${base}/v1/trails/${trailId}`)).json()) as any).status ?? "?") as string;
}

/** Every request answered within `ms`: a database away must not hold clients forever. */
export async function answered(request: Promise<Response>, ms = 15_000): Promise<Response> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([request, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A 503 `unavailable` in the contract's error shape, with Retry-After. */
export async function expectUnavailable(res: Response, what: string): Promise<void> {
  const body = (await res.json()) as any;
  expect({ what, status: res.status, code: body.error?.code }).toEqual({ what, status: 503, code: "unavailable" });
  expect(typeof body.error.message).toBe("string");
  expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
}
