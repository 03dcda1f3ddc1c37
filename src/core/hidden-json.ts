// Characters a person cannot see but that change what a text means or how it is laid out: bidi
// controls (Trojan Source), zero-width and other format characters (\p{Cf}, the BOM and the tag
// characters among them), DEL and the C1 controls (U+009B is a terminal's CSI, U+009D its OSC),
// fillers and variation selectors. JSON.stringify leaves them raw (it escapes only C0 controls and
// lone surrogates), so whatever shows the JSON (an MCP client's prompt, a terminal or an editor
// showing a bundle) shows them as they act: a reversed command, an invisible word. The line and
// paragraph separators too: shown as line breaks inside one string, they draw JSON structure (the
// end of a list, another field) that is not there.
// biome-ignore lint/suspicious/noMisleadingCharacterClass: invisible characters, each escaped on its own
const HIDDEN_IN_JSON = /[\p{Cf}\u007f-\u009f\u034f\u115f\u1160\u3164\uffa0\ufe00-\ufe0f\u2028\u2029\u{e0100}-\u{e01ef}]/gu;

/** A character as the `\uXXXX` escapes of its UTF-16 units (an astral one as two, as JSON writes it). */
const escapedUnits = (c: string) => {
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
};

/**
 * JSON text with every hidden character written as its `\uXXXX` escape. JSON holds none of them
 * outside strings, so the text still parses to exactly the same value.
 */
export function escapeHiddenInJson(json: string): string {
  return json.replace(HIDDEN_IN_JSON, escapedUnits);
}

/**
 * A client's text as a refusal's message quotes it: as JSON (quotes show where it begins and
 * ends), cut to `max` characters, every hidden character written as its `\uXXXX` escape (a
 * zero-width space or a bidi override quoted raw makes the message read as other text than the
 * client sent, and says nothing about what is wrong).
 */
export function quotedClientText(text: string, max = 100): string {
  const chars = [...text];
  const shown = chars.length > max ? `${chars.slice(0, max).join("")}…` : text;
  return escapeHiddenInJson(JSON.stringify(shown));
}
