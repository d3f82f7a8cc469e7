"""A benchmark task's stopping rule and the exact computations behind it.

Estimand: ``p``, a task's pass rate (its runs i.i.d. given the task). :class:`TaskRule`
decides PASS (``p >= threshold``) or FAIL one outcome at a time: ``"exact"`` curtails the
fixed-size test at ``runs`` (the same verdict as running all of them), ``"sequential"`` runs
the anytime-valid SPRT of :func:`~agentverity_props.decide.pass_rate_rule` and, at the cap,
an exact final test that spends what the SPRT left of ``alpha`` (:func:`cap_cuts`); below
threshold 1 a run of clean passes may PASS early (:func:`clean_pass_runs`). Error rates: a
PASS at ``p <= threshold - margin`` and a FAIL at ``p >= threshold + margin`` each have
probability at most ``alpha``, computed exactly over every path (``tests/stats/
test_bench_stats.py``). The rule depends on the runs only through (runs made, passes), which
the unbiased estimators of :mod:`._estimate` rely on.
"""

from __future__ import annotations

import copy
import functools
import math
from typing import Any, Literal

__all__ = ["MAX_CUT_STATES", "EarlyStop", "TaskRule", "cap_cuts", "clean_pass_runs",
           "required_passes", "runs_to_pass"]

EarlyStop = Literal["exact", "sequential", "off"]

#: states the exact final test may visit (about a second of work); beyond, no final test
MAX_CUT_STATES = 400_000


def required_passes(threshold: float, runs: int) -> int:
    """Passes needed among ``runs`` for a pass rate of at least ``threshold``.

    >>> required_passes(0.9, 10), required_passes(1.0, 7)
    (9, 7)
    """
    return max(1, math.ceil(threshold * runs - 1e-9))


class TaskRule:
    """Decides one task's verdict from its runs, one outcome at a time.

    ``update(passed)`` returns ``(call, decided_by)`` once the task stops, with ``call`` one of
    ``"pass"``, ``"fail"`` or ``"undecided"`` (sequential mode at the ``runs`` cap when the
    final test does not decide; ``final_test=False``: the SPRT alone), else None. The rule
    depends on the runs only through (runs made, passes), which is what the estimators of
    :mod:`._estimate` and the exact error computation of the tests rely on; :meth:`clone`
    branches it.
    """

    def __init__(self, mode: EarlyStop, runs: int, threshold: float, alpha: float,
                 margin: float, *, final_test: bool = True,
                 clean_pass: int | Literal["auto"] | None = "auto") -> None:
        self.mode, self.runs, self.threshold = mode, runs, threshold
        self.alpha, self.margin = alpha, margin
        self.need = required_passes(threshold, runs)
        self.n = self.passes = 0
        self.seq: Any = None
        self.cuts: tuple[int, int] | None = None
        #: sequential: PASS once this many runs have all passed (:func:`clean_pass_runs`)
        self.clean_pass: int | None = None
        if mode == "sequential":
            from ._rules import pass_rate_rule
            self.seq = pass_rate_rule(threshold, alpha=alpha, margin=margin)
            self.clean_pass = clean_pass_runs(runs, threshold, alpha, margin) \
                if clean_pass == "auto" else clean_pass
            if final_test:
                self.cuts = cap_cuts(runs, threshold, alpha, margin)

    @property
    def key(self) -> tuple[Any, ...]:
        """Everything the stopping rule depends on (a cache key for its stop table)."""
        return (self.mode, self.runs, self.threshold, self.alpha, self.margin,
                self.cuts, self.clean_pass)

    def clone(self) -> TaskRule:
        new = copy.copy(self)
        if self.seq is not None:
            new.seq = copy.copy(self.seq)
            new.seq._sprt = copy.copy(self.seq._sprt)
        return new

    def update(self, passed: bool) -> tuple[str, str] | None:
        self.n += 1
        self.passes += passed
        if self.seq is not None:
            d = self.seq.update(passed)
            if d is not None:
                return d.call, "sequential (pass-rate SPRT)"
            if self.n == self.clean_pass and self.passes == self.n:
                return "pass", (f"sequential (all of the first {self.n} runs passed: exact, "
                                f"P <= alpha/tasks at pass rate threshold - margin)")
            if self.n >= self.runs:
                return self._at_cap()
            return None
        if self.mode == "exact":
            if self.passes >= self.need:
                return "pass", "exact (curtailed)" if self.n < self.runs else "all runs"
            if (self.n - self.passes) > self.runs - self.need:
                return "fail", "exact (curtailed)" if self.n < self.runs else "all runs"
            return None
        if self.n >= self.runs:
            return ("pass" if self.passes >= self.need else "fail"), "all runs"
        return None


    def _at_cap(self) -> tuple[str, str]:
        if self.cuts is None:
            return "undecided", "run cap: undecided"
        c_pass, c_fail = self.cuts
        if self.passes >= c_pass:
            return "pass", f"run cap: exact final test (>= {c_pass} of {self.runs} passed)"
        if self.passes <= c_fail:
            return "fail", f"run cap: exact final test (<= {c_fail} of {self.runs} passed)"
        if c_pass > self.runs:
            return "undecided", (
                f"run cap: undecided (no PASS possible in {self.runs} runs at this alpha and "
                f"margin; all-passing runs PASS by run "
                f"{runs_to_pass(self.threshold, self.alpha, self.margin)})")
        fail = f", a FAIL <= {c_fail}" if c_fail >= 0 else ""
        return "undecided", (f"run cap: undecided ({self.passes}/{self.runs} passed; a PASS "
                             f"here needs >= {c_pass}{fail})")


