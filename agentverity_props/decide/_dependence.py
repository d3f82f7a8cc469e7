"""Are an agent's draws of one input independent? A sequential permutation test.

Every other decision of the tool assumes that the draws of one input are independent given
the input. Two common deployments break it: a response cache or sticky session (a repeat of
a prompt tends to get the previous answer: runs of one answer) and replicas behind a
round-robin load balancer (alternating calls reach different replicas: answers alternate).

Null hypothesis H0: the draws of an input are independent and identically distributed given
the input, whatever its answer distribution. The test spends *blocks*: ``n`` back-to-back
draws of one input, made one at a time with no other call in between. Under H0 the block is
exchangeable, so given the multiset of its answers every ordering is equally likely. The
statistic is ``S``, the number of adjacent answers that differ (switches): too few switches
is stickiness, too many is alternation. The block's e-value is

    E = sum_j w_j * rho_j ** S / M(rho_j),   M(rho) = mean of rho ** S over the orderings,

a mixture over ``rho < 1`` (favours few switches) and ``rho > 1`` (favours many), with
weights summing to one, so ``E[E | multiset] = 1`` under H0 exactly (the mean ``M`` is
computed exactly by counting orderings). A block whose answers are all equal has ``E = 1``
(nothing to learn, nothing lost). Answers beyond the two most common of a block are pooled
into one class first (a function of the multiset, so the e-value stays exact). Blocks are
made on fresh draws, so under H0 each block's e-value has conditional mean one given
everything before it, whichever input was chosen from the past: the running product is a
test martingale, and by Ville's inequality ``P(product ever >= 1 / alpha) <= alpha`` under
H0 — the false-alarm rate, valid under optional stopping and adaptive choice of inputs.

>>> round(block_e_value(["a", "a", "a", "b", "b", "b"]), 2)   # one switch: sticky
4.89
>>> round(block_e_value(["a", "b", "a", "b", "a", "b"]), 2)   # five switches: alternating
2.05
>>> block_e_value(["a", "a", "a", "a"])                          # no information
1.0
>>> t = DependenceTest(alpha=0.05)
>>> for _ in range(3):
...     _ = t.update(["a", "a", "a", "a", "b", "b", "b", "b"])
>>> t.fired, round(t.e_value)
(True, 210)
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..errors import InvalidArgument

#: (weight, rho) of the block e-value's mixture: two bets on runs (a cache is the commoner
#: cause), two on alternation (replicas taking turns show it in one or two blocks).
MIXTURE: tuple[tuple[float, float], ...] = ((0.35, 0.05), (0.35, 0.3), (0.15, 3.0),
                                            (0.15, 20.0))


#: Answers beyond the most common ``MAX_CLASSES - 1`` of a block are pooled into one class
#: (a function of the multiset, so the test stays exact) to keep the counting small.
MAX_CLASSES = 3


@lru_cache(maxsize=65536)
def _switch_counts(counts: tuple[int, ...], last: int) -> tuple[int, ...]:
    """Orderings of the multiset ``counts`` that follow a draw of label ``last``, by the
    number of switches they add (index = switches); ``last = -1``: nothing before."""
    if not any(counts):
        return (1,)
    out: list[int] = []
    for j, c in enumerate(counts):
        if not c:
            continue
        rest = (*counts[:j], c - 1, *counts[j + 1:])
        shift = 0 if (last in (j, -1)) else 1
        for s, ways in enumerate(_switch_counts(rest, j)):
            while len(out) <= s + shift:
                out.append(0)
            out[s + shift] += ways
    return tuple(out)


def classes(keys: Sequence[str]) -> list[str]:
    """``keys`` with every answer outside the ``MAX_CLASSES - 1`` most common pooled (ties
    broken by the answer's text): depends on the multiset only."""
    counts = Counter(keys)
    if len(counts) <= MAX_CLASSES:
        return list(keys)
    keep = {k for k, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            [:MAX_CLASSES - 1]}
    return [k if k in keep else "\x00other" for k in keys]


def switch_distribution(keys: Sequence[str]) -> tuple[int, ...]:
    """How many orderings of ``keys``' multiset have 0, 1, 2, ... switches.

    >>> switch_distribution(["a", "a", "b"])   # aab, baa: 1 switch; aba: 2
    (0, 2, 1)
    """
    counts = tuple(sorted(Counter(keys).values(), reverse=True))
    return _switch_counts(counts, -1)


def switches(keys: Sequence[str]) -> int:
    """Adjacent pairs of ``keys`` that differ."""
    return sum(a != b for a, b in itertools.pairwise(keys))


def block_e_value(keys: Sequence[str]) -> float:
    """The e-value of one block of back-to-back draws (module docstring); 1 when every
    answer is the same."""
    keys = classes(keys)
    if len(set(keys)) < 2:
        return 1.0
    dist = switch_distribution(keys)
    total = sum(dist)
    s = switches(keys)
    e = 0.0
    for w, rho in MIXTURE:
        mean = sum(n * rho ** k for k, n in enumerate(dist)) / total
        e += w * rho ** s / mean
    return e


class DependenceTest:
    """The sequential test of H0 "draws of one input are independent" (module docstring).

    Args:
        alpha: the false-alarm rate: under H0 the test fires with probability at most alpha,
            however many blocks are fed and whenever it is stopped.
    """

    def __init__(self, *, alpha: float) -> None:
        if not (0.0 < alpha < 1.0):
            raise InvalidArgument(f"dependence alpha={alpha!r} must be in (0, 1)")
        self.alpha = alpha
        self.log_e = 0.0
        self.blocks = 0
        self.informative = 0
        self.sticky_blocks = 0
        self.alternating_blocks = 0
        #: per input (the ``source`` given to :meth:`update`): [blocks, informative blocks,
        #: switches seen, switches expected under H0, log e-value contributed]
        self.by_source: dict[str, list[float]] = {}

    @property
    def e_value(self) -> float:
        return math.exp(self.log_e)

    @property
    def fired(self) -> bool:
        return self.log_e >= math.log(1 / self.alpha)

    def update(self, keys: Sequence[str], *, source: str = "") -> bool:
        """Feed one block (answers in call order) of the input named ``source``; returns
        whether the test has fired."""
        if self.fired:
            return True
        self.blocks += 1
        e = block_e_value(keys)
        keys = classes(keys)
        row = self.by_source.setdefault(source, [0, 0, 0, 0.0, 0.0])
        row[0] += 1
        if len(set(keys)) > 1:
            self.informative += 1
            dist = switch_distribution(keys)
            mean_s = sum(k * n for k, n in enumerate(dist)) / sum(dist)
            s = switches(keys)
            self.sticky_blocks += s < mean_s
            self.alternating_blocks += s > mean_s
            row[1] += 1
            row[2] += s
            row[3] += mean_s
        row[4] += math.log(e)
        self.log_e += math.log(e)
        return self.fired

    def sources(self) -> list[dict[str, Any]]:
        """What each input's blocks showed, the input that moved the e-value most first:
        ``{"source", "blocks", "informative_blocks", "switches", "expected_switches",
        "e_value"}`` (``expected_switches``: the mean under H0 given each block's answers)."""
        rows = sorted(self.by_source.items(), key=lambda kv: (-kv[1][4], kv[0]))
        return [{"source": k, "blocks": int(r[0]), "informative_blocks": int(r[1]),
                 "switches": int(r[2]), "expected_switches": round(r[3], 2),
                 "e_value": math.exp(r[4])} for k, r in rows]

    @property
    def pattern(self) -> str:
        """Which departure the informative blocks lean to: ``runs`` (more blocks with fewer
        switches than their mean under H0), ``alternation`` (more with more), or ``mixed``."""
        if self.sticky_blocks > self.alternating_blocks:
            return "runs"
        if self.alternating_blocks > self.sticky_blocks:
            return "alternation"
        return "mixed"

    def state(self) -> dict[str, Any]:
        return {"alpha": self.alpha, "e_value": self.e_value, "blocks": self.blocks,
                "informative_blocks": self.informative, "fired": self.fired,
                "pattern": self.pattern, "runs_blocks": self.sticky_blocks,
                "alternating_blocks": self.alternating_blocks}
