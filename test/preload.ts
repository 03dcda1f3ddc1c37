// Preloaded by `bun test` (bunfig.toml): a global afterAll runs once after every test file, which
// is when the harness's run-end cleanup must happen (bun test runs no "exit" listener).
import { afterAll } from "bun:test";
import { runEndHooks } from "./support/run-end";

afterAll(() => runEndHooks());
