// BERT uncased tokenizer (BertNormalizer + BertPreTokenizer + WordPiece), as Hugging Face's fast
// tokenizer runs it for all-MiniLM-L6-v2, bge-small-en-v1.5, gte-small and e5-small-v2.
// Loads vocab.txt or tokenizer.json; both give the same ids for the same vocabulary.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface WordPieceConfig {
  vocab: Map<string, number>;
  lowercase: boolean;
  stripAccents: boolean;
  handleChineseChars: boolean;
  cleanText: boolean;
  unkToken: string;
  clsToken: string;
  sepToken: string;
  padToken: string;
  /** Tokens matched verbatim in the raw text and kept whole ([CLS], [SEP], [MASK]...). */
  specialTokens: string[];
  continuingSubwordPrefix: string;
  maxInputCharsPerWord: number;
  /** The model's limit on sequence length (positions), ≤ 512. */
  modelMaxLength: number;
  /** Truncation used when encode() gets no maxLength; ≤ modelMaxLength. */
  defaultMaxLength: number;
}

export interface TokenizerFiles {
  vocabTxt?: string;
  tokenizerJson?: string;
  tokenizerConfigJson?: string;
}

export interface TokenizerOptions {
  /** Default truncation length (tokens incl. [CLS]/[SEP]); 256 unless set, capped by the model's limit. */
  maxLength?: number;
}

export interface EncodedBatch {
  inputIds: BigInt64Array;
  attentionMask: BigInt64Array;
  tokenTypeIds: BigInt64Array;
  seqLen: number;
}

const HARD_MAX_LENGTH = 512;
const DEFAULT_MAX_LENGTH = 256;

// --- character classes (BERT's _is_whitespace / _is_control / _is_punctuation / _is_chinese_char) ---

const WHITESPACE = /^\p{White_Space}$/u;
const CONTROL = /^\p{C}$/u;
const PUNCTUATION = /^\p{P}$/u;
const NONSPACING_MARKS = /\p{Mn}/gu;

function isAsciiPunctuation(cp: number): boolean {
  // BERT counts all non-letter/digit ASCII symbols ($, +, ^, `...) as punctuation.
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
}

function isWhitespace(ch: string, cp: number): boolean {
  if (cp < 128) return cp === 32 || cp === 9 || cp === 10 || cp === 13;
  return WHITESPACE.test(ch);
}

function isControl(ch: string, cp: number): boolean {
  if (cp === 9 || cp === 10 || cp === 13) return false;
  if (cp < 128) return cp < 32 || cp === 127;
  return CONTROL.test(ch);
}

function isPunctuation(ch: string, cp: number): boolean {
  if (cp < 128) return isAsciiPunctuation(cp);
  return PUNCTUATION.test(ch);
}

function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

const CAPITAL_SIGMA = "\u03a3";

