// The DOM helper the API reference (docs.js) and the operator console (console.js) share. The pages
// load their scripts as ES modules from this origin (the CSP allows script-src 'self', nothing
// inline), and both import this one.

/**
 * Creates an element with attributes and children. Strings and numbers become text, never markup;
 * undefined, null and false attributes or children are left out.
 */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  }
  return node;
}

// Characters a reader cannot see but that change what a text means or how it is laid out, as the
// MCP elicitation escapes them (src/mcp/tools/publish.ts): C0/C1 controls, every format character
// (bidi controls, zero-width characters, soft hyphen, tag characters, U+FFF9…), the combining
// grapheme joiner, Hangul fillers (blank, yet no space to a shell) and variation selectors in a
// run (one after its character picks an emoji's or an ideograph's glyph; a run spells bytes).
const SELECTOR = "[\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}]";
const INVISIBLE = new RegExp(
  `[\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\p{Cf}\\u034f\\u115f\\u1160\\u3164\\uffa0\\u{e0000}-\\u{e007f}]|${SELECTOR}(?=${SELECTOR})|(?<=${SELECTOR})${SELECTOR}`,
  "u",
);
const SPECIAL = new RegExp(`<redacted:[a-z0-9_]{1,40}>|${INVISIBLE.source}`, "gu");

/**
 * Agent-written text for a person to read (the approval page, the operator console): redaction
 * placeholders are highlighted, and each invisible character is shown as a visible ⟨U+XXXX⟩ mark,
 * so that what the person reads is what the text holds. Returns the children to append (strings
 * and spans); `onInvisible` is called once per invisible character.
 */
export function markedText(value, onInvisible) {
  const s = typeof value === "string" ? value : String(value);
  const parts = [];
  let last = 0;
  SPECIAL.lastIndex = 0;
  for (let m = SPECIAL.exec(s); m !== null; m = SPECIAL.exec(s)) {
    if (m.index > last) parts.push(s.slice(last, m.index));
    if (!m[0].startsWith("<redacted:")) {
      onInvisible?.();
      const cp = m[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
      parts.push(el("span", { class: "invisible" }, `⟨U+${cp}⟩`));
    } else {
      parts.push(el("span", { class: "redacted" }, m[0]));
    }
    last = m.index + m[0].length;
  }
  if (last < s.length) parts.push(s.slice(last));
  return parts;
}
