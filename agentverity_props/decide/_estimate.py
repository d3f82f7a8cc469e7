"""Estimates of a task's pass rate, pass@k and pass^k that stay unbiased under early stopping.

When a task stops early (curtailment, or the sequential rule), passes / runs is biased: at
threshold 1.0 a task stops at its first failure, so short runs are over-represented among
failing tasks. The estimators here are Rao-Blackwellised indicators of the first k runs:

    pass^k estimate = P(the first k runs all passed | runs made N, passes S, the rule)
                    = (stopping-rule paths to (N, S) that start with k passes)
                      / (stopping-rule paths to (N, S))

and pass@k = 1 - the same with k failures. Every path to (N, S) that the rule allows has the
same probability ``p^S (1-p)^(N-S)`` when the runs are independent with one pass rate ``p``,
so the ratio is ``E[1{first k pass} | N, S]`` and its mean is exactly ``p^k`` (Girshick,
Mosteller and Savage 1946, for closed sequential binomial plans). With no early stopping it
equals the usual ``C(S, k) / C(N, k)``.

When the rule stopped before k runs the first k are not all known: pass^k is 0 if a run
already failed, pass@k is 1 if one already passed, and otherwise the estimate is None
("n/a (k > runs)"): nothing unbiased exists there. Reported k never exceed the planned runs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["PLAIN", "UNBIASED", "Estimates", "StopRule", "estimate", "pass_at_k", "pass_hat_k",
           "stop_distribution", "stop_table"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(at least one of k runs passes) from c passes in n runs.

    ``1 - C(n-c, k) / C(n, k)`` (Chen et al. 2021).

    >>> round(pass_at_k(10, 3, 1), 6)
    0.3
    """
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be in 1..n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased estimate of P(all of k runs pass) from c passes in n runs: ``C(c,k)/C(n,k)``.

    >>> round(pass_hat_k(10, 9, 2), 4)
    0.8
    """
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must be in 1..n={n}")
    return math.comb(c, k) / math.comb(n, k)



class StopRule(Protocol):
    """What the estimators need from a stopping rule: branchable, fed one outcome at a time,
    returning non-None once the task stops (see :class:`~._task_rule.TaskRule`)."""

    @property
    def key(self) -> tuple[Any, ...]: ...

    def clone(self) -> StopRule: ...

    def update(self, passed: bool) -> Any: ...


#: rule key -> (stop table so far, the live rule objects of its last layer); tables grow on
#: demand, so tasks of one benchmark that stopped at different runs share one
_TABLES: dict[tuple[Any, ...], tuple[list[set[int]], dict[int, StopRule]]] = {}


def stop_table(rule: StopRule, depth: int) -> list[set[int]]:
    """``table[n]``: the pass counts ``s`` at which the rule, having reached ``n`` runs with
    ``s`` passes, goes on (every other state stops it or cannot be reached).

    Built by branching the rule object itself (``clone`` then ``update``) over every state
    it can reach, so it is the rule the runner uses, not a copy of its formula. Sparse: the
    sequential rule goes on in a band of bounded width, so a table is O(runs) in size.
    """
    key = rule.key
    if key not in _TABLES:
        if len(_TABLES) > 64:
            _TABLES.clear()
        _TABLES[key] = ([{0}], {0: rule.clone()})
    table, layer = _TABLES[key]
    visited = sum(map(len, table))
    for _ in range(len(table), depth + 1):
        if visited > MAX_STATES:
            _TABLES[key] = (table, layer)
            raise _TooLarge
        nxt: dict[int, StopRule] = {}
        done: set[int] = set()
        for s, r in layer.items():
            for passed in (False, True):
                t = s + passed
                if t in done:  # the rule depends on (runs, passes) only: one branch suffices
                    continue
                done.add(t)
                child = r.clone()
                if child.update(passed) is None:
                    nxt[t] = child
        table.append(set(nxt))
        visited += len(nxt)
        layer = nxt
    _TABLES[key] = (table, layer)
    return table


def _count(table: list[set[int]], prefix: Sequence[bool], n_end: int, s_end: int) -> int:
    """Paths from (0, 0) to (n_end, s_end) that start with ``prefix`` and never reach a
    stopping state before ``n_end`` (exact integers)."""
    n, s = 0, 0
    for passed in prefix:
        if s not in table[n]:
            return 0
        n, s = n + 1, s + passed
    if n > n_end:
        return 0
    counts = {s: 1}
    while n < n_end:
        counts = {k: v for k, v in counts.items() if k in table[n]}
        nxt: dict[int, int] = {}
        for k, v in counts.items():
            nxt[k] = nxt.get(k, 0) + v
            nxt[k + 1] = nxt.get(k + 1, 0) + v
        counts, n = nxt, n + 1
    return counts.get(s_end, 0)


UNBIASED = ("unbiased under the stopping rule: E[indicator of the first k runs | runs made, "
            "passes] (Rao-Blackwell; equals C(c,k)/C(n,k) without early stopping); null = "
            "n/a (k > runs made)")
PLAIN = ("C(c,k)/C(n,k) of the runs made: the rule has too many states for the exact "
         "estimator, so these are biased if the task stopped early")
#: continuation states above which the exact estimator is not computed (a second of work)
MAX_STATES = 500_000


class _TooLarge(Exception):
    pass


class Estimates:
    """A task's estimates (None where there is none), keyed by k as a string; ``method``
    says which estimator gave them."""

    def __init__(self, reliability: float | None, pass_at: dict[str, float | None],
                 pass_hat: dict[str, float | None], method: str = UNBIASED) -> None:
        self.reliability, self.pass_at, self.pass_hat = reliability, pass_at, pass_hat
        self.method = method


def _plain(n: int, s: int, ks: Sequence[int], method: str) -> Estimates:
    hat = {str(k): pass_hat_k(n, s, k) if k <= n else (0.0 if s < n else None) for k in ks}
    at = {str(k): pass_at_k(n, s, k) if k <= n else (1.0 if s > 0 else None) for k in ks}
    return Estimates(s / n, at, hat, method)


def _states(rule: StopRule, n: int) -> int:
    """An upper bound on the continuation states the exact estimator visits up to n runs
    (the sequential rule's band is measured as the table grows: see :func:`stop_table`)."""
    mode, runs, threshold = rule.key[:3]
    if mode == "exact":
        from ._task_rule import required_passes
        need = required_passes(threshold, runs)
        return need * (runs - need + 1)
    return 0


def estimate(outcomes: Sequence[bool], rule: StopRule, ks: Sequence[int]) -> Estimates:
    """Unbiased reliability, pass@k and pass^k of the runs ``outcomes`` made under ``rule``.

    ``rule`` is a fresh rule of the kind that decided when to stop. A run list cut short by
    a budget or an interrupt (not by the data) is handled the same way.

    >>> from agentverity_props.decide import TaskRule
    >>> e = estimate([True, True, False], TaskRule("exact", 10, 1.0, 0.05, 0.05), [1, 2])
    >>> e.reliability, e.pass_hat["2"]  # stopped at its first failure: only the start counts
    (1.0, 1.0)
    """
    n, s = len(outcomes), sum(map(bool, outcomes))
    if n == 0:
        return Estimates(None, {str(k): None for k in ks}, {str(k): None for k in ks})
    if rule.key[0] == "off":  # no data-dependent stop: the classical estimators are unbiased
        return _plain(n, s, ks, UNBIASED)
    if _states(rule, n) > MAX_STATES:
        return _plain(n, s, ks, PLAIN)
    try:
        table = stop_table(rule, n)
    except _TooLarge:
        return _plain(n, s, ks, PLAIN)
    total = _count(table, (), n, s)
    if total == 0:  # the rule could not have produced this run list (e.g. kept going)
        raise ValueError(f"the stopping rule cannot end at {s} passes in {n} runs")
    hat: dict[str, float | None] = {}
    at: dict[str, float | None] = {}
    for k in ks:
        if k <= n:
            hat[str(k)] = _count(table, (True,) * k, n, s) / total
            at[str(k)] = 1.0 - _count(table, (False,) * k, n, s) / total
        else:
            hat[str(k)] = 0.0 if s < n else None
            at[str(k)] = 1.0 if s > 0 else None
    rel = _count(table, (True,), n, s) / total
    return Estimates(rel, at, hat)


def stop_distribution(rule: StopRule, p: float
                      ) -> tuple[dict[str, float], dict[tuple[int, int], list[Any]]]:
    """Exact P(call) of ``rule`` at pass rate ``p``, and the terminal states
    ``{(n, s): [probability, one path to it]}``, by branching the rule object itself.

    For the exact error-rate checks (tests/stats/test_bench_stats.py, which also checks it
    against all 2^10 paths of a 10-run rule) and ``benchmarks/bench_exact.py``. The rule must
    stop by itself (a run cap).

    >>> from agentverity_props.decide import TaskRule
    >>> stop_distribution(TaskRule("exact", 3, 1.0, 0.05, 0.05), 0.5)[0]
    {'fail': 0.875, 'pass': 0.125}
    """
    calls: dict[str, float] = defaultdict(float)
    ends: dict[tuple[int, int], list[Any]] = {}
    layer: dict[int, tuple[Any, float, tuple[bool, ...]]] = {0: (rule.clone(), 1.0, ())}
    while layer:
        nxt: dict[int, tuple[Any, float, tuple[bool, ...]]] = {}
        for s, (r, prob, path) in layer.items():
            for passed, q in ((True, p), (False, 1.0 - p)):
                if q == 0.0:
                    continue
                child = r.clone()
                d = child.update(passed)
                t, mass, new_path = s + passed, prob * q, (*path, passed)
                if d is not None:
                    calls[d[0]] += mass
                    key = (len(new_path), t)
                    old = ends.get(key)
                    ends[key] = [mass + (old[0] if old else 0.0), old[1] if old else new_path]
                elif t in nxt:
                    nxt[t] = (nxt[t][0], nxt[t][1] + mass, nxt[t][2])
                else:
                    nxt[t] = (child, mass, new_path)
        layer = nxt
    return dict(sorted(calls.items())), ends
