// Markup strippers for the corpus build: HTML, roff (man pages), POD, and plain paragraphs.
// Each turns a document into paragraphs of plain text. All are single linear scans.

const ENTITIES: Record<string, string> = {
  lt: "<",
  gt: ">",
  amp: "&",
  quot: '"',
  apos: "'",
  nbsp: " ",
  ndash: "-",
  mdash: "-",
  hellip: "...",
  rsquo: "'",
  lsquo: "'",
  rdquo: '"',
  ldquo: '"',
  times: "x",
  larr: " ",
  rarr: " ",
};

function decodeEntity(name: string): string {
  if (name.startsWith("#x") || name.startsWith("#X")) {
    const n = Number.parseInt(name.slice(2), 16);
    return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : " ";
  }
  if (name.startsWith("#")) {
    const n = Number.parseInt(name.slice(1), 10);
    return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : " ";
  }
  return ENTITIES[name] ?? " ";
}

const BLOCK_TAGS = new Set([
  "p",
  "div",
  "li",
  "ul",
  "ol",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "pre",
  "tr",
  "br",
  "dt",
  "dd",
  "dl",
  "table",
  "section",
  "td",
  "th",
  "blockquote",
  "article",
  "header",
  "footer",
  "summary",
  "details",
  "hr",
  "caption",
  "figure",
  "main",
  "aside",
  "title",
]);
const SKIP_TAGS = new Set(["script", "style", "nav", "head", "noscript", "svg", "button"]);

/** HTML to paragraphs: block tags break paragraphs; inside <pre>, each line is its own paragraph. */
export function htmlToParagraphs(html: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inPre = 0;
  let i = 0;
  const n = html.length;
  const breakPara = () => {
    const t = cur.trim();
    if (t.length > 0) out.push(t);
    cur = "";
  };
  while (i < n) {
    const c = html.charCodeAt(i);
    if (c === 60) {
      // '<'
      if (html.startsWith("<!--", i)) {
        const e = html.indexOf("-->", i + 4);
        i = e < 0 ? n : e + 3;
        continue;
      }
      const e = html.indexOf(">", i + 1);
      if (e < 0) break;
      let j = i + 1;
      const closing = html.charCodeAt(j) === 47;
      if (closing) j++;
      let k = j;
      while (k < e) {
        const ch = html.charCodeAt(k);
        if (ch === 32 || ch === 9 || ch === 10 || ch === 13 || ch === 47) break;
        k++;
      }
      const tag = html.slice(j, k).toLowerCase();
      i = e + 1;
      if (!closing && SKIP_TAGS.has(tag)) {
        const end = html.toLowerCase().indexOf(`</${tag}`, i);
        i = end < 0 ? n : end;
        continue;
      }
      if (tag === "pre") inPre += closing ? -1 : 1;
      if (inPre < 0) inPre = 0;
      if (BLOCK_TAGS.has(tag)) breakPara();
      else if (tag === "code" || tag === "span" || tag === "a") {
        // inline: nothing
      } else cur += " ";
      continue;
    }
    if (c === 38) {
      // '&'
      const semi = html.indexOf(";", i + 1);
      if (semi > 0 && semi - i <= 10) {
        cur += decodeEntity(html.slice(i + 1, semi));
        i = semi + 1;
        continue;
      }
    }
    if (c === 10) {
      if (inPre > 0) breakPara();
      else cur += " ";
      i++;
      continue;
    }
    cur += html[i];
    i++;
  }
  breakPara();
  return out;
}

/** Plain text (Markdown, reStructuredText, AsciiDoc, info): paragraphs split at blank lines. */
export function textToParagraphs(text: string): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\u001f/g, " ").trim();
    if (line.length === 0) {
      if (cur.length) out.push(cur.join(" "));
      cur = [];
    } else cur.push(line);
  }
  if (cur.length) out.push(cur.join(" "));
  return out;
}

/** POD (Perl docs): drop =command words and X<> style markup letters, then plain paragraphs. */
export function podToParagraphs(text: string): string[] {
  const cleaned = text
    .split("\n")
    .map((l) => (l.startsWith("=") ? l.replace(/^=[a-z0-9]+/, "") : l))
    .join("\n")
    .replace(/\b[BICFLSXZE]<+/g, " ");
  return textToParagraphs(cleaned);
}

