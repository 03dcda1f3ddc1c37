"""The neighbour table's search (tools/model/neighbour-table.ts writes the vectors): top MAX_NEIGHBOURS
other words per word by cosine, at or above MIN_SIMILARITY, rounded to 3 decimals, ties by word."""
import json
import sys

import numpy as np

MAX_NEIGHBOURS = 10
MIN_SIMILARITY = 0.4
BLOCK = 500

vec_file, words_file, dim, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
words = json.load(open(words_file))
v = np.fromfile(vec_file, dtype=np.float32).reshape(len(words), dim)
table = {}
for start in range(0, len(words), BLOCK):
    sims = v[start : start + BLOCK] @ v.T
    for i in range(sims.shape[0]):
        sims[i, start + i] = -1.0  # not its own neighbour
    top = np.argpartition(-sims, MAX_NEIGHBOURS + 5, axis=1)[:, : MAX_NEIGHBOURS + 5]
    for i in range(sims.shape[0]):
        cands = [(round(float(sims[i, j]), 3), words[j]) for j in top[i]]
        cands = sorted((c for c in cands if c[0] >= MIN_SIMILARITY), key=lambda c: (-c[0], c[1]))[:MAX_NEIGHBOURS]
        if cands:
            table[words[start + i]] = [[w, s] for s, w in cands]
with open(out, "w") as f:
    json.dump({"model": "models/default", "max_neighbours": MAX_NEIGHBOURS, "min_similarity": MIN_SIMILARITY, "neighbours": table}, f, sort_keys=True)
print(f"{len(table)} of {len(words)} words have a neighbour at >= {MIN_SIMILARITY}; written to {out}")
