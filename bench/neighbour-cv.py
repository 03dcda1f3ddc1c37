"""5-fold cross-validation by case of the neighbour-expansion settings (bench/neighbour-sweep.ts's
settings.jsonl; bench/RESULTS.md, Session 19). The folds and the choice rule of bench/rank-replay.py:
in each fold the setting with the most paraphrase + related + variant queries at rank 1 on the other
four folds (ties: more negatives rated weak, then no expansion) is scored on the fifth.
Run: python3 bench/neighbour-cv.py OUT_DIR/settings.jsonl [--filter NAME ...] (only settings of those filters)"""
import hashlib
import json
import sys
from collections import defaultdict

from signtest import sign_p

LEVEL = {"strong": 2, "likely": 1, "weak": 0, None: 0}


def fold_of(query):
    return hashlib.sha256(query.split("#")[0].encode()).digest()[0] % 5


def main():
    path = sys.argv[1]
    filters = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--filter"]
    by = defaultdict(dict)
    kind = {}
    for line in open(path):
        r = json.loads(line)
        by[r["setting"]][r["query"]] = r
        kind[r["query"]] = r["kind"]
    names = ["none"] + [s for s in by if s != "none" and (not filters or s.split("/")[3] in filters)]
    queries = list(by["none"])
    fold = {q: fold_of(q) for q in queries}

    def hits(s, f):
        return sum(1 for q in queries if fold[q] == f and kind[q] != "negative" and by[s][q]["rank"] == 1)

    def weak(s, f):
        return sum(1 for q in queries if fold[q] == f and kind[q] == "negative" and LEVEL[by[s][q]["confidence"]] == 0)

    def figures(pick):
        out = {}
        for k in ("variant", "paraphrase", "related"):
            qs = [q for q in queries if kind[q] == k]
            r1 = sum(1 for q in qs if pick[q]["rank"] == 1) / len(qs)
            r3 = sum(1 for q in qs if pick[q]["rank"] is not None and pick[q]["rank"] <= 3) / len(qs)
            out[k] = f"{r1:.3f} / {r3:.3f}"
        negs = [q for q in queries if kind[q] == "negative"]
        out["negatives weak"] = f"{sum(1 for q in negs if LEVEL[pick[q]['confidence']] == 0)}/{len(negs)}"
        strong = [q for q in queries if pick[q]["confidence"] == "strong"]
        out["strong right"] = f"{sum(1 for q in strong if pick[q]['rank'] == 1)}/{len(strong)}"
        return out

    table = {s: ([hits(s, f) for f in range(5)], [weak(s, f) for f in range(5)]) for s in names}
    cv = {}
    print(f"{len(names) - 1} settings; 5-fold CV by case:")
    for f in range(5):
        def train(s):
            h, w = table[s]
            return (sum(h) - h[f], sum(w) - w[f], s == "none")

        s = max(names, key=train)
        for q in queries:
            if fold[q] == f:
                cv[q] = by[s][q]
        print(f"  fold {f}: {s}, training R@1 hits {train(s)[0]} (none {train('none')[0]})")
    base = by["none"]
    print(f"  none:            {figures(base)}")
    print(f"  cross-validated: {figures(cv)}")
    won_total = lost_total = 0
    for k in ("paraphrase", "related", "variant"):
        won = [q for q in queries if kind[q] == k and cv[q]["rank"] == 1 and base[q]["rank"] != 1]
        lost = [q for q in queries if kind[q] == k and cv[q]["rank"] != 1 and base[q]["rank"] == 1]
        print(f"  {k}: won {' '.join(won) or '-'}; lost {' '.join(lost) or '-'}")
        if k != "variant":
            won_total, lost_total = won_total + len(won), lost_total + len(lost)
    print(f"  paraphrase+related: {won_total} won, {lost_total} lost, sign test p = {sign_p(won_total, lost_total):.3f}")
    negs_lost = [q for q in queries if kind[q] == "negative" and LEVEL[base[q]["confidence"]] == 0 and LEVEL[cv[q]["confidence"]] > 0]
    print(f"  negatives weak before and not after: {' '.join(negs_lost) or '-'}")
    ranked = sorted(names, key=lambda s: (sum(table[s][0]), sum(table[s][1])), reverse=True)
    print("  in sample (for scale, not a result): " + "; ".join(f"{s} {sum(table[s][0])} hits, {sum(table[s][1])} weak" for s in ranked[:8]))


if __name__ == "__main__":
    main()
