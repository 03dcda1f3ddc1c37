#!/usr/bin/env python3
"""Compares per-query dumps of bench/devset.bench.ts (--split tune --dump F): R@1/R@3 per kind,
negatives rated weak, R@1 won/lost against the base with a two-sided sign test, and, for a set of
settings, 5-fold cross-validation by case (the setting chosen on four folds' paraphrase+related
R@1 is scored on the fifth). For the adapter experiment (bench/RESULTS.md "Session 16").
Usage: python3 bench/adapter-compare.py BASE.jsonl NAME=DUMP.jsonl ... [--cv]
"""
import hashlib
import json
import sys
from signtest import sign_p


def load(path):
    return {r["query"]: r for r in map(json.loads, open(path))}



def figures(d):
    out = {}
    for kind in ("variant", "paraphrase", "related"):
        rows = [r for r in d.values() if r["kind"] == kind]
        out[kind] = (sum(1 for r in rows if r["rank"] == 1) / len(rows), sum(1 for r in rows if r["rank"] and r["rank"] <= 3) / len(rows), len(rows))
    neg = [r for r in d.values() if r["kind"] == "negative"]
    out["weak"] = (sum(1 for r in neg if not r["top3"] or r["top3"][0][3] == "weak"), len(neg))
    return out


def won_lost(base, d, kind, queries=None):
    won, lost = [], []
    for q, r in d.items():
        if r["kind"] != kind or (queries is not None and q not in queries):
            continue
        b1, a1 = base[q]["rank"] == 1, r["rank"] == 1
        if a1 and not b1:
            won.append(q)
        elif b1 and not a1:
            lost.append(q)
    return won, lost


def case_of(q):
    return q.split("#")[0]


def fold_of(q):
    return hashlib.sha256(case_of(q).encode()).digest()[0] % 5


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    base = load(args[0])
    runs = {}
    for a in args[1:]:
        name, path = a.split("=", 1)
        runs[name] = load(path)
    f = figures(base)
    print(f"{'setting':28s} var R@1/R@3   para R@1/R@3   rel R@1/R@3    weak   won/lost para | rel | var")
    def line(name, d):
        f = figures(d)
        wl = []
        for kind in ("paraphrase", "related", "variant"):
            w, l = won_lost(base, d, kind)
            wl.append(f"+{len(w)} -{len(l)}")
        print(f"{name:28s} {f['variant'][0]:.3f}/{f['variant'][1]:.3f}  {f['paraphrase'][0]:.3f}/{f['paraphrase'][1]:.3f}  {f['related'][0]:.3f}/{f['related'][1]:.3f}  {f['weak'][0]}/{f['weak'][1]}  {' | '.join(wl)}")
    line("base", base)
    for name, d in runs.items():
        line(name, d)
        if "--lists" in sys.argv:
            for kind in ("paraphrase", "related", "variant"):
                w, l = won_lost(base, d, kind)
                if w or l:
                    print(f"    {kind}: won {' '.join(sorted(w))}; lost {' '.join(sorted(l))}")
            w = sum(len(won_lost(base, d, k)[0]) for k in ("paraphrase", "related"))
            l = sum(len(won_lost(base, d, k)[1]) for k in ("paraphrase", "related"))
            print(f"    paraphrase+related: {w} won, {l} lost, sign test p = {sign_p(w, l):.3f}")
    if "--cv" in sys.argv and runs:
        # Each fold: choose the setting (base included) with the best paraphrase+related R@1 on the
        # other four folds; count that setting's R@1 on this fold.
        settings = {"base": base, **runs}
        chosen = {}
        total = {k: [0, 0] for k in ("variant", "paraphrase", "related")}
        cv = {}
        for fold in range(5):
            def score(d):
                return sum(1 for q, r in d.items() if r["kind"] in ("paraphrase", "related") and fold_of(q) != fold and r["rank"] == 1)
            best = max(settings, key=lambda s: (score(settings[s]), s == "base"))
            chosen[fold] = best
            for q, r in settings[best].items():
                if fold_of(q) == fold:
                    cv[q] = r
        print("5-fold CV by case, chosen per fold:", chosen)
        line("cross-validated", cv)
        w = sum(len(won_lost(base, cv, k)[0]) for k in ("paraphrase", "related"))
        l = sum(len(won_lost(base, cv, k)[1]) for k in ("paraphrase", "related"))
        print(f"    paraphrase+related: {w} won, {l} lost, sign test p = {sign_p(w, l):.3f}")


if __name__ == "__main__":
    main()
