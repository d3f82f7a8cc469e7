"""Bounds on the largest share of one category in a mixture over a finite population.

Estimand: ``pi_max = max_v pi_v`` with ``pi_v = mean_i p_iv``, where ``p_iv`` is the
probability that one draw from unit ``i`` of a finite population of ``N`` units falls in
category ``v`` (a unit picked uniformly, then drawn once). Two ways to bound every ``pi_v``
at once, each valid at every sample size and under optional stopping:

A. *Mixture sample* (:func:`mixture_share_bounds`): draws whose unit is picked uniformly at
   random (with replacement) are i.i.d. with ``P(v) = pi_v``, so a beta-binomial mixture
   confidence sequence (:func:`~agentverity_props.decide.beta_cs_interval`) per observed
   category, at ``alpha / max(2, K)`` (Bonferroni over the ``K`` observed categories), bounds
   every ``pi_v`` simultaneously with probability at least ``1 - alpha``.
B. *Census* (:func:`census_share_bounds`): ``pi_v`` is the mean of the ``p_iv`` over the ``N``
   units, so confidence sequences per unit and category at ``alpha / (N max(2, K))`` bound it
   by averaging; a unit never drawn contributes ``[0, 1]``.

:func:`max_share_at_least` turns simultaneous bounds into a call on ``pi_max >= threshold``
whose error rate is the bounds' ``alpha``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ._alpha import BLINDNESS_BOUND_SHARE
from ._modal import modal
from ._rules import beta_cs_interval

__all__ = ["ShareCall", "blindness_call", "census_share_bounds", "census_shares",
           "max_share_at_least", "mixture_share_bounds"]

K = TypeVar("K", bound=Hashable)


def mixture_share_bounds(counts: Mapping[K, int], *,
                         alpha: float) -> dict[K, tuple[float, float]]:
    """Simultaneous ``(low, high)`` bounds on each ``pi_v`` from an i.i.d. mixture sample.

    ``counts`` maps each observed category to its count among the draws (method A of the
    module doc). No draw: no bound (an empty dict).

    >>> b = mixture_share_bounds({"yes": 195, "no": 5}, alpha=0.05)
    >>> b["yes"][0] > 0.9 and b["no"][1] < 0.1
    True
    """
    n = sum(counts.values())
    if n == 0:
        return {}
    a = alpha / max(2, len(counts))
    return {v: beta_cs_interval(c, n, a) for v, c in counts.items()}


def _labels(per_input: Sequence[Mapping[K, int]]) -> list[K]:
    """Every category seen, in first-seen order."""
    return list(dict.fromkeys(v for counts in per_input for v in counts))


def census_share_bounds(per_input: Sequence[Mapping[K, int]], *,
                        alpha: float) -> dict[K, tuple[float, float]]:
    """Simultaneous ``(low, high)`` bounds on each ``pi_v`` over a finite population.

    ``per_input[i]`` maps each category to its count among the draws of unit ``i`` (empty for
    a unit never drawn); method B of the module doc. No draw at all: an empty dict.

    >>> b = census_share_bounds([{"yes": 30}, {"yes": 29, "no": 1}, {}], alpha=0.05)
    >>> b["yes"][0] < 2 / 3 and b["no"][1] > 1 / 3  # the unit never drawn may be all "no"
    True
    """
    labels = _labels(per_input)
    n_inputs = len(per_input)
    if not labels or n_inputs == 0:
        return {}
    a = alpha / (n_inputs * max(2, len(labels)))
    bounds: dict[K, tuple[float, float]] = {}
    for v in labels:
        lo_sum = hi_sum = 0.0
        for counts in per_input:
            n = sum(counts.values())
            if not n:
                hi_sum += 1.0
                continue
            lo, hi = beta_cs_interval(counts.get(v, 0), n, a)
            lo_sum += lo
            hi_sum += hi
        bounds[v] = (lo_sum / n_inputs, hi_sum / n_inputs)
    return bounds


def census_shares(per_input: Sequence[Mapping[K, int]]) -> dict[K, float]:
    """The point estimate of each ``pi_v``: per-unit shares averaged over all ``N`` units.

    >>> census_shares([{"yes": 3, "no": 1}, {"yes": 2}])
    {'yes': 0.875, 'no': 0.125}
    """
    n_inputs = len(per_input)
    return {v: sum(counts.get(v, 0) / sum(counts.values())
                   for counts in per_input if sum(counts.values())) / n_inputs
            for v in _labels(per_input)}


def max_share_at_least(bounds: Mapping[K, tuple[float, float]],
                       threshold: float) -> bool | None:
    """Call ``pi_max >= threshold`` from simultaneous bounds on every ``pi_v``.

    True when some lower bound reaches ``threshold``, False when every upper bound is below
    it, None (undecided) otherwise or when there is no bound at all. When the bounds hold
    jointly with probability ``1 - alpha``, either call is wrong with probability at most
    ``alpha``.

    >>> max_share_at_least({"yes": (0.93, 0.99), "no": (0.0, 0.05)}, 0.9)
    True
    >>> max_share_at_least({"yes": (0.6, 0.85), "no": (0.1, 0.3)}, 0.9)
    False
    >>> max_share_at_least({"yes": (0.6, 0.95)}, 0.9) is None
    True
    """
    if not bounds:
        return None
    if any(lo >= threshold for lo, _ in bounds.values()):
        return True
    if all(hi < threshold for _, hi in bounds.values()):
        return False
    return None


@dataclass(frozen=True)
class ShareCall(Generic[K]):
    """A call on ``pi_max >= threshold``: ``blind``, ``ok`` (below it) or ``undecided``, with
    the modal category's share and its bounds, from one of the two methods of the module doc
    (``mixture`` or ``census``)."""

    status: str
    alpha: float
    modal: K | None = None
    share: float | None = None
    low: float | None = None
    high: float | None = None
    sample: int = 0
    distribution: dict[Any, int] = field(default_factory=dict)
    method: str = "mixture"


def _call(bounds: Mapping[K, tuple[float, float]], threshold: float) -> str:
    call = max_share_at_least(bounds, threshold)
    return "undecided" if call is None else "blind" if call else "ok"


def mixture_call(keys: Sequence[K], threshold: float, alpha: float) -> ShareCall[K]:
    """Method A on an i.i.d. mixture sample ``keys``."""
    dist = Counter(keys)
    if not keys:
        return ShareCall("undecided", alpha)
    bounds = mixture_share_bounds(dist, alpha=alpha)
    top = modal(keys)
    assert top is not None
    lo, hi = bounds[top]
    return ShareCall(_call(bounds, threshold), alpha, top, dist[top] / len(keys), lo, hi,
                     len(keys), dict(dist))


def census_call(per_input: Sequence[Sequence[K]], threshold: float,
                alpha: float) -> ShareCall[K]:
    """Method B on every draw of each unit (``per_input[i]``: unit ``i``'s draws)."""
    counts = [Counter(ks) for ks in per_input]
    bounds = census_share_bounds(counts, alpha=alpha)
    if not bounds:
        return ShareCall("undecided", alpha, method="census")
    share = census_shares(counts)
    modal = max(share, key=lambda v: share[v])
    lo, hi = bounds[modal]
    labels = Counter(k for ks in per_input for k in ks)
    return ShareCall(_call(bounds, threshold), alpha, modal, share[modal], lo, hi,
                     sum(len(ks) for ks in per_input), dict(labels), method="census")


def blindness_call(keys: Sequence[K], *, threshold: float, alpha: float,
                   per_input: Sequence[Sequence[K]] | None = None) -> ShareCall[K]:
    """The blindness call of ``run``: method A on ``keys`` alone, or, with ``per_input``,
    both methods at ``alpha * BLINDNESS_BOUND_SHARE`` each: a call either makes (the other
    undecided), ``undecided`` when they disagree.

    >>> blindness_call(["a"] * 30, threshold=0.9, alpha=0.05).status  # 30 draws: too few
    'undecided'
    >>> blindness_call(["a"] * 60, threshold=0.9, alpha=0.05).status
    'blind'
    >>> blindness_call(["a", "b"] * 20, threshold=0.9, alpha=0.05).status
    'ok'
    """
    if per_input is None:
        return mixture_call(keys, threshold, alpha)
    a = mixture_call(keys, threshold, alpha * BLINDNESS_BOUND_SHARE)
    drawn = sum(1 for ks in per_input if ks)
    if drawn < threshold * len(per_input) and drawn <= (1.0 - threshold) * len(per_input):
        # the census cannot call: a unit never drawn counts 0 to every lower bound and 1 to
        # every upper one, so with fewer than ``threshold`` and at most ``1 - threshold`` of
        # the units drawn no lower bound reaches the threshold and no upper bound falls
        # below it: undecided, and the call is the mixture's (below). The common case of a
        # large probe set, where computing it cost most of a second a wave.
        return a
    b = census_call(per_input, threshold, alpha * BLINDNESS_BOUND_SHARE)
    if "undecided" not in (a.status, b.status) and a.status != b.status:
        from dataclasses import replace
        return replace(a, status="undecided")
    if a.status != "undecided" or b.status == "undecided":
        return a
    return b
