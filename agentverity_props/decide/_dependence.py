"""Are an agent's draws of one input independent? A sequential permutation test.

Every other decision of the tool assumes that the draws of one input are independent given
the input. Two common deployments break it: a response cache or sticky session (a repeat of
a prompt tends to get the previous answer: runs of one answer) and replicas behind a
round-robin load balancer (alternating calls reach different replicas: answers alternate).

Null hypothesis H0: the draws of an input are independent and identically distributed given
the input, whatever its answer distribution. The test spends *blocks* of draws of one input.
Live checks make *spaced* blocks (:func:`paired_block_e_value`): pairs of back-to-back draws,
the pairs far apart in call order, so a cache with a time to live — which makes every pair
agree and answers each pair afresh — is seen too (issue 47; a block of back-to-back draws all
hit such a cache and carry no evidence). The description below is of a back-to-back block:
``n`` draws of one input, made one at a time with no other call in between. Under H0 the block is
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


@lru_cache(maxsize=65536)
def _mixed_pair_counts(counts: tuple[int, ...]) -> tuple[int, ...]:
    """Label sequences of the multiset ``counts`` (an even total) read as consecutive pairs
    (1-2, 3-4, ...), by the number of pairs whose two labels differ (index = mixed pairs)."""
    if not any(counts):
        return (1,)
    out: list[int] = []
    for i, ci in enumerate(counts):
        for j, cj in enumerate(counts):
            if not ci or not cj or (i == j and ci < 2):
                continue
            rest = list(counts)
            rest[i] -= 1
            rest[j] -= 1
            shift = int(i != j)
            for s, ways in enumerate(_mixed_pair_counts(tuple(rest))):
                while len(out) <= s + shift:
                    out.append(0)
                out[s + shift] += ways
    return tuple(out)


def mixed_pairs(keys: Sequence[str]) -> int:
    """Pairs (1-2, 3-4, ...) of ``keys`` whose two answers differ."""
    return sum(keys[i] != keys[i + 1] for i in range(0, len(keys) - 1, 2))


def mixed_pair_distribution(keys: Sequence[str]) -> tuple[int, ...]:
    """How many orderings of ``keys``' multiset have 0, 1, 2, ... mixed pairs.

    >>> mixed_pair_distribution(["a", "a", "b", "b"])   # aabb, bbaa: 0; abab, ... : 2
    (2, 0, 4)
    """
    if len(keys) % 2:
        raise InvalidArgument(f"a paired block needs an even number of answers, got {len(keys)}")
    return _mixed_pair_counts(tuple(sorted(Counter(keys).values(), reverse=True)))


def _mixture_e(dist: tuple[int, ...], s: int) -> float:
    total = sum(dist)
    return sum(w * rho ** s / (sum(n * rho ** k for k, n in enumerate(dist)) / total)
               for w, rho in MIXTURE)


def paired_block_e_value(keys: Sequence[str]) -> float:
    """The e-value of one *spaced* block (§2b of docs/statistics.md): ``keys`` are ``m`` pairs
    of one input in call order, each pair two back-to-back draws, consecutive pairs far
    apart in the call sequence. Half the mixture over the mixed pairs (a cache makes a pair
    agree however far the pairs are apart), half :func:`block_e_value` over the switches of
    the whole sequence (a sticky cache makes runs across pairs too); both are exact given
    the multiset, so the mean over the orderings is one. 1 when every answer is the same.

    >>> round(paired_block_e_value(["a", "a", "b", "b", "a", "a", "a", "a"]), 2)  # cached
    2.43
    >>> paired_block_e_value(["a"] * 8)
    1.0
    """
    keys = classes(keys)
    if len(set(keys)) < 2:
        return 1.0
    e_pair = _mixture_e(mixed_pair_distribution(keys), mixed_pairs(keys))
    return 0.5 * e_pair + 0.5 * block_e_value(keys)


def paired_block_reach(keys: Sequence[str]) -> float:
    """A floor on what :func:`paired_block_e_value` would have given, had a cache answered
    the second draw of every pair from its first: the first draws of the pairs (spaced far
    apart, so fresh under such a cache) each doubled, every pair pure, the pair half alone
    (the switch half counted as zero). 1 when the first draws all agree: a block whose
    spaced answers never differ is no evidence that a cache is absent.

    >>> round(paired_block_reach(["a", "a", "b", "a", "a", "a", "a", "a"]), 2)
    2.01
    >>> paired_block_reach(["a", "b", "a", "b"])
    1.0
    """
    firsts = list(keys[0::2])
    doubled = classes([k for k in firsts for _ in range(2)])
    if len(set(doubled)) < 2:
        return 1.0
    return 0.5 * _mixture_e(mixed_pair_distribution(doubled), 0)


def block_e_value(keys: Sequence[str]) -> float:
    """The e-value of one block of back-to-back draws (module docstring); 1 when every
    answer is the same."""
    keys = classes(keys)
    if len(set(keys)) < 2:
        return 1.0
    return _mixture_e(switch_distribution(keys), switches(keys))


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
        #: log of the product of :func:`paired_block_reach` over the spaced blocks: what a
        #: cache behind the same answers would have shown at least
        self.log_reach = 0.0
        self.spaced_blocks = 0
        #: the fewest calls seen from one pair's first draw to the next pair's of the same
        #: input (a cache whose entries live fewer calls than this cannot hide); None: no
        #: spaced block yet
        self.spacing: int | None = None
        #: per input (the ``source`` given to :meth:`update`): [blocks, informative blocks,
        #: switches seen, switches expected under H0, log e-value contributed]
        self.by_source: dict[str, list[float]] = {}

    @property
    def e_value(self) -> float:
        return math.exp(self.log_e)

    @property
    def fired(self) -> bool:
        return self.log_e >= math.log(1 / self.alpha)

    @property
    def reach(self) -> float:
        """The e-value a cache would have given the spaced blocks' answers, at least."""
        return math.exp(self.log_reach)

    @property
    def ruled_out(self) -> bool:
        """Not fired, and the spaced blocks held answers varied enough that a cache living
        fewer calls than :attr:`spacing` would have made the test fire."""
        return not self.fired and self.log_reach >= math.log(1 / self.alpha)

    def update(self, keys: Sequence[str], *, source: str = "", paired: bool = False,
               spacing: int | None = None) -> bool:
        """Feed one block (answers in call order) of the input named ``source``; returns
        whether the test has fired. ``paired``: a spaced block (pairs of back-to-back draws,
        the pairs ``spacing`` calls or more apart; :func:`paired_block_e_value`), else
        back-to-back draws (:func:`block_e_value`)."""
        if self.fired:
            return True
        self.blocks += 1
        e = paired_block_e_value(keys) if paired else block_e_value(keys)
        if paired:
            self.spaced_blocks += 1
            self.log_reach += math.log(paired_block_reach(keys))
            if spacing is not None:
                self.spacing = spacing if self.spacing is None else min(self.spacing, spacing)
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
                "alternating_blocks": self.alternating_blocks,
                "spaced_blocks": self.spaced_blocks, "spacing": self.spacing,
                "reach": self.reach, "ruled_out": self.ruled_out}
