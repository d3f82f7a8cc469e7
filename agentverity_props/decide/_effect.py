"""A relation's pooled effect: an anytime-valid confidence sequence over batches of scores.

The estimand (see docs/statistics.md, "Relation effects") is a mean over the probe set of
per-input effects, one per *side* (score stream). Scores ``Z`` in ``[-1, 1]`` arrive in
*batches* (the relation procedure's epochs): within a batch every score is computed from draws
made in that batch only, and its conditional mean given everything drawn before is the
input's effect exactly (the relation procedure's scores are U-statistics of fresh draws);
the batch's inputs are either every input once or a uniform sample with replacement. Write
``mu`` for the mean, over the probe set, of the per-input effects: a fixed number, not a
function of earlier draws.

For every candidate value ``m`` of ``mu`` two betting processes run per side (Waudby-Smith &
Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 2024), each with
one bet ``lambda`` per batch, fixed before the batch from earlier batches only (the aGRAPA
rule):

* *upper* ``U(m) = prod (1 + lambda (m - Z))`` — evidence that ``mu < m``;
* *lower* ``L(m) = prod (1 + lambda (Z - m))`` — evidence that ``mu > m``.

With one bet per batch and independent scores, a batch multiplies ``U(m)`` by a factor of
expectation ``prod_i (1 + lambda (m - mu_i)) <= exp(lambda sum_i (m - mu_i))``, which is at
most one when ``mean(mu_i) >= m`` (sum over the batch; for a uniform sample the ``mu_i`` are
replaced by their mean). So ``U(m)`` sampled at batch ends is a nonnegative supermartingale
under ``mu >= m``, and by Ville's inequality ``P(U(m) ever >= 1/beta) <= beta``: the values
``m`` never rejected form a confidence sequence, valid under optional stopping at batch ends.
The same holds for ``L(m)`` under ``mu <= m``.

Decisions at the tolerance ``tolerance``; the effect is the *largest* of the sides' means:

* **holds** — on *every* side ``U(tolerance) >= 1/beta``: every side's mean is below ``tolerance``.
  If some side's mean is at least ``tolerance``, that side's ``U(tolerance)`` crosses with
  probability at most ``beta``, so a HOLDS is wrong with probability at most ``beta`` (no
  split over the sides is needed: one false rejection is necessary for the error);
* **violated** — on some side ``L(v) >= 1/alpha_side``: the effect exceeds ``v``, wrong with
  probability at most ``alpha`` (``alpha_side = alpha / sides``); ``v`` is ``violation``,
  the tolerance unless a smaller one is given. Between ``v`` and the tolerance either
  decision may come (an indifference zone): each keeps its own error rate, since each rests
  on its own process;
* **shown** — on some side ``L(0) >= 1/alpha_side``: an effect above zero is shown (reported
  with either of the other two, or alone, never a finding on its own).

>>> t = EffectTest(tolerance=0.1, alpha=0.01, beta=0.05, sides=1, prior_var=0.01)
>>> t.feed([[0.0] * 20])
'undecided'
>>> t.feed([[0.0] * 20])
'holds'
>>> t.status, round(t.upper(), 3) < 0.1
('holds', True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from ..errors import InvalidArgument

if TYPE_CHECKING:
    import numpy as np


@cache
def grid() -> np.ndarray:
    """The candidate means the confidence sequence tracks (plus the tolerance and zero),
    made on first use so that importing ``decide`` loads no numpy."""
    import numpy as np
    return np.round(np.linspace(-1.0, 1.0, 401), 6)

#: Largest share of the wealth a bet may put at risk (a bet of ``c / (1 - m)`` loses at most
#: a share ``c`` on the worst score): near one, so that a quiet agent (scores all zero) can
#: reach ``1/beta`` in ``log(1/beta) / log(1 / (1 - tolerance))`` scores, the least any test of a
#: bounded mean needs.
BET_CAP = 0.95
#: Weight, in scores, of the prior mean (zero) in the bets' plug-in estimates, and of the
#: prior variance (heavier: one batch of zeros must not make the next bet reckless).
PRIOR_WEIGHT = 2.0
VAR_PRIOR_WEIGHT = 30.0
#: The plug-in Kelly fraction overstates the best bet when the variance is estimated: bet
#: this share of it.
KELLY_SHARE = 0.8

EffectStatus = Literal["holds", "violated", "undecided"]


def holds_bet(tolerance: float, variance: float, mean: float = 0.0) -> float:
    """The bet of a HOLDS process ``U(tolerance)`` for scores of this plug-in mean and
    variance (the aGRAPA rule of :class:`EffectTest`): ``KELLY_SHARE`` of the growth-optimal
    fraction ``gap / (variance + gap^2)``, capped so a worst score loses at most ``BET_CAP``.

    >>> round(holds_bet(0.2, 0.04), 3), round(holds_bet(0.2, 0.0), 3)
    (1.187, 1.187)
    >>> round(holds_bet(0.1, 0.5), 3)
    0.157
    """
    gap = tolerance - mean
    frac = KELLY_SHARE * gap / (max(variance, 1e-4) + gap * gap)
    return min(max(frac, 0.0), BET_CAP / (1.0 - tolerance + 1e-12))


class EffectTest:
    """The pooled effect of one relation (module docstring).

    Args:
        tolerance: the largest effect a HOLDS allows, in the scores' units (a share of
            verdicts changed).
        alpha: the false-violation rate (split over the sides).
        beta: the false-holds rate.
        sides: how many score streams (the effect is the largest of their means).
        prior_var: the scores' variance assumed before any batch (sizes the first bets).
        violation: the effect a VIOLATED shows exceeded, at most ``tolerance`` (None: the
            tolerance): ``quick`` holds at 0.2 but finds an effect above 0.1.
    """

    def __init__(self, *, tolerance: float, alpha: float, beta: float, sides: int = 1,
                 prior_var: float = 0.25, violation: float | None = None) -> None:
        import numpy as np
        if not (0.0 < tolerance < 1.0):
            raise InvalidArgument(f"tolerance={tolerance!r} must be in (0, 1)")
        if violation is None:
            violation = tolerance
        if not (0.0 < violation <= tolerance):
            raise InvalidArgument(f"violation={violation!r} must be in (0, tolerance]")
        for name, val in (("alpha", alpha), ("beta", beta)):
            if not (0.0 < val < 1.0):
                raise InvalidArgument(f"EffectTest: {name}={val!r} must be in (0, 1)")
        if sides < 1:
            raise InvalidArgument("EffectTest: sides must be >= 1")
        self.tolerance, self.alpha, self.beta, self.sides = tolerance, alpha, beta, sides
        self.violation = violation
        self.alpha_side = alpha / sides
        self.prior_var = min(max(prior_var, 1e-4), 1.0)
        points = np.unique(np.concatenate([grid(), [0.0, tolerance, violation]]))
        self.grid = points
        self._i_tolerance = int(np.searchsorted(points, tolerance))
        self._i_violation = int(np.searchsorted(points, violation))
        self._i_zero = int(np.searchsorted(points, 0.0))
        shape = (sides, points.size)
        self.log_up = np.zeros(shape)      # log U(m), per side
        self.log_lo = np.zeros(shape)      # log L(m), per side
        self.rej_up = np.zeros(shape, bool)  # U(m) ever >= 1/beta
        self.rej_lo = np.zeros(shape, bool)  # L(m) ever >= 1/alpha_side
        self.n = np.zeros(sides, int)
        self.sum = np.zeros(sides)
        self.sumsq = np.zeros(sides)
        self.batches = 0
        #: one-sample upper scores per side (:meth:`feed_upper`) and their sum
        self.n_upper = np.zeros(sides, int)
        self.sum_upper = np.zeros(sides)

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, batch: Sequence[Sequence[float]]) -> EffectStatus:
        """One batch: a sequence of scores per side (a side may have none in a batch)."""
        import numpy as np
        if len(batch) != self.sides:
            raise InvalidArgument(f"EffectTest.feed: {len(batch)} sides, expected {self.sides}")
        for s, scores in enumerate(batch):
            z = np.asarray(scores, float)
            if z.size == 0:
                continue
            if np.any(np.abs(z) > 1.0 + 1e-12):
                raise InvalidArgument("EffectTest.feed: scores must lie in [-1, 1]")
            lam_up, lam_lo = self._bets(s)
            m = self.grid[:, None]
            self.log_up[s] += np.log1p(lam_up[:, None] * (m - z[None, :])).sum(axis=1)
            self.log_lo[s] += np.log1p(lam_lo[:, None] * (z[None, :] - m)).sum(axis=1)
            self.rej_up[s] |= self.log_up[s] >= math.log(1.0 / self.beta) - 1e-12
            self.rej_lo[s] |= self.log_lo[s] >= math.log(1.0 / self.alpha_side) - 1e-12
            self.n[s] += z.size
            self.sum[s] += z.sum()
            self.sumsq[s] += (z * z).sum()
        self.batches += 1
        return self.status

    def feed_upper(self, batch: Sequence[Sequence[float]]) -> EffectStatus:
        """One batch of *upper scores*, fed to the HOLDS processes only: scores in
        ``[0, 1]`` whose conditional mean is at least the side's per-input effect (a
        follow-up's draw violating against its source's verdict: its mean is the follow-up's
        violation rate, never below that rate minus the source's own). ``U(m)`` keeps its
        supermartingale property under ``mu >= m`` (each factor's mean is at most one), so
        a HOLDS stays wrong with probability at most ``beta``; the violation processes never
        see these scores (they would overstate the effect). The deterministic path's one
        follow-up draw a pair decides a relation this way (relations/_screen.py).

        >>> t = EffectTest(tolerance=0.1, alpha=0.01, beta=0.05, prior_var=0.002)
        >>> t.feed_upper([[0.0] * 30])
        'holds'
        """
        import numpy as np
        if len(batch) != self.sides:
            raise InvalidArgument(f"EffectTest.feed_upper: {len(batch)} sides, expected "
                                  f"{self.sides}")
        for s, scores in enumerate(batch):
            z = np.asarray(scores, float)
            if z.size == 0:
                continue
            if np.any(z < -1e-12) or np.any(z > 1.0 + 1e-12):
                raise InvalidArgument("EffectTest.feed_upper: upper scores must lie in [0, 1]")
            lam_up, _ = self._bets(s)
            m = self.grid[:, None]
            self.log_up[s] += np.log1p(lam_up[:, None] * (m - z[None, :])).sum(axis=1)
            self.rej_up[s] |= self.log_up[s] >= math.log(1.0 / self.beta) - 1e-12
            self.n_upper[s] += z.size
            self.sum_upper[s] += z.sum()
        return self.status

    def _bets(self, s: int) -> tuple[np.ndarray, np.ndarray]:
        """aGRAPA bets for side ``s`` from earlier batches: the growth-optimal fraction
        ``(mean gap) / (variance + gap^2)`` for a plug-in mean and variance, capped."""
        import numpy as np
        n = self.n[s]
        mean = self.sum[s] / (n + PRIOR_WEIGHT)
        raw = self.sumsq[s] / n - (self.sum[s] / n) ** 2 if n else 0.0
        var = max((n * raw + VAR_PRIOR_WEIGHT * self.prior_var) / (n + VAR_PRIOR_WEIGHT), 1e-4)
        gap = self.grid - mean
        frac = KELLY_SHARE * gap / (var + gap * gap)
        lam_up = np.clip(frac, 0.0, BET_CAP / (1.0 - self.grid + 1e-12))
        lam_lo = np.clip(-frac, 0.0, BET_CAP / (1.0 + self.grid + 1e-12))
        return lam_up, lam_lo

    # -- reading ---------------------------------------------------------------------------

    @property
    def holds(self) -> bool:
        """Every side is bounded below the tolerance (see the module docstring)."""
        return bool(self.rej_up[:, self._i_tolerance].all())

    @property
    def violated(self) -> bool:
        """Some side's mean is shown above ``violation`` (see the module docstring)."""
        return bool(self.rej_lo[:, self._i_violation].any())

    @property
    def shown(self) -> bool:
        """An effect above zero is shown (on some side)."""
        return bool(self.rej_lo[:, self._i_zero].any())

    @property
    def status(self) -> EffectStatus:
        # exclusive: the two rejections cannot both hold unless an error was made; the
        # violation (alpha, the stricter rate) wins
        if self.violated:
            return "violated"
        if self.holds:
            return "holds"
        return "undecided"

    def estimate(self, side: int | None = None) -> float | None:
        """The mean score of one side, clipped to its confidence sequence (the running
        intersection may exclude a noisy mean); with ``side`` None the effect: the largest
        side estimate."""
        if side is None:
            ests = [e for e in (self.estimate(s) for s in range(self.sides)) if e is not None]
            return max(ests) if ests else None
        s = side
        if not self.n[s]:
            if self.n_upper[s]:  # upper scores only: their mean, an upper estimate
                return float(min(self.sum_upper[s] / self.n_upper[s], self.upper(s)))
            return None
        mean = self.sum[s] / self.n[s]
        return float(min(max(mean, self.lower(s)), self.upper(s)))

    def upper(self, side: int | None = None) -> float:
        """The ``1 - beta`` upper confidence bound of one side, or (``side`` None) of the
        effect: the largest over the sides (wrong only if the largest side's bound is)."""
        sides = range(self.sides) if side is None else [side]
        out = -1.0
        for s in sides:
            ok = ~self.rej_up[s]
            out = max(out, float(self.grid[ok].max()) if ok.any() else -1.0)
        return out

    def lower(self, side: int | None = None) -> float:
        """The ``1 - alpha_side`` lower confidence bound of one side, or (``side`` None) of
        the effect: the largest over the sides (each at ``alpha_side``: ``alpha`` in all)."""
        sides = range(self.sides) if side is None else [side]
        out = -1.0
        for s in sides:
            ok = ~self.rej_lo[s]
            out = max(out, float(self.grid[ok].min()) if ok.any() else 1.0)
        return out

    def scores(self) -> int:
        return int(self.n.max()) if self.sides else 0

    def state(self) -> dict[str, Any]:
        est = self.estimate()
        return {"estimand": "largest side effect (mean over the probe set)",
                "tolerance": self.tolerance, "violation": self.violation,
                "alpha": self.alpha, "beta": self.beta,
                "sides": self.sides, "estimate": est, "lower": self.lower(),
                "upper": self.upper(), "shown_above_zero": self.shown,
                "status": self.status, "scores": [int(n) for n in self.n],
                "upper_scores": [int(n) for n in self.n_upper],
                "batches": self.batches,
                "side_estimates": [self.estimate(s) for s in range(self.sides)],
                "side_upper": [self.upper(s) for s in range(self.sides)],
                "side_lower": [self.lower(s) for s in range(self.sides)]}


def min_scores_to_hold(tolerance: float, beta: float) -> int:
    """The fewest scores that can ever give ``holds`` (all of them zero, every bet at its
    cap): below that, HOLDS is out of reach whatever the agent does.

    >>> min_scores_to_hold(0.1, 0.05)
    30
    """
    per = math.log1p(BET_CAP / (1.0 - tolerance) * tolerance)
    return math.ceil(math.log(1.0 / beta) / per)
