#!/usr/bin/env python3
"""Replays search's two ranking stages offline from the candidates `bench/devset.bench.ts --split tune
--features F` wrote, and cross-validates changes to them (bench/RESULTS.md "Session 17: ranking").

Each query's candidates (the lexical and vector retrievers' 30 best each) carry the inputs of both
stages: BM25 over the query's best, cosine, coverage of the error and root cause, strength, and the
query's words found in the error and root cause and in the whole lexical document, with each
word's document frequency. The replay is checked first against the bench's own dump of the same
run (every rank within the top 5 must agree, or it stops), then:

- `--family weights`: the blend's cosine weight, how many of its best the second stage re-orders,
  and the second stage's three weights (BM25, cosine, coverage);
- `--family coverage`: the same grid with one more second-stage term, a coverage variant: IDF-weighted
  coverage of the error and root cause (words no trail has left out, or counted at the highest
  IDF), or coverage of the whole lexical document (plain or IDF-weighted);
- session 18 (rank18), each with the shipped weights but the plain coverage's (1 / 0.5 / 0) and one
  more term at 0.25 / 0.5 / 1 / 2: `--family neighbourhood` (coverage weighted by how few of the
  shortlist have each query word: the words that tell a tool's neighbouring errors apart),
  `--family field` (coverage of the trail's error alone or its root cause alone, plain or so
  weighted), `--family length` (coverage normalized by the trail's own words: precision, Dice),
  `--family external --external FILE` (coverage weighted by word counts from the external
  fingerprint sets, bench/external-term-weights.ts). The field and length families need features
  written since session 18 (`inError`, `inCause`, `errorCauseWords`).

5-fold cross-validation by case (the folds of bench/adapter-compare.py): in each fold the setting
with the most paraphrase + related + variant queries at rank 1 on the other four folds (ties: more
negatives rated weak, then the shipped setting) is scored on the fifth. Printed: each fold's choice,
the cross-validated figures against the shipped setting's, the queries won and lost at R@1 and a
two-sided sign test.

`--dominance` prints instead how many of the misses that reach the second stage no second stage over
the inputs at hand could put first (see `dominance`).

`--misses [NAME=DUMP ...]` prints instead the table of paraphrase and related queries whose trail is
not first: where the trail stood by BM25, by cosine and in the blend, the stage that lost it (the
second stage's term that lost most against the result placed first), how many of the query's words
the trail's lexical document has, a cause, and which other runs' dumps put it first. Causes:
another case's fingerprint; word form (a run named `stem` puts it first); vocabulary (the trail has
fewer than a third of the query's words, or neither retriever found it); the case placed first
shares as many words (another case of the dev set, or a distractor).

Usage: python3 bench/rank-replay.py FEATURES.jsonl DUMP.jsonl [--family weights|coverage|neighbourhood|field|length|external [--external FILE]]
       python3 bench/rank-replay.py FEATURES.jsonl DUMP.jsonl --misses [NAME=DUMP ...]
       python3 bench/rank-replay.py FEATURES.jsonl DUMP.jsonl --dominance [--embeddings F.f32] [--external F.json]
       (--family centred needs --embeddings F.f32, from bench/devset.bench.ts --embeddings)
"""
import hashlib
import itertools
import json
import math
import sys

import numpy as np

from signtest import sign_p

SHIPPED = dict(vw=0.25, depth=10, rl=0.25, rv=1.0, rc=1.0)
"""src/core/ranking.ts: VECTOR_WEIGHT_BY_MODEL.static, RERANK_DEPTH, RERANK_WEIGHTS."""
STRENGTH_WEIGHT = 0.0005
COVERAGE_VARIANTS = ("idf", "idf_all", "document", "document_idf")
NEIGHBOURHOOD_VARIANTS = ("local", "contrast", "local_idf")
FIELD_VARIANTS = ("error", "error_local", "cause", "cause_local")
LENGTH_VARIANTS = ("precision", "dice")
EXTERNAL_VARIANTS = ("ext_stable", "ext_apart", "ext_both")
CENTRED_VARIANTS = ("centred", "residual")
NEG = -1e18


def load(path):
    return [json.loads(line) for line in open(path) if line.strip()]


def load_external_weights():
    """Token counts from the external fingerprint sets (bench/external-term-weights.ts), if given."""
    if "--external" not in sys.argv:
        return {}
    return json.load(open(sys.argv[sys.argv.index("--external") + 1]))


