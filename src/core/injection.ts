// Prompt-injection detection: text inside a trail that addresses the agent reading it instead of
// describing a fix. Trails are written by one agent and acted on by another, so instructions,
// chat-template tokens, hidden characters, fetch-and-run orders and exfiltration requests are
// refused. Pure: no I/O. Every pattern is anchored on a keyword and uses bounded gaps, so a
// 64 KB adversarial body stays linear.
// Changing what this file catches or flags? Bump CONTENT_RULES_VERSION (content-rules.ts): stored
// trails are re-checked with the new rules at the next start.

import { COMPACT_RULES, GATE_WORDS, LANGUAGE_RULES, type LanguageRule } from "./injection-languages";
import {
  foldAccents,
  foldDigitLookalikes,
  foldForScreening,
  foldLetters,
  joinContinuedLines,
  joinedWordTokens,
  spacedLetterRuns,
} from "./screening-text";

export interface InjectionFinding {
  kind: string;
  detail: string;
}

export const INJECTION_KINDS = [
  "instruction_override",
  "role_takeover",
  "chat_template_token",
  "hidden_unicode",
  "remote_execution_instruction",
  "exfiltration",
  "encoded_instruction",
] as const;

const MAX_FINDINGS = 20;

const excerpt = (s: string, max = 80) => {
  const clean = s
    .replace(/[\u0000-\u001f\u007f]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
};

// --- Hidden characters ------------------------------------------------------------------------

const ZERO_WIDTH = new Set([0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180e, 0xfeff]);
const BIDI_CONTROLS = new Set([0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]);
const isPictographic = (s: string) => /\p{Extended_Pictographic}|[\u{1F3FB}-\u{1F3FF}\uFE0F]/u.test(s);
const isNonLatinLetter = (s: string) => /[\p{L}\p{M}]/u.test(s) && !/[A-Za-z]/.test(s);

interface HiddenScan {
  tags: number;
  tagText: string;
  /** Variation selectors that select nothing (each after another one): a run of them carries bytes. */
  selectors: number;
  selectorText: string;
  zeroWidth: number;
  bidi: number;
  /** The text with every invisible character removed, for the phrase detectors. */
  visible: string;
}

// biome-ignore lint/suspicious/noMisleadingCharacterClass: invisible characters, each matched on its own
const ANY_HIDDEN = /[\u180e\u200b-\u200d\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\ufe00-\ufe0f]|\udb40[\udc00-\udc7f\udd00-\uddef]/;

/**
 * The byte a variation selector stands for in the known smuggling scheme (VS1–VS16 are 0–15,
 * VS17–VS256 are 16–255), or -1 for any other character. One selector after a character picks
 * its glyph (an emoji's presentation, an ideograph's variant); text never holds two in a row, but
 * a run of them after one emoji shows as that emoji alone and can spell any text for a model.
 */
function selectorByte(cp: number): number {
  if (cp >= 0xfe00 && cp <= 0xfe0f) return cp - 0xfe00;
  if (cp >= 0xe0100 && cp <= 0xe01ef) return cp - 0xe0100 + 16;
  return -1;
}

function scanHidden(text: string): HiddenScan {
  if (!ANY_HIDDEN.test(text)) return { tags: 0, tagText: "", selectors: 0, selectorText: "", zeroWidth: 0, bidi: 0, visible: text };
  let tags = 0;
  let zeroWidth = 0;
  let bidi = 0;
  let tagText = "";
  let selectors = 0;
  const selectorBytes: number[] = [];
  const visible: string[] = [];
  const chars = Array.from(text); // code points; lone surrogates stay as single units
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xe0000 && cp <= 0xe007f) {
      tags++;
      if (cp >= 0xe0020 && cp <= 0xe007e) tagText += String.fromCharCode(cp - 0xe0000);
      continue;
    }
    const byte = selectorByte(cp);
    if (byte >= 0) {
      const previous = i > 0 ? chars[i - 1]!.codePointAt(0)! : -1;
      if (selectorByte(previous) < 0) {
        visible.push(ch); // selects the glyph of the character before it
        continue;
      }
      // A selector after a selector selects nothing: the run, from its first one, is data.
      if (selectorByte(chars[i - 2]?.codePointAt(0) ?? -1) < 0) {
        selectors++;
        selectorBytes.push(selectorByte(previous));
        visible.pop();
      }
      selectors++;
      selectorBytes.push(byte);
      continue;
    }
    if (BIDI_CONTROLS.has(cp)) {
      bidi++;
      continue;
    }
    if (ZERO_WIDTH.has(cp)) {
      const prev = chars[i - 1] ?? "";
      const next = chars[i + 1] ?? "";
      // Legitimate uses: a byte-order mark at the very start, ZWJ inside emoji sequences,
      // ZWNJ/ZWJ between letters of scripts that need them (Persian, Indic), and after a virama
      // (a combining mark) at a word's end: Malayalam's older chillu spelling `ര്‍` (RA, virama,
      // ZWJ), as in a desktop file's translations (session 15, /etc/xdg/autostart/print-applet.desktop).
      const legit =
        (cp === 0xfeff && i === 0) ||
        (cp === 0x200d && isPictographic(prev) && isPictographic(next)) ||
        ((cp === 0x200c || cp === 0x200d) && isNonLatinLetter(prev) && isNonLatinLetter(next)) ||
        ((cp === 0x200c || cp === 0x200d) && /\p{M}/u.test(prev) && isNonLatinLetter(chars[i - 2] ?? "") && !/[\p{L}\p{M}]/u.test(next));
      if (!legit) zeroWidth++;
      continue;
    }
    visible.push(ch);
  }
  const selectorText =
    selectors > 0 ? new TextDecoder().decode(new Uint8Array(selectorBytes)).replace(/[\u0000-\u0008\u000b-\u001f\u007f\ufffd]/g, "") : "";
  return { tags, tagText, selectors, selectorText, zeroWidth, bidi, visible: visible.join("") };
}

