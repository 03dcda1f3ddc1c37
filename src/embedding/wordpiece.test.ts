// Checked against the real BERT uncased files. Expected pieces come from the BERT algorithm applied
// to this vocabulary; every id is looked up in vocab.txt (id = line index) rather than trusted.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BERT_VOCAB_DIR, loadEval } from "../../test/support/paths";
import { parseVocabTxt, WordPieceTokenizer } from "./wordpiece";

const vocabTxt = readFileSync(join(BERT_VOCAB_DIR, "vocab.txt"), "utf8");
const tokenizerJson = readFileSync(join(BERT_VOCAB_DIR, "tokenizer.json"), "utf8");
const tokenizerConfigJson = readFileSync(join(BERT_VOCAB_DIR, "tokenizer_config.json"), "utf8");
const lines = vocabTxt.split("\n");
const lineOf = (token: string): number => {
  const i = lines.indexOf(token);
  if (i < 0) throw new Error(`${token} not in vocab.txt`);
  return i;
};

const fromDir = WordPieceTokenizer.fromDirectory(BERT_VOCAB_DIR);
const fromVocab = WordPieceTokenizer.fromFiles({ vocabTxt, tokenizerConfigJson });
const fromJson = WordPieceTokenizer.fromFiles({ tokenizerJson, tokenizerConfigJson });

describe("vocabulary and special ids", () => {
  test("30522 entries from either file", () => {
    expect(fromVocab.vocabSize).toBe(30522);
    expect(fromJson.vocabSize).toBe(30522);
  });

  test("known ids match vocab.txt line numbers", () => {
    const known: Record<string, number> = {
      "[PAD]": 0,
      "[UNK]": 100,
      "[CLS]": 101,
      "[SEP]": 102,
      "[MASK]": 103,
      the: 1996,
      hello: 7592,
      world: 2088,
    };
    for (const [token, id] of Object.entries(known)) {
      expect(lineOf(token)).toBe(id);
      expect(fromVocab.config.vocab.get(token)).toBe(id);
      expect(fromJson.config.vocab.get(token)).toBe(id);
    }
    for (const t of [fromVocab, fromJson]) {
      expect([t.padId, t.unkId, t.clsId, t.sepId]).toEqual([0, 100, 101, 102]);
    }
  });

  test("encode wraps in [CLS] … [SEP]", () => {
    expect(fromDir.encode("Hello, the World").ids).toEqual([101, lineOf("hello"), lineOf(","), lineOf("the"), lineOf("world"), 102]);
  });

  test("parseVocabTxt: CRLF line ends and a repeated token keeps its last line", () => {
    const v = parseVocabTxt("[PAD]\r\na\r\nb\r\na\r\n");
    expect([...v.entries()]).toEqual([
      ["[PAD]", 0],
      ["a", 3],
      ["b", 2],
    ]);
  });
});