def load_embeddings(rows):
    """Each query's embedding and its candidates' (bench/devset.bench.ts --embeddings), if given."""
    if "--embeddings" not in sys.argv:
        return None
    flat = np.fromfile(sys.argv[sys.argv.index("--embeddings") + 1], dtype="<f4")
    per_query = sum(1 + len(q["candidates"]) for q in rows)
    dim = flat.size // per_query
    if dim * per_query != flat.size:
        sys.exit("the embeddings file does not match the features file")
    flat = flat.reshape(-1, dim)
    out, at = [], 0
    for q in rows:
        n = len(q["candidates"])
        out.append((flat[at], flat[at + 1 : at + 1 + n]))
        at += 1 + n
    return out


def external_weight(counts, variant):
    """A query word's weight learned from the external sets, not the dev set: how often it is stable
    within one error's reports (ext_stable), how often it tells an apart pair of look-alike errors
    apart (ext_apart), or both; a word the sets never saw weighs 1 (each smoothed share is 1/2)."""
    c = counts or {"stable": 0, "varies": 0, "apart": 0, "shared": 0}
    stable = 2 * (c["stable"] + 1) / (c["stable"] + c["varies"] + 2)
    apart = 2 * (c["apart"] + 1) / (c["apart"] + c["shared"] + 2)
    return {"ext_stable": stable, "ext_apart": apart, "ext_both": stable * apart}[variant]


def fold_of(query):
    return hashlib.sha256(query.split("#")[0].encode()).digest()[0] % 5



def confidence(cos, cov):
    """src/core/confidence.ts confidenceOf for semantic matches: 2 strong, 1 likely, 0 weak."""
    strong = ((cos >= 0.5) & (cov >= 0.6)) | ((cos >= 0.75) & (cov >= 0.5))
    likely = (cos >= 0.62) | ((cos >= 0.45) & (cov >= 0.3))
    return np.where(strong, 2, np.where(likely, 1, 0))


