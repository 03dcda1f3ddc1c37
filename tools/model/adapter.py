#!/usr/bin/env python3
"""A learned linear adapter A (dim x dim) on the static model's embeddings, trained so that prose
describing a failure lands near the error text it describes: f(x) = normalize(x A), the same map
on both sides (so it folds into the model's projection: P' = P A, no cost at query time).

Pairs: tools/model/adapter-pairs.py (installed text only), embedded by adapter-embed.ts.
Loss: symmetric InfoNCE with in-batch negatives (temperature tau), plus mu * ||A - I||^2 to stay
near the trained space; Adam. Or `--closed-form`: a least-squares map of prose onto error
vectors, W = (X'X + lam I)^-1 (X'Y + lam I), made symmetric as A = (W + W') / 2.
Hyperparameters are chosen on held-out pairs (a tenth of the error texts, by hash), never on the dev set.

Usage: python3 tools/model/adapter.py EMB_PREFIX OUT.f32 [--mu M] [--tau T] [--epochs E]
         [--mix lexicon=1,man=1,pyraise=1,glossary=1] [--closed-form LAM] [--seed S]
Writes OUT.f32 (A, row-major float32, y = x A) and OUT.json (settings and held-out figures).
"""

import argparse
import hashlib
import json
import sys

import numpy as np


def group_of(source):
    for g in ("lexicon", "pyraise", "glossary", "pysibling"):
        if source.startswith(g):
            return g
    return "man"


def normalize(m):
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)


