"""A betting e-process against a violation of a stated size: the clearing test of the
per-input screen (``relations/_screen.py``), and the evidence against a relation holding on
one input that flags it.

Each term ``D`` lies in ``[-1, 1]`` and has mean at least ``size`` under the violation; the
wealth ``W = prod (1 + lambda_i (size - D_i))`` with each bet fixed from the earlier terms and
capped so that no factor is negative is then a nonnegative supermartingale, so
``P(W ever >= 1/beta) <= beta`` (Ville): a violation of the size is *cleared* with
probability at most ``beta``.

>>> Clearing(0.5, 0.02).run([0.0] * 5).cleared(0.05)
True
>>> Clearing(0.5, 0.02).run([0.0] * 4).cleared(0.05)
False
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["BET_CAP", "FLAG_WEALTH", "Clearing", "against_holding", "quiet_clearance"]

#: A side whose clearing wealth falls below this is flagged (tested on its own).
FLAG_WEALTH = 0.05
#: Largest share of the greatest safe bet a clearing bet may use.
BET_CAP = 0.95
#: Terms before a side may be judged futile (its noise too high to clear within the cap).
FUTILE_AFTER = 16
#: Terms of the recent pace a futility judgement also considers.
FUTILE_WINDOW = 6
#: Weight, in terms, of the prior mean (zero) and of the prior variance in the bets.
PRIOR_WEIGHT = 8.0


def quiet_clearance(beta: float, size: float = 0.5) -> int:
    """Follow-up draws that clear a pair on a quiet input (every term zero, bets at the cap).

    >>> quiet_clearance(0.05)
    5
    """
    per = math.log1p(BET_CAP * size / (1.0 - size))
    return math.ceil(math.log(1.0 / beta) / per - 1e-9)


@lru_cache(maxsize=65536)
def _kelly_of(weights: tuple[tuple[float, float], ...], size: float, cap: float) -> float:
    """:func:`kelly` of one weighting, remembered: a screen replays every pair's terms each
    round, and the weightings repeat across pairs and rounds."""
    return kelly(dict(weights), size, cap)


def kelly(weights: dict[float, float], size: float, cap: float) -> float:
    """The bet ``lambda`` in ``[0, cap]`` maximising ``sum w ln(1 + lambda (size - d))`` over
    the weighted terms ``d`` (a concave function: Newton's method from the second-order
    approximation, kept inside the interval).

    >>> round(kelly({-1.0: 0.1275, 0.0: 0.745, 1.0: 0.1275}, 0.5, 1.9), 1)
    1.5
    """
    items = [(w, size - d) for d, w in weights.items() if w > 0]
    tot = sum(w for w, _ in items)
    if tot <= 0:
        return cap
    mean = sum(w * g for w, g in items) / tot
    if mean <= 0:
        return 0.0
    second = sum(w * g * g for w, g in items) / tot
    lam = min(cap, mean / second) if second > 0 else cap
    for _ in range(8):
        d1 = sum(w * g / (1.0 + lam * g) for w, g in items)
        if abs(d1) < 1e-9 * tot:
            break
        if d1 > 0 and lam >= cap:
            return cap
        d2 = -sum(w * g * g / (1.0 + lam * g) ** 2 for w, g in items)
        nxt = lam - d1 / d2
        # stay where every factor is positive and inside [0, cap]
        lo = max((-1.0 / g for _, g in items if g < 0), default=math.inf)
        lam = min(max(nxt, 0.0), cap, 0.999 * lo) if math.isfinite(lo) else min(max(nxt, 0.0), cap)
    return lam


@dataclass
class Clearing:
    """One side's clearing e-process (module docstring), recomputed from its terms."""

    size: float
    prior_var: float
    log_w: float = 0.0
    terms: int = 0
    low: float = 0.0   # lowest log wealth reached
    trail: list[float] = field(default_factory=list)   # log wealth after each term

    def run(self, terms: Sequence[float], priors: Sequence[float] | None = None) -> Clearing:
        """Replay the process over ``terms``: each bet is the growth-optimal (Kelly) fraction
        for the distribution of the earlier terms, mixed with a prior distribution of
        ``PRIOR_WEIGHT`` terms (mean zero, variance ``v``: ``-1`` and ``+1`` each with
        probability ``v / 2``), capped so that no factor is negative. ``v`` is ``prior_var``,
        or term by term ``priors[i]``: the prior in effect when term ``i``'s draws were
        asked for (the screen re-reads the agent's noise each round; a term is never bet on
        with a prior read after it was drawn). Every bet uses what was known before its
        term only, so the wealth stays a supermartingale under the violation.

        The exact maximiser of the expected log growth, not its second-order approximation
        ``gap / (var + gap^2)``: on paired terms of a binary verdict at 15% noise the
        approximation bets about two thirds of the optimum, and a clean pair then needs about
        nine terms where the optimum needs under eight (docs/statistics.md §3)."""
        n = 0
        self.log_w, self.low = 0.0, 0.0
        self.trail = []
        cap = BET_CAP / (1.0 - self.size)
        seen: dict[float, float] = {}
        for i, d in enumerate(terms):
            v = min(max(self.prior_var if priors is None else priors[i], 0.0), 1.0)
            weights = dict(seen)
            for x, w in ((-1.0, PRIOR_WEIGHT * v / 2), (1.0, PRIOR_WEIGHT * v / 2),
                         (0.0, PRIOR_WEIGHT * (1 - v))):
                weights[x] = weights.get(x, 0.0) + w
            lam = _kelly_of(tuple(sorted(weights.items())), self.size, cap)
            self.log_w += math.log1p(lam * (self.size - d))
            self.low = min(self.low, self.log_w)
            self.trail.append(self.log_w)
            seen[d] = seen.get(d, 0.0) + 1.0
            n += 1
        self.terms = n
        return self

    def cleared(self, beta: float) -> bool:
        return self.log_w >= math.log(1.0 / beta) - 1e-12

    def futile(self, beta: float, cap: int) -> bool:
        """At its average pace so far the side would not clear within ``cap`` terms (judged
        after ``FUTILE_AFTER`` terms): the pair's noise is too high for the size."""
        if self.terms < FUTILE_AFTER:
            return False
        then = self.trail[-1 - FUTILE_WINDOW]
        pace = max(self.log_w / self.terms, (self.log_w - then) / FUTILE_WINDOW)
        need = math.log(1.0 / beta) - self.log_w
        return pace <= 0 or need / pace > 2.0 * (cap - self.terms)

    @property
    def flagged(self) -> bool:
        return self.log_w <= math.log(FLAG_WEALTH)


def against_holding(terms: Sequence[float]) -> float:
    """Log of a betting e-process against "mean term <= 0" on paired terms (their mean is
    zero when the relation holds on the input): evidence for a violation, used to flag a
    pair for its own test (a flag spends no ``alpha``; the local test that follows does)."""
    n, s, ss, log_e = 0, 0.0, 0.0, 0.0
    for d in terms:
        mean = s / (n + PRIOR_WEIGHT)
        var = max((ss + PRIOR_WEIGHT * 0.25) / (n + PRIOR_WEIGHT) - mean * mean, 1e-3)
        mu = min(max(mean / (var + mean * mean), 0.0), BET_CAP) if mean > 0 else 0.0
        log_e += math.log1p(mu * d)
        n, s, ss = n + 1, s + d, ss + d * d
    return log_e