@functools.lru_cache(maxsize=256)
def cap_cuts(runs: int, threshold: float, alpha: float, margin: float) -> tuple[int, int]:
    """The exact final test of the sequential rule at its run cap: ``(c_pass, c_fail)``.

    At the cap the rule says PASS when at least ``c_pass`` runs passed and FAIL when at most
    ``c_fail`` did. The cuts spend exactly the error the SPRT (with its clean-run PASS,
    :func:`clean_pass_runs`) left unspent: computed by propagating the distribution of
    passes through the rule (the same rule objects, branched)
    at the edges ``p = threshold - margin`` and ``threshold + margin``, ``c_pass`` is the
    smallest count with P(SPRT PASS before the cap) + P(reach the cap with >= c_pass passes)
    <= alpha at the lower edge, and ``c_fail`` the largest with the mirror statement at the
    upper edge. Both calls are monotone in the passes, so the edges are the worst cases and
    the guarantee of the rule holds at every cap. ``runs + 1`` / ``-1``: no such cut (also
    when the computation would visit more than ``MAX_CUT_STATES`` states: then the cap is
    left undecided, which is only safer).

    >>> cap_cuts(20, 0.9, 0.05, 0.05)  # P(20 of 20 | 0.85) = 0.039, P(<= 16 | 0.95) = 0.016
    (20, 16)
    """
    got = _propagate(TaskRule("sequential", runs, threshold, alpha, margin, final_test=False),
                     runs, threshold, margin)
    if got is None:
        return runs + 1, -1
    spent_pass, spent_fail, cap_bad, cap_good = got
    budget = alpha * (1 - 1e-9)  # float slack on the safe side
    if not cap_bad:  # the SPRT decides every path before the cap
        return runs + 1, -1
    c_pass, tail = runs + 1, spent_pass
    for c in range(runs, -1, -1):
        tail += cap_bad.get(c, 0.0)
        if tail > budget:
            break
        c_pass = c
    c_fail, head = -1, spent_fail
    for c in range(runs + 1):
        head += cap_good.get(c, 0.0)
        if head > budget:
            break
        c_fail = c
    if c_fail >= c_pass:  # both tests would reject there: decide neither (only safer)
        c_fail = c_pass - 1
    return c_pass, c_fail


