"""One input's own test of a relation (the local test of ``run``'s localisation).

Scores are the relation procedure's per-round scores against every earlier draw of the input
and of its follow-up (``relations/_pooled.py``, ``forward_score`` / ``reverse_score``): when
the relation holds on the input, the fresh source and follow-up of a round are exchangeable
given the past, so every score has conditional mean exactly zero whatever the earlier draws.

>>> t = LocalTest(alpha=0.01, sides=1)
>>> for _ in range(12):
...     t.feed(0, 1.0)
>>> t.confirmed
True
"""

from __future__ import annotations

import math

__all__ = ["FUTILE_AFTER", "FUTILE_WINDOW", "LocalTest"]


class LocalTest:
    """One input's own test of a relation: a betting e-process on each score side against
    "mean score <= 0" (the relation holds on this input), with no reference verdict to get
    wrong. Every round's scores have conditional mean <= 0 given all earlier draws when the
    relation holds, so each process is a nonnegative supermartingale (Ville): confirmed at
    ``e >= sides / alpha`` with probability at most ``alpha``."""

    def __init__(self, alpha: float, sides: int) -> None:
        self.alpha, self.sides = alpha, sides
        self.log_e = [0.0] * sides
        self.n = [0] * sides
        self.sum = [0.0] * sides
        self.sumsq = [0.0] * sides
        self.trail: list[float] = []

    def bet(self, side: int) -> float:
        n = self.n[side]
        mean = self.sum[side] / (n + 2.0)
        var = max((self.sumsq[side] + 2.0 * 0.25) / (n + 2.0) - mean * mean, 1e-3)
        return min(max(0.8 * mean / (var + mean * mean), 0.0), 0.95) if mean > 0 else 0.05

    def feed(self, side: int, z: float) -> None:
        lam = self.bet(side)
        self.log_e[side] += math.log1p(lam * z)
        self.n[side] += 1
        self.sum[side] += z
        self.sumsq[side] += z * z

    @property
    def e_value(self) -> float:
        return math.exp(max(self.log_e))

    @property
    def confirmed(self) -> bool:
        return max(self.log_e) >= math.log(self.sides / self.alpha) - 1e-12

    def futile(self, rounds: int, max_rounds: int) -> bool:
        """Neither side would cross within three times the rounds left at its better pace
        (the average, or the last ``FUTILE_WINDOW`` rounds), after at least ``FUTILE_AFTER``
        rounds (a coin-flip violation shows in 16 rounds but for 0.5^16): the candidate
        stops undecided (no error spent)."""
        best = max(self.log_e)
        self.trail.append(best)
        if rounds < FUTILE_AFTER:
            return False
        then = self.trail[max(0, len(self.trail) - 1 - FUTILE_WINDOW)]
        pace = max(best / rounds, (best - then) / min(FUTILE_WINDOW, rounds))
        need = math.log(self.sides / self.alpha) - best
        return pace <= 0 or need / pace > 3.0 * (max_rounds - rounds)


#: Rounds before a local test may stop as futile, and the window of its recent pace.
FUTILE_AFTER = 16
FUTILE_WINDOW = 5