function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export class WordPieceTokenizer {
  readonly clsId: number;
  readonly sepId: number;
  readonly padId: number;
  readonly unkId: number;
  /** Longest vocabulary entry in code points: no WordPiece candidate can be longer. */
  private readonly maxPieceChars: number;

  constructor(readonly config: WordPieceConfig) {
    const id = (token: string): number => {
      const v = config.vocab.get(token);
      if (v === undefined) throw new Error(`tokenizer: special token ${token} is not in the vocabulary`);
      return v;
    };
    this.clsId = id(config.clsToken);
    this.sepId = id(config.sepToken);
    this.padId = id(config.padToken);
    this.unkId = id(config.unkToken);
    let longest = 1;
    for (const token of config.vocab.keys()) longest = Math.max(longest, codePointLength(token));
    this.maxPieceChars = longest;
  }

  get vocabSize(): number {
    return this.config.vocab.size;
  }

  /** Reads tokenizer.json (preferred) or vocab.txt, plus tokenizer_config.json when present. */
  static fromDirectory(dir: string, options: TokenizerOptions = {}): WordPieceTokenizer {
    const read = (name: string): string | undefined => {
      const path = join(dir, name);
      return existsSync(path) ? readFileSync(path, "utf8") : undefined;
    };
    const tokenizerJson = read("tokenizer.json");
    const vocabTxt = tokenizerJson === undefined ? read("vocab.txt") : undefined;
    if (tokenizerJson === undefined && vocabTxt === undefined) {
      throw new Error(`tokenizer: neither tokenizer.json nor vocab.txt found in ${dir}`);
    }
    return WordPieceTokenizer.fromFiles({ tokenizerJson, vocabTxt, tokenizerConfigJson: read("tokenizer_config.json") }, options);
  }

  static fromFiles(files: TokenizerFiles, options: TokenizerOptions = {}): WordPieceTokenizer {
    const tokConfig = files.tokenizerConfigJson ? (JSON.parse(files.tokenizerConfigJson) as Record<string, unknown>) : {};
    const str = (v: unknown, fallback: string): string => (typeof v === "string" ? v : fallback);
    const bool = (v: unknown, fallback: boolean): boolean => (typeof v === "boolean" ? v : fallback);

    let modelMaxLength = HARD_MAX_LENGTH;
    // Some configs say 1e30 for "no limit"; BERT-style position tables stop at 512 anyway.
    if (typeof tokConfig.model_max_length === "number" && tokConfig.model_max_length > 0) {
      modelMaxLength = Math.min(HARD_MAX_LENGTH, Math.floor(tokConfig.model_max_length));
    }

    let config: Omit<WordPieceConfig, "modelMaxLength" | "defaultMaxLength">;
    if (files.tokenizerJson !== undefined) {
      config = configFromTokenizerJson(files.tokenizerJson, tokConfig);
    } else if (files.vocabTxt !== undefined) {
      const lowercase = bool(tokConfig.do_lower_case, true);
      const stripAccents = typeof tokConfig.strip_accents === "boolean" ? tokConfig.strip_accents : lowercase;
      const specials = ["unk_token", "sep_token", "pad_token", "cls_token", "mask_token"].map((k) => tokConfig[k]);
      const defaults = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"];
      config = {
        vocab: parseVocabTxt(files.vocabTxt),
        lowercase,
        stripAccents,
        handleChineseChars: bool(tokConfig.tokenize_chinese_chars, true),
        cleanText: true,
        unkToken: str(tokConfig.unk_token, "[UNK]"),
        clsToken: str(tokConfig.cls_token, "[CLS]"),
        sepToken: str(tokConfig.sep_token, "[SEP]"),
        padToken: str(tokConfig.pad_token, "[PAD]"),
        specialTokens: specials.map((v, i) => str(v, defaults[i]!)),
        continuingSubwordPrefix: "##",
        maxInputCharsPerWord: 100,
      };
    } else {
      throw new Error("tokenizer: need vocab.txt or tokenizer.json");
    }

    const requested = options.maxLength ?? DEFAULT_MAX_LENGTH;
    if (!Number.isInteger(requested) || requested < 2) throw new Error(`tokenizer: maxLength must be an integer ≥ 2, got ${requested}`);
    return new WordPieceTokenizer({ ...config, modelMaxLength, defaultMaxLength: Math.min(requested, modelMaxLength) });
  }

  /** WordPiece tokens of a text, without [CLS]/[SEP]. */
  tokenize(text: string): string[] {
    return this.tokenizeUpTo(text, Infinity);
  }

  /** [CLS] pieces… [SEP], truncated to maxLength tokens in all (default: the configured length). */
  encode(text: string, maxLength?: number): { ids: number[] } {
    const limit = this.resolveMaxLength(maxLength);
    const pieces = this.tokenizeUpTo(text, limit - 2);
    const ids = [this.clsId];
    for (const p of pieces) ids.push(this.config.vocab.get(p) ?? this.unkId);
    ids.push(this.sepId);
    return { ids };
  }

  /** Right-padded to the longest sequence in the batch; token type ids are all 0 (single segment). */
  encodeBatch(texts: string[], maxLength?: number): EncodedBatch {
    return this.pad(texts.map((t) => this.encode(t, maxLength).ids));
  }

  /** Right-pads already encoded sequences to the longest one. */
  pad(encoded: number[][]): EncodedBatch {
    const seqLen = encoded.reduce((m, ids) => Math.max(m, ids.length), 0);
    const inputIds = new BigInt64Array(encoded.length * seqLen).fill(BigInt(this.padId));
    const attentionMask = new BigInt64Array(encoded.length * seqLen);
    const tokenTypeIds = new BigInt64Array(encoded.length * seqLen);
    encoded.forEach((ids, row) => {
      const base = row * seqLen;
      for (let i = 0; i < ids.length; i++) {
        inputIds[base + i] = BigInt(ids[i]!);
        attentionMask[base + i] = 1n;
      }
    });
    return { inputIds, attentionMask, tokenTypeIds, seqLen };
  }

  private resolveMaxLength(maxLength?: number): number {
    if (maxLength === undefined) return this.config.defaultMaxLength;
    if (!Number.isInteger(maxLength) || maxLength < 2) throw new Error(`tokenizer: maxLength must be an integer ≥ 2, got ${maxLength}`);
    return Math.min(maxLength, this.config.modelMaxLength);
  }

  /** Stops as soon as `limit` pieces exist, so truncated encodes of huge texts stay cheap. */
  private tokenizeUpTo(text: string, limit: number): string[] {
    const out: string[] = [];
    for (const segment of this.splitOnSpecialTokens(text)) {
      if (out.length >= limit) break;
      if (segment.special) {
        out.push(segment.text);
        continue;
      }
      for (const word of this.preTokenize(this.normalize(segment.text))) {
        if (out.length >= limit) break;
        this.wordPiece(word, out);
      }
    }
    if (out.length > limit) out.length = limit;
    return out;
  }

  /** Splits out verbatim occurrences of special tokens, which the fast tokenizer never normalizes. */
  private splitOnSpecialTokens(text: string): { text: string; special: boolean }[] {
    const specials = this.config.specialTokens.filter((t) => t.length > 0 && text.includes(t));
    if (specials.length === 0) return [{ text, special: false }];
    const segments: { text: string; special: boolean }[] = [];
    // Next occurrence of each special at or after `pos`, refreshed only when passed: linear overall.
    const next = specials.map((t) => text.indexOf(t));
    let pos = 0;
    for (;;) {
      let best = -1;
      for (let i = 0; i < specials.length; i++) {
        if (next[i]! !== -1 && next[i]! < pos) next[i] = text.indexOf(specials[i]!, pos);
        const at = next[i]!;
        // Earliest match wins; at equal positions the longer token does.
        if (at !== -1 && (best === -1 || at < next[best]! || (at === next[best]! && specials[i]!.length > specials[best]!.length))) {
          best = i;
        }
      }
      if (best === -1) break;
      const at = next[best]!;
      if (at > pos) segments.push({ text: text.slice(pos, at), special: false });
      segments.push({ text: specials[best]!, special: true });
      pos = at + specials[best]!.length;
    }
    if (pos < text.length) segments.push({ text: text.slice(pos), special: false });
    return segments;
  }

  /** BertNormalizer: clean text, space out CJK characters, strip accents, lowercase (in that order). */
  private normalize(text: string): string {
    const { cleanText, handleChineseChars, stripAccents, lowercase } = this.config;
    let ascii = true;
    const parts: string[] = [];
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (cp >= 128) ascii = false;
      if (cleanText) {
        if (cp === 0 || cp === 0xfffd || isControl(ch, cp)) continue;
        if (isWhitespace(ch, cp)) {
          parts.push(" ");
          continue;
        }
      }
      if (handleChineseChars && cp >= 0x3400 && isChineseChar(cp)) parts.push(" ", ch, " ");
      else parts.push(ch);
    }
    let s = parts.join("");
    if (ascii) return lowercase ? s.toLowerCase() : s;
    if (stripAccents) s = s.normalize("NFD").replace(NONSPACING_MARKS, "");
    if (lowercase) {
      // The reference lowercases char by char, so a word-final Σ becomes σ, not ς.
      if (s.includes(CAPITAL_SIGMA)) s = Array.from(s, (c) => c.toLowerCase()).join("");
      else s = s.toLowerCase();
    }
    return s;
  }

  /** BertPreTokenizer: split on whitespace (dropped) and punctuation (kept as its own token). */
  private preTokenize(text: string): string[] {
    const words: string[] = [];
    let current = "";
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (isWhitespace(ch, cp)) {
        if (current) words.push(current);
        current = "";
      } else if (isPunctuation(ch, cp)) {
        if (current) words.push(current);
        words.push(ch);
        current = "";
      } else {
        current += ch;
      }
    }
    if (current) words.push(current);
    return words;
  }

  /** Greedy longest-match-first WordPiece; a word with any unmatched part becomes [UNK]. */
  private wordPiece(word: string, out: string[]): void {
    const { vocab, unkToken, continuingSubwordPrefix, maxInputCharsPerWord } = this.config;
    // UTF-16 offsets of each code point, so substrings never split a surrogate pair.
    const offsets: number[] = [];
    for (let i = 0; i < word.length; ) {
      offsets.push(i);
      i += word.codePointAt(i)! > 0xffff ? 2 : 1;
    }
    const chars = offsets.length;
    offsets.push(word.length);
    if (chars > maxInputCharsPerWord) {
      out.push(unkToken);
      return;
    }
    const pieces: string[] = [];
    let start = 0;
    while (start < chars) {
      let end = Math.min(chars, start + this.maxPieceChars);
      let found: string | undefined;
      while (end > start) {
        let sub = word.slice(offsets[start], offsets[end]);
        if (start > 0) sub = continuingSubwordPrefix + sub;
        if (vocab.has(sub)) {
          found = sub;
          break;
        }
        end--;
      }
      if (found === undefined) {
        out.push(unkToken);
        return;
      }
      pieces.push(found);
      start = end;
    }
    for (const p of pieces) out.push(p);
  }
}