class Queries:
    """Every query's candidates as (queries × candidates) arrays, candidates in seq order (ties)."""

    def __init__(self, rows):
        self.rows = rows
        width = max(len(q["candidates"]) for q in rows)
        names = ("lex", "cos", "cov", "strength", "want", "valid") + COVERAGE_VARIANTS + LENGTH_VARIANTS + EXTERNAL_VARIANTS
        external = load_external_weights()
        embeddings = load_embeddings(rows)
        self.vec = None if embeddings is None else np.zeros((len(rows), width, embeddings[0][0].shape[0]), np.float32)
        self.qvec = None if embeddings is None else np.stack([e[0] for e in embeddings])
        self.a = {k: np.zeros((len(rows), width)) for k in names}
        self.fingerprinted = np.zeros(len(rows), int)
        self.fingerprint_rank = np.zeros(len(rows), int)
        words = max(len(q["words"]) for q in rows)
        # Which query words each candidate's error and root cause (in_ec) or error alone (in_err) has,
        # and each word's IDF among all trails (0 for padding).
        self.in_ec = np.zeros((len(rows), width, words), bool)
        self.in_err = np.zeros((len(rows), width, words), bool)
        self.in_cause = np.zeros((len(rows), width, words), bool)
        self.word_idf = np.zeros((len(rows), words))
        self.n_words = np.array([len(q["words"]) for q in rows])
        for i, q in enumerate(rows):
            fp = q["fingerprinted"][:5]
            index = {w: k for k, w in enumerate(q["words"])}
            for w, k in index.items():
                df = q["words"][w]
                self.word_idf[i, k] = math.log(q["trails"] / df) if df > 0 else math.log(q["trails"])
            self.fingerprinted[i] = len(fp)
            self.fingerprint_rank[i] = fp.index(q["want"]) + 1 if q["want"] in fp else 0
            n = q["trails"]
            idf = {w: math.log(n / df) for w, df in q["words"].items() if df > 0}
            idf_all = {w: math.log(n / df) if df > 0 else math.log(n) for w, df in q["words"].items()}
            total, total_all = sum(idf.values()) or 1, sum(idf_all.values()) or 1
            ext = {v: {w: external_weight(external.get(w), v) for w in q["words"]} for v in EXTERNAL_VARIANTS}
            ext_total = {v: sum(ext[v].values()) or 1 for v in EXTERNAL_VARIANTS}
            listed = {c["seq"]: k for k, c in enumerate(q["candidates"])}
            cands = sorted((c for c in q["candidates"] if c["id"] not in fp), key=lambda c: c["seq"])
            for j, c in enumerate(cands):
                if self.vec is not None:
                    self.vec[i, j] = embeddings[i][1][listed[c["seq"]]]
                a = self.a
                a["lex"][i, j] = c["lex"] or 0
                a["cos"][i, j] = c["cos"] or 0
                a["cov"][i, j] = c["cov"]
                a["strength"][i, j] = c["strength"]
                a["idf"][i, j] = sum(idf.get(w, 0) for w in c["inErrorCause"]) / total
                a["idf_all"][i, j] = sum(idf_all.get(w, 0) for w in c["inErrorCause"]) / total_all
                a["document"][i, j] = len(set(c["inDocument"])) / max(1, len(q["words"]))
                a["document_idf"][i, j] = sum(idf.get(w, 0) for w in set(c["inDocument"])) / total
                a["want"][i, j] = c["id"] == q["want"]
                for v in EXTERNAL_VARIANTS:
                    a[v][i, j] = sum(ext[v][w] for w in c["inErrorCause"]) / ext_total[v]
                if "errorCauseWords" in c:
                    found, own = len(set(c["inErrorCause"])), max(1, c["errorCauseWords"])
                    a["precision"][i, j] = found / own
                    a["dice"][i, j] = 2 * found / (own + max(1, len(q["words"])))
                for w in c["inErrorCause"]:
                    self.in_ec[i, j, index[w]] = True
                for w in c.get("inError", ()):
                    self.in_err[i, j, index[w]] = True
                for w in c.get("inCause", ()):
                    self.in_cause[i, j, index[w]] = True
                a["valid"][i, j] = 1
        self.kind = np.array([q["kind"] for q in rows])
        self.fold = np.array([fold_of(q["query"]) for q in rows])
        self.names = [q["query"] for q in rows]

    def run(self, p):
        """Each query's rank of its trail (0: not in the shortlist) and its top result's confidence."""
        a = self.a
        blend = np.where(a["valid"] > 0, a["lex"] + p["vw"] * a["cos"] + STRENGTH_WEIGHT * a["strength"], NEG)
        order = np.argsort(-blend, axis=1, kind="stable")
        rows = np.arange(blend.shape[0])[:, None]
        short = np.zeros_like(blend, bool)
        short[rows, order[:, : p["depth"]]] = True
        short &= a["valid"] > 0
        score = p["rl"] * a["lex"] + p["rv"] * a["cos"] + p["rc"] * a["cov"] + STRENGTH_WEIGHT * a["strength"]
        for v in COVERAGE_VARIANTS + LENGTH_VARIANTS + EXTERNAL_VARIANTS:
            score = score + p.get(v, 0) * a[v]
        for v in CENTRED_VARIANTS:
            if p.get(v, 0):
                score = score + p[v] * self.centred_cosine(v, short)
        for v in NEIGHBOURHOOD_VARIANTS + FIELD_VARIANTS:
            if p.get(v, 0):
                score = score + p[v] * self.neighbourhood_coverage(v, short)
        order = np.argsort(-np.where(short, score, NEG), axis=1, kind="stable")
        want = np.take_along_axis(a["want"] * short, order, 1)
        rank = np.where(
            self.fingerprint_rank > 0,
            self.fingerprint_rank,
            np.where(want.max(1) > 0, self.fingerprinted + want.argmax(1) + 1, 0),
        )
        top = order[:, 0]
        semantic = confidence(np.round(a["cos"][rows[:, 0], top], 6), a["cov"][rows[:, 0], top])
        level = np.where(self.fingerprinted > 0, 2, np.where(short[rows[:, 0], top], semantic, -1))
        return rank, level


    def centred_cosine(self, variant, short):
        """The cosine with the shortlist's mean vector taken out (session 18): trails of one tool share
        a direction, and what is left of each tells them apart. centred: cos(q - m, c - m); residual:
        cos(q, c - m), m the mean of the shortlisted trails' vectors."""
        w = short.astype(np.float32)[:, :, None]
        m = (self.vec * w).sum(1) / np.maximum(1, w.sum(1))
        c = self.vec - m[:, None, :]
        q = self.qvec - m if variant == "centred" else self.qvec
        dot = np.einsum("ijd,id->ij", c, q)
        norm = np.linalg.norm(c, axis=2) * np.linalg.norm(q, axis=1)[:, None]
        return np.where(norm > 0, dot / np.where(norm > 0, norm, 1), 0)

    def neighbourhood_coverage(self, variant, short):
        """Coverage of the query's words weighted by how few of the shortlist (the query's neighbourhood:
        mostly the same tool's other errors) have each word, so that the words that tell the
        neighbours apart count and the words they all share do not (session 18).

        local: log((n + 1) / d) for a word d of the n shortlisted trails have; contrast: 1 - d / n;
        local_idf: local times the word's IDF among all trails; error: plain coverage of the trail's
        error alone (field-aware); error_local: local weights over the error alone; cause, cause_local: the same over the root cause alone."""
        present = self.in_err if variant.startswith("error") else self.in_cause if variant.startswith("cause") else self.in_ec
        if variant in ("error", "cause"):
            return present.sum(2) / np.maximum(1, self.n_words)[:, None]
        d = np.einsum("ijk,ij->ik", present.astype(float), short.astype(float))
        n = short.sum(1)[:, None].astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if variant == "contrast":
                u = np.where(d > 0, 1 - d / np.maximum(n, 1), 0)
            else:
                u = np.where(d > 0, np.log((n + 1) / np.maximum(d, 1)), 0)
            if variant == "local_idf":
                u = u * self.word_idf
        total = u.sum(1)
        got = np.einsum("ijk,ik->ij", present.astype(float), u)
        return np.where(total[:, None] > 0, got / np.where(total > 0, total, 1)[:, None], 0)


