"""Benchmark metrics: intervals for a pass rate, pass@k / pass^k, percentiles, consistency."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..decide import beta_cs_interval, pass_at_k, pass_hat_k
from ..decide import clopper_pearson as _clopper_pearson
from ..decide import wilson as _wilson

__all__ = ["clopper_pearson", "k_values", "pass_at_k", "pass_hat_k", "percentile",
           "rate_interval", "share_of_mode", "wilson"]


def clopper_pearson(s: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """:func:`agentverity_props.decide.clopper_pearson`, two-sided, with ``alpha`` positional.

    >>> clopper_pearson(10, 10)[0] > 0.69
    True
    """
    return _clopper_pearson(s, n, alpha=alpha)


def wilson(s: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """:func:`agentverity_props.decide.wilson` at confidence ``1 - alpha``.

    Written ``2 (1 - alpha/2) - 1``: the normal quantile is then taken at exactly the
    rounded ``1 - alpha/2``, where ``1 - alpha`` could move it in the last bits.
    """
    return _wilson(s, n, confidence=2 * (1 - alpha / 2) - 1)


def rate_interval(s: int, n: int, *, alpha: float, method: str,
                  stopped_early: bool) -> tuple[float, float, str]:
    """The reported interval and its method name.

    A fixed-n interval is wrong after a data-dependent stop, so an early-stopped task gets
    the anytime-valid beta-binomial mixture confidence sequence instead.
    """
    if stopped_early:
        lo, hi = beta_cs_interval(s, n, alpha)
        return lo, hi, "beta-mixture confidence sequence (anytime-valid; stopped early)"
    if method == "wilson":
        lo, hi = wilson(s, n, alpha)
        return lo, hi, "wilson"
    lo, hi = clopper_pearson(s, n, alpha)
    return lo, hi, "clopper-pearson (exact)"


def k_values(n: int) -> list[int]:
    """The k reported for n runs: 1, 2, 3, 5, 10 and n itself, those <= n."""
    return sorted({k for k in (1, 2, 3, 5, 10, n) if 1 <= k <= n})


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (numpy's default), None for no data."""
    if not values:
        return None
    import numpy as np
    return float(np.percentile(np.asarray(values, dtype=float), q))


def share_of_mode(outputs: Sequence[str]) -> float | None:
    """Share of the most common literal output (agentverdict's consistency), None if none."""
    if not outputs:
        return None
    return Counter(outputs).most_common(1)[0][1] / len(outputs)
