// The API reference page: renders this colony's /openapi.json. Every string from the document is
// set as text (textContent), never parsed as HTML; nothing is loaded from another origin.

import { el } from "./dom.js";

(() => {
  const METHOD_ORDER = ["get", "post", "put", "patch", "delete"];

  const refName = (ref) => ref.replace("#/components/schemas/", "");
  const anchor = (method, path) => `op-${method}${path.replace(/[^A-Za-z0-9]+/g, "-").replace(/-+$/, "")}`;

  /** The constraints of a schema as short words: "1..2000 chars", "≤ 50 items", a pattern. */
  function constraints(s) {
    const out = [];
    if (s.minLength !== undefined || s.maxLength !== undefined) out.push(`${s.minLength ?? 0}..${s.maxLength ?? "∞"} chars`);
    if (s.minimum !== undefined || s.maximum !== undefined) out.push(`${s.minimum ?? "−∞"}..${s.maximum ?? "∞"}`);
    if (s.maxItems !== undefined) out.push(`≤ ${s.maxItems} items`);
    if (s.pattern) out.push(`pattern ${s.pattern}`);
    if (s.format) out.push(s.format);
    if (s.default !== undefined) out.push(`default ${JSON.stringify(s.default)}`);
    return out.join(", ");
  }

  /** A one-line type label for a schema. */
  function typeLabel(s) {
    if (!s || typeof s !== "object") return "any";
    if (s.$ref) return refName(s.$ref);
    if (s.const !== undefined) return JSON.stringify(s.const);
    if (s.anyOf) {
      if (s.anyOf.every((a) => a.const !== undefined)) return s.anyOf.map((a) => JSON.stringify(a.const)).join(" | ");
      return s.anyOf.map(typeLabel).join(" | ");
    }
    if (s.type === "array") return `${typeLabel(s.items)}[]`;
    if (s.type === "object" && s.patternProperties) return "map";
    return s.type || "any";
  }

  /** A schema as a nested list of fields; named schemas link to their definition. */
  function schemaView(s, depth) {
    if (!s) return el("span", {}, "any");
    if (s.$ref) {
      const name = refName(s.$ref);
      return el("a", { href: `#schema-${name}`, class: "ref" }, name);
    }
    if (s.type === "array") {
      return el("div", {}, el("span", { class: "type" }, "array of "), schemaView(s.items, depth));
    }
    if (s.anyOf && !s.anyOf.every((a) => a.const !== undefined)) {
      return el(
        "div",
        {},
        el("span", { class: "type" }, "one of:"),
        el(
          "ol",
          { class: "variants" },
          s.anyOf.map((v) => el("li", {}, schemaView(v, depth + 1))),
        ),
      );
    }
    if (s.type === "object" && s.properties) {
      const required = new Set(s.required || []);
      const rows = Object.entries(s.properties).map(([name, p]) =>
        el(
          "li",
          {},
          el("code", { class: "field" }, name),
          " ",
          el("span", { class: "type" }, typeLabel(p)),
          required.has(name) ? el("span", { class: "req" }, " required") : null,
          constraints(p) ? el("span", { class: "muted" }, ` (${constraints(p)})`) : null,
          p.description ? el("span", { class: "muted" }, ` — ${p.description}`) : null,
          nested(p, depth),
        ),
      );
      return el("ul", { class: "fields" }, rows);
    }
    const c = constraints(s);
    return el("span", { class: "type" }, typeLabel(s) + (c ? ` (${c})` : ""));
  }

  /** Inline objects (and arrays of them) are expanded under their field; named ones are links. */
  function nested(p, depth) {
    const inner = p.type === "array" ? p.items : p;
    if (!inner || inner.$ref || depth > 6) return null;
    if ((inner.type === "object" && inner.properties) || (inner.anyOf && !inner.anyOf.every((a) => a.const !== undefined))) {
      return schemaView(inner, depth + 1);
    }
    return null;
  }

  /** A named schema shown with its fields under the operation (one level: deeper names stay links). */
  function expanded(doc, s) {
    if (!s || !s.$ref) return schemaView(s, 0);
    const name = refName(s.$ref);
    const target = doc.components.schemas[name];
    return el("div", {}, el("a", { href: `#schema-${name}`, class: "ref" }, name), target ? schemaView(target, 1) : null);
  }

  function operationView(doc, path, method, op) {
    const id = anchor(method, path);
    const parts = [];
    const params = (op.parameters || []).map((p) => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop()] : p));
    if (params.length > 0) {
      parts.push(
        el("h4", {}, "Parameters"),
        el(
          "ul",
          { class: "fields" },
          params.map((p) =>
            el(
              "li",
              {},
              el("code", { class: "field" }, p.name),
              " ",
              el("span", { class: "muted" }, `in ${p.in}`),
              " ",
              el("span", { class: "type" }, typeLabel(p.schema)),
              p.required ? el("span", { class: "req" }, " required") : null,
              constraints(p.schema || {}) ? el("span", { class: "muted" }, ` (${constraints(p.schema)})`) : null,
              p.description ? el("span", { class: "muted" }, ` — ${p.description}`) : null,
            ),
          ),
        ),
      );
    }
    if (op.requestBody) {
      const body = op.requestBody.content["application/json"];
      parts.push(el("h4", {}, `Request body${op.requestBody.required ? "" : " (optional)"}`), expanded(doc, body && body.schema));
    }
    parts.push(el("h4", {}, "Responses"));
    const responses = el("dl", { class: "responses" });
    for (const [status, r] of Object.entries(op.responses)) {
      const content = r.content && Object.values(r.content)[0];
      responses.append(
        el("dt", {}, el("span", { class: `status s${status[0]}` }, status)),
        el("dd", {}, el("p", {}, r.description), content ? expanded(doc, content.schema) : null),
      );
    }
    parts.push(responses);
    return el(
      "section",
      { class: "operation", id },
      el(
        "h3",
        {},
        el("span", { class: `method m-${method}` }, method.toUpperCase()),
        " ",
        el("code", {}, path),
        op.security ? el("span", { class: "badge" }, "operator token") : null,
      ),
      el("p", {}, op.summary || ""),
      el("details", {}, el("summary", {}, "Parameters, body and responses"), parts),
    );
  }

  function render(doc) {
    const main = document.getElementById("routes");
    const nav = document.getElementById("nav");
    main.replaceChildren();
    const byTag = new Map();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of METHOD_ORDER) {
        const op = item[method];
        if (!op) continue;
        const tag = (op.tags && op.tags[0]) || "Other";
        if (!byTag.has(tag)) byTag.set(tag, []);
        byTag.get(tag).push({ path, method, op });
      }
    }
    main.append(
      el("p", { class: "muted" }, `${doc.info.title} ${doc.info.version} · OpenAPI ${doc.openapi}. ${doc.info.description || ""}`),
    );
    const navList = el("ul", {});
    for (const [tag, ops] of byTag) {
      main.append(el("h2", { id: `tag-${tag}` }, tag));
      const sub = el("ul", {});
      for (const { path, method, op } of ops) {
        main.append(operationView(doc, path, method, op));
        sub.append(
          el(
            "li",
            {},
            el("a", { href: `#${anchor(method, path)}` }, el("span", { class: `method m-${method}` }, method.toUpperCase()), " ", path),
          ),
        );
      }
      navList.append(el("li", {}, el("a", { href: `#tag-${tag}` }, tag), sub));
    }
    main.append(el("h2", { id: "schemas" }, "Schemas"));
    for (const [name, s] of Object.entries(doc.components.schemas)) {
      main.append(
        el(
          "section",
          { class: "schema", id: `schema-${name}` },
          el("h3", {}, name),
          s.description ? el("p", { class: "muted" }, s.description) : null,
          schemaView(s, 0),
        ),
      );
    }
    navList.append(el("li", {}, el("a", { href: "#schemas" }, "Schemas")));
    nav.replaceChildren(el("h2", { class: "visually-hidden" }, "Routes"), navList);
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  }

  async function load() {
    try {
      const res = await fetch("openapi.json", { headers: { accept: "application/json" } });
      if (!res.ok) throw new Error(`openapi.json answered ${res.status}`);
      render(await res.json());
    } catch (err) {
      const main = document.getElementById("routes");
      main.replaceChildren(el("p", { class: "notice error", role: "alert" }, `The API description could not be loaded: ${err.message}`));
    }
  }

  load();
})();
