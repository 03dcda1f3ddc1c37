"""The two-sided sign test the ranking benches report (bench/rank-replay.py, bench/adapter-compare.py)."""
from math import comb


def sign_p(won, lost):
    """Two-sided exact sign test of `won` against `lost` queries (ties left out); 1.0 with none."""
    n = won + lost
    if n == 0:
        return 1.0
    k = min(won, lost)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n)