describe("BERT basic tokenization + WordPiece", () => {
  const tok = (s: string) => fromDir.tokenize(s);

  test("greedy longest-match-first with ## continuation", () => {
    expect(tok("unaffable")).toEqual(["una", "##ffa", "##ble"]);
    for (const p of ["una", "##ffa", "##ble"]) lineOf(p);
    // "unaffable", "unaff" are not entries, so longest-first really had to back off.
    expect(lines.includes("unaffable")).toBe(false);
    expect(lines.includes("unaff")).toBe(false);
  });

  test("the classic UNwantéd,running case, on the real vocabulary", () => {
    // BERT's own test vocabulary yields un ##want ##ed; the real one has the whole word "unwanted".
    lineOf("unwanted");
    expect(tok("UNwant\u00E9d,running")).toEqual(["unwanted", ",", "running"]);
    expect(tok("UNwant\u00E9dness")).toEqual(["unwanted", "##ness"]);
  });

  test("lowercase and accent stripping (NFD, drop nonspacing marks)", () => {
    expect(tok("Héllo WÖRLD Café naïve")).toEqual(["hello", "world", "cafe", "naive"]);
    // Decomposed input (e + combining acute) gives the same pieces as precomposed.
    expect(tok("Cafe\u0301")).toEqual(tok("Caf\u00e9"));
    // Word-final capital sigma lowercases char by char (σ, not ς), as the Rust reference does.
    expect(tok("ΟΔΟΣ")).toEqual(["ο", "##δ", "##ο", "##σ"]);
  });

  test("CJK characters become words of their own", () => {
    lineOf("中");
    lineOf("国");
    expect(tok("中国")).toEqual(["中", "国"]);
    expect(tok("ab中cd")).toEqual(["ab", "中", "cd"]);
    // Hiragana is not in the CJK ideograph ranges, so it stays inside its word.
    expect(tok("の中")).toEqual(["の", "中"]);
  });

  test("punctuation splits, incl. ASCII symbols and Unicode punctuation", () => {
    expect(tok("a$b^c`d")).toEqual(["a", "$", "b", "^", "c", "`", "d"]);
    expect(tok("x+=y|z~")).toEqual(["x", "+", "=", "y", "|", "z", "~"]);
    expect(tok("¿qué?")).toEqual(["¿", "que", "?"]);
    expect(tok("error: can't")).toEqual(["error", ":", "can", "'", "t"]);
    expect(tok("psutil/_psutil_common.c:9:10")).toEqual([
      "ps",
      "##uti",
      "##l",
      "/",
      "_",
      "ps",
      "##uti",
      "##l",
      "_",
      "common",
      ".",
      "c",
      ":",
      "9",
      ":",
      "10",
    ]);
  });

  test("clean text: control chars dropped, any whitespace splits", () => {
    expect(tok("hello\u0007world")).toEqual(["helloworld"].flatMap((w) => tok(w)));
    expect(tok("hello\tworld\nthe\r\u00a0\u3000end")).toEqual(["hello", "world", "the", "end"]);
    expect(tok("hel\u0000lo\ufffd")).toEqual(["hello"]);
    expect(tok("")).toEqual([]);
    expect(tok(" \t\n ")).toEqual([]);
  });

  test("a word over 100 characters is [UNK]; exactly 100 is not", () => {
    expect(tok("a".repeat(101))).toEqual(["[UNK]"]);
    const hundred = tok("a".repeat(100));
    expect(hundred.length).toBeGreaterThan(1);
    expect(hundred).not.toContain("[UNK]");
    expect(tok(`short ${"x".repeat(150)} words`)).toEqual(["short", "[UNK]", "words"]);
  });

  test("a word with an unknown character is one [UNK], not a partial match", () => {
    expect(tok("abc\u{1F600}")).toEqual(["[UNK]"]);
    expect(tok("see \u{1F600}abc here")).toEqual(["see", "[UNK]", "here"]);
    expect(fromDir.encode("\u{1F600}").ids).toEqual([101, 100, 102]);
  });

  test("special tokens written in the text are kept whole (case-sensitive), as the fast tokenizer does", () => {
    expect(tok("a [SEP] b[MASK]")).toEqual(["a", "[SEP]", "b", "[MASK]"]);
    expect(tok("[sep]")).toEqual(["[", "sep", "]"]);
    expect(fromVocab.tokenize("x[UNK]y")).toEqual(["x", "[UNK]", "y"]);
  });
});

