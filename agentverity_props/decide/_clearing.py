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

__all__ = ["BET_CAP", "FLAG_WEALTH", "Clearing", "against_holding", "quiet_clearance"]

#: A side whose clearing wealth falls below this is flagged (tested on its own).
FLAG_WEALTH = 0.05
#: Largest share of the greatest safe bet a clearing bet may use.
BET_CAP = 0.95
#: Terms before a side may be judged futile (its noise too high to clear within the cap).
FUTILE_AFTER = 16
#: Terms of the recent pace a futility judgement also considers.
FUTILE_WINDOW = 6
#: Share of the plug-in Kelly fraction a clearing bet uses.
KELLY = 1.0
#: Weight, in terms, of the prior mean (zero) and of the prior variance in the bets.
PRIOR_WEIGHT = 2.0


def quiet_clearance(beta: float, size: float = 0.5) -> int:
    """Follow-up draws that clear a pair on a quiet input (every term zero, bets at the cap).

    >>> quiet_clearance(0.05)
    5
    """
    per = math.log1p(BET_CAP * size / (1.0 - size))
    return math.ceil(math.log(1.0 / beta) / per - 1e-9)


@dataclass
class Clearing:
    """One side's clearing e-process (module docstring), recomputed from its terms."""

    size: float
    prior_var: float
    log_w: float = 0.0
    terms: int = 0
    low: float = 0.0   # lowest log wealth reached
    trail: list[float] = field(default_factory=list)   # log wealth after each term

    def run(self, terms: Sequence[float]) -> Clearing:
        """Replay the process over ``terms``: each bet is a plug-in Kelly fraction
        ``gap / (var + gap^2)`` from the earlier terms, shrunk toward a prior mean of zero
        and the prior variance with the weight of ``PRIOR_WEIGHT`` terms, capped so that no
        factor is negative."""
        n, s, ss, self.log_w, self.low = 0, 0.0, 0.0, 0.0, 0.0
        self.trail = []
        cap = BET_CAP / (1.0 - self.size)
        for d in terms:
            mean = s / (n + PRIOR_WEIGHT)
            var = max((ss + PRIOR_WEIGHT * self.prior_var) / (n + PRIOR_WEIGHT) - mean * mean,
                      1e-3)
            gap = self.size - mean
            lam = min(max(KELLY * gap / (var + gap * gap), 0.0), cap) if gap > 0 else 0.0
            self.log_w += math.log1p(lam * (self.size - d))
            self.low = min(self.low, self.log_w)
            self.trail.append(self.log_w)
            n, s, ss = n + 1, s + d, ss + d * d
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
