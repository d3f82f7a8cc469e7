"""A one-sided exact binomial test with a fixed maximum size, curtailed.

Estimand: ``p``, the probability that one draw is a "mismatch" (i.i.d. draws of one input).
H0: ``p <= tolerance``. The test takes ``k`` draws and rejects when at least ``c`` of them
are mismatches, with ``c`` the smallest count such that ``P(Binomial(k, tolerance) >= c) <=
alpha``: under H0 the rejection rate is at most ``alpha`` (the tail only shrinks as ``p``
falls below ``tolerance``).

Curtailment: the draws stop as soon as the outcome is certain (``c`` mismatches seen, or
too few draws left to reach ``c``). The decision is the one the full ``k`` draws would
give, so the error rate is unchanged; only the number of draws falls.
"""

from __future__ import annotations

from ..errors import InvalidArgument

__all__ = ["binomial_quantile", "binomial_tail", "confirmation_plan", "confirmation_settled"]

_MAX_K = 400


def binomial_tail(c: int, n: int, p: float) -> float:
    """``P(Binomial(n, p) >= c)``: the exact one-sided p-value of ``c`` successes in ``n``.

    >>> binomial_tail(0, 5, 0.3)
    1.0
    >>> round(binomial_tail(5, 5, 0.5), 6)
    0.03125
    """
    from scipy.special import bdtrc  # P(X > c - 1), without importing scipy.stats

    return 1.0 if c <= 0 else float(bdtrc(c - 1, n, p))


def binomial_quantile(q: float, n: int, p: float) -> int:
    """The smallest ``k`` with ``P(Binomial(n, p) <= k) >= q`` (scipy's ``binom.ppf``, from
    ``scipy.special`` so that a run never imports ``scipy.stats``: half a second a process).

    >>> binomial_quantile(0.95, 20, 0.05), binomial_quantile(0.95, 0, 0.05)
    (3, 0)
    >>> binomial_quantile(0.5, 10, 0.5)
    5
    """
    if not 0.0 <= q <= 1.0 or n < 0 or not 0.0 <= p <= 1.0:
        raise InvalidArgument(f"binomial_quantile: q={q!r}, n={n!r}, p={p!r} out of range")
    from scipy.special import bdtr  # P(X <= k)

    for k in range(n + 1):
        if float(bdtr(k, n, p)) >= q:
            return k
    return n


def confirmation_plan(tolerance: float, alpha: float) -> tuple[int, int]:
    """``(k, c)``: the size and the rejection count of the curtailed exact binomial test.

    ``k`` is the smallest size at which ``k - 1`` mismatches out of ``k`` are significant
    (one matching draw is tolerated), ``c`` the smallest count with
    ``P(Binomial(k, tolerance) >= c) <= alpha``: a rate at most ``tolerance`` is rejected
    with probability at most ``alpha`` (module doc).

    >>> confirmation_plan(0.10, 0.05 / 20)
    (5, 4)
    """
    if not (0.0 < tolerance < 0.5):
        raise InvalidArgument(f"tolerance={tolerance!r} must be in (0, 0.5)")
    for k in range(1, _MAX_K):
        if binomial_tail(k - 1, k, tolerance) <= alpha:
            c = next(c for c in range(1, k + 1) if binomial_tail(c, k, tolerance) <= alpha)
            return k, c
    raise InvalidArgument(f"tolerance={tolerance!r} is too high to confirm drift; use < 0.5")


def confirmation_settled(mismatches: int, draws: int, *, k: int, c: int) -> bool:
    """Whether the curtailed test of :func:`confirmation_plan` can stop after ``draws``.

    True once ``c`` mismatches are seen (reject) or ``c`` is out of reach in the
    ``k - draws`` draws left (accept); the decision is then ``mismatches >= c``.

    >>> confirmation_settled(4, 4, k=5, c=4), confirmation_settled(1, 3, k=5, c=4)
    (True, True)
    >>> confirmation_settled(2, 2, k=5, c=4)
    False
    """
    return mismatches >= c or mismatches + (k - draws) < c