def recall_at(x, y, k_list=(1, 3)):
    """Each prose row against every error row of the same set: rank of its own."""
    s = normalize(x) @ normalize(y).T
    own = np.diag(s)
    rank = (s > own[:, None]).sum(axis=1)
    return {f"R@{k}": float((rank < k).mean()) for k in k_list}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("emb")
    ap.add_argument("out")
    ap.add_argument("--mu", type=float, default=1.0)
    ap.add_argument("--tau", type=float, default=0.05)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--mix", default=None, help="group weights; default: 1 each for InfoNCE batches, each pair alike for --closed-form")
    ap.add_argument("--closed-form", type=float, default=None)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--query-only", action="store_true", help="--closed-form: keep W, to map queries only (prose onto error text)")
    args = ap.parse_args()

    meta = json.load(open(args.emb + ".json"))
    dim = meta["dim"]
    emb = np.fromfile(args.emb + ".f32", dtype=np.float32).reshape(-1, dim).astype(np.float64)
    texts = meta["texts"]
    pairs = meta["pairs"]
    groups_all = ("lexicon", "man", "pyraise", "glossary", "pysibling")
    if args.mix is None:
        counts = {g: sum(1 for s, _, _ in pairs if group_of(s) == g) for g in groups_all}
        mix = {g: 1.0 if args.closed_form is None or counts[g] else 0.0 for g in groups_all}
    else:
        mix = {k: float(v) for k, v in (kv.split("=") for kv in args.mix.split(","))}

    # Held out: the pairs whose error text hashes into the last tenth (one error text, one side).
    def held(err_row):
        return hashlib.sha256(texts[err_row].encode()).digest()[0] < 26

    train = {g: [] for g in mix}
    val = {}
    for source, p, e in pairs:
        g = group_of(source)
        if held(e):
            val.setdefault(g, []).append((p, e))
        elif mix.get(g, 0) > 0:
            train[g].append((p, e))
    train = {g: np.array(v) for g, v in train.items() if len(v)}
    rng = np.random.default_rng(args.seed)
    for g in val:
        v = np.array(val[g])
        rng.shuffle(v)
        val[g] = v[:1000]

    def evaluate(A):
        out = {}
        B = np.eye(dim) if args.query_only else A
        for g, v in sorted(val.items()):
            out[g] = recall_at(emb[v[:, 0]] @ A, emb[v[:, 1]] @ B)
        return out

    I = np.eye(dim)
    base = evaluate(I)
    if args.closed_form is not None:
        # Each group weighs by the mix (a group's pairs share its weight), the whole as many pairs.
        allp = np.concatenate([train[g] for g in train])
        total = sum(mix[g] for g in train)
        w = (
            np.ones(len(allp))
            if args.mix is None
            else np.concatenate([np.full(len(train[g]), mix[g] / total * len(allp) / len(train[g])) for g in train])
        )
        X, Y = emb[allp[:, 0]], emb[allp[:, 1]]
        lam = args.closed_form * len(allp)
        Xw = X * w[:, None]
        W = np.linalg.solve(Xw.T @ X + lam * I, Xw.T @ Y + lam * I)
        A = W if args.query_only else (W + W.T) / 2
    else:
        A = I.copy()
        m = np.zeros_like(A)
        v2 = np.zeros_like(A)
        b1, b2, eps = 0.9, 0.999, 1e-8
        total = sum(len(v) for v in train.values())
        weights = np.array([mix[g] for g in train])
        weights /= weights.sum()
        groups = list(train)
        steps = args.epochs * total // args.batch
        t = 0
        for step in range(steps):
            # A batch drawn by the mix's weights over groups, uniformly within a group.
            counts = rng.multinomial(args.batch, weights)
            idx = np.concatenate([train[g][rng.integers(0, len(train[g]), c)] for g, c in zip(groups, counts)])
            X, Y = emb[idx[:, 0]], emb[idx[:, 1]]
            U, V = X @ A, Y @ A
            nu, nv = np.linalg.norm(U, axis=1, keepdims=True), np.linalg.norm(V, axis=1, keepdims=True)
            Un, Vn = U / nu, V / nv
            S = Un @ Vn.T / args.tau
            B = len(idx)
            # Same error text twice in a batch: not a negative.
            same = (idx[:, 1][:, None] == idx[:, 1][None, :]) & ~np.eye(B, dtype=bool)
            S = np.where(same, -1e9, S)
            P1 = np.exp(S - S.max(axis=1, keepdims=True))
            P1 /= P1.sum(axis=1, keepdims=True)
            P2 = np.exp(S - S.max(axis=0, keepdims=True))
            P2 /= P2.sum(axis=0, keepdims=True)
            dS = ((P1 - np.eye(B)) + (P2 - np.eye(B))) / (2 * B) / args.tau
            dUn = dS @ Vn
            dVn = dS.T @ Un
            dU = (dUn - Un * (dUn * Un).sum(axis=1, keepdims=True)) / nu
            dV = (dVn - Vn * (dVn * Vn).sum(axis=1, keepdims=True)) / nv
            grad = X.T @ dU + Y.T @ dV + 2 * args.mu * (A - I)
            t += 1
            m = b1 * m + (1 - b1) * grad
            v2 = b2 * v2 + (1 - b2) * grad * grad
            A -= args.lr * (m / (1 - b1**t)) / (np.sqrt(v2 / (1 - b2**t)) + eps)
            if step % 200 == 0:
                loss = -np.log(np.diag(P1) + 1e-12).mean()
                print(f"step {step}/{steps} loss {loss:.3f} |A-I| {np.linalg.norm(A - I):.3f}", file=sys.stderr)
    after = evaluate(A)
    A.astype(np.float32).tofile(args.out)
    report = {
        "settings": vars(args),
        "train_pairs": {g: len(v) for g, v in train.items()},
        "held_out_pairs": {g: len(v) for g, v in val.items()},
        "distance_from_identity": float(np.linalg.norm(A - I)),
        "held_out_base": base,
        "held_out_adapter": after,
    }
    json.dump(report, open(args.out.replace(".f32", "") + ".json", "w"), indent=1)
    for g in sorted(val):
        print(f"{g:9s} base R@1 {base[g]['R@1']:.3f} R@3 {base[g]['R@3']:.3f}  adapter R@1 {after[g]['R@1']:.3f} R@3 {after[g]['R@3']:.3f}")
    print(f"|A-I| = {np.linalg.norm(A - I):.3f}")


if __name__ == "__main__":
    main()