// roff macros whose arguments are running text (man and mdoc).
const ROFF_TEXT_MACROS = new Set([
  "B",
  "I",
  "BI",
  "IB",
  "BR",
  "RB",
  "IR",
  "RI",
  "SM",
  "SB",
  "SH",
  "SS",
  "TP",
  "IP",
  "HP",
  "UR",
  "MT",
  "Nm",
  "Nd",
  "Fl",
  "Ar",
  "Op",
  "Xr",
  "Cm",
  "Em",
  "Dq",
  "Sq",
  "Ql",
  "Pa",
  "Ev",
  "Er",
  "Fn",
  "Fa",
  "Ft",
  "Va",
  "Dv",
  "Li",
  "Sy",
  "It",
  "Sh",
  "Ss",
  "Ic",
  "Ad",
  "Aq",
  "Bq",
  "Pq",
  "Qq",
  "St",
  "Tn",
]);
const ROFF_BREAK_MACROS = new Set([
  "PP",
  "LP",
  "P",
  "SH",
  "SS",
  "TP",
  "IP",
  "HP",
  "sp",
  "br",
  "Sh",
  "Ss",
  "Pp",
  "Bl",
  "It",
  "El",
  "Bd",
  "Ed",
  "nf",
  "fi",
  "EX",
  "EE",
  "RS",
  "RE",
  "TS",
  "TE",
]);

/** Removes roff escapes (\fB, \-, \(em, \[...], \*(xx, \s-1, ...) from a text line. */
export function stripRoffEscapes(line: string): string {
  let out = "";
  const n = line.length;
  let i = 0;
  while (i < n) {
    const c = line[i];
    if (c !== "\\") {
      out += c;
      i++;
      continue;
    }
    const d = line[i + 1];
    i += 2;
    switch (d) {
      case "f":
      case "*":
      case "n": {
        // \fB \f(CW \f[B] \*(xx \*[name] \nx
        if (line[i] === "(") i += 3;
        else if (line[i] === "[") {
          const e = line.indexOf("]", i);
          i = e < 0 ? n : e + 1;
        } else i += 1;
        if (d === "*") out += " ";
        break;
      }
      case "(": {
        const name = line.slice(i, i + 2);
        i += 2;
        out +=
          name === "aq" || name === "cq"
            ? "'"
            : name === "dq" || name === "lq" || name === "rq"
              ? '"'
              : name === "hy" || name === "mi"
                ? "-"
                : " ";
        break;
      }
      case "[": {
        const e = line.indexOf("]", i);
        const name = e < 0 ? "" : line.slice(i, e);
        i = e < 0 ? n : e + 1;
        out += name === "aq" ? "'" : name === "hy" || name === "minus" ? "-" : " ";
        break;
      }
      case "s": {
        if (line[i] === "+" || line[i] === "-") i++;
        while (i < n && line[i]! >= "0" && line[i]! <= "9") i++;
        break;
      }
      case "-":
        out += "-";
        break;
      case "e":
      case "\\":
        out += "\\";
        break;
      case "&":
      case "c":
      case ":":
      case '"':
        if (d === '"') i = n; // comment to end of line
        break;
      default:
        out += " ";
    }
  }
  return out;
}

/** A man page (roff source) to paragraphs. */
export function roffToParagraphs(src: string): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  const brk = () => {
    if (cur.length) out.push(cur.join(" "));
    cur = [];
  };
  for (const raw of src.split("\n")) {
    if (raw.startsWith('.\\"') || raw.startsWith("'\\\"") || raw.startsWith('\\"')) continue;
    if (raw.startsWith(".") || raw.startsWith("'")) {
      const body = raw.slice(1).trimStart();
      const sp = body.search(/[ \t]/);
      const name = sp < 0 ? body : body.slice(0, sp);
      if (ROFF_BREAK_MACROS.has(name)) brk();
      if (ROFF_TEXT_MACROS.has(name) && sp >= 0) {
        const args = stripRoffEscapes(body.slice(sp + 1))
          .replace(/"/g, " ")
          .trim();
        if (args) cur.push(args);
      }
      if (name === "SH" || name === "SS" || name === "Sh") brk();
      continue;
    }
    const t = stripRoffEscapes(raw).trim();
    if (t.length === 0) brk();
    else cur.push(t);
  }
  brk();
  return out;
}

/** `/** ... *\/` doc comments of a .d.ts file, with leading stars and @tags' names removed. */
export function docCommentsToParagraphs(src: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    const s = src.indexOf("/**", i);
    if (s < 0) break;
    const e = src.indexOf("*/", s + 3);
    if (e < 0) break;
    const body = src
      .slice(s + 3, e)
      .split("\n")
      .map((l) => l.replace(/^\s*\*\s?/, "").replace(/^@[a-zA-Z]+\s*/, ""))
      .join("\n");
    out.push(...textToParagraphs(body));
    i = e + 2;
  }
  return out;
}

/** Messages of `new XxxError("...")` / `throw new Error('...')` in JavaScript: "XxxError: msg". */
export function jsErrorMessages(src: string): string[] {
  const out: string[] = [];
  // Bounded quantifiers keep this linear: the class name ≤ 60 chars, the message ≤ 400.
  const re = /new ([A-Za-z_$][A-Za-z0-9_$]{0,60}Error)\(\s{0,4}(["'`])([^"'`\\\n]{3,400})\2/g;
  for (const m of src.matchAll(re)) {
    out.push(`${m[1]}: ${m[3]!.replace(/\$\{[^}]{0,80}\}/g, " ")}`);
  }
  return out;
}