/** vocab.txt: one token per line, the id is the line index (a repeated token keeps its last index). */
export function parseVocabTxt(text: string): Map<string, number> {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const vocab = new Map<string, number>();
  lines.forEach((line, i) => vocab.set(line.endsWith("\r") ? line.slice(0, -1) : line, i));
  return vocab;
}

interface TokenizerJson {
  model?: {
    type?: string;
    vocab?: Record<string, number>;
    unk_token?: string;
    continuing_subword_prefix?: string;
    max_input_chars_per_word?: number;
  };
  normalizer?: NormalizerJson | null;
  added_tokens?: { content: string; special?: boolean }[];
}

interface NormalizerJson {
  type?: string;
  clean_text?: boolean;
  handle_chinese_chars?: boolean;
  strip_accents?: boolean | null;
  lowercase?: boolean;
  normalizers?: NormalizerJson[];
}

type NormalizerSettings = Pick<WordPieceConfig, "lowercase" | "stripAccents" | "handleChineseChars" | "cleanText">;

/** Reads BertNormalizer settings, or the Lowercase/NFD/StripAccents sequence some exports use instead. */
function normalizerSettings(n: NormalizerJson | null | undefined): NormalizerSettings {
  const settings: NormalizerSettings = { lowercase: false, stripAccents: false, handleChineseChars: false, cleanText: false };
  const visit = (node: NormalizerJson): void => {
    switch (node.type) {
      case "BertNormalizer": {
        const lowercase = node.lowercase ?? true;
        settings.lowercase ||= lowercase;
        // strip_accents null means "follow lowercase", as in the reference.
        settings.stripAccents ||= typeof node.strip_accents === "boolean" ? node.strip_accents : lowercase;
        settings.handleChineseChars ||= node.handle_chinese_chars ?? true;
        settings.cleanText ||= node.clean_text ?? true;
        break;
      }
      case "Sequence":
        for (const inner of node.normalizers ?? []) visit(inner);
        break;
      case "Lowercase":
        settings.lowercase = true;
        break;
      case "StripAccents":
        settings.stripAccents = true;
        break;
      case "NFD":
        break; // part of accent stripping here
      default:
        throw new Error(`tokenizer.json: unsupported normalizer ${node.type}`);
    }
  };
  if (n) visit(n);
  return settings;
}

