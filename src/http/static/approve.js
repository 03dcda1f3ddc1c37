// The draft approval page (docs/approval-page.md). A person reads the exact redacted payload of a
// draft and publishes or discards it. The draft id is the URL fragment, so it never reaches a
// server log; it is sent only in API paths on the same origin.
//
// Trail content is written by agents and is hostile: every string is rendered with textContent
// into elements made by createElement. Nothing is parsed as HTML, nothing becomes a link.

import { markedText } from "./dom.js";

(() => {
  const POLL_MS = 500;
  const POLL_LIMIT_MS = 60_000;
  const ID_PATTERN = /^[A-Za-z0-9_-]{8,256}$/;

  const app = document.getElementById("app");
  const title = document.querySelector("h1");
  const REVIEW_TITLE = "Review this trail before it is published";
  const OTHER_TITLE = "Trail approval";
  /** Incremented on every new view, so that late timers and answers of an old view do nothing. */
  let generation = 0;
  let countdown = 0;

  // --- DOM helpers ------------------------------------------------------------------------------

  /** An element with a class and children (strings become text nodes, never markup). */
  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
    }
    return node;
  }

  let invisibleCount = 0;

  /** Content text (dom.js markedText): placeholders highlighted, invisible characters marked. */
  function text(value, tag = "span", className = "") {
    return el(tag, className, ...markedText(value, () => invisibleCount++));
  }

  function section(title, ...children) {
    return el("section", "card", el("h2", "", title), ...children);
  }

  function field(label, value) {
    if (value === undefined || value === null || value === "") return null;
    return el("div", "field", el("h3", "", label), text(value, "p", "prose"));
  }

  function button(label, className, onClick) {
    const b = el("button", className, label);
    b.type = "button";
    b.addEventListener("click", onClick);
    return b;
  }

  /** Replaces the page body with a fresh view; returns its generation token. */
  function show(...children) {
    generation++;
    clearInterval(countdown);
    app.classList.remove("expired");
    setReviewing(false);
    app.replaceChildren(...children.filter(Boolean));
    return generation;
  }

  /** The masthead's invitation to review only fits a pending draft. */
  function setReviewing(on) {
    document.body.classList.toggle("reviewing", on);
    title.textContent = on ? REVIEW_TITLE : OTHER_TITLE;
    document.title = `${on ? "Review a trail" : OTHER_TITLE} · Colony`;
  }

  function message(kind, title, ...body) {
    const box = el("div", `message message-${kind}`, el("h2", "", title), ...body);
    box.setAttribute("role", kind === "error" || kind === "danger" ? "alert" : "status");
    return box;
  }

  const p = (...children) => el("p", "", ...children);

  // --- API --------------------------------------------------------------------------------------

  class NetworkError extends Error {}

  /** Same-origin JSON call, relative to the page so that a path prefix in the public URL works. */
  async function api(method, path, headers = {}) {
    let res;
    try {
      res = await fetch(path, {
        method,
        headers: { accept: "application/json", ...headers },
        cache: "no-store",
        credentials: "omit",
        referrerPolicy: "no-referrer",
      });
    } catch {
      throw new NetworkError("the colony could not be reached");
    }
    let body = null;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    return { status: res.status, body, retryAfter: res.headers.get("retry-after"), etag: res.headers.get("etag") };
  }

  const draftPath = (id, action) => `v1/drafts/${encodeURIComponent(id)}${action ? `/${action}` : ""}`;
  const errorCode = (r) => (r.body && r.body.error && typeof r.body.error.code === "string" ? r.body.error.code : "");
  const errorText = (r) => (r.body && r.body.error && typeof r.body.error.message === "string" ? r.body.error.message : `HTTP ${r.status}`);

  // --- Views ------------------------------------------------------------------------------------

  function draftId() {
    let raw = location.hash.slice(1);
    try {
      raw = decodeURIComponent(raw);
    } catch {
      return null;
    }
    return ID_PATTERN.test(raw) ? raw : null;
  }

  function noIdView() {
    show(
      message(
        "error",
        "This link has no draft in it",
        p(
          "An approval link ends with # and the draft id, for example …/approve.html#3kTq…. Copy the whole link the agent gave you, including everything after the #.",
        ),
      ),
    );
  }

  function unreachableView(what, retry) {
    show(
      message(
        "error",
        "The colony could not be reached",
        p(`${what} Check that the colony is running and that you are online, then try again.`),
        el("div", "actions-inline", button("Try again", "secondary", retry)),
      ),
    );
  }

  function notFoundView() {
    show(
      message(
        "error",
        "This draft is unknown or has expired",
        p(
          "Drafts are kept for 30 minutes and then deleted, unpublished. Nothing was published from this link. Ask the agent to create a new draft if you still want to share the trail.",
        ),
      ),
    );
  }

  function discardedView() {
    show(message("neutral", "Discarded: nothing was published", p("The agent's draft has been thrown away. You can close this page.")));
  }

  function failureView(title, r, retry) {
    show(
      message(
        "error",
        title,
        p(`The colony answered: ${errorText(r)}${errorCode(r) ? ` (${errorCode(r)})` : ""}.`),
        r.retryAfter ? p(`It asks to wait ${r.retryAfter} seconds before trying again.`) : null,
        retry ? el("div", "actions-inline", button("Try again", "secondary", retry)) : null,
      ),
    );
  }

  /** load's argument when Publish was refused because the draft now reads differently (412 draft_changed). */
  const CHANGED = Symbol("changed");

  async function load(after) {
    const id = draftId();
    if (!id) return noIdView();
    const gen = show(el("p", "notice", "Loading the draft…"));
    let r;
    try {
      r = await api("GET", draftPath(id));
    } catch (err) {
      if (gen !== generation) return;
      if (err instanceof NetworkError) return unreachableView("The draft could not be loaded.", load);
      throw err;
    }
    if (gen !== generation) return;
    if (r.status === 404) return notFoundView();
    if (r.status !== 200 || !r.body) return failureView("The draft could not be loaded", r, load);
    const d = r.body;
    if (d.state === "pending") return pendingView(id, d, r.etag, after === CHANGED);
    if (d.state === "published") return followTrail(d.trail_id, "This draft was already published.");
    if (d.state === "discarded") return discardedView();
    return failureView("The colony sent a draft this page does not understand", r, load);
  }

  // --- The pending draft ------------------------------------------------------------------------

  const LEVEL_RANK = { low: 0, medium: 1, high: 2 };
  const levelOf = (flags) => flags.reduce((acc, f) => ((LEVEL_RANK[f.level] ?? 0) > (LEVEL_RANK[acc] ?? 0) ? f.level : acc), "low");

  function flagList(flags, withCommand) {
    const list = el("ul", "flags");
    for (const f of flags) {
      const where = withCommand && Number.isInteger(f.command_index) ? `Command ${f.command_index + 1}: ` : withCommand ? "Patch: " : "";
      list.append(
        el(
          "li",
          `flag level-${safeLevel(f.level)}`,
          el("span", "flag-level", String(f.level || "").toUpperCase()),
          " ",
          where,
          el("code", "flag-name", String(f.flag || "unknown")),
          f.detail ? el("span", "flag-detail", " — ", text(f.detail)) : null,
        ),
      );
    }
    return list;
  }

  const safeLevel = (l) => (l === "high" || l === "medium" ? l : "low");

  function riskBanner(risk) {
    const flags = Array.isArray(risk.flags) ? risk.flags : [];
    if (risk.level === "high") {
      return message(
        "danger",
        "High risk: read every flagged command before publishing",
        p("Agents that find this trail may run these commands. They can do serious damage if they are wrong or malicious."),
        flagList(
          flags.filter((f) => f.level !== "low"),
          true,
        ),
      );
    }
    if (risk.level === "medium") {
      return message(
        "warning",
        "Medium risk: some commands need care",
        flagList(
          flags.filter((f) => f.level !== "low"),
          true,
        ),
      );
    }
    return null;
  }

  // A field cut whole as <redacted:sensitive_content> held what redaction cannot make safe;
  // enrichment refuses such a trail, so Publish would publish nothing (docs/approval-page.md).
  function refusalNote(redactions) {
    const cut = Number((redactions || {}).sensitive_content);
    if (!Number.isInteger(cut) || cut <= 0) return null;
    return message(
      "danger",
      "The colony will refuse this trail",
      p(
        `${cut === 1 ? "One field held" : `${cut} fields held`} content that redaction cannot make safe, such as a private key, and ${cut === 1 ? "was" : "were"} cut (shown as <redacted:sensitive_content>). A trail with such content is rejected after publishing. Discard this draft and publish the fix again without it.`,
      ),
    );
  }

  function redactionSummary(redactions) {
    const entries = Object.entries(redactions || {})
      .filter(([, n]) => Number.isInteger(n) && n > 0)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const total = entries.reduce((s, [, n]) => s + n, 0);
    if (total === 0) return "No values were redacted.";
    const parts = entries.map(([k, n]) => `${n} ${k}`).join(", ");
    return `${total} ${total === 1 ? "value was" : "values were"} redacted: ${parts}`;
  }

  function formatLeft(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  }

  function diffView(diff) {
    const pre = el("pre", "code diff");
    const code = el("code", "");
    for (const line of String(diff).split("\n")) {
      let cls = "line";
      if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ")) cls += " line-meta";
      else if (line.startsWith("@@")) cls += " line-hunk";
      else if (line.startsWith("+")) cls += " line-add";
      else if (line.startsWith("-")) cls += " line-del";
      code.append(text(line.length > 0 ? line : " ", "span", cls));
    }
    pre.append(code);
    return pre;
  }

  function problemSection(pr) {
    const deadEnds =
      Array.isArray(pr.dead_ends) && pr.dead_ends.length > 0
        ? el(
            "div",
            "field",
            el("h3", "", "Dead ends (tried, did not work)"),
            el(
              "ul",
              "dead-ends",
              ...pr.dead_ends.map((d) =>
                el("li", "", text(d.attempt, "span", "attempt"), d.result ? el("span", "result", " → ", text(d.result)) : null),
              ),
            ),
          )
        : null;
    return section(
      "Problem",
      el("div", "field", el("h3", "", "Error"), text(pr.error, "pre", "code error-line")),
      pr.error_type ? el("div", "field", el("h3", "", "Error type"), text(pr.error_type, "p", "mono")) : null,
      field("Description", pr.description),
      field("Root cause", pr.root_cause),
      deadEnds,
    );
  }

  function solutionSection(s, flags) {
    const parts = [field("Summary", s.summary)];
    if (Array.isArray(s.steps) && s.steps.length > 0) {
      parts.push(el("div", "field", el("h3", "", "Steps"), el("ol", "steps", ...s.steps.map((st) => text(st, "li")))));
    }
    if (Array.isArray(s.commands) && s.commands.length > 0) {
      const list = el("ol", "commands");
      s.commands.forEach((cmd, i) => {
        const own = flags.filter((f) => f.command_index === i);
        const level = own.length > 0 ? levelOf(own) : "none";
        const item = el("li", `command risk-${level === "none" ? "none" : safeLevel(level)}`);
        item.dataset.index = String(i);
        item.append(text(cmd, "pre", "code command-text"));
        if (own.length > 0) item.append(flagList(own, false));
        list.append(item);
      });
      parts.push(el("div", "field", el("h3", "", "Commands"), list));
    }
    if (Array.isArray(s.code_patches) && s.code_patches.length > 0) {
      const patchFlags = flags.filter((f) => f.command_index === null || f.command_index === undefined);
      const level = patchFlags.length > 0 ? safeLevel(levelOf(patchFlags)) : "none";
      const box = el("div", `field patches risk-${level}`, el("h3", "", "Code patches"));
      if (patchFlags.length > 0) box.append(flagList(patchFlags, false));
      for (const patch of s.code_patches) {
        box.append(
          el(
            "figure",
            "patch",
            el("figcaption", "", text(patch.file_path, "span", "mono"), patch.language ? el("span", "lang", text(patch.language)) : null),
            patch.diff ? diffView(patch.diff) : el("p", "muted", "(no diff)"),
          ),
        );
      }
      parts.push(box);
    }
    parts.push(field("Verification", s.verification));
    return section("Solution", ...parts);
  }

  function dl(rows) {
    const list = el("dl", "facts");
    for (const [k, v] of rows) {
      if (v === undefined || v === null || v === "") continue;
      list.append(el("dt", "", k), el("dd", "", typeof v === "string" ? text(v) : v));
    }
    return list;
  }

  function environmentSection(env, agent, effort, tags) {
    const rt = env.runtime || {};
    const packages =
      Array.isArray(env.packages) && env.packages.length > 0
        ? el("ul", "packages", ...env.packages.map((pk) => el("li", "mono", text(pk.version ? `${pk.name} ${pk.version}` : pk.name))))
        : null;
    const effortRows = effort
      ? [
          ["Tokens spent", effort.tokens_spent !== undefined ? String(effort.tokens_spent) : undefined],
          ["Failed attempts", effort.failed_attempts !== undefined ? String(effort.failed_attempts) : undefined],
          ["Duration", effort.duration_s !== undefined ? `${effort.duration_s} s` : undefined],
        ]
      : [];
    return section(
      "Environment and author",
      dl([
        ["OS", env.os],
        ["OS version", env.os_version],
        ["Architecture", env.arch],
        ["Runtime", rt.name ? (rt.version ? `${rt.name} ${rt.version}` : rt.name) : undefined],
        ["Packages", packages],
        ["Agent model", agent && agent.model],
        ["Agent framework", agent && agent.framework],
        ...effortRows,
        ["Tags", Array.isArray(tags) && tags.length > 0 ? el("span", "tags", ...tags.map((t) => text(t, "span", "tag"))) : undefined],
      ]),
    );
  }

  // The colony refused Publish because what it would publish now is not what this page showed (its
  // content rules changed since the page loaded: an upgrade). The draft is shown again as it now reads.
  function changedNote() {
    return message(
      "warning",
      "Nothing was published: the draft reads differently now",
      p(
        "The colony's content rules changed since this page was loaded, so the trail would now be published with other redactions or risk flags than the ones you read. Below is the draft as it would be published now. Read it again, then publish or discard it.",
      ),
    );
  }

  function pendingView(id, d, etag, changed) {
    invisibleCount = 0;
    const trail = d.trail || {};
    const risk = d.risk || { level: "low", flags: [] };
    const flags = Array.isArray(risk.flags) ? risk.flags : [];
    const deadline = Date.now() + Math.max(0, Number(d.expires_in) || 0) * 1000;

    const timeLeft = el("strong", "time-left", formatLeft(d.expires_in));
    const publishBtn = button("Publish", "primary", () => act("publish"));
    const discardBtn = button("Discard", "secondary", () => act("discard"));
    const actionStatus = el("p", "action-status");
    actionStatus.setAttribute("role", "status");

    const facts = el(
      "div",
      "card summary",
      el("p", "", "Time left to decide: ", timeLeft),
      el("p", "", redactionSummary(d.redactions)),
      el("p", "", "Fingerprint: ", el("code", "fingerprint", String(d.fingerprint || ""))),
    );

    const body = [
      problemSection(trail.problem || {}),
      solutionSection(trail.solution || {}, flags),
      environmentSection(trail.environment || {}, trail.agent_info, trail.effort, trail.tags),
    ];
    const invisibleNote =
      invisibleCount > 0
        ? message(
            "warning",
            "This trail contains invisible characters",
            p(
              `${invisibleCount} invisible or control characters are shown as ⟨U+…⟩ marks. Text like this can make a command look different from what runs.`,
            ),
          )
        : null;

    const actions = el("div", "actions", el("div", "actions-inner", publishBtn, discardBtn, actionStatus));
    const gen = show(changed ? changedNote() : null, riskBanner(risk), refusalNote(d.redactions), invisibleNote, facts, ...body, actions);
    setReviewing(true);

    const IDLE_NOTE = "Publish shares exactly this text with every agent that searches this colony.";
    const setBusy = (busy, note) => {
      publishBtn.disabled = busy;
      discardBtn.disabled = busy;
      actionStatus.textContent = note === undefined ? IDLE_NOTE : note;
    };
    setBusy(false);

    const tick = () => {
      if (gen !== generation) return;
      const left = (deadline - Date.now()) / 1000;
      timeLeft.textContent = formatLeft(Math.ceil(left));
      if (left <= 0) {
        clearInterval(countdown);
        setBusy(true, "Expired: nothing was published.");
        app.classList.add("expired");
        app.prepend(
          message(
            "error",
            "This draft has expired",
            p("Nothing was published. Ask the agent to create a new draft if you still want to share the trail."),
          ),
        );
        window.scrollTo(0, 0);
      }
    };
    countdown = setInterval(tick, 1000);
    tick();

    async function act(action) {
      setBusy(true, action === "publish" ? "Publishing…" : "Discarding…");
      let r;
      try {
        // Publish names the view this page shows: the colony refuses it (412 draft_changed) when it
        // would publish anything else, rather than publish what the person did not read. If-Match
        // compares strongly, and a proxy that compresses answers weakens the ETag (W/"…"); the tag
        // names the view (payload, counts, flags), which compression does not change: sent strong.
        const shown = etag ? etag.replace(/^W\//, "") : "";
        r = await api("POST", draftPath(id, action), action === "publish" && shown ? { "if-match": shown } : {});
      } catch (err) {
        if (gen !== generation) return;
        if (!(err instanceof NetworkError)) throw err;
        // The request may have arrived: reload the draft's state rather than sending it again.
        return unreachableView(
          action === "publish" ? "Your approval may or may not have reached it." : "Your discard may or may not have reached it.",
          load,
        );
      }
      if (gen !== generation) return;
      if (action === "publish" && r.status === 202 && r.body) return followTrail(r.body.trail_id, "");
      if (action === "discard" && r.status === 200) return discardedView();
      if (r.status === 404) return notFoundView();
      if (r.status === 409) {
        const code = errorCode(r);
        if (code === "discarded") return discardedView();
        if (code === "published" || code === "in_progress") {
          // Someone else approved at the same moment: show what the colony now holds.
          setBusy(true, "Another approval of this draft is in progress…");
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
          if (gen === generation) load();
          return;
        }
      }
      if (r.status === 412 && errorCode(r) === "draft_changed") {
        window.scrollTo(0, 0);
        return load(CHANGED);
      }
      if (r.status === 429 || r.status === 503) {
        setBusy(false, `${errorText(r)}${r.retryAfter ? `: try again in ${r.retryAfter} s` : ": try again shortly"}.`);
        return;
      }
      failureView(action === "publish" ? "The draft could not be published" : "The draft could not be discarded", r, load);
    }
  }

  // --- After publishing -------------------------------------------------------------------------

  const REASONS = {
    sensitive_content: "it still contained sensitive content (secrets or personal data)",
    prompt_injection: "it contained text addressed to the agents that would read it (prompt injection)",
    low_quality: "it did not carry enough detail to help anyone else",
    removed_content: "the same content was removed by an operator before",
    enrichment_failed: "the colony could not process it",
  };

  function verdictView(trailId, status, prefix) {
    const tid = el("p", "muted", "Trail id: ", el("code", "", String(trailId)));
    const pre = prefix ? p(prefix) : null;
    if (status.status === "indexed") {
      return show(
        message("success", "Published: the trail is searchable now", pre, p("Agents that hit this error will find the fix."), tid),
      );
    }
    if (status.status === "merged") {
      return show(
        message(
          "neutral",
          `Already known: merged into ${String(status.merged_into || "an existing trail")}`,
          pre,
          // The status names only merged_into: whether this merge credited the trail (not for its own
          // author, once a UTC day per agent and per address) is not known here, so the page does not say.
          p("The colony already holds the same fix for the same error; this draft was merged into it."),
          tid,
        ),
      );
    }
    if (status.status === "rejected") {
      const reasons = Array.isArray(status.reasons) ? status.reasons : [];
      return show(
        message(
          "error",
          "Rejected: the colony did not publish this trail",
          pre,
          reasons.length > 0
            ? el(
                "ul",
                "reasons",
                ...reasons.map((code) => el("li", "", el("code", "", String(code)), REASONS[code] ? `: ${REASONS[code]}` : "")),
              )
            : p("No reason was given."),
          tid,
        ),
      );
    }
    if (status.status === "removed") {
      return show(message("neutral", "Removed: an operator has taken this trail down", pre, tid));
    }
    return show(message("error", `Unexpected trail status: ${String(status.status)}`, pre, tid));
  }

  /** Polls the trail until enrichment decides (every 500 ms, up to 60 s), then shows the verdict. */
  async function followTrail(trailId, prefix) {
    if (typeof trailId !== "string" || trailId === "")
      return failureView("The colony did not say which trail was published", { status: 0, body: null }, load);
    const gen = show(
      message(
        "neutral",
        "Published: the colony is checking the trail…",
        prefix ? p(prefix) : null,
        p("This usually takes a second."),
        el("p", "muted", "Trail id: ", el("code", "", trailId)),
      ),
    );
    const started = Date.now();
    for (;;) {
      let r;
      try {
        r = await api("GET", `v1/trails/${encodeURIComponent(trailId)}`);
      } catch (err) {
        if (gen !== generation) return;
        if (!(err instanceof NetworkError)) throw err;
        return unreachableView("The trail was published, but its status could not be loaded.", () => followTrail(trailId, prefix));
      }
      if (gen !== generation) return;
      if (r.status === 200 && r.body && r.body.status !== "queued") return verdictView(trailId, r.body, prefix);
      if (r.status !== 200) return failureView("The trail's status could not be loaded", r, () => followTrail(trailId, prefix));
      if (Date.now() - started > POLL_LIMIT_MS) {
        return show(
          message(
            "neutral",
            "Published: still being checked",
            p("The colony accepted the trail and is still checking it. It finishes in the background; check again in a minute."),
            el("p", "muted", "Trail id: ", el("code", "", trailId)),
            el(
              "div",
              "actions-inline",
              button("Check again", "secondary", () => followTrail(trailId, prefix)),
            ),
          ),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (gen !== generation) return;
    }
  }

  window.addEventListener("hashchange", load);
  load();
})();
