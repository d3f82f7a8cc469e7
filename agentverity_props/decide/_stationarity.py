"""Did the agent change during the run? Early draws against late draws, anytime-valid.

Every decision of a run assumes the agent does not change while it is measured: the meter's
call, the relations' noise calibration and a snapshot's references are all made from draws
taken at different times. A model swapped behind an endpoint, or an agent drifting with
load, breaks that assumption without breaking any other check (the dependent-draws check
looks at back-to-back draws, which a swap keeps alike).

Estimand
    ``theta`` = the meter's: the mean over the probe set of the probability that two
    independent draws of one input disagree. ``theta_early`` is that rate over the meter's
    draws (the first phase of the run), ``theta_late`` over draws made after it.

Null hypothesis H0 (one-sided)
    ``theta_late <= theta_early``: the agent did not become noisier between the meter and
    the late draws. Inputs may differ as much as they like (some inputs flipping a coin all
    along is no change: they count in both rates alike, because both rates weigh every input
    of the probe set equally). The direction tested is the one that breaks guarantees: a
    'verdict-deterministic' call or a snapshot reference over an agent that has since become
    noisy. An agent that became *less* noisy makes the run's calibrations conservative and
    is not tested.

Test
    ``alpha`` is split in two. (1) The meter's pairs are i.i.d. Bernoulli(``theta_early``)
    trials (uniform random input, two fresh draws), so a likelihood-ratio test martingale
    (:func:`early_upper_bound`) at ``alpha / 2`` gives an upper bound ``U`` that holds at the
    meter's stopping time: ``P(theta_early > U) <= alpha / 2``. (2) Late *trials* are
    scored in ``[0, 1]``, each with conditional mean ``theta_late`` given the past: the
    share of disagreeing pairs among fresh draws of a uniformly random input
    (:meth:`ChangeTest.update`), or a *round* of every input once, each scored so
    (:meth:`ChangeTest.update_round`, used by snapshot calibration). The betting e-process
    ``E = mean_j prod (1 + lambda_j (D - U))`` over a fixed grid of bets ``lambda_j < 1/U``
    is a nonnegative supermartingale when ``theta_late <= U`` (for a round, the factor's
    expectation is ``prod_i (1 + lambda (d_i - U)) <= (1 + lambda (mean d - U)) ** n <= 1``
    by the AM-GM inequality), so by Ville's inequality ``P(E ever >= 2 / alpha) <= alpha / 2``.
    Together: under H0 the test fires with probability at most ``alpha``, however many late
    trials are fed and whenever it stops.

Assumptions: the draws of one input are independent given the input (the dependent-draws
check tests it; back-to-back pairs of a cached agent agree more, which only lowers ``E``),
and draws without a verdict are missing independently of the verdict they would have had.

>>> t = ChangeTest(alpha=0.01, early_pairs=40, early_disagreements=0)
>>> round(t.bound, 3)
0.136
>>> for d in [1, 0, 1, 1, 0, 1, 0, 1, 1, 0] * 3:
...     _ = t.update(d)
>>> t.fired, t.trials
(True, 9)
>>> s = ChangeTest(alpha=0.01, early_pairs=40, early_disagreements=0)
>>> for _ in range(30):
...     _ = s.update(0)
>>> s.fired, round(s.e_value, 3) < 1
(False, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidArgument

#: Bets, as shares of the largest safe bet ``1 / U``: a grid, so no bet is tuned to the data.
BET_SHARES = (0.15, 0.3, 0.5, 0.7, 0.85)


#: (weight, share of ``u``) of the alternatives the early bound's test of "theta >= u" mixes:
#: most weight on an agent that never disagrees (the meter's 'deterministic' agents).
EARLY_MIXTURE = ((0.5, 0.0), (0.25, 0.25), (0.25, 0.5))


def early_upper_bound(disagreements: int, pairs: int, alpha: float) -> float:
    """An upper confidence bound for a Bernoulli rate, valid at any stopping time.

    For each ``u`` the likelihood ratio of ``theta = c u`` against ``theta = u``, mixed over
    :data:`EARLY_MIXTURE`, is a nonnegative supermartingale whenever ``theta >= u`` (each
    factor has expectation ``theta c + (1 - theta)(1 - c u) / (1 - u) <= 1``), so by Ville's
    inequality ``P(theta > bound) <= alpha``. The bound is the ``u`` where the ratio reaches
    ``1 / alpha`` (it grows with ``u``); 1 with no pair.

    >>> round(early_upper_bound(0, 38, 0.003125), 3)
    0.154
    """
    s, n = disagreements, pairs
    if n == 0:
        return 1.0
    target = math.log(1.0 / alpha)

    def log_e(u: float) -> float:
        xs = [math.log(w) + (s * math.log(c) if s else 0.0)
              + (n - s) * (math.log1p(-c * u) - math.log1p(-u))
              for w, c in EARLY_MIXTURE if not (s and c == 0.0)]
        m = max(xs)
        return m + math.log(sum(math.exp(x - m) for x in xs))

    lo, hi = s / n, 1.0 - 1e-12
    if log_e(hi) < target:
        return 1.0
    for _ in range(80):  # bisection: log_e is increasing in u above s / n
        mid = (lo + hi) / 2
        if log_e(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def pair_disagreement(keys: Sequence[str]) -> float:
    """The share of disagreeing pairs among ``keys`` (an unbiased estimate of the input's
    pair-disagreement rate from independent draws); 0 with fewer than two keys.

    >>> round(pair_disagreement(["a", "a", "b", "b"]), 3)
    0.667
    """
    n = len(keys)
    if n < 2:
        return 0.0
    from collections import Counter

    same = sum(c * (c - 1) for c in Counter(keys).values())
    return 1.0 - same / (n * (n - 1))


class ChangeTest:
    """The sequential test of H0 "the agent did not become noisier after the meter"
    (module docstring).

    Args:
        alpha: the false-alarm rate: under H0 the test fires with probability at most alpha.
        early_pairs, early_disagreements: the meter's pairs and how many disagreed.
    """

    def __init__(self, *, alpha: float, early_pairs: int, early_disagreements: int) -> None:
        if not (0.0 < alpha < 1.0):
            raise InvalidArgument(f"change alpha={alpha!r} must be in (0, 1)")
        if not (0 <= early_disagreements <= early_pairs):
            raise InvalidArgument("early_disagreements must be between 0 and early_pairs")
        self.alpha = alpha
        self.early_pairs = early_pairs
        self.early_disagreements = early_disagreements
        #: the upper confidence bound of theta_early (1 when the meter made no pair)
        self.bound = early_upper_bound(early_disagreements, early_pairs, alpha / 2)
        self._log_w = [0.0] * len(BET_SHARES)
        self.trials = 0
        self.total = 0.0
        self.fired_at: int | None = None

    @property
    def e_value(self) -> float:
        m = max(self._log_w)
        return math.exp(m) * sum(math.exp(w - m) for w in self._log_w) / len(self._log_w)

    @property
    def fired(self) -> bool:
        return self.fired_at is not None

    @property
    def late_mean(self) -> float | None:
        return self.total / self.trials if self.trials else None

    def _feed(self, scores: Sequence[float]) -> bool:
        if self.fired:
            return True
        u = self.bound
        for d in scores:
            if not (0.0 <= d <= 1.0):
                raise InvalidArgument(f"a late trial's score must be in [0, 1], got {d!r}")
        if u < 1.0:
            for j, c in enumerate(BET_SHARES):
                lam = c / u
                self._log_w[j] += sum(math.log1p(lam * (d - u)) for d in scores)
        self.trials += len(scores)
        self.total += float(sum(scores))
        if self.e_value >= 2.0 / self.alpha:
            self.fired_at = self.trials
        return self.fired

    def update(self, score: float) -> bool:
        """Feed one late trial of a uniformly random input (two fresh draws: 1 if they
        disagree); returns whether the test has fired."""
        return self._feed([float(score)])

    def update_round(self, scores: Sequence[float]) -> bool:
        """Feed a round: every input of the probe set once, each scored by
        :func:`pair_disagreement` of its fresh draws (the same number of draws for every
        input); returns whether the test has fired."""
        return self._feed([float(s) for s in scores])

    def state(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "early_pairs": self.early_pairs,
                "early_disagreements": self.early_disagreements, "early_bound": self.bound,
                "late_trials": self.trials, "late_mean": self.late_mean,
                "e_value": self.e_value, "fired": self.fired}