@functools.lru_cache(maxsize=256)
def clean_pass_runs(runs: int, threshold: float, alpha: float, margin: float) -> int | None:
    """The run count at which the sequential rule says PASS when every run so far passed.

    A task whose runs all pass cannot be told apart from one at pass rate ``p_bad =
    threshold - margin`` before ``n* = ceil(ln(alpha) / ln(p_bad))`` runs (``p_bad^n`` is
    the chance such a task passes n times in a row): the fewest runs any test with this
    guarantee needs. The SPRT alone needs more whenever ``threshold < 1`` (it bets on
    ``threshold + margin``, not on 1). This is the smallest ``n >= n*`` with ``p_bad^n + S
    <= alpha``, ``S`` the exact probability that the SPRT alone says PASS before the cap at
    ``p_bad`` (the distribution of passes propagated through it): the rule with the
    shortcut says PASS at ``p_bad`` with probability at most that sum (the SPRT's PASS paths
    that pass the first ``n`` runs are counted twice, but for the all-passing one, so it is
    conservative). None when the
    SPRT is as quick (threshold 1.0: ``n*`` is its own PASS) or no such ``n`` fits in
    ``runs``. The exact final test at the cap then spends what is left.

    >>> clean_pass_runs(100, 0.9, 0.01, 0.05), runs_to_pass(0.9, 0.01, 0.05)  # n* = 29
    (34, 42)
    >>> clean_pass_runs(100, 1.0, 0.01, 0.05) is None   # 90 either way
    True
    """
    import math

    p_bad = threshold - margin
    if p_bad <= 0.0:
        return None
    n_star = math.ceil(math.log(alpha) / math.log(p_bad) - 1e-12)
    last = min(runs, runs_to_pass(threshold, alpha, margin) - 1)
    if n_star > last:
        return None
    got = _propagate(TaskRule("sequential", runs, threshold, alpha, margin, final_test=False,
                              clean_pass=None), runs, threshold, margin)
    if got is None:
        return None
    # the all-passing path to the SPRT's own PASS is in both terms: counted once
    sprt_pass = got[0] - p_bad ** runs_to_pass(threshold, alpha, margin)
    for n0 in range(n_star, last + 1):
        if p_bad ** n0 + sprt_pass <= alpha * (1 - 1e-9):
            return n0
    return None


def _propagate(rule0: TaskRule, runs: int, threshold: float, margin: float
               ) -> tuple[float, float, dict[int, float], dict[int, float]] | None:
    """The distribution of passes through ``rule0`` (no final test) at the edges: (P(PASS
    before the cap) at ``threshold - margin``, P(FAIL before the cap) at ``threshold +
    margin``, mass reaching the cap by passes at each edge); None past ``MAX_CUT_STATES``."""
    p_bad, p_good = max(0.0, threshold - margin), min(1.0, threshold + margin)
    layer: dict[int, tuple[TaskRule, float, float]] = {0: (rule0, 1.0, 1.0)}
    spent_pass = spent_fail = 0.0
    visited = 0
    cap_bad: dict[int, float] = {}
    cap_good: dict[int, float] = {}
    for _ in range(runs):
        nxt: dict[int, tuple[TaskRule, float, float]] = {}
        calls: dict[int, str | None] = {}
        for s, (r, mb, mg) in layer.items():
            for passed in (False, True):
                t = s + passed
                qb = mb * (p_bad if passed else 1.0 - p_bad)
                qg = mg * (p_good if passed else 1.0 - p_good)
                if t not in calls:  # one branch per (runs, passes): the rule depends on those
                    child = r.clone()
                    d = child.update(passed)
                    calls[t] = d[0] if d is not None else None
                    if d is None:
                        nxt[t] = (child, 0.0, 0.0)
                call = calls[t]
                if call == "pass":
                    spent_pass += qb
                elif call == "fail":
                    spent_fail += qg
                elif call == "undecided":
                    cap_bad[t] = cap_bad.get(t, 0.0) + qb
                    cap_good[t] = cap_good.get(t, 0.0) + qg
                else:
                    kid, b, g = nxt[t]
                    nxt[t] = (kid, b + qb, g + qg)
        # a state with negligible mass at both edges is dropped and its mass counted as
        # spent error on both sides (conservative), so the band empties and the loop ends
        for t in [t for t, (_, b, g) in nxt.items() if b < 1e-16 and g < 1e-16]:
            spent_pass += nxt[t][1]
            spent_fail += nxt[t][2]
            del nxt[t]
        layer = nxt
        visited += len(layer)
        if not layer:
            break
        if visited > MAX_CUT_STATES:
            return None
    return spent_pass, spent_fail, cap_bad, cap_good


@functools.lru_cache(maxsize=256)
def runs_to_pass(threshold: float, alpha: float, margin: float, limit: int = 1_000_000) -> int:
    """The fewest runs after which the sequential rule can say PASS (all of them passing).

    >>> runs_to_pass(1.0, 0.05, 0.05)
    59
    """
    from ._rules import pass_rate_rule
    rule = pass_rate_rule(threshold, alpha=alpha, margin=margin)
    for n in range(1, limit + 1):
        d = rule.update(True)
        if d is not None:
            return n
    return limit
