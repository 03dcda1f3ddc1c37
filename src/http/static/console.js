// The operator console (docs/operator-console.md). It asks for the operator token, keeps it in
// sessionStorage (this tab only) and sends it as `Authorization: Bearer` to the admin API of the
// same origin. Trail content and agent names are untrusted: every string is set as text into
// elements made by createElement; nothing is parsed as HTML. Charts are SVG drawn here.

import { el, markedText } from "./dom.js";

(() => {
  const TOKEN_KEY = "colony.operatorToken";
  const SVG = "http://www.w3.org/2000/svg";
  const app = document.getElementById("app");
  let view = "overview";
  /** Bumped by every view change, so a late answer of an old view does nothing. */
  let generation = 0;

  // --- DOM helpers ------------------------------------------------------------------------------

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    for (const c of children) if (c) node.append(typeof c === "string" ? document.createTextNode(c) : c);
    return node;
  }

  function button(label, onClick, className) {
    const b = el("button", { type: "button", class: className || "" }, label);
    b.addEventListener("click", onClick);
    return b;
  }

  const fmt = (n, digits = 3) => (n === null || n === undefined ? "–" : Number(n).toFixed(digits));
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : "–");

  function bytes(n) {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let i = 0;
    let v = n;
    while (v >= 1024 && i < units.length - 1) {
      v /= 1024;
      i++;
    }
    return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
  }

  // --- API --------------------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, code, message) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY);

  async function api(method, path, body) {
    const headers = { authorization: `Bearer ${token() || ""}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: "no-store" });
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (!res.ok) {
      const e = (data && data.error) || {};
      throw new ApiError(res.status, e.code || "error", e.message || `the colony answered ${res.status}`);
    }
    return data;
  }

  /** Runs a view's loading; a refused token sends the operator back to the sign-in form. */
  async function guarded(container, load) {
    const mine = ++generation;
    container.replaceChildren(el("p", { class: "notice" }, "Loading…"));
    try {
      const content = await load();
      if (mine !== generation) return;
      container.replaceChildren(...[content].flat());
    } catch (err) {
      if (mine !== generation) return;
      if (err instanceof ApiError && (err.status === 401 || err.status === 501)) {
        signOut(
          err.status === 401
            ? "The colony refused this token: sign in again."
            : "Operator endpoints are off on this colony: set COLONY_ADMIN_TOKEN.",
        );
        return;
      }
      container.replaceChildren(el("p", { class: "notice error", role: "alert" }, `Could not load: ${err.message}`));
    }
  }

  // --- Sign in ----------------------------------------------------------------------------------

  function signOut(message) {
    sessionStorage.removeItem(TOKEN_KEY);
    renderSignIn(message);
  }

  function renderSignIn(message) {
    generation++;
    const input = el("input", {
      id: "token",
      type: "password",
      name: "token",
      autocomplete: "current-password",
      required: "",
      class: "grow",
    });
    const form = el(
      "form",
      { class: "card", "aria-labelledby": "signin-title" },
      el("h2", { id: "signin-title" }, "Sign in"),
      el("p", { class: "muted" }, "The operator token is the value of COLONY_ADMIN_TOKEN on this colony."),
      message ? el("p", { class: "notice error", role: "alert" }, message) : null,
      el(
        "div",
        { class: "row" },
        el("label", { for: "token" }, "Operator token"),
        input,
        el("button", { type: "submit", class: "primary" }, "Sign in"),
      ),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      try {
        await api("GET", "/v1/admin/overview");
        view = "overview";
        renderShell();
      } catch (err) {
        if (err instanceof ApiError && err.status === 501) signOut("Operator endpoints are off on this colony: set COLONY_ADMIN_TOKEN.");
        else if (err instanceof ApiError && err.status === 401) signOut("The colony refused this token.");
        else signOut(`Could not reach the colony: ${err.message}`);
      }
    });
    app.replaceChildren(form);
    input.focus();
  }

  // --- Shell ------------------------------------------------------------------------------------

  const VIEWS = [
    ["overview", "Overview"],
    ["feed", "Feed"],
    ["activity", "Activity"],
    ["search", "Search"],
    ["trail", "Trail"],
  ];

  function renderShell(trailId) {
    const body = el("div", { id: "view" });
    const nav = el(
      "nav",
      { "aria-label": "Console sections" },
      el(
        "ul",
        { class: "tabs" },
        VIEWS.map(([key, label]) =>
          el(
            "li",
            {},
            button(label, () => {
              view = key;
              renderShell();
              // The tabs are rebuilt: keep the keyboard on the one just chosen.
              app.querySelector('.tabs button[aria-current="page"]')?.focus();
            }),
          ),
        ),
        el(
          "li",
          {},
          button("Sign out", () => signOut("Signed out.")),
        ),
      ),
    );
    for (const b of nav.querySelectorAll("button")) {
      if (b.textContent === VIEWS.find(([k]) => k === view)[1]) b.setAttribute("aria-current", "page");
    }
    app.replaceChildren(nav, body);
    if (view === "overview") guarded(body, overview);
    else if (view === "feed") guarded(body, feed);
    else if (view === "activity") guarded(body, activity);
    else if (view === "search") renderSearch(body);
    else if (view === "trail") renderTrail(body, trailId);
  }

  function openTrail(id) {
    view = "trail";
    renderShell(id);
  }

  // --- Overview: counters and charts ------------------------------------------------------------

  function kpi(label, value) {
    return el("div", { class: "kpi" }, el("div", { class: "value" }, String(value)), el("div", { class: "label" }, label));
  }

  /**
   * A bar chart of hourly values: one group of bars per hour, one bar per series, an axis with
   * the maximum and the first and last hour. `title` names it for screen readers too.
   */
  function chart(title, hours, series) {
    const W = 480;
    const H = 150;
    const left = 34;
    const bottom = 20;
    const top = 8;
    const max = Math.max(1, ...hours.flatMap((h) => series.map((s) => h[s.key])));
    const slot = (W - left) / hours.length;
    const barW = Math.max(1, (slot * 0.8) / series.length);
    const y = (v) => top + (H - top - bottom) * (1 - v / max);
    const total = series.map((s) => hours.reduce((sum, h) => sum + h[s.key], 0));
    const desc = series.map((s, i) => `${s.label}: ${total[i]}`).join(", ");
    const root = svg(
      "svg",
      { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${title}, last ${hours.length} hours. Totals: ${desc}.` },
      svg("line", { class: "axis", x1: left, y1: H - bottom, x2: W, y2: H - bottom }),
      svg("line", { class: "axis", x1: left, y1: top, x2: left, y2: H - bottom }),
      svg("text", { class: "label", x: left - 4, y: top + 8, "text-anchor": "end" }, String(max)),
      svg("text", { class: "label", x: left - 4, y: H - bottom, "text-anchor": "end" }, "0"),
      svg("text", { class: "label", x: left, y: H - 4 }, hourLabel(hours[0].hour)),
      svg("text", { class: "label", x: W, y: H - 4, "text-anchor": "end" }, hourLabel(hours[hours.length - 1].hour)),
    );
    hours.forEach((h, i) => {
      series.forEach((s, j) => {
        const v = h[s.key];
        if (v <= 0) return;
        const x = left + i * slot + slot * 0.1 + j * barW;
        const rect = svg("rect", {
          class: `bar${j + 1}`,
          x: x.toFixed(2),
          y: y(v).toFixed(2),
          width: barW.toFixed(2),
          height: (H - bottom - y(v)).toFixed(2),
        });
        rect.append(svg("title", {}, `${hourLabel(h.hour)}: ${s.label} ${v}`));
        root.append(rect);
      });
    });
    return el(
      "figure",
      { class: "card chart" },
      el("h3", {}, title),
      root,
      el(
        "ul",
        { class: "legend" },
        series.map((s, i) => el("li", {}, el("span", { class: `swatch bar${i + 1}`, "aria-hidden": "true" }), `${s.label} (${total[i]})`)),
      ),
    );
  }

  function hourLabel(iso) {
    const d = new Date(iso);
    return `${d.toLocaleDateString(undefined, { month: "short", day: "numeric" })} ${String(d.getHours()).padStart(2, "0")}:00`;
  }

  async function overview() {
    const [o, s] = await Promise.all([api("GET", "/v1/admin/overview"), api("GET", "/v1/admin/series?hours=48")]);
    const st = o.trails_by_state;
    return [
      el("h2", {}, "Overview"),
      el(
        "div",
        { class: "kpis" },
        kpi("indexed trails", st.indexed),
        kpi("queued", st.queued),
        kpi("merged", st.merged),
        kpi("rejected", st.rejected),
        kpi("removed (90 days)", st.removed),
        kpi("queue depth", o.queue_depth),
        kpi("store size", bytes(o.store_bytes)),
        kpi("outcomes (24 h)", o.stats.outcomes_24h),
        kpi("agents (24 h)", o.stats.agents_24h),
        kpi("tokens saved (24 h)", o.stats.tokens_saved_24h),
      ),
      el(
        "div",
        { class: "grid" },
        chart("Searches per hour", s.hours, [{ key: "searches", label: "searches" }]),
        chart("Publishes and outcome reports per hour", s.hours, [
          { key: "publishes", label: "publishes" },
          { key: "outcomes", label: "outcome reports" },
        ]),
        chart("Enrichment per hour", s.hours, [
          { key: "indexed", label: "indexed" },
          { key: "merged", label: "merged" },
          { key: "rejected", label: "rejected" },
          { key: "failed", label: "failed attempts" },
        ]),
        chart("Queue depth (hourly peak)", s.hours, [{ key: "queue_depth", label: "peak queue depth" }]),
      ),
      o.stats.hot.length > 0
        ? el(
            "section",
            { class: "card" },
            el("h3", {}, "Hot searches (24 h)"),
            el(
              "table",
              {},
              el(
                "thead",
                {},
                el("tr", {}, el("th", {}, "label"), el("th", { class: "num" }, "clients"), el("th", { class: "num" }, "searches")),
              ),
              el(
                "tbody",
                {},
                o.stats.hot.map((h) =>
                  el(
                    "tr",
                    {},
                    el("td", {}, h.label),
                    el("td", { class: "num" }, String(h.clients)),
                    el("td", { class: "num" }, String(h.searches)),
                  ),
                ),
              ),
            ),
          )
        : null,
    ];
  }

  // --- Feed and activity ------------------------------------------------------------------------

  async function feed() {
    const f = await api("GET", "/v1/feed?limit=50");
    if (f.items.length === 0) return [el("h2", {}, "Feed"), el("p", { class: "notice" }, "No indexed trail yet.")];
    return [
      el("h2", {}, "Feed"),
      el(
        "ul",
        { class: "fields", id: "feed-list" },
        f.items.map((it) =>
          el(
            "li",
            { class: "card" },
            el("div", { class: "item-title" }, ...markedText(it.trail.problem.error)),
            el(
              "p",
              { class: "muted" },
              `${it.category || "uncategorized"} · strength ${fmt(it.strength)} · worked ${it.outcomes.worked}, partly ${it.outcomes.partially_worked}, failed ${it.outcomes.failed} · reinforced ${when(it.reinforced_at)}`,
            ),
            button("Open trail", () => openTrail(it.trail_id)),
          ),
        ),
      ),
    ];
  }

  async function activity() {
    const a = await api("GET", "/v1/activity?limit=50");
    return [
      el("h2", {}, "Recent activity"),
      a.events.length === 0
        ? el("p", { class: "notice" }, "Nothing happened yet.")
        : el(
            "table",
            {},
            el(
              "thead",
              {},
              el("tr", {}, el("th", {}, "when"), el("th", {}, "kind"), el("th", {}, "what"), el("th", {}, "agent"), el("th", {}, "trail")),
            ),
            el(
              "tbody",
              {},
              a.events.map((e) =>
                el(
                  "tr",
                  {},
                  el("td", {}, when(e.at)),
                  el("td", {}, e.kind),
                  el("td", {}, ...markedText(e.text)),
                  el("td", {}, e.agent),
                  el("td", {}, e.trail_id ? button("Open", () => openTrail(e.trail_id)) : "–"),
                ),
              ),
            ),
          ),
    ];
  }

  // --- Search with explanations -----------------------------------------------------------------

  function renderSearch(container) {
    generation++;
    const input = el("input", { id: "query", type: "search", name: "query", required: "", maxlength: "2000", class: "grow" });
    const results = el("div", { id: "search-results" });
    const form = el(
      "form",
      { class: "card", role: "search" },
      el(
        "div",
        { class: "row" },
        el("label", { for: "query" }, "Error text"),
        input,
        el("button", { type: "submit", class: "primary" }, "Search"),
      ),
      el(
        "p",
        { class: "muted" },
        "Runs the colony's search and shows the terms that ranked each result. Operator searches are not recorded.",
      ),
    );
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      guarded(results, async () => explained(await api("POST", "/v1/admin/search", { query: input.value, limit: 10 })));
    });
    container.replaceChildren(el("h2", {}, "Search"), form, results);
    input.focus();
  }

  function explained(answer) {
    if (answer.results.length === 0) return el("p", { class: "notice" }, `No result (fingerprint ${answer.fingerprint}).`);
    const byId = new Map(answer.explanations.map((x) => [x.trail_id, x]));
    return [
      el("p", { class: "muted" }, `Fingerprint ${answer.fingerprint}: ${answer.results.length} result(s), best first.`),
      el(
        "ol",
        { class: "fields" },
        answer.results.map((r) => {
          const x = byId.get(r.trail_id);
          return el(
            "li",
            { class: "card result" },
            el("div", { class: "item-title" }, ...markedText(r.trail.problem.error)),
            el(
              "p",
              { class: "muted" },
              `via ${r.match.via} · score ${fmt(r.match.score)} · strength ${fmt(r.strength)} · risk ${r.risk.level}`,
            ),
            x ? explanationTable(x) : null,
            button("Open trail", () => openTrail(r.trail_id)),
          );
        }),
      ),
    ];
  }

  function explanationTable(x) {
    if (x.via === "fingerprint") {
      return el("p", {}, "Exact fingerprint match: placed first (score 1.0), the same error_type first, then the strongest.");
    }
    const row = (name, input, weight, term) =>
      el(
        "tr",
        {},
        el("th", { scope: "row" }, name),
        el("td", { class: "num" }, input),
        el("td", { class: "num" }, weight),
        el("td", { class: "num" }, fmt(term, 6)),
      );
    return el(
      "table",
      { class: "explanation" },
      el("caption", { class: "muted" }, `How the ${x.fusion} fusion and the coverage re-ranking scored it: ${fmt(x.score, 6)}`),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", {}, "term"),
          el("th", { class: "num" }, "input"),
          el("th", { class: "num" }, "weight"),
          el("th", { class: "num" }, "contribution"),
        ),
      ),
      el(
        "tbody",
        {},
        row(
          "lexical (BM25 / best)",
          x.lexical_score === null ? "not found" : `${fmt(x.lexical_score)} (rank ${x.lexical_rank + 1})`,
          fmt(x.weights.lexical, 2),
          x.terms.lexical,
        ),
        row(
          "cosine",
          x.cosine === null ? "–" : `${fmt(x.cosine)}${x.vector_rank === null ? "" : ` (rank ${x.vector_rank + 1})`}`,
          fmt(x.weights.vector, 2),
          x.terms.vector,
        ),
        row("coverage of the query", x.coverage === null ? "–" : fmt(x.coverage), fmt(x.weights.coverage, 2), x.terms.coverage),
        row("strength", fmt(x.strength), String(x.weights.strength), x.terms.strength),
        row("environment overlap", fmt(x.environment_overlap), String(x.weights.environment), x.terms.environment),
      ),
    );
  }

  // --- One trail: the whole record, and removal ---------------------------------------------------

  function renderTrail(container, trailId) {
    generation++;
    const input = el("input", {
      id: "trail-id",
      type: "text",
      name: "trail-id",
      required: "",
      class: "grow",
      spellcheck: "false",
      value: trailId || "",
    });
    const record = el("div", { id: "trail-record" });
    const form = el(
      "form",
      { class: "card" },
      el(
        "div",
        { class: "row" },
        el("label", { for: "trail-id" }, "Trail id"),
        input,
        el("button", { type: "submit", class: "primary" }, "Open"),
      ),
    );
    const open = () => guarded(record, () => trailRecord(input.value.trim(), record));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      open();
    });
    container.replaceChildren(el("h2", {}, "Trail"), form, record);
    if (trailId) open();
    else input.focus();
  }

  function dl(pairs) {
    return el(
      "dl",
      { class: "facts" },
      pairs.filter(([, v]) => v !== undefined).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v === null ? "–" : String(v))]),
    );
  }

  async function trailRecord(id, container) {
    const t = await api("GET", `/v1/admin/trails/${encodeURIComponent(id)}`);
    const heading = el("h3", { tabindex: "-1" }, `Trail ${t.trail_id}`);
    if (t.status === "removed") {
      return [heading, el("p", { class: "notice" }, "This trail was removed; only its tombstone remains.")];
    }
    const trail = t.trail;
    const parts = [
      heading,
      el(
        "section",
        { class: "card" },
        dl([
          ["status", t.status],
          ["fingerprint", t.fingerprint],
          ["category", t.category],
          ["quality", t.quality === undefined ? undefined : fmt(t.quality)],
          ["strength", t.strength === undefined ? undefined : fmt(t.strength)],
          ["risk", t.risk ? `${t.risk.level}${t.risk.flags.length ? ` (${t.risk.flags.map((f) => f.flag).join(", ")})` : ""}` : undefined],
          [
            "outcomes",
            t.outcomes ? `worked ${t.outcomes.worked}, partly ${t.outcomes.partially_worked}, failed ${t.outcomes.failed}` : undefined,
          ],
          ["merged into", t.merged_into],
          ["reasons", t.reasons ? t.reasons.join(", ") : undefined],
          ["author", t.author],
          ["published", when(t.created_at)],
          ["enriched", when(t.indexed_at)],
          ["last reinforced", when(t.reinforced_at)],
        ]),
      ),
      el(
        "section",
        { class: "card" },
        el("h4", {}, "Problem"),
        el("pre", {}, ...markedText(trail.problem.error)),
        trail.problem.root_cause ? el("p", {}, ...markedText(trail.problem.root_cause)) : null,
        el("h4", {}, "Solution"),
        el("p", {}, ...markedText(trail.solution.summary)),
        trail.solution.steps
          ? el(
              "ol",
              {},
              trail.solution.steps.map((s) => el("li", {}, ...markedText(s))),
            )
          : null,
        trail.solution.commands ? el("pre", {}, ...markedText(trail.solution.commands.join("\n"))) : null,
      ),
      el(
        "section",
        { class: "card" },
        el("h4", {}, `Outcome reports (${t.reports.length})`),
        t.reports.length === 0
          ? el("p", { class: "muted" }, "No report yet.")
          : el(
              "table",
              {},
              el(
                "thead",
                {},
                el(
                  "tr",
                  {},
                  el("th", {}, "when"),
                  el("th", {}, "outcome"),
                  el("th", {}, "counted"),
                  el("th", {}, "agent"),
                  el("th", {}, "notes"),
                ),
              ),
              el(
                "tbody",
                {},
                t.reports.map((o) =>
                  el(
                    "tr",
                    {},
                    el("td", {}, when(o.at)),
                    el("td", {}, o.outcome),
                    el("td", {}, o.counted ? "yes" : "no"),
                    el("td", {}, o.agent),
                    el("td", {}, ...markedText(o.notes || "")),
                  ),
                ),
              ),
            ),
      ),
      el(
        "section",
        { class: "card" },
        el("h4", {}, "History"),
        t.history.length === 0
          ? el("p", { class: "muted" }, "No event.")
          : el(
              "ul",
              {},
              t.history.map((h) => el("li", {}, `${when(h.at)} · ${h.kind} · ${h.text}`)),
            ),
      ),
      removal(t.trail_id, container),
    ];
    queueMicrotask(() => heading.focus());
    return parts;
  }

  function removal(id, container) {
    const panel = el("div", {});
    const ask = button("Remove this trail…", () => {
      const cancel = button("Cancel", () => {
        panel.replaceChildren(ask);
        ask.focus();
      });
      const confirm = button(
        "Remove permanently",
        async () => {
          confirm.disabled = true;
          try {
            await api("DELETE", `/v1/trails/${encodeURIComponent(id)}`, { reason: "removed from the operator console" });
            container.replaceChildren(
              el(
                "p",
                { class: "notice", role: "status", id: "removed-notice" },
                `Trail ${id} was removed. It left search, lookups and the feed; a tombstone stays 90 days.`,
              ),
            );
          } catch (err) {
            if (err instanceof ApiError && (err.status === 401 || err.status === 501))
              return signOut("The colony refused this token: sign in again.");
            confirm.disabled = false;
            panel.append(el("p", { class: "notice error", role: "alert" }, `Removal failed: ${err.message}`));
          }
        },
        "danger",
      );
      panel.replaceChildren(
        el(
          "div",
          { class: "confirm", role: "alertdialog", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-text" },
          el("p", { id: "confirm-title" }, el("strong", {}, "Remove this trail?")),
          el(
            "p",
            { id: "confirm-text" },
            "It is deleted with its outcomes and vectors and cannot be restored; identical content is refused for 90 days.",
          ),
          el("div", { class: "row" }, confirm, cancel),
        ),
      );
      cancel.focus();
    });
    panel.append(ask);
    return el("section", { class: "card" }, el("h4", {}, "Removal"), panel);
  }

  // --- Start ------------------------------------------------------------------------------------

  if (token()) renderShell();
  else renderSignIn();
})();
