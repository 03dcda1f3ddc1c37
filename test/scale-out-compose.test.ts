// docs/compose/: the compose file's replica settings are ones Colony accepts, and the nginx
// configuration, run by a real nginx (Debian's, when installed) in front of two loopback servers,
// sends requests to the replicas in turn over keep-alive and passes the client address on.
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { CONFIG_DOC, loadConfig } from "../src/config";
import { REPO_DIR } from "./support/paths";

const COMPOSE = join(REPO_DIR, "docs/compose/scale-out.yml");
const NGINX_CONF = join(REPO_DIR, "docs/compose/nginx.conf");

describe("docs/compose/scale-out.yml", () => {
  const compose = Bun.YAML.parse(readFileSync(COMPOSE, "utf8")) as any;
  const replicas = Object.entries(compose.services as Record<string, any>).filter(([name]) => name.startsWith("replica-"));

  test("two replicas on the PostgreSQL service, with settings Colony accepts", () => {
    expect(replicas.length).toBe(2);
    const known = new Set(CONFIG_DOC.map(([name]) => name));
    for (const [, service] of replicas) {
      const env = service.environment as Record<string, string>;
      // COLONY_URL is the client commands' setting (the healthcheck's `colony status`).
      for (const name of Object.keys(env)) if (name !== "COLONY_URL") expect(known.has(name)).toBe(true);
      const resolved = Object.fromEntries(
        Object.entries(env).map(([k, v]) => [k, String(v).replace(/\$\{POSTGRES_PASSWORD[^}]*\}/, "secret")]),
      );
      const config = loadConfig({ HOME: "/root", ...resolved });
      expect(config.databaseUrl).toBe("postgres://colony:secret@postgres:5432/colony");
      expect(config.trustProxy).toEqual({ kind: "hops", hops: 1 });
      expect(service.depends_on.postgres.condition).toBe("service_healthy");
    }
  });

  test("docs/scale-out.md shows both files as they are", () => {
    const doc = readFileSync(join(REPO_DIR, "docs/scale-out.md"), "utf8");
    expect(doc).toContain(readFileSync(COMPOSE, "utf8").trimEnd());
    expect(doc).toContain(readFileSync(NGINX_CONF, "utf8").trimEnd());
  });

  test("nginx's upstream lists every replica service", () => {
    const conf = readFileSync(NGINX_CONF, "utf8");
    const upstream = [...conf.matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map((m) => m[1]);
    expect(upstream.sort()).toEqual(replicas.map(([name]) => name).sort());
    expect(compose.services.nginx.volumes).toContain("./nginx.conf:/etc/nginx/nginx.conf:ro");
  });
});

const nginx = ["/usr/sbin/nginx", Bun.which("nginx")].find((p): p is string => !!p && Bun.file(p).size > 0) ?? null;
if (!nginx) console.warn("nginx round-robin test skipped: nginx is not installed (apt-get install nginx-light)");

describe.skipIf(!nginx)("docs/compose/nginx.conf in a real nginx", () => {
  test("requests alternate between the replicas over keep-alive, with X-Forwarded-For", async () => {
    const seen: { replica: number; forwardedFor: string | null }[] = [];
    const upstreams = [0, 1].map((replica) =>
      Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch(request) {
          seen.push({ replica, forwardedFor: request.headers.get("x-forwarded-for") });
          return Response.json({ replica });
        },
      }),
    );
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port!;
    probe.stop(true);
    const dir = mkdtempSync(join(tmpdir(), "colony-nginx-test-"));
    chmodSync(dir, 0o777); // nginx's workers (nobody, when started as root) write their temp files here
    // The shipped file, with the compose service names and port replaced by loopback addresses.
    let conf = readFileSync(NGINX_CONF, "utf8")
      .replace(/server replica-1:8080/, `server 127.0.0.1:${upstreams[0]!.port}`)
      .replace(/server replica-2:8080/, `server 127.0.0.1:${upstreams[1]!.port}`)
      .replace(/listen 8080;/, `listen 127.0.0.1:${port};`)
      .replace(/worker_processes auto;/, `worker_processes 1;\npid ${dir}/nginx.pid;`);
    if (userInfo().uid === 0) conf = `user root;\n${conf}`;
    writeFileSync(join(dir, "nginx.conf"), conf);
    const proc = Bun.spawn([nginx!, "-p", dir, "-c", join(dir, "nginx.conf"), "-e", join(dir, "error.log"), "-g", "daemon off;"], {
      stdout: "ignore",
      stderr: "pipe",
    });
    try {
      const url = `http://127.0.0.1:${port}/v1/ping`;
      const deadline = Date.now() + 10_000;
      for (;;) {
        try {
          await (await fetch(url)).arrayBuffer();
          break;
        } catch (err) {
          if (Date.now() > deadline || proc.exitCode !== null) throw err;
          await Bun.sleep(50);
        }
      }
      seen.length = 0;
      const answered: number[] = [];
      for (let i = 0; i < 6; i++) answered.push(((await (await fetch(url)).json()) as { replica: number }).replica);
      // Round robin per request: one client on one keep-alive connection still alternates.
      for (let i = 1; i < answered.length; i++) expect(answered[i]).not.toBe(answered[i - 1]);
      expect(seen.every((s) => s.forwardedFor === "127.0.0.1")).toBe(true);
    } finally {
      proc.kill("SIGQUIT");
      await proc.exited;
      for (const u of upstreams) u.stop(true);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
