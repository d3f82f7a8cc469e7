"""Fixed-sample intervals for a binomial rate: Wilson score and Clopper-Pearson (exact).

Estimand: the success probability ``theta`` of ``n`` i.i.d. Bernoulli trials, ``n`` fixed
before the data are seen. Neither interval survives a data-dependent stop: after optional
stopping use the anytime-valid :func:`~agentverity_props.decide.beta_cs_interval`.
"""

from __future__ import annotations

import math
from typing import Literal

from ..errors import InvalidArgument

__all__ = ["clopper_pearson", "mean_interval", "wilson"]

Side = Literal["two-sided", "upper", "lower"]

#: ``ndtri(0.975)``, the two-sided 95% normal quantile, to the last bit: the default needs no
#: scipy (the HTML reports draw Wilson intervals and do not otherwise load it)
_Z95 = 1.959963984540054


def _check_counts(k: int, n: int) -> None:
    if not (0 <= k <= n):
        raise InvalidArgument(f"need 0 <= k <= n successes out of n trials, got k={k}, n={n}")


def wilson(k: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes in ``n`` trials, two-sided.

    Approximate coverage ``confidence`` (the normal approximation to the score test, inverted);
    clipped to [0, 1]. ``n == 0`` carries no information and gives ``(0.0, 1.0)``.

    >>> lo, hi = wilson(0, 10)
    >>> lo == 0.0 and 0.27 < hi < 0.28
    True
    >>> wilson(0, 0)
    (0.0, 1.0)
    >>> [round(x, 4) for x in wilson(5, 10, confidence=0.9)]
    [0.2693, 0.7307]
    """
    _check_counts(k, n)
    if not (0.0 < confidence < 1.0):
        raise InvalidArgument(f"confidence={confidence!r} must be strictly between 0 and 1")
    if n == 0:
        return 0.0, 1.0
    if confidence == 0.95:
        z = _Z95
    else:
        from scipy.special import ndtri  # normal quantile without importing scipy.stats

        z = float(ndtri((1.0 + confidence) / 2.0))
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson(k: int, n: int, *, alpha: float,
                    side: Side = "two-sided") -> tuple[float, float]:
    """Exact (Clopper-Pearson) confidence interval for a binomial rate, as ``(low, high)``.

    Coverage at least ``1 - alpha`` for every ``theta`` (the inverted exact binomial test):

    - ``"two-sided"``: ``alpha / 2`` in each tail;
    - ``"upper"``: ``(0, u)``, ``P(theta > u) <= alpha``: an upper confidence bound;
    - ``"lower"``: ``(l, 1)``, ``P(theta < l) <= alpha``: a lower confidence bound.

    ``n == 0`` gives ``(0.0, 1.0)``.

    >>> lo, hi = clopper_pearson(10, 10, alpha=0.05)
    >>> round(lo, 4), hi
    (0.6915, 1.0)
    >>> round(clopper_pearson(0, 20, alpha=0.05, side="upper")[1], 4)
    0.1391
    >>> clopper_pearson(0, 20, alpha=0.05, side="lower")
    (0.0, 1.0)
    """
    _check_counts(k, n)
    if not (0.0 < alpha < 1.0):
        raise InvalidArgument(f"alpha={alpha!r} must be strictly between 0 and 1 (e.g. 0.05)")
    if side not in ("two-sided", "upper", "lower"):
        raise InvalidArgument(f"side={side!r}; use 'two-sided', 'upper' or 'lower'")
    if n == 0:
        return 0.0, 1.0
    from scipy.special import betaincinv  # beta quantiles without importing scipy.stats

    tail = alpha / 2 if side == "two-sided" else alpha
    lo = 0.0 if k == 0 or side == "upper" else float(betaincinv(k, n - k + 1, tail))
    hi = 1.0 if k == n or side == "lower" else float(betaincinv(k + 1, n - k, 1 - tail))
    return lo, hi


def mean_interval(values: list[float], *, alpha: float) -> tuple[float, float] | None:
    """Two-sided normal interval at ``1 - alpha`` for the mean of independent observations in
    [0, 1] (clipped to [0, 1]); None when fewer than two or all equal (no spread to scale by:
    use an exact interval then).

    >>> lo, hi = mean_interval([0.0, 1.0] * 50, alpha=0.05)
    >>> round(lo, 3), round(hi, 3)
    (0.402, 0.598)
    """
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    var = sum((x - mean) ** 2 for x in values) / (n - 1)
    if var <= 0:
        return None
    from statistics import NormalDist
    half = NormalDist().inv_cdf(1 - alpha / 2) * math.sqrt(var / n)
    return max(0.0, mean - half), min(1.0, mean + half)
