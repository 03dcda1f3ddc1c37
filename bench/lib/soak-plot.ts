// Renders the soak's per-minute series as an SVG: latency (p50, p99), RSS, enrichment queue depth
// and the machine's load average per minute, errors in the title. Plain SVG text, no dependencies;
// bench/soak.bench.ts converts it to PNG with rsvg-convert.
interface Minute {
  minute: number;
  achieved_rps: number;
  errors: number;
  socket_errors: number;
  p50_ms: number;
  p99_ms: number;
  rss_mb: number;
  rss_max_mb: number;
  queue_depth: number;
  queue_max: number;
  loadavg?: number;
}

interface Soak {
  target_rps: number;
  minutes: Minute[];
  summary: { requests: number; errors: number; rate_rps: number; rss_growth_pct: number };
}

const W = 900;
const PANEL_H = 190;
const LEFT = 70;
const RIGHT = 30;
const TOP = 60;
const GAP = 50;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;");

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function panel(
  y0: number,
  title: string,
  unit: string,
  xs: number[],
  series: { values: number[]; color: string; label: string }[],
  integer = false,
): string {
  const all = series.flatMap((s) => s.values);
  // Counts (queue depth) get whole-number ticks: at least 0..4.
  const max = integer ? Math.max(4, Math.ceil(niceMax(Math.max(...all) * 1.1) / 4) * 4) : niceMax(Math.max(...all) * 1.1);
  const min = 0;
  const plotW = W - LEFT - RIGHT;
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs, xMin + 1);
  const px = (x: number) => LEFT + ((x - xMin) / (xMax - xMin)) * plotW;
  const py = (v: number) => y0 + PANEL_H - ((v - min) / (max - min)) * PANEL_H;
  let out = `<text x="${LEFT}" y="${y0 - 10}" font-size="15" font-weight="bold">${esc(title)}</text>\n`;
  out += `<rect x="${LEFT}" y="${y0}" width="${plotW}" height="${PANEL_H}" fill="none" stroke="#999"/>\n`;
  for (let i = 0; i <= 4; i++) {
    const v = min + ((max - min) * i) / 4;
    const y = py(v);
    out += `<line x1="${LEFT}" x2="${LEFT + plotW}" y1="${y}" y2="${y}" stroke="#eee"/>`;
    out += `<text x="${LEFT - 6}" y="${y + 4}" font-size="11" text-anchor="end">${Number(v.toFixed(2))} ${unit}</text>\n`;
  }
  for (const x of xs) out += `<text x="${px(x)}" y="${y0 + PANEL_H + 15}" font-size="11" text-anchor="middle">${x}</text>`;
  let lx = LEFT + plotW - 10;
  for (const s of [...series].reverse()) {
    const pts = s.values.map((v, i) => `${px(xs[i]!).toFixed(1)},${py(v).toFixed(1)}`).join(" ");
    out += `\n<polyline points="${pts}" fill="none" stroke="${s.color}" stroke-width="2"/>`;
    for (const [i, v] of s.values.entries())
      out += `<circle cx="${px(xs[i]!).toFixed(1)}" cy="${py(v).toFixed(1)}" r="3" fill="${s.color}"/>`;
    out += `<text x="${lx}" y="${y0 + 16}" font-size="12" text-anchor="end" fill="${s.color}">${esc(s.label)}</text>`;
    lx -= 8 * s.label.length + 20;
  }
  return out + "\n";
}

export function renderSoakSvg(soak: Soak): string {
  const xs = soak.minutes.map((m) => m.minute);
  const panels = soak.minutes.every((m) => m.loadavg !== undefined) ? 4 : 3;
  const H = TOP + panels * (PANEL_H + GAP) + 20;
  const s = soak.summary;
  const title = `Colony soak: ${soak.minutes.length} min at ${s.rate_rps} req/s (target ${soak.target_rps}); ${s.requests} requests, ${s.errors} errors; RSS ${s.rss_growth_pct >= 0 ? "+" : ""}${s.rss_growth_pct}% after minute 1`;
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, sans-serif">\n`;
  svg += `<rect width="${W}" height="${H}" fill="white"/>\n<text x="${W / 2}" y="28" font-size="16" text-anchor="middle">${esc(title)}</text>\n`;
  svg += panel(TOP, "Latency per minute", "ms", xs, [
    { values: soak.minutes.map((m) => m.p50_ms), color: "#2a9d8f", label: "p50" },
    { values: soak.minutes.map((m) => m.p99_ms), color: "#e76f51", label: "p99" },
  ]);
  svg += panel(TOP + PANEL_H + GAP, "Colony RSS (VmRSS)", "MB", xs, [
    { values: soak.minutes.map((m) => m.rss_mb), color: "#264653", label: "end of minute" },
    { values: soak.minutes.map((m) => m.rss_max_mb), color: "#8ab17d", label: "max in minute" },
  ]);
  svg += panel(
    TOP + 2 * (PANEL_H + GAP),
    "Enrichment queue depth",
    "",
    xs,
    [
      { values: soak.minutes.map((m) => m.queue_depth), color: "#6d597a", label: "end of minute" },
      { values: soak.minutes.map((m) => m.queue_max), color: "#b56576", label: "max sampled" },
    ],
    true,
  );
  if (panels === 4) {
    svg += panel(TOP + 3 * (PANEL_H + GAP), "Machine load average (1 min; 2 cores, shared with other work)", "", xs, [
      { values: soak.minutes.map((m) => m.loadavg ?? 0), color: "#555", label: "loadavg" },
    ]);
  }
  svg += `<text x="${W / 2}" y="${H - 6}" font-size="12" text-anchor="middle">minute</text>\n`;
  return svg + "</svg>\n";
}
