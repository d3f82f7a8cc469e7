"""The shape of a pooled round: how many source draws and follow-up draws one round of an
input takes, chosen to buy the most evidence per agent call (relations/_pooled.py).

A round of an input takes ``S`` source draws, shared by every relation of the input, and ``F``
follow-up draws per relation, and gives each relation one exact score (U-statistics,
:func:`~agentverity_props.relations._pooled.exact_scores`). Whatever ``S`` and ``F`` are, a
score's conditional mean is the input's effect: the shape changes the cost and the noise of a
score, never what it estimates. So the shape is a pure question of price.

**The model.** When the relation holds, a binary verdict whose draws leave the modal verdict
with probability ``r`` (source and follow-up alike; ``r`` from the agent's pair disagreement
``d = 2r(1 - r)``) gives each score a law that is computed exactly here from the two binomial
counts of a round. The pooled test (:class:`~agentverity_props.decide.EffectTest`) bets on
the scores against "the effect is at least the tolerance ``m``" with the bet
:func:`~agentverity_props.decide.holds_bet` (capped: a score may be as large as 1); a score
then adds ``g = E log(1 + lambda (m - Z))`` to that process's log wealth on average, with a
per-score variance ``s^2``. A HOLDS needs every process (each side of each live relation, ``K``
in all) to gain ``L = log(1 / beta)``: a random walk of drift ``g`` needs ``L / g`` scores on
average with a standard deviation of ``sqrt(L s^2 / g^3)``, and the last of ``K`` about
``z_K`` of them more (``z_K`` the expected largest of ``K`` standard normals). The shape chosen
minimises

    (S + relations * F) * max over sides (L / g + z_K sqrt(L s^2 / g^3)),

the calls of a round times the rounds the slowest process needs. It is flat near its minimum,
so a noise estimate a little off costs little. Under the cap a score can never add more than
``log(1 + cap m)``, so once the scores are precise enough, more draws a round buy nothing: on
a quiet agent every shape gains the same and the cheapest (two and two) is taken; at 15%
noise and seven relations, quick's tolerance 0.2 takes 5 sources and 3 follow-ups, the
tolerance 0.1 takes 8 and 4; a noisier agent or a smaller tolerance takes more of both.

For a verdict with more than two values the binary law is an approximation (its noise has the
same pair disagreement); only the price depends on it.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..decide import holds_bet
from ._screen import flip_of

#: The shapes a round may take: source draws, and follow-up draws per relation (two at least:
#: the reverse score compares two follow-ups).
ROUND_SOURCES = range(2, 11)
ROUND_FOLLOW_UPS = range(2, 7)


@lru_cache(maxsize=4096)
def score_law(flip: float, sources: int, follow_ups: int
              ) -> tuple[tuple[float, float, float], ...]:
    """Every outcome of one round of a binary verdict when the relation holds: (probability,
    forward score, reverse score), from the counts ``a`` of ``sources`` and ``b`` of
    ``follow_ups`` draws that left the modal verdict.

    >>> law = score_law(0.15, 6, 3)
    >>> round(sum(p for p, _, _ in law), 12), round(sum(p * z for p, z, _ in law), 12)
    (1.0, 0.0)
    """
    out = []
    s, f = sources, follow_ups
    for a in range(s + 1):
        pa = math.comb(s, a) * flip ** a * (1 - flip) ** (s - a)
        for b in range(f + 1):
            pb = math.comb(f, b) * flip ** b * (1 - flip) ** (f - b)
            cross = (a * (f - b) + (s - a) * b) / (s * f)
            within_s = 2 * a * (s - a) / (s * (s - 1))
            within_f = 2 * b * (f - b) / (f * (f - 1))
            out.append((pa * pb, cross - within_s, cross - within_f))
    return tuple(out)


def score_variance(pair_disagreement: float | None, sources: int, follow_ups: int) -> float:
    """The larger side's variance of a round's score when the relation holds (0.25, the
    largest plausible, when the noise is unknown).

    >>> round(score_variance(0.255, 6, 3), 4), score_variance(0.0, 2, 2)
    (0.0565, 0.0)
    """
    if pair_disagreement is None:
        return 0.25
    law = score_law(round(flip_of(pair_disagreement), 3), sources, follow_ups)
    return max(sum(p * z[k] ** 2 for p, *z in law) for k in (0, 1))


def _expected_max(k: int) -> float:
    """About the expected largest of ``k`` standard normals (Blom's approximation)."""
    from statistics import NormalDist

    if k <= 1:
        return 0.0
    return NormalDist().inv_cdf((k - 0.375) / (k + 0.25))


@lru_cache(maxsize=4096)
def _shape(flip: float, relations: int, tolerance: float, sides: int, beta: float
           ) -> tuple[int, int]:
    goal = math.log(1.0 / beta)
    z = _expected_max(sides * relations)
    best: tuple[float, int, int, int] | None = None
    for s in ROUND_SOURCES:
        for f in ROUND_FOLLOW_UPS:
            law = score_law(flip, s, f)
            need = 0.0
            for k in range(sides):
                var = sum(p * zs[k] ** 2 for p, *zs in law)
                lam = holds_bet(tolerance, var)
                steps = [(p, math.log1p(lam * (tolerance - zs[k]))) for p, *zs in law]
                g = sum(p * x for p, x in steps)
                if g <= 0:
                    need = math.inf
                    break
                s2 = max(0.0, sum(p * x * x for p, x in steps) - g * g)
                need = max(need, goal / g + z * math.sqrt(goal * s2 / g ** 3))
            cost = s + relations * f
            key = (cost * need, cost, s, f)
            if best is None or key < best:
                best = key
    assert best is not None
    return best[2], best[3]


def round_sizes(pair_disagreement: float | None, relations: int, *, tolerance: float,
                sides: int = 2, beta: float = 0.05) -> tuple[int, int]:
    """Source draws and follow-up draws (per relation) of one round of an input that
    ``relations`` relations share (module docstring): the shape that buys a HOLDS of every
    relation with the fewest calls at this noise. Two and two when the noise is unknown or
    nil.

    >>> round_sizes(0.0, 8, tolerance=0.1), round_sizes(None, 8, tolerance=0.1)
    ((2, 2), (2, 2))
    >>> round_sizes(0.255, 7, tolerance=0.2), round_sizes(0.255, 7, tolerance=0.1)
    ((5, 3), (8, 4))
    """
    if not pair_disagreement or pair_disagreement < 1e-3:
        return 2, 2
    flip = round(flip_of(pair_disagreement), 3)
    return _shape(flip, max(1, relations), round(tolerance, 4), max(1, min(sides, 2)),
                  round(beta, 6))
