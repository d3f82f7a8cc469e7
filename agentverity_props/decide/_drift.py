"""Drift of one input against its own recorded rate: a curtailed two-sample test.

Estimand: ``q``, the probability that one draw of an input differs from its recorded
reference, now (the check) and when the snapshot was made (the calibration: a sample of
fixed size ``m`` drawn *after* the reference was fixed, ``a`` of them mismatches).

H0 (the agent has not changed on this input, or has got closer to its reference):
``q_now <= q_then``, whatever ``q_then`` is — a 50/50 input is no exception. The check takes
at most ``k`` fresh draws and rejects when at least ``c`` of them are mismatches, where ``c``
is the smallest count whose one-sided Fisher exact p-value (the calibration and the ``k``
draws as a 2 x 2 table) is at most ``alpha``: conditionally on the total number of
mismatches, under H0 the table is hypergeometric, so the rejection rate is at most ``alpha``
for every ``q``. When a ``tolerance`` is given the test also requires the binomial tail
``P(Binomial(k, tolerance) >= c) <= alpha``: drift is then reported only when the input is
worse than both its own recorded rate and the allowed noise (an intersection of rejection
regions, valid under either null).

Curtailment: the draws stop once the outcome is certain (``c`` mismatches, or ``c`` out of
reach). The decision is the one ``k`` draws would give, so the error rate is unchanged.

p-value under the stopping rule: :func:`drift_p_value` orders paths by the mismatch count the
full ``k`` draws would have reached at least (the observed count ``x``): ``p = max(Fisher(a,
m; x, k), P(Binomial(k, tolerance) >= x))``. The full count is at least ``x``, and both tails
fall as the count grows, so ``p`` is never below a valid p-value: ``P(p <= u) <= u`` under H0
for every ``u``. On a rejecting path (stopped at ``x = c``) the tolerance part is exactly the
probability that the curtailed rule rejects (:func:`curtailed_reject_probability`, computed
over the rule's paths): 4 mismatches in 4 draws of the ``(k=5, c=4)`` plan at tolerance 0.1
is ``p = 4.6e-4``, not the ``1e-4`` of "4 of 4" read as a fixed sample. ``p <= alpha`` exactly
when the rule rejects.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

from ..errors import InvalidArgument
from ._binomial import binomial_tail

__all__ = ["MAX_DRIFT_DRAWS", "curtailed_reject_probability", "drift_p_value", "drift_plan",
           "fisher_tail"]

#: the most confirmation draws one input may need; an input that would need more (its own
#: recorded rate is too close to 1/2 for drift to be told from noise) is not testable
MAX_DRIFT_DRAWS = 40


@lru_cache(maxsize=4096)
def fisher_tail(a: int, m: int, x: int, k: int) -> float:
    """One-sided Fisher exact p-value: ``x`` of ``k`` now against ``a`` of ``m`` then.

    ``P(H >= x)`` for ``H`` hypergeometric (``m + k`` draws, ``a + x`` mismatches, ``k`` of
    them now): small when the current mismatch rate is higher than the recorded one. ``m = 0``
    (nothing recorded) gives 0.0: no evidence against the recorded rate is needed.

    >>> round(fisher_tail(0, 6, 7, 8), 5)
    0.00233
    >>> round(fisher_tail(3, 6, 3, 6), 4)  # the same rate then and now
    0.7165
    """
    if not (0 <= a <= m and 0 <= x <= k):
        raise InvalidArgument(f"need 0 <= a <= m and 0 <= x <= k, got a={a} m={m} x={x} k={k}")
    if m == 0:
        return 0.0
    if x == 0:
        return 1.0
    n, t = m + k, a + x
    total = comb(n, k)
    tail = sum(comb(t, h) * comb(n - t, k - h) for h in range(x, min(k, t) + 1))
    return min(1.0, tail / total)


def drift_p_value(x: int, *, a: int, m: int, k: int, tolerance: float | None) -> float:
    """The p-value of ``x`` mismatches seen under the curtailed ``k``-draw plan (module doc).

    >>> round(drift_p_value(4, a=0, m=0, k=5, tolerance=0.1), 6)  # 4 of 4, curtailed
    0.00046
    """
    p = fisher_tail(a, m, x, k)
    if tolerance is not None:
        p = max(p, binomial_tail(x, k, tolerance))
    return p


def drift_plan(*, a: int, m: int, tolerance: float | None, alpha: float,
               max_k: int = MAX_DRIFT_DRAWS) -> tuple[int, int] | None:
    """``(k, c)`` for an input with ``a`` of ``m`` calibration mismatches, or None.

    ``k`` is the smallest size at which ``k - 1`` mismatches are significant (one matching
    draw is tolerated), ``c`` the smallest count with ``drift_p_value <= alpha``. None when no
    ``k <= max_k`` works: the recorded rate is too high for drift to be confirmed.

    >>> drift_plan(a=0, m=6, tolerance=0.1, alpha=0.05 / 20)
    (8, 7)
    >>> drift_plan(a=3, m=6, tolerance=0.1, alpha=0.05 / 20) is None
    True
    >>> drift_plan(a=0, m=0, tolerance=0.1, alpha=0.05 / 20)  # tolerance only
    (5, 4)
    """
    if not (0.0 < alpha < 1.0):
        raise InvalidArgument(f"alpha={alpha!r} must be in (0, 1)")
    if tolerance is not None and not (0.0 < tolerance < 0.5):
        raise InvalidArgument(f"tolerance={tolerance!r} must be in (0, 0.5)")
    if m == 0 and tolerance is None:
        raise InvalidArgument("nothing to test against: give a calibration sample or a tolerance")
    for k in range(2, max_k + 1):
        if drift_p_value(k - 1, a=a, m=m, k=k, tolerance=tolerance) <= alpha:
            c = next(x for x in range(1, k)
                     if drift_p_value(x, a=a, m=m, k=k, tolerance=tolerance) <= alpha)
            return k, c
    return None


def curtailed_reject_probability(k: int, c: int, q: float) -> float:
    """``P(the curtailed (k, c) rule rejects)`` when each draw mismatches with probability
    ``q``, by dynamic programming over the rule's paths (it stops at ``c`` mismatches or once
    ``c`` is out of reach). Equal to ``P(Binomial(k, q) >= c)``: curtailment does not change
    the decision.

    >>> round(curtailed_reject_probability(5, 4, 0.1), 6)
    0.00046
    """
    live = {0: 1.0}  # mismatches so far -> probability of a live path
    rejected = 0.0
    for done in range(k):
        nxt: dict[int, float] = {}
        for x, pr in live.items():
            for hit, w in ((1, q), (0, 1.0 - q)):
                y = x + hit
                if y >= c:
                    rejected += pr * w
                elif y + (k - done - 1) >= c:  # still reachable
                    nxt[y] = nxt.get(y, 0.0) + pr * w
        live = nxt
    return rejected