// --- Phrase detectors (run on normalized text: NFKC, lower case, single spaces) ----------------

interface PhraseRule {
  kind: string;
  pattern: RegExp;
  check?: (m: RegExpExecArray) => boolean;
  detail: string;
}

const OVERRIDE_QUALIFIERS = /\b(previous|prior|above|earlier|preceding|former|original|initial|system|safety|developer|all|your)\b/;

const PHRASES: PhraseRule[] = [
  {
    kind: "instruction_override",
    pattern:
      /\b(ignore|disregard|forget|override|bypass|discard|(?:do not|don't|stop) follow(?:ing)?)\s+((?:[a-z'-]+\s+){0,4}?)(instructions?|prompts?|directions|directives|guidelines|rules|guardrails|restrictions|constraints|programming|messages)\b/g,
    // "ignore the previous build" stays: the noun must be about instructions, and a qualifier
    // must point at the instructions the reader already has.
    check: (m) => {
      const middle = m[2] ?? "";
      const noun = m[3] ?? "";
      if (!OVERRIDE_QUALIFIERS.test(middle)) return false;
      if (
        /^(rules|messages|constraints|restrictions)$/.test(noun) &&
        !/\b(previous|prior|above|earlier|preceding|all of your|your|system|safety)\b/.test(middle)
      )
        return false;
      return true;
    },
    detail: "asks the reader to ignore its instructions",
  },
  {
    kind: "instruction_override",
    pattern: /\b(?:disregard|ignore|forget) (?:everything|all|anything) (?:above|before|prior|you (?:were|have been) told|you know)\b/g,
    detail: "asks the reader to disregard what came before",
  },
  {
    kind: "instruction_override",
    pattern: /(?:^|\n|#|\*\*)[ \t]*(?:new|updated|real|actual|revised) (?:system )?instructions?\s*:/g,
    detail: "announces replacement instructions",
  },
  {
    kind: "instruction_override",
    pattern: /\byour (?:new|real|actual|true) (?:task|goal|objective|instructions?|purpose|mission) (?:is|are)\b/g,
    detail: "assigns the reader a new task",
  },
  {
    kind: "role_takeover",
    pattern:
      /\byou are (?:now|no longer)\s+(?:(?:a|an|the|in|my|no)\s+)?(?:[a-z'-]+\s+){0,3}?(assistant|ai|chatbot|language model|llm|dan|jailbroken|unrestricted|unfiltered|uncensored|(?:developer|god|admin|jailbreak|dan|sudo) mode)\b/g,
    detail: "tries to change the reader's role",
  },
  {
    kind: "role_takeover",
    pattern:
      /\b(?:act|behave|respond|answer|reply) (?:as if you (?:are|were) |like |as )(?:a |an |the )?(?:unrestricted|unfiltered|uncensored|jailbroken|dan|evil|different|new) ?(?:ai|assistant|model|llm|persona|character)?\b/g,
    detail: "tries to change the reader's persona",
  },
  {
    kind: "role_takeover",
    pattern:
      /\bpretend (?:to be|you are|you're|that you are) (?:a |an |the )?(?:different |unrestricted |jailbroken |evil )?(?:ai|assistant|llm|language model|dan|system|developer mode)\b/g,
    detail: "asks the reader to pretend to be another assistant",
  },
  {
    kind: "role_takeover",
    pattern: /\b(?:enable|activate|enter|switch to|turn on) (?:jailbreak|dan|god|unrestricted|unfiltered) mode\b/g,
    detail: "asks the reader to enter a jailbreak mode",
  },
  {
    kind: "role_takeover",
    pattern: /\bfrom now on,? (?:you (?:are|will be|must act|act)|act as|respond|answer|ignore|disregard|pretend)\b/g,
    detail: "redefines how the reader must behave from now on",
  },
  {
    kind: "role_takeover",
    pattern:
      /\b(?:reveal|print|show|repeat|output|display|leak|dump|tell me|give me|write out)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|initial\s+|original\s+|hidden\s+|secret\s+|exact\s+)*(?:system prompt|system message|initial prompt|hidden prompt|developer message)\b/g,
    detail: "asks the reader to reveal its system prompt",
  },
  {
    kind: "role_takeover",
    pattern:
      /\b(?:new|updated|override|overrides|overriding|replace|replaces|replacing|change|changing)\s+(?:the\s+|your\s+)?system prompt\b/g,
    detail: "tries to replace the system prompt",
  },
  {
    kind: "role_takeover",
    pattern:
      /(?:^|\n)[ \t]*(?:#{1,3}[ \t]*|\[|<)?(?:system|assistant|developer)[ \t]*(?:\]|>)?[ \t]*:[ \t]*(?:you (?:are|must|will|should)|ignore|disregard|forget|from now on|new instructions|your (?:task|goal|role))/g,
    detail: "injects a system or assistant turn",
  },
  {
    // The same turn written as a tag (`<system>You must …</system>`), or a forged turn boundary
    // (`</user><system>`). A role tag alone is ordinary XML (a Maven POM's `<system>GitHub</system>`,
    // its `<developer>` entries), so the tag needs an instruction after it or a closed turn before it.
    kind: "role_takeover",
    pattern:
      /<(?:system|developer|assistant)(?:[ \t][^>\n]{0,40})?>[ \t\n]*(?:you (?:are|must|will|should|have to|may now)|ignore|disregard|forget|from now on|new instructions|your (?:task|goal|role|instructions)|always|never|do not|don't|approve|trust|the user (?:trusts|has approved|wants|allows))\b|<\/(?:user|human|assistant|tool_result|tool_response|function_results|document)>[ \t\n]*<(?:system|developer|assistant)\b[^>\n]{0,40}>/g,
    detail: "injects a system or assistant turn",
  },
  {
    kind: "chat_template_token",
    pattern:
      /<\|[a-z_]{2,30}\|>|\[\/?inst\]|<<\/?sys>>|<\/?(?:tool_call|tool_use|tool_result|tool_response|function_calls?|functioncall|start_of_turn|end_of_turn|system-prompt|system_prompt)\b[^>\n]{0,80}>|<invoke name=|<parameter name=|<\/?antml:[a-z_]{1,30}|(?:^|\n[ \t]*\n)[ \t]*(?:human|assistant)[ \t]*:[ \t]*\S/g,
    detail: "contains chat-template or tool-call tokens",
  },
];

// --- Sentence-level detectors ------------------------------------------------------------------

const AGENT_ADDRESS_PHRASES =
  "as an? (?:ai|assistant|agent|llm|language model)|(?:assistant|agent|ai|llm|model) (?:reading|processing|that reads|parsing) this|attention,? (?:ai|assistant|agent|llm|claude|gpt|copilot)|note (?:to|for) (?:the )?(?:ai|assistant|agent|llms?|agents?|model)|(?:dear|hey|hi) (?:ai|assistant|agent|llm|claude|gpt|copilot|model)|if you are an? (?:ai|assistant|agent|llm|language model)";
const AGENT_ADDRESSED = new RegExp(`\\b(?:${AGENT_ADDRESS_PHRASES}|(?:ai|llm|coding) (?:assistants?|agents?|models?))\\b`);
/**
 * Addressed to an agent, read across fields (`acrossFields`): the forms of address only. Naming AI
 * assistants or coding agents ("the coding agent timed out") is ordinary in a field that ends just
 * before a `curl https://…` command.
 */
const AGENT_ADDRESSED_ACROSS = new RegExp(`\\b(?:${AGENT_ADDRESS_PHRASES})\\b`);
const SECRECY_PHRASES =
  "without (?:telling|asking|informing|notifying|alerting|showing) (?:the )?(?:user|human|anyone|operator|developer)|(?:do not|don't|never) (?:tell|inform|mention|notify|alert|show)(?: this)?(?: to)? (?:the )?(?:user|human|anyone|operator|developer)|(?:do not|don't) (?:ask|wait) for (?:permission|confirmation|approval)";
const SECRECY = new RegExp(`\\b(?:silently|secretly|covertly|${SECRECY_PHRASES})\\b`);
/**
 * Secrecy read across fields (`acrossFields`): the phrases only. A field ending "the unknown field
 * would be silently dropped" before a `curl -LO https://…` command is ordinary, and the adverb
 * alone is too weak a sign once two fields meet.
 */
const SECRECY_ACROSS = new RegExp(`\\b(?:${SECRECY_PHRASES})\\b`);
const ORDER_PHRASES =
  "before (?:you )?(?:answer|answering|respond|responding|reply|replying|doing anything(?: else)?|anything else|you do anything)|regardless of (?:the |your |what the )?(?:user|task|question|instructions|request)|no matter what (?:the user|you are asked|anyone says)";
const ORDERING = new RegExp(`\\b(?:${ORDER_PHRASES}|(?:every|each) time you (?:read|see|load|start|run))\\b`);
/** Read across fields: not "each time you run …", which describes a fix as often as it orders. */
const ORDERING_ACROSS = new RegExp(`\\b(?:${ORDER_PHRASES})\\b`);
const ACTION = /\b(?:run|execute|exec|download|fetch|curl|wget|source|eval|pipe|install|load|open|invoke|iex|iwr)\b/;
const REMOTE = /https?:\/\/|\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b|<redacted:(?:host|ip_address)>/;

const SEND_VERB = /\b(?:send|post|upload|e-?mail|mail|forward|exfiltrate|leak|transmit|share|paste|submit|report|beacon|dump)\b/;
const SECRET_NOUNS =
  "(?:(?:aws|api|ssh|private|secret|access|cloud|github|openai|anthropic)\\s+)?(?:api[ _-]?keys?|keys|secrets?|credentials?|tokens?|passwords?|env(?:ironment)?(?: variables| vars)?|ssh keys?|private keys?|cookies|session tokens?|conversation|chat history|system prompt|dotenv|\\.env(?: file)?)";
const SECRET_FILES = "(?:~\\/\\.ssh|id_rsa|id_ed25519|\\.aws\\/credentials|\\.netrc|\\.git-credentials|\\/etc\\/shadow)\\b";
const SECRET_OBJECT = new RegExp(
  `\\b(?:(?:your|all|all of your|all the|the user's|every|any)\\s+${SECRET_NOUNS}|${SECRET_FILES}|(?:environment variables|env vars)\\b)`,
);
/**
 * Read across fields: the reader's own secrets ("your API keys", "the user's tokens") or a secret
 * file, not "all environment variables" or "all secrets", which a root cause describes before a
 * step that reports a bug to its tracker's URL.
 */
const SECRET_OBJECT_ACROSS = new RegExp(`\\b(?:(?:your|all of your|the user's)\\s+${SECRET_NOUNS}|${SECRET_FILES})`);
const DESTINATION =
  /\b(?:to|at|via|into|onto)\s+(?:https?:\/\/|<redacted:(?:email|host|ip_address)>|[\w.+-]+@[\w-]+\.|(?:this|the following|my|our|that) (?:url|endpoint|server|webhook|address|e-?mail|site|form|link|host)|(?:a |the )?(?:webhook|pastebin|gist|discord|telegram|ngrok|requestbin|pipedream))/;

const SENSITIVE_SOURCE =
  /~\/\.ssh\/(?![^\s'"]{0,200}\.pub\b)|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)|\.aws\/credentials|\.netrc\b|\.git-credentials|\.docker\/config\.json|\.kube\/config|\/etc\/shadow|\bprintenv\b|(?:^|[|;&(]\s*|\s)env\s*(?:\||$)|\$\{?(?:aws_secret_access_key|aws_access_key_id|github_token|gh_token|openai_api_key|anthropic_api_key|npm_token|pypi_token|database_url)\b|(?:^|[\s'"=@])\.env\b(?!\.example|\.sample|\.template)|\bget-childitem env:|\bgci env:|\bset\s*\|/;
const NETWORK_SINK =
  /\b(?:curl|wget|nc|ncat|netcat|socat|telnet|iwr|irm|invoke-webrequest|invoke-restmethod|ftp|sftp)\b|\/dev\/(?:tcp|udp)\//;
const UPLOAD_FLAG =
  /(?:^|\s)(?:-d|--data(?:-binary|-raw|-urlencode|-ascii)?|-f|--form|-t|--upload-file|--post-file|--body-file|-infile|-body)[\s=]+\S*/g;

function sentences(text: string): string[] {
  // Split on line breaks and sentence ends, but not inside URLs or file names (". " needs a space).
  const out: string[] = [];
  for (const piece of text.split(/\n+|[.!?;]\s+/)) {
    if (piece.length <= 600) {
      if (piece.trim()) out.push(piece);
    } else for (let i = 0; i < piece.length; i += 500) out.push(piece.slice(i, i + 600));
  }
  return out;
}

function exfiltrationCommand(line: string): string | null {
  if (!NETWORK_SINK.test(line) && !/\bscp\b/.test(line)) return null;
  // a) a sensitive source piped into a network client
  if (line.includes("|")) {
    const stages = line.split("|");
    let sourceSeen = false;
    for (const stage of stages) {
      if (sourceSeen && NETWORK_SINK.test(stage)) return "pipes secrets or the environment into a network client";
      if (SENSITIVE_SOURCE.test(stage)) sourceSeen = true;
    }
  }
  // b) a network client uploading a sensitive file (curl -d @~/.ssh/id_rsa, -F f=@.env, -T)
  if (NETWORK_SINK.test(line)) {
    UPLOAD_FLAG.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = UPLOAD_FLAG.exec(line)) !== null) {
      if (SENSITIVE_SOURCE.test(m[0].replace(/^\s*\S+[\s=]+/, " "))) return "uploads a secret file with a network client";
    }
    // c) secrets interpolated into a URL (https://x/?k=$(cat ~/.ssh/id_rsa))
    const url = /https?:\/\/[^\s'"]{0,300}(?:\$\(|`|\$\{)/.exec(line);
    if (url && SENSITIVE_SOURCE.test(line.slice(url.index, url.index + 600))) return "puts secrets into a URL";
    if (/\/dev\/(?:tcp|udp)\//.test(line) && SENSITIVE_SOURCE.test(line)) return "sends secrets over a raw socket";
  }
  // d) copying private keys or credential files to a remote host: the key among scp's own
  // arguments, not before it (`ssh-keygen -f ~/.ssh/id_ed25519` then `scp build.tar.gz host:`, two
  // commands of a trail read side by side, copies no key).
  if (/\bscp\b/.test(line)) {
    const args = line.replace(/^.*?\bscp\b/, "");
    if (SENSITIVE_SOURCE.test(args) && /(?:\S@\S|[\w.-]+:\S*(?:\s|$))/.test(args))
      return "copies private keys or credentials to a remote host";
  }
  return null;
}

// --- Encoded payloads ---------------------------------------------------------------------------

const MAX_DECODE_CANDIDATES = 4096;
const printableRatio = (s: string) => {
  if (s.length === 0) return 0;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x20 && c < 0x7f) || c === 0x0a || c === 0x0d || c === 0x09) n++;
  }
  return n / s.length;
};
const looksLikeProse = (s: string) => printableRatio(s) >= 0.9 && /[a-z]{2,24}\s{1,4}[a-z]{2,24}\s{1,4}[a-z]{2,24}/i.test(s);

function decodeCandidates(text: string): { encoding: string; decoded: string }[] {
  const out: { encoding: string; decoded: string }[] = [];
  const b64 = /[A-Za-z0-9+/_-]{24,8192}={0,2}/g;
  let m: RegExpExecArray | null;
  while ((m = b64.exec(text)) !== null && out.length < MAX_DECODE_CANDIDATES) {
    const raw = m[0];
    if (/^[0-9a-fA-F]+$/.test(raw)) continue; // hex: handled below
    try {
      const std = raw.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
      const padded = std + "=".repeat((4 - (std.length % 4)) % 4);
      const decoded = atob(padded);
      if (looksLikeProse(decoded)) out.push({ encoding: "base64", decoded });
    } catch {
      /* not base64 */
    }
  }
  const hex = /(?:[0-9a-fA-F]{2}){16,4096}/g;
  while ((m = hex.exec(text)) !== null && out.length < MAX_DECODE_CANDIDATES) {
    let decoded = "";
    for (let i = 0; i < m[0].length; i += 2) decoded += String.fromCharCode(parseInt(m[0].slice(i, i + 2), 16));
    if (looksLikeProse(decoded)) out.push({ encoding: "hex", decoded });
  }
  const esc = /(?:\\x[0-9a-fA-F]{2}){12,4096}/g;
  while ((m = esc.exec(text)) !== null && out.length < MAX_DECODE_CANDIDATES) {
    const decoded = m[0].replace(/\\x([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    if (looksLikeProse(decoded)) out.push({ encoding: "\\x escapes", decoded });
  }
  return out;
}

// --- Entry point --------------------------------------------------------------------------------

function normalize(s: string): string {
  let n: string;
  try {
    n = s.normalize("NFKC");
  } catch {
    n = s;
  }
  return n
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[ \t\f\v\u00a0]+/g, " ");
}

/** The signs that a sentence is aimed at the agent: as one field reads, or as fields read together. */
interface Markers {
  agent: RegExp;
  secrecy: RegExp;
  ordering: RegExp;
  secretObject: RegExp;
}
const ONE_FIELD: Markers = { agent: AGENT_ADDRESSED, secrecy: SECRECY, ordering: ORDERING, secretObject: SECRET_OBJECT };
const ACROSS_FIELDS: Markers = {
  agent: AGENT_ADDRESSED_ACROSS,
  secrecy: SECRECY_ACROSS,
  ordering: ORDERING_ACROSS,
  secretObject: SECRET_OBJECT_ACROSS,
};

function detectPlain(norm: string, findings: InjectionFinding[], markers = ONE_FIELD): void {
  const { agent, secrecy, ordering, secretObject } = markers;
  for (const rule of PHRASES) {
    rule.pattern.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = rule.pattern.exec(norm)) !== null) {
      if (m[0].length === 0) {
        rule.pattern.lastIndex++;
        continue;
      }
      if (rule.check && !rule.check(m)) continue;
      findings.push({ kind: rule.kind, detail: `${rule.detail}: "${excerpt(m[0])}"` });
      break; // one finding per rule is enough to explain a rejection
    }
    rule.pattern.lastIndex = 0;
  }
  let remote = false;
  let exfil = false;
  for (const s of sentences(norm)) {
    if (!remote && ACTION.test(s) && REMOTE.test(s) && (agent.test(s) || secrecy.test(s) || ordering.test(s))) {
      findings.push({ kind: "remote_execution_instruction", detail: `tells the reader to fetch or run remote content: "${excerpt(s)}"` });
      remote = true;
    }
    if (!exfil && SEND_VERB.test(s) && secretObject.test(s) && (DESTINATION.test(s) || agent.test(s) || secrecy.test(s))) {
      findings.push({ kind: "exfiltration", detail: `asks for secrets to be sent out: "${excerpt(s)}"` });
      exfil = true;
    }
  }
  if (!exfil) {
    for (const line of norm.split("\n")) {
      const why = line.length <= 4000 ? exfiltrationCommand(line) : exfiltrationCommand(line.slice(0, 4000));
      if (why) {
        findings.push({ kind: "exfiltration", detail: `${why}: "${excerpt(line)}"` });
        break;
      }
    }
  }
}

/**
 * The evasions (issue 15 item 7): look-alike letters, invisible characters, accents, spaced-out
 * letters (src/core/screening-text.ts) and other languages (injection-languages.ts). A kind the
 * plain pass found already is not reported twice.
 */
function detectFolded(visible: string, norm: string, findings: InjectionFinding[], markers = ONE_FIELD): void {
  const found = new Set(findings.map((f) => f.kind));
  const add = (f: InjectionFinding) => {
    if (found.has(f.kind)) return;
    found.add(f.kind);
    findings.push(f);
  };
  const letters = foldLetters(visible);
  const folded = foldForScreening(letters);
  if (folded !== norm) {
    const inner: InjectionFinding[] = [];
    detectPlain(folded, inner, markers);
    for (const f of inner)
      add({ kind: f.kind, detail: `${f.detail} (once look-alike letters, invisible characters and spacing are folded)` });
  }
  const lettered = foldDigitLookalikes(folded);
  if (lettered !== folded) {
    const inner: InjectionFinding[] = [];
    detectPlain(lettered, inner, markers);
    for (const f of inner) add({ kind: f.kind, detail: `${f.detail} (once digits written for letters are read as letters)` });
  }
  // A phrase written as one identifier (a separator or a case change between its words). A token is
  // not a sentence: one aimed at the agent needs the forms of address, secrecy or order that fields
  // read together need (a path `/work/ai-agents/install/curl/run.sh` names agents, runs nothing).
  const joined = joinedWordTokens(visible);
  const apart = joined === "" ? "" : foldForScreening(foldLetters(joined));
  if (apart !== "") {
    const inner: InjectionFinding[] = [];
    detectPlain(apart, inner, ACROSS_FIELDS);
    for (const f of inner)
      add({ kind: f.kind, detail: `${f.detail} (once words joined by a separator or a change of case are read apart)` });
  }
  for (const run of spacedLetterRuns(letters)) {
    if (run.length < 10) continue;
    for (const rule of COMPACT_RULES) if (rule.pattern.test(run)) add({ kind: rule.kind, detail: `${rule.detail}: "${excerpt(run)}"` });
  }
  const texts = [...new Set([foldAccents(visible), folded])].map((text) => ({ text, words: new Set(text.match(GATE_WORDS) ?? []) }));
  for (const rule of LANGUAGE_RULES) {
    if (found.has(rule.kind)) continue;
    for (const { text, words } of texts) {
      if (rule.words && !hasAny(words, rule.words)) continue;
      const m = firstMatch(rule, text);
      if (m) {
        add({ kind: rule.kind, detail: `${rule.detail} (${rule.lang}): "${excerpt(m)}"` });
        break;
      }
    }
  }
}

function hasAny(words: Set<string>, wanted: ReadonlySet<string>): boolean {
  for (const w of wanted) if (words.has(w)) return true;
  return false;
}

function firstMatch(rule: LanguageRule, text: string): string | null {
  if (!rule.needs.every((n) => n.test(text))) return null;
  rule.pattern.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = rule.pattern.exec(text)) !== null) {
    if (m[0].length === 0) {
      rule.pattern.lastIndex++;
      continue;
    }
    if (rule.qualifier && !rule.qualifier.test(`${m[1] ?? ""} ${m[2] ?? ""}`)) continue;
    rule.pattern.lastIndex = 0;
    return m[0];
  }
  rule.pattern.lastIndex = 0;
  return null;
}

/** How a text is read. */
export interface InjectionReading {
  /**
   * The text joins adjacent fields of a trail (reading-order.ts), each already screened alone:
   * what one field holds (hidden characters, encoded payloads) is not looked for again, and a
   * sentence aimed at the agent needs a form of address, a secrecy phrase or an order unrelated to
   * the task, not a mention of AI assistants, the adverb "silently" or "each time you run"; a
   * request for secrets needs the reader's own ("your API keys") or a secret file.
   */
  acrossFields?: boolean;
}

/**
 * A command or sentence continued over lines (`\`, `` ` `` or `^` before the line break) is one
 * line to a shell and to a reader, as redaction reads it: the detectors that read line by line
 * (sentences, commands piped into a network client, phrases) read it joined, as a shell joins it
 * and with `\` ⏎ as a blank (`previous\` ⏎ `instructions`). A kind found already is not reported twice.
 */
function detectContinued(visible: string, findings: InjectionFinding[], markers: Markers): void {
  const readings = new Set([joinContinuedLines(visible), joinContinuedLines(visible, " ")]);
  readings.delete(visible);
  if (readings.size === 0) return;
  const found = new Set(findings.map((f) => f.kind));
  for (const joined of readings) {
    const inner: InjectionFinding[] = [];
    const norm = normalize(joined);
    detectPlain(norm, inner, markers);
    detectFolded(joined, norm, inner, markers);
    for (const f of inner) {
      if (found.has(f.kind)) continue;
      found.add(f.kind);
      findings.push({ kind: f.kind, detail: `${f.detail} (once lines continued with \\, \` or ^ are joined)` });
    }
  }
}

/** Findings for one text; [] when it reads like an ordinary error report or fix. */
export function detectInjection(text: string, reading: InjectionReading = {}): InjectionFinding[] {
  if (typeof text !== "string" || text.length === 0) return [];
  const findings: InjectionFinding[] = [];
  const hidden = scanHidden(text);
  if (reading.acrossFields) {
    const norm = normalize(hidden.visible);
    detectPlain(norm, findings, ACROSS_FIELDS);
    detectFolded(hidden.visible, norm, findings, ACROSS_FIELDS);
    detectContinued(hidden.visible, findings, ACROSS_FIELDS);
    return findings.slice(0, MAX_FINDINGS);
  }
  if (hidden.tags > 0) {
    const smuggled = hidden.tagText ? `; they spell "${excerpt(hidden.tagText, 60)}"` : "";
    findings.push({ kind: "hidden_unicode", detail: `${hidden.tags} invisible Unicode tag character(s) (U+E0000–E007F)${smuggled}` });
  }
  if (hidden.selectors > 0) {
    const smuggled = hidden.selectorText.trim() ? `; they spell "${excerpt(hidden.selectorText, 60)}"` : "";
    findings.push({
      kind: "hidden_unicode",
      detail: `${hidden.selectors} variation selectors in a row (data hidden after a character)${smuggled}`,
    });
  }
  if (hidden.zeroWidth > 0) findings.push({ kind: "hidden_unicode", detail: `${hidden.zeroWidth} zero-width character(s)` });
  if (hidden.bidi > 0) findings.push({ kind: "hidden_unicode", detail: `${hidden.bidi} bidirectional override character(s)` });

  const norm = normalize(hidden.visible);
  detectPlain(norm, findings);
  detectFolded(hidden.visible, norm, findings);
  detectContinued(hidden.visible, findings, ONE_FIELD);
  if (hidden.tagText) detectPlain(normalize(hidden.tagText), findings);
  if (hidden.selectorText) detectPlain(normalize(hidden.selectorText), findings);

  for (const { encoding, decoded } of decodeCandidates(hidden.visible)) {
    const inner: InjectionFinding[] = [];
    detectPlain(normalize(decoded), inner);
    if (inner.length > 0) {
      findings.push({
        kind: "encoded_instruction",
        detail: `${encoding} text decodes to an injection (${inner[0]!.kind}): "${excerpt(decoded, 60)}"`,
      });
      break;
    }
  }
  const seen = new Set<string>();
  return findings.filter((f) => (seen.has(f.kind + f.detail) ? false : (seen.add(f.kind + f.detail), true))).slice(0, MAX_FINDINGS);
}
