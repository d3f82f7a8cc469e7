"""The judge's own noise: its disagreement with itself on identical answers.

Estimand: ``d``, the probability that two calls of the judge on the same recorded answer give
different labels (averaged over the answers the run judged). Each answer's first ``margin``
calls are always made (:mod:`._judged`), so they are a fixed-size sample: the answer's share
of disagreeing pairs among them is unbiased for its ``d``, and their mean over answers is
the point estimate. The interval treats each answer's share as one observation (the answers
are independent): a normal interval over them from 30 answers on, else (or when no pair
disagrees) Clopper-Pearson's exact one on one pair's worth of evidence per answer
(``round(d * n)`` of ``n``), conservative as an answer's several pairs are worth at least one.

The per-call error rate ``e`` (how often one call departs from the judge's consensus) follows
under the model "a call gives the consensus label with probability ``1 - e``, else one of the
other ``L - 1`` labels at random": ``d = 2e - e^2 L / (L - 1)``, solved for ``e`` (``L`` the
judge's labels, or those it used, at least 2), the interval mapped through the same monotone
function. The consensus of ``margin`` votes is wrong with probability about
``q^m / (1 + q^m)``, ``q = e / (1 - e)`` (the gambler's ruin of a two-label judge).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

__all__ = ["JudgeNoise", "consensus_error", "error_rate_of", "judge_calls_per_answer",
           "judge_noise", "lead_for"]


def error_rate_of(d: float, n_labels: int) -> float:
    """The per-call error rate ``e`` whose pair disagreement is ``d`` among ``n_labels``.

    >>> round(error_rate_of(2 * 0.15 * 0.85, 2), 6)
    0.15
    """
    c = n_labels / (n_labels - 1)
    return (1 - math.sqrt(max(0.0, 1 - c * min(max(d, 0.0), 1.0 / c)))) / c


def consensus_error(e: float, margin: int) -> float:
    """P(the label leading by ``margin`` is not the judge's consensus) at error rate ``e``.

    >>> round(consensus_error(0.15, 3), 4)
    0.0055
    """
    if e <= 0:
        return 0.0
    if e >= 0.5:
        return 0.5
    q = (e / (1 - e)) ** margin
    return q / (1 + q)


@dataclass(frozen=True)
class JudgeNoise:
    """The judge's disagreement on identical answers.

    Attributes:
        answers: answers with at least one pair of labels.
        pairs: pairs of labels read.
        disagreement: the share of pairs that disagree (point estimate of ``d``).
        interval: its exact interval at ``1 - alpha``.
        error_rate: the per-call error rate ``e`` implied (module docstring).
        error_interval: its interval.
        consensus_error: the chance a verdict (the judge's consensus on an answer) is wrong,
            at the upper end of ``error_interval``, averaged over the answers (each at the lead
            its label reached).
        worst_consensus_error: the same for the answer whose label led by the least.
        margin: the lead one verdict needed (at the end of the run, when it adapts).
        n_labels: ``L``.
        alpha: the interval's error rate.
    """

    answers: int
    pairs: int
    disagreement: float | None
    interval: tuple[float, float]
    error_rate: float | None
    error_interval: tuple[float, float]
    consensus_error: float | None
    margin: int
    n_labels: int
    alpha: float
    worst_consensus_error: float | None = None

    @property
    def measured(self) -> bool:
        return self.answers > 0

    def dominant(self, agent_noise: float | None) -> str:
        """``judge``, ``agent`` or ``neither`` (both below 0.01) — whose noise is larger:
        the judge's pair disagreement on identical answers, or the agent's on its verdicts
        (the meter's estimate)."""
        j = self.disagreement or 0.0
        a = agent_noise or 0.0
        if max(j, a) < 0.01:
            return "neither"
        return "judge" if j >= a else "agent"

    def statement(self, agent_noise: float | None) -> str:
        """One line: both noises, and which dominates."""
        if not self.measured:
            return ("the judge's noise was not measured (no answer was judged twice: every "
                    "draw was replayed, or margin=1 with noise_sample=0)")
        lo, hi = self.interval
        agent = "unknown" if agent_noise is None else f"{agent_noise:.3f}"
        who = self.dominant(agent_noise)
        head = (f"judge disagreement on identical answers {self.disagreement:.3f} "
                f"[{lo:.3f}, {hi:.3f}] ({self.answers} answers; error rate per call "
                f"{self.error_rate:.3f}) vs the agent's verdict disagreement {agent}: ")
        if who == "neither":
            return head + "both are below 0.01"
        tail = ("the judge's noise dominates" if who == "judge"
                else "the agent's noise dominates")
        if self.consensus_error is not None:
            tail += (f"; a verdict (the judge's consensus on an answer) is wrong with "
                     f"probability <= {self.consensus_error:.2g} on average at this noise "
                     f"(<= {self.worst_consensus_error:.2g} for the closest one)")
        return head + tail

    def to_dict(self) -> dict[str, Any]:
        return {"answers": self.answers, "pairs": self.pairs,
                "disagreement": self.disagreement, "interval": list(self.interval),
                "error_rate": self.error_rate, "error_interval": list(self.error_interval),
                "consensus_error": self.consensus_error,
                "worst_consensus_error": self.worst_consensus_error, "margin": self.margin,
                "labels": self.n_labels, "alpha": self.alpha}


def lead_for(e: float, target: float) -> int:
    """The least lead whose consensus is wrong with probability <= ``target`` at error rate
    ``e`` (:func:`consensus_error`).

    >>> lead_for(0.15, 1e-4), lead_for(0.01, 1e-4)
    (6, 3)
    """
    if e <= 0:
        return 1
    if e >= 0.5:
        return 10**6
    q = e / (1 - e)
    return max(1, math.ceil(math.log(target / (1 - target)) / math.log(q) - 1e-9))


def judge_noise(samples: Sequence[Sequence[str]], *, labels: Sequence[str] | None,
                alpha: float = 0.05, margin: int | None = 1,
                leads: Sequence[int] = ()) -> JudgeNoise:
    """The noise estimate from each answer's sample of labels (its fixed votes and its
    re-judged ones: every pair among them counts)."""
    from ..decide import clopper_pearson, mean_interval

    shares: list[float] = []
    pairs = 0
    seen: set[str] = set()
    for votes in samples:
        seen.update(votes)
        if len(votes) < 2:
            continue
        pp = list(combinations(votes, 2))
        pairs += len(pp)
        shares.append(sum(a != b for a, b in pp) / len(pp))
    n_labels = max(2, len(labels) if labels else len(seen))
    margin = margin or 1
    n = len(shares)
    if not n:
        return JudgeNoise(0, 0, None, (0.0, 1.0), None, (0.0, 0.5), None, margin, n_labels,
                          alpha)
    d = sum(shares) / n
    normal = mean_interval(shares, alpha=alpha) if n >= 30 else None
    if normal is not None:  # answers are independent: a normal interval over them
        lo, hi = normal
    else:  # few answers, or no disagreement at all: exact, one pair's worth per answer
        lo, hi = clopper_pearson(round(d * n), n, alpha=alpha)
        lo, hi = min(lo, d), max(hi, d)
    e = error_rate_of(d, n_labels)
    e_lo, e_hi = error_rate_of(lo, n_labels), error_rate_of(hi, n_labels)
    errs = [consensus_error(e_hi, lead) if lead > 0 else 0.5 for lead in leads] or \
        [consensus_error(e_hi, margin)]
    return JudgeNoise(n, pairs, d, (lo, hi), e, (e_lo, e_hi), sum(errs) / len(errs),
                      margin, n_labels, alpha, max(errs))


def judge_calls_per_answer(judge: Any, error_rate: float, *, answers: int = 4000,
                           seed: int = 0) -> float:
    """The judge's mean calls on one answer under its consensus rule, for a judge wrong on a
    share ``error_rate`` of its calls (two labels; the adaptive lead taken at that rate, as
    once its noise is measured), by simulation with a seeded generator."""
    import random

    rng = random.Random(seed)
    fixed = judge.fixed_votes
    need = judge.margin if judge.margin is not None else lead_for(
        error_rate, judge.consensus_error)
    total = 0
    for _ in range(answers):
        right = wrong = n = 0
        while True:
            n += 1
            if rng.random() < error_rate:
                wrong += 1
            else:
                right += 1
            if n >= judge.max_calls or (n >= fixed and abs(right - wrong) >= need):
                break
        total += n
    return total / answers