function configFromTokenizerJson(
  text: string,
  tokConfig: Record<string, unknown>,
): Omit<WordPieceConfig, "modelMaxLength" | "defaultMaxLength"> {
  const json = JSON.parse(text) as TokenizerJson;
  const model = json.model;
  if (!model || model.type !== "WordPiece" || !model.vocab) {
    throw new Error(`tokenizer.json: only WordPiece (BERT) tokenizers are supported, found ${model?.type ?? "no model"}`);
  }
  const vocab = new Map<string, number>(Object.entries(model.vocab));
  const norm = normalizerSettings(json.normalizer);
  const specialTokens = (json.added_tokens ?? []).filter((t) => t.special !== false).map((t) => t.content);
  const pick = (key: string, fallback: string): string => {
    const v = tokConfig[key];
    return typeof v === "string" ? v : fallback;
  };
  return {
    vocab,
    ...norm,
    unkToken: model.unk_token ?? "[UNK]",
    clsToken: pick("cls_token", "[CLS]"),
    sepToken: pick("sep_token", "[SEP]"),
    padToken: pick("pad_token", "[PAD]"),
    specialTokens: specialTokens.length > 0 ? specialTokens : ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"],
    continuingSubwordPrefix: model.continuing_subword_prefix ?? "##",
    maxInputCharsPerWord: model.max_input_chars_per_word ?? 100,
  };
}