def figures(q, rank, level):
    out = {}
    for kind in ("variant", "paraphrase", "related"):
        s = q.kind == kind
        out[kind] = f"{(rank[s] == 1).mean():.3f} / {((rank[s] >= 1) & (rank[s] <= 3)).mean():.3f}"
    neg = q.kind == "negative"
    out["negatives weak"] = f"{(level[neg] <= 0).sum()}/{neg.sum()}"
    strong = level == 2
    out["strong right"] = f"{(rank[strong] == 1).sum()}/{strong.sum()}"
    return out


def grid(family):
    extras = [{}]
    if family == "coverage":
        extras += [{v: w} for v in COVERAGE_VARIANTS for w in (0.5, 1, 2)]
    if family == "centred":
        settings = [dict(SHIPPED)]
        for v, w, rv in itertools.product(CENTRED_VARIANTS, (0.25, 0.5, 1, 2), (1, 0.5, 0)):
            settings.append(dict(SHIPPED, rv=rv, **{v: w}))
        return settings
    if family == "external":
        settings = [dict(SHIPPED)]
        for v, w, rc in itertools.product(EXTERNAL_VARIANTS, (0.25, 0.5, 1, 2), (1, 0.5, 0)):
            settings.append(dict(SHIPPED, rc=rc, **{v: w}))
        return settings
    if family == "length":
        # Coverage normalized by the trail's own length: the share of the trail's error and root cause
        # words that the query has (precision), or the Dice coefficient of the two word sets.
        settings = [dict(SHIPPED)]
        for v, w, rc in itertools.product(LENGTH_VARIANTS, (0.25, 0.5, 1, 2), (1, 0.5, 0)):
            settings.append(dict(SHIPPED, rc=rc, **{v: w}))
        return settings
    if family in ("neighbourhood", "field"):
        # Only the new term and the plain coverage's weight vary: the other weights sit on a plateau
        # (session 17), and a smaller grid is less to overfit.
        variants = NEIGHBOURHOOD_VARIANTS if family == "neighbourhood" else FIELD_VARIANTS
        settings = [dict(SHIPPED)]
        for v, w, rc in itertools.product(variants, (0.25, 0.5, 1, 2), (1, 0.5, 0)):
            settings.append(dict(SHIPPED, rc=rc, **{v: w}))
        return settings
    settings = [dict(SHIPPED)]
    for vw, depth, rl, rv, rc, extra in itertools.product(
        (0.1, 0.25, 0.5, 0.75, 1), (5, 10, 15, 20, 30), (0, 0.25, 0.5, 1), (0.5, 1, 1.5, 2), (0, 0.5, 1, 1.5), extras
    ):
        p = dict(vw=vw, depth=depth, rl=rl, rv=rv, rc=rc, **extra)
        if p != SHIPPED:
            settings.append(p)
    return settings


