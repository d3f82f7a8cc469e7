"""One input of a recording tested on its own, on every recorded draw: an exact conditional
(permutation) test that the follow-up's verdicts are distributed as the source's.

**H0** (an invariant relation holds on the input): the source draws and the follow-up draws
come from one verdict distribution, so given the multiset of all ``n + m`` recorded verdicts
every split into ``n`` source and ``m`` follow-up labels is equally likely (the draws are
independent given the input). **Statistic**: ``T = sum_v (a_v / n - b_v / m)^2``, the squared
distance between the two empirical distributions (``a_v`` source and ``b_v`` follow-up draws
with verdict ``v``). **p-value**: ``P(T >= t_obs)`` under H0, computed exactly from the
multivariate hypergeometric law of the source counts given the verdict totals (every
``2 x K`` table with those margins); when there are more than ``MAX_TABLES`` tables, by
``MC_PERMUTATIONS`` random splits from a generator seeded by the caller, with the ``(1 +
hits) / (1 + B)`` estimate, which is a valid p-value. So P(p <= a) <= a under H0, for every
sample size: exact, no approximation.

>>> round(exact_split_p(["allow"] * 10, ["block"] * 10), 7)  # 2 / C(20, 10)
1.08e-05
>>> round(exact_split_p(["allow", "block"] * 5, ["block", "allow"] * 5), 6)
1.0
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence

#: Most 2 x K tables enumerated exactly; beyond, a Monte Carlo permutation p-value.
MAX_TABLES = 200_000
MC_PERMUTATIONS = 20_000


def _stat(a: Sequence[int], b: Sequence[int], n: int, m: int) -> float:
    return sum((x / n - y / m) ** 2 for x, y in zip(a, b, strict=True))


def exact_split_p(sources: Sequence[Hashable], follow_ups: Sequence[Hashable], *,
                  seed: int | str = 0) -> float:
    """The exact p-value of H0 "sources and follow-ups share one distribution" (module
    docstring); 1.0 when either side is empty."""
    n, m = len(sources), len(follow_ups)
    if not n or not m:
        return 1.0
    cs, cf = Counter(map(str, sources)), Counter(map(str, follow_ups))
    labels = sorted(set(cs) | set(cf))
    totals = [cs[v] + cf[v] for v in labels]
    t_obs = _stat([cs[v] for v in labels], [cf[v] for v in labels], n, m) - 1e-12
    tables = math.prod(t + 1 for t in totals[:-1]) if len(totals) > 1 else 1
    if tables <= MAX_TABLES:
        return min(1.0, _enumerate(totals, n, m, t_obs))
    rng = random.Random(f"fixed-local:{seed}")
    pool = [i for i, t in enumerate(totals) for _ in range(t)]
    hits = 0
    for _ in range(MC_PERMUTATIONS):
        rng.shuffle(pool)
        a = Counter(pool[:n])
        b = [totals[i] - a[i] for i in range(len(totals))]
        hits += _stat([a[i] for i in range(len(totals))], b, n, m) >= t_obs
    return (1 + hits) / (1 + MC_PERMUTATIONS)


def _enumerate(totals: list[int], n: int, m: int, t_obs: float) -> float:
    """Sum of the hypergeometric probabilities of every table with ``T >= t_obs``."""
    log_denom = math.lgamma(n + m + 1) - math.lgamma(n + 1) - math.lgamma(m + 1)
    k = len(totals)
    p = 0.0
    a = [0] * k

    def rec(i: int, left: int, logw: float) -> None:
        nonlocal p
        rest = sum(totals[i:])
        if left > rest:
            return
        if i == k - 1:
            if left > totals[i]:
                return
            a[i] = left
            lw = logw + _log_comb(totals[i], left)
            b = [t - x for t, x in zip(totals, a, strict=True)]
            if _stat(a, b, n, m) >= t_obs:
                p += math.exp(lw - log_denom)
            return
        for x in range(min(totals[i], left) + 1):
            a[i] = x
            rec(i + 1, left - x, logw + _log_comb(totals[i], x))

    rec(0, n, 0.0)
    return p


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def holm(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Holm's step-down rejections at family-wise ``alpha`` (valid under any dependence).

    >>> holm([0.001, 0.04, 0.2], 0.05)
    [True, False, False]
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    out = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (len(p_values) - rank):
            break
        out[i] = True
    return out
