// A round-robin HTTP proxy in front of replicas, as its own process(es): nginx from Debian when it
// is installed (`apt-get install nginx-light`), else the test-only Bun proxy
// (test/support/round-robin-proxy.ts) in a process of its own. Both send each request to the next
// upstream in turn over keep-alive connections.
import type { Subprocess } from "bun";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { BUN, REPO_DIR } from "./report";

export interface ProxyProcess {
  kind: "nginx" | "bun test proxy";
  url: string;
  /** The proxy's root process (nginx master; its workers are its children). */
  pid: number;
  stop(): Promise<void>;
}

export function nginxBinary(): string | null {
  for (const p of [process.env.BENCH_NGINX, "/usr/sbin/nginx", Bun.which("nginx")]) if (p && existsSync(p)) return p;
  return null;
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  await s.stop(true);
  return port;
}

async function waitListening(url: string, proc: Subprocess, what: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${what()} exited with ${proc.exitCode}`);
    try {
      await (await fetch(`${url}/healthz`)).arrayBuffer();
      return;
    } catch {}
    await Bun.sleep(50);
  }
  proc.kill("SIGKILL");
  throw new Error(`${what()} did not answer within 15 s`);
}

/**
 * The nginx configuration the benchmark uses: one worker (the box has two cores, shared with the
 * replicas and PostgreSQL), keep-alive connections to the upstreams, round robin per request.
 * docs/compose/nginx.conf is the same shape for the compose file.
 */
export function nginxConfig(opts: { dir: string; port: number; upstreams: string[]; asRoot: boolean }): string {
  return `${opts.asRoot ? "user root;\n" : ""}worker_processes 1;
pid ${opts.dir}/nginx.pid;
error_log ${opts.dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${opts.dir}/body;
  proxy_temp_path ${opts.dir}/proxy;
  fastcgi_temp_path ${opts.dir}/fastcgi;
  uwsgi_temp_path ${opts.dir}/uwsgi;
  scgi_temp_path ${opts.dir}/scgi;
  upstream colony {
${opts.upstreams.map((u) => `    server ${new URL(u).host};`).join("\n")}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${opts.port};
    client_max_body_size 2m;
    location / {
      proxy_pass http://colony;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_buffering on;
    }
  }
}
`;
}

export async function startProxy(upstreams: string[], opts: { prefer?: "nginx" | "bun" } = {}): Promise<ProxyProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const nginx = opts.prefer === "bun" ? null : nginxBinary();
  if (nginx) {
    const dir = mkdtempSync(join(tmpdir(), "colony-bench-nginx-"));
    for (const sub of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
    chmodSync(dir, 0o755);
    const conf = join(dir, "nginx.conf");
    writeFileSync(conf, nginxConfig({ dir, port, upstreams, asRoot: userInfo().uid === 0 }));
    const proc = Bun.spawn([nginx, "-p", dir, "-c", conf, "-e", join(dir, "error.log"), "-g", "daemon off;"], {
      stdout: "ignore",
      stderr: "pipe",
    });
    try {
      const errors = join(dir, "error.log");
      await waitListening(url, proc, () => `nginx (${existsSync(errors) ? readFileSync(errors, "utf8").slice(-500) : "no error log"})`);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return {
      kind: "nginx",
      url,
      pid: proc.pid,
      async stop() {
        proc.kill("SIGQUIT"); // graceful
        const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await proc.exited;
        clearTimeout(t);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const script = `import { startRoundRobinProxy } from ${JSON.stringify(join(REPO_DIR, "test/support/round-robin-proxy.ts"))};
const p = startRoundRobinProxy(${JSON.stringify(upstreams)});
const port = Number(new URL(p.url).port);
// Bun.serve picked its own port; say which on stdout.
console.log(port);`;
  const proc = Bun.spawn([BUN, "-e", script], { cwd: REPO_DIR, stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const { value } = await reader.read();
  const bunPort = Number(new TextDecoder().decode(value).trim());
  const bunUrl = `http://127.0.0.1:${bunPort}`;
  await waitListening(bunUrl, proc, () => "bun test proxy");
  return {
    kind: "bun test proxy",
    url: bunUrl,
    pid: proc.pid,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
