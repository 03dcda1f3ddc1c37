// The service core: every rule of the contract lives here once, and both the HTTP routes and the
// MCP tools call it.
import type { Config } from "../config";
import type { Logger } from "../log";
import { VERSION } from "../version";
import { readiness, type Readiness } from "./health";
import type { Subsystems } from "./subsystems";

export interface ColonyDeps {
  config: Config;
  logger: Logger;
  subsystems: Subsystems;
  now?: () => number;
}

export class ColonyService {
  private readonly startedAt: number;
  readonly now: () => number;

  constructor(private readonly deps: ColonyDeps) {
    this.now = deps.now ?? Date.now;
    this.startedAt = this.now();
  }

  health() {
    return { status: "ok" as const, version: VERSION, uptime_s: Math.floor((this.now() - this.startedAt) / 1000) };
  }

  readiness(): Promise<Readiness> {
    return readiness(this.deps.subsystems, () => this.queueDepth());
  }

  /** Trails waiting for enrichment. */
  queueDepth(): number {
    return 0;
  }
}