def misses(rows, others):
    """The miss table (see the module's docstring), as Markdown."""
    print("| query | kind | rank | BM25 rank | cosine rank | blend rank | stage | why | first instead | query words in the trail | cause | at 1 with |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    causes = {}
    for q in rows:
        if q["kind"] not in ("paraphrase", "related") or q["rank"] == 1:
            continue
        fp = set(q["fingerprinted"])
        cands = [c for c in q["candidates"] if c["id"] not in fp]

        def blend(c):
            return (c["lex"] or 0) + SHIPPED["vw"] * (c["cos"] or 0) + STRENGTH_WEIGHT * c["strength"]

        def rerank(c):
            return SHIPPED["rl"] * (c["lex"] or 0) + SHIPPED["rv"] * (c["cos"] or 0) + SHIPPED["rc"] * c["cov"] + STRENGTH_WEIGHT * c["strength"]

        def rank_by(key):
            order = [c["id"] for c in sorted((c for c in cands if key(c) is not None), key=lambda c: (-key(c), c["seq"]))]
            return order.index(q["want"]) + 1 if q["want"] in order else None

        by_lex, by_cos, by_blend = rank_by(lambda c: c["lex"]), rank_by(lambda c: c["cos"]), rank_by(blend)
        short = sorted(cands, key=lambda c: (-blend(c), c["seq"]))[: SHIPPED["depth"]]
        short.sort(key=lambda c: (-rerank(c), c["seq"]))
        want = next((c for c in q["candidates"] if c["id"] == q["want"]), None)
        words = len(q["words"])
        found = len(want["inDocument"]) if want else None
        if fp:
            stage, why, first = "fingerprint", f"the query's fingerprint is {q['fingerprinted'][0]}'s", q["fingerprinted"][0]
        elif want is None:
            stage, why, first = "not retrieved", "in neither retriever's 30", short[0]["id"]
        elif by_blend > SHIPPED["depth"]:
            stage, why, first = "first stage", f"blend rank {by_blend}: BM25 {want['lex'] or 0:.2f} of the best", short[0]["id"]
        else:
            t = short[0]
            gaps = {
                "BM25": SHIPPED["rl"] * ((want["lex"] or 0) - (t["lex"] or 0)),
                "cosine": SHIPPED["rv"] * ((want["cos"] or 0) - (t["cos"] or 0)),
                "coverage": SHIPPED["rc"] * (want["cov"] - t["cov"]),
            }
            worst = min(gaps, key=gaps.get)
            stage, first = "second stage", t["id"]
            why = f"loses on {worst}: " + ", ".join(f"{k} {v:+.2f}" for k, v in gaps.items())
        at1 = [name for name, d in others.items() if d.get(q["query"]) == 1]
        if fp:
            cause = "another case's fingerprint"
        elif "stem" in at1:
            cause = "word form"
        elif found is None or found < words / 3:
            cause = "vocabulary"
        else:
            cause = f"the {'case' if first.startswith('d') else 'distractor'} first shares as many words"
        causes[cause] = causes.get(cause, 0) + 1
        words_found = f"{found}/{words}" if found is not None else f"-/{words}"
        cells = [q["query"], q["kind"], q["rank"] or ">5", by_lex or "-", by_cos or "-", by_blend or "-", stage, why, first, words_found, cause, ", ".join(at1) or "-"]
        print("| " + " | ".join(map(str, cells)) + " |")
    print()
    for cause, n in sorted(causes.items(), key=lambda x: -x[1]):
        print(f"{cause}: {n}")


def dominance(q):
    """How many paraphrase and related misses in the second stage's shortlist are dominated: another
    shortlisted trail is at least as high on every input, so no second stage that only adds those
    inputs with weights >= 0 can put the right trail first. Once for the shipped inputs, once with
    every term the families add (those the features, --embeddings and --external make available)."""
    a, p = q.a, SHIPPED
    blend = np.where(a["valid"] > 0, a["lex"] + p["vw"] * a["cos"] + STRENGTH_WEIGHT * a["strength"], NEG)
    rows = np.arange(blend.shape[0])[:, None]
    short = np.zeros_like(blend, bool)
    short[rows, np.argsort(-blend, axis=1, kind="stable")[:, : p["depth"]]] = True
    short &= a["valid"] > 0
    rank, _ = q.run(p)
    shipped = [a["lex"], a["cos"], a["cov"]]
    every = shipped + [a[v] for v in COVERAGE_VARIANTS + LENGTH_VARIANTS + EXTERNAL_VARIANTS]
    every += [q.neighbourhood_coverage(v, short) for v in NEIGHBOURHOOD_VARIANTS + FIELD_VARIANTS]
    if q.vec is not None:
        every += [q.centred_cosine(v, short) for v in CENTRED_VARIANTS]
    for name, inputs in (("the shipped inputs (BM25, cosine, coverage)", shipped), (f"every family's {len(every)} inputs", every)):
        f = np.stack(inputs, 2)
        listed = dominated = 0
        for i in np.where(((q.kind == "paraphrase") | (q.kind == "related")) & (rank != 1) & (q.fingerprinted == 0))[0]:
            right = np.where(short[i] & (a["want"][i] > 0))[0]
            if not len(right):
                continue
            listed += 1
            others = [k for k in np.where(short[i])[0] if k != right[0]]
            dominated += any((f[i, k] >= f[i, right[0]]).all() for k in others)
        print(f"{name}: of {listed} misses in the shortlist, {dominated} dominated by another shortlisted trail")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--misses" in sys.argv:
        others = {a.split("=", 1)[0]: {r["query"]: r["rank"] for r in load(a.split("=", 1)[1])} for a in args[2:]}
        misses(load(args[0]), others)
        return
    family = sys.argv[sys.argv.index("--family") + 1] if "--family" in sys.argv else "weights"
    q = Queries(load(args[0]))
    dumped = {r["query"]: r["rank"] for r in load(args[1])}
    rank, level = q.run(SHIPPED)
    off = [n for i, n in enumerate(q.names) if (dumped[n] or 0) != (rank[i] if rank[i] <= 5 else 0)]
    if off:
        sys.exit(f"the replay differs from the bench's dump on {len(off)} queries: {off[:10]}")
    print(f"replay of the shipped setting = the bench's dump on all {len(q.names)} queries")
    if "--dominance" in sys.argv:
        dominance(q)
        return
    kinds = (q.kind == "paraphrase") | (q.kind == "related") | (q.kind == "variant")
    results = []
    for p in grid(family):
        r, lv = q.run(p)
        hits = [((r == 1) & kinds & (q.fold == f)).sum() for f in range(5)]
        weak = [((lv <= 0) & (q.kind == "negative") & (q.fold == f)).sum() for f in range(5)]
        results.append((p, r, lv, hits, weak))
    base_rank, base_level = results[0][1], results[0][2]
    cv_rank, cv_level = np.zeros_like(base_rank), np.zeros_like(base_level)
    print(f"{len(results)} settings ({family}); 5-fold CV by case:")
    for f in range(5):
        def train(x):
            return (sum(x[3]) - x[3][f], sum(x[4]) - x[4][f], x[0] == SHIPPED)

        p, r, lv, _, _ = max(results, key=train)
        m = q.fold == f
        cv_rank[m], cv_level[m] = r[m], lv[m]
        pr = m & ((q.kind == "paraphrase") | (q.kind == "related"))
        won = ((r == 1) & (base_rank != 1) & pr).sum()
        lost = ((r != 1) & (base_rank == 1) & pr).sum()
        print(f"  fold {f}: {p}, training R@1 hits {train(max(results, key=train))[0]} (shipped {train(results[0])[0]}); "
              f"this fold's paraphrase+related won {won} lost {lost}")
    print(f"  shipped:         {figures(q, base_rank, base_level)}")
    print(f"  cross-validated: {figures(q, cv_rank, cv_level)}")
    total_won = total_lost = 0
    for kind in ("paraphrase", "related", "variant"):
        m = q.kind == kind
        won = [q.names[i] for i in np.where((cv_rank == 1) & (base_rank != 1) & m)[0]]
        lost = [q.names[i] for i in np.where((cv_rank != 1) & (base_rank == 1) & m)[0]]
        print(f"  {kind}: won {' '.join(won) or '-'}; lost {' '.join(lost) or '-'}")
        if kind != "variant":
            total_won, total_lost = total_won + len(won), total_lost + len(lost)
    print(f"  paraphrase+related: {total_won} won, {total_lost} lost, sign test p = {sign_p(total_won, total_lost):.3f}")
    best = max(results, key=lambda x: (sum(x[3]), sum(x[4])))
    print(f"  best in sample (for scale, not a result): {best[0]} {figures(q, best[1], best[2])}")


if __name__ == "__main__":
    main()