describe("vocab.txt and tokenizer.json agree", () => {
  test("identical ids over the error corpus", () => {
    const { cases, negatives } = loadEval();
    const texts = [
      ...cases.flatMap((c) => [c.error_line, c.variant, c.paraphrase, c.root_cause]),
      ...negatives,
      "Ünïcödé ΟΔΟΣ 中国 naïve — “quotes”",
    ];
    expect(texts.length).toBeGreaterThan(150);
    let total = 0;
    for (const text of texts) {
      const a = fromVocab.encode(text, 512).ids;
      const b = fromJson.encode(text, 512).ids;
      expect(b).toEqual(a);
      total += a.length;
    }
    // Real text mostly hits the vocabulary.
    const unk = texts.flatMap((t) => fromJson.encode(t, 512).ids).filter((id) => id === 100).length;
    expect(unk / total).toBeLessThan(0.01);
  });

  test("tokenizer.json normalizer settings are honoured (lowercase off keeps case)", () => {
    const json = JSON.parse(tokenizerJson);
    json.normalizer = { ...json.normalizer, lowercase: false, strip_accents: false };
    const cased = WordPieceTokenizer.fromFiles({ tokenizerJson: JSON.stringify(json) });
    expect(cased.config.lowercase).toBe(false);
    expect(cased.config.stripAccents).toBe(false);
    // The uncased vocabulary has no "Hello" -> pieces differ from the lowercased "hello".
    expect(cased.tokenize("Hello")).not.toEqual(["hello"]);
    expect(cased.tokenize("café")).not.toEqual(["cafe"]);
  });

  test("tokenizer.json of another model type is refused with a clear message", () => {
    const json = JSON.parse(tokenizerJson);
    json.model.type = "BPE";
    expect(() => WordPieceTokenizer.fromFiles({ tokenizerJson: JSON.stringify(json) })).toThrow(/only WordPiece/);
  });

  test("a directory without vocabulary files is refused", () => {
    expect(() => WordPieceTokenizer.fromDirectory("/nonexistent-dir")).toThrow(/tokenizer.json nor vocab.txt/);
  });
});

describe("truncation and batches", () => {
  const long = Array.from({ length: 600 }, (_, i) => `word${i}`).join(" ");

  test("default truncation is 256 tokens, configurable, capped by model_max_length 512", () => {
    expect(fromDir.config.modelMaxLength).toBe(512);
    expect(fromDir.encode(long).ids.length).toBe(256);
    expect(fromDir.encode(long, 16).ids.length).toBe(16);
    expect(fromDir.encode(long, 10_000).ids.length).toBe(512);
    const t128 = WordPieceTokenizer.fromDirectory(BERT_VOCAB_DIR, { maxLength: 128 });
    expect(t128.encode(long).ids.length).toBe(128);
    const ids = fromDir.encode(long, 16).ids;
    expect(ids[0]).toBe(101);
    expect(ids[15]).toBe(102);
    // Truncation keeps the beginning.
    expect(ids.slice(1, 15)).toEqual(fromDir.encode(long, 512).ids.slice(1, 15));
    expect(() => fromDir.encode("x", 1)).toThrow(/maxLength/);
  });

  test("model_max_length from tokenizer_config.json caps the length", () => {
    const cfg = JSON.stringify({ ...JSON.parse(tokenizerConfigJson), model_max_length: 64 });
    const t = WordPieceTokenizer.fromFiles({ vocabTxt, tokenizerConfigJson: cfg });
    expect(t.encode(long).ids.length).toBe(64);
    const huge = JSON.stringify({ ...JSON.parse(tokenizerConfigJson), model_max_length: 1e30 });
    expect(WordPieceTokenizer.fromFiles({ vocabTxt, tokenizerConfigJson: huge }).config.modelMaxLength).toBe(512);
  });

  test("a huge adversarial input stays fast when truncated", () => {
    const adversarial = "a".repeat(99) + " " + "é,".repeat(32_000) + "a".repeat(65_536);
    expect(fromDir.encode(adversarial).ids.length).toBe(256);
    // Untruncated tokenization of 64 KB of 100-char words is still linear.
    const words = ("b".repeat(100) + " ").repeat(650);
    expect(fromDir.tokenize(words).length).toBeGreaterThan(650);
  });

  test("encodeBatch pads to the longest with [PAD] and a zero mask", () => {
    const texts = ["hello world", "the", ""];
    const batch = fromDir.encodeBatch(texts);
    expect(batch.seqLen).toBe(4);
    expect([...batch.inputIds]).toEqual([101n, 7592n, 2088n, 102n, 101n, 1996n, 102n, 0n, 101n, 102n, 0n, 0n]);
    expect([...batch.attentionMask]).toEqual([1n, 1n, 1n, 1n, 1n, 1n, 1n, 0n, 1n, 1n, 0n, 0n]);
    expect([...batch.tokenTypeIds]).toEqual(new Array(12).fill(0n));
    expect(fromDir.encodeBatch([long, "x"], 8).seqLen).toBe(8);
    expect(fromDir.encodeBatch([]).seqLen).toBe(0);
  });
});
