// A small HTTP load balancer for multi-replica tests: each request goes to the next upstream in
// turn (per request, not per connection, as nginx does with keep-alive upstreams), so a client
// on one keep-alive connection still alternates between replicas. It appends the client address
// to X-Forwarded-For like an ordinary proxy, for colonies started with COLONY_TRUST_PROXY=1, and
// passes the client's Host header on unchanged (as HAProxy, Envoy and cloud load balancers do, and
// nginx with `proxy_set_header Host $host`), so a replica sees the address the client used.

import { errorMessage } from "../../src/core/error-message.ts";
export interface RoundRobinProxy {
  readonly url: string;
  /** How many requests each upstream was sent, by index. */
  readonly sent: number[];
  /** Replace the upstreams (a restarted replica on a new port). */
  setUpstreams(urls: string[]): void;
  stop(): void;
}

/** `port`: where the proxy listens (0, the default: any free port). */
export function startRoundRobinProxy(upstreams: string[], { port = 0 }: { port?: number } = {}): RoundRobinProxy {
  let targets = upstreams.map((u) => new URL(u));
  let next = 0;
  const sent = targets.map(() => 0);
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(request, srv) {
      if (targets.length === 0) return new Response("no upstream yet", { status: 503 });
      const index = next++ % targets.length;
      const target = targets[index];
      sent[index] = (sent[index] ?? 0) + 1;
      const incoming = new URL(request.url);
      const url = new URL(incoming.pathname + incoming.search, target);
      const headers = new Headers(request.headers);
      const peer = srv.requestIP(request)?.address ?? "127.0.0.1";
      const prior = headers.get("x-forwarded-for");
      headers.set("x-forwarded-for", prior ? `${prior}, ${peer}` : peer);
      const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      try {
        const upstream = await fetch(url, { method: request.method, headers, body, redirect: "manual" });
        // fetch has decoded any content-encoding; pass the bytes on without the stale length/encoding.
        const out = new Headers(upstream.headers);
        out.delete("content-encoding");
        out.delete("content-length");
        // Streamed, not buffered: a long or slow answer reaches the client as the upstream sends it.
        return new Response(upstream.body, { status: upstream.status, headers: out });
      } catch (err) {
        return new Response(`upstream ${target.host} unreachable: ${errorMessage(err)}`, { status: 502 });
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    sent,
    setUpstreams(urls) {
      targets = urls.map((u) => new URL(u));
      sent.length = 0;
      for (let i = 0; i < targets.length; i++) sent.push(0);
    },
    stop() {
      server.stop(true);
    },
  };
}
