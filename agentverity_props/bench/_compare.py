"""``compare``: two or more agents on the same tasks, paired run by run, in random order.

Each *round* runs every task once per agent. Run ``i`` of task ``t`` by one agent is paired
with run ``i`` of task ``t`` by another (an *item*). Within an item the agents run one after
another in an order drawn from a seeded numpy Generator (a uniform random permutation per
task and round, independent draws), so an order effect (a cold cache, a shared serial
backend, the second call waiting for the first) favours each agent equally often. Tasks of a
round run concurrently. Before the first round each agent makes ``warmup`` untimed calls
(counted in the ledger and the budget, reported, never in the statistics). Draw indices are
reserved in task order, so record/replay reproduces a comparison whatever the order.

Three metrics per agent pair, each an anytime-valid paired sign test on discordant items
(:class:`~agentverity_props.decide.PooledSign`):

- ``pass_rate`` (primary): A wins an item when it passes and B does not;
- ``error_rate``: A wins when B's call errored and A's did not;
- ``latency``: both calls succeeded and A's call was faster than B's by more than the
  practical margin (``B's latency > (1 + latency_margin) x A's``); B symmetrically; otherwise
  a tie. Latency is the call's own duration as the adapter measured it around the call
  (``Observation.latency_s``), never the time a coroutine resumed.

Equivalence on the pass rate (:class:`~agentverity_props.decide.PooledEquivalence`): a pair
is *equivalent within the margin* once two one-sided betting e-processes reject
``Delta >= margin`` and ``Delta <= -margin`` (``Delta`` the mean over tasks of the pass-rate
difference; ``margin`` 0.1 by default, ``--margin``).

One family-wise ``alpha`` covers every verdict compare prints (weighted Bonferroni, see
:func:`alpha_split`): per pair, the overall pass rate gets ``alpha/2``, its equivalence
``alpha/4``, error rate and latency ``alpha/16`` each, and the per-task verdicts share the
last ``alpha/8``. The chance that any printed verdict names a better agent where there is no
difference, or calls two agents equivalent whose pass rates differ by the margin or more, is
at most ``alpha``. The comparison stops once every pair's overall pass rate is settled: a
better agent named, equivalence shown, or neither reachable within ``max_runs`` rounds
(futility: the sign e-value cannot reach its threshold whatever the remaining items are,
exactly, and equivalence cannot either, by a bound that never stops too early); else at
``max_runs`` rounds. No weighted score is ever computed.
"""

from __future__ import annotations

import asyncio
import itertools
import string
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._internal.outcome import StopReason
from .._internal.settings import setting
from ..decide import PooledEquivalence, PooledSign, sign_reachable
from ..errors import BudgetExhausted, Interrupted, InvalidArgument
from ._compare_results import (
    METRICS,
    SCHEMA,
    WEIGHTS,
    CompareConfig,
    CompareResult,
    _Pair,
    alpha_split,
)
from ._load import Benchmark
from ._results import AttemptRecord
from ._run import attempt

if TYPE_CHECKING:
    pass

__all__ = ["METRICS", "SCHEMA", "WEIGHTS", "CompareConfig", "CompareResult", "acompare_agents",
           "alpha_split", "compare_agents"]


def _outcome(metric: str, a: AttemptRecord, b: AttemptRecord, margin: float = 0.0) -> int:
    if metric == "pass_rate":
        return int(a.status == "PASS") - int(b.status == "PASS")
    if metric == "error_rate":
        return int(b.status == "ERROR") - int(a.status == "ERROR")
    if not (a.ok and b.ok):
        return 0
    if b.latency_s > (1.0 + margin) * a.latency_s:
        return 1
    if a.latency_s > (1.0 + margin) * b.latency_s:
        return -1
    return 0


def _labels(n: int) -> tuple[str, ...]:
    letters = string.ascii_uppercase
    return tuple(letters[i] if i < 26 else f"A{i}" for i in range(n))


def _stop_of(failed: list[BaseException]) -> str:
    first = failed[0]
    if isinstance(first, Interrupted):
        return StopReason.INTERRUPTED
    if isinstance(first, BudgetExhausted):
        return StopReason.BUDGET
    raise first


def _feed(pairs: list[_Pair], got: list[list[AttemptRecord]], orders: list[list[int]],
          margin: float) -> None:
    """One complete round into every pair's tests (a partial round is never fed: the pooled
    e-process is valid at round boundaries)."""
    for p in pairs:
        for ti, rec in enumerate(got):
            ra, rb = rec[p.i], rec[p.j]
            order = orders[ti]
            p.first[0 if order.index(p.i) < order.index(p.j) else 1] += 1
            if ra.ok and rb.ok:
                p.latency_diffs.append(ra.latency_s - rb.latency_s)
                if rb.latency_s > 0:
                    p.latency_ratios.append(ra.latency_s / rb.latency_s)
            for m in METRICS:
                sign = _outcome(m, ra, rb, margin)
                p.overall[m].add(sign)
                p.per_task[ti][m].add(sign)
                p.per_task[ti][m].end_round()
        for m in METRICS:
            p.overall[m].end_round()
        if p.equivalence is not None:
            p.equivalence.end_round([_outcome("pass_rate", rec[p.i], rec[p.j])
                                     for rec in got])


def _settled(p: _Pair, items_left: int) -> str:
    """``"decided"`` (a better agent named or equivalence shown), ``"futile"`` (neither can
    happen within ``items_left`` more items) or ``""``."""
    s = p.overall["pass_rate"]
    eq = p.equivalence
    if s.decision is not None or (eq is not None and eq.decision is not None):
        return "decided"
    if sign_reachable(s.wins, s.losses, items_left, s.alpha):
        return ""
    if eq is not None and eq.reachable(items_left):
        return ""
    return "futile"


async def acompare_agents(agents: Sequence[Any], benchmark: Benchmark, *,
                          config: CompareConfig | None = None,
                          labels: Sequence[str] | None = None,
                          refs: Sequence[str] | None = None,
                          engines: Sequence[Any] | None = None,
                          progress: Callable[[int], None] | None = None) -> CompareResult:
    """Async core of :func:`compare_agents`."""
    import numpy as np

    from ..engine import Engine, Probe

    config = config or CompareConfig()
    labs = _checked_labels(agents, benchmark, labels, refs)
    own = engines is None
    engs = list(engines) if engines is not None else \
        [Engine(a, config.engine_config()) for a in agents]
    tasks = benchmark.tasks
    n_t, n_a = len(tasks), len(agents)
    pair_idx = list(itertools.combinations(range(n_a), 2))
    alphas = alpha_split(config.alpha, len(pair_idx), n_t)
    pairs = [_Pair(i, j, {m: PooledSign(alphas[m]) for m in METRICS},
                   [{m: PooledSign(alphas["per_task"]) for m in METRICS} for _ in tasks],
                   equivalence=PooledEquivalence(alphas["equivalence"], float(config.margin)))
             for i, j in pair_idx]
    probes = [Probe.make(t.prompt) for t in tasks]
    rng = np.random.default_rng([config.order_seed, 0x636F6D70])  # own stream: "comp"
    runs: list[list[list[AttemptRecord]]] = [[[] for _ in tasks] for _ in agents]
    rounds = 0
    try:
        warm, stop = await _warmup(engs, tasks, probes, n_a, config.warmup, progress)
        for e in engs:
            e.ledger.phase = "rounds" if config.warmup else None
        while not stop and rounds < config.max_runs:
            got, orders, failed = await _round(engs, tasks, probes, rng, n_a,
                                               include_outputs=config.include_outputs)
            for ti in range(n_t):
                for ai in range(n_a):
                    rec = got[ti][ai]
                    if rec is not None:
                        runs[ai][ti].append(rec)
            if failed:
                stop = _stop_of(failed)
                break
            rounds += 1
            if progress is not None:
                progress(n_t * n_a)
            full = [[r for r in row if r is not None] for row in got]
            _feed(pairs, full, orders, float(config.latency_margin))
            if rounds >= config.min_runs and rounds < config.max_runs:
                stop = _settled_stop(pairs, (config.max_runs - rounds) * n_t, config.max_runs)
                if stop:
                    break
            if any(e.stopping for e in engs):
                stop = StopReason.INTERRUPTED
                break
        if not stop:
            stop = f"max runs reached ({config.max_runs})"
        idents = tuple(e.agent.identity for e in engs)
        return CompareResult(
            labels=labs, agents=idents, benchmark=benchmark,
            config=config, attempts=tuple(tuple(tuple(r) for r in per_agent)
                                          for per_agent in runs),
            pairs=tuple(pairs), rounds=rounds, ledgers=tuple(e.ledger.to_dict() for e in engs),
            stop_reason=stop, alphas=alphas,
            refs=tuple(str(r) for r in refs) if refs is not None else idents,
            warmups=tuple(tuple(w) for w in warm))
    finally:
        if own:
            for e in engs:
                await e.aclose()


def _checked_labels(agents: Sequence[Any], benchmark: Benchmark,
                    labels: Sequence[str] | None, refs: Sequence[str] | None) -> tuple[str, ...]:
    """The agents' labels (``A``, ``B``, ... by default), after refusing fewer than two
    agents, a benchmark not loaded, repeated labels or refs that do not name every agent."""
    if len(agents) < 2:
        raise InvalidArgument("compare needs at least two agents")
    if not isinstance(benchmark, Benchmark):
        raise InvalidArgument("benchmark must come from load_benchmark() or parse_benchmark()")
    labs = tuple(labels) if labels is not None else _labels(len(agents))
    if len(labs) != len(agents) or len(set(labs)) != len(labs):
        raise InvalidArgument("labels must be distinct, one per agent")
    if refs is not None and len(refs) != len(agents):
        raise InvalidArgument("refs must name every agent, one per agent")
    return labs


async def _warmup(engs: list[Any], tasks: Sequence[Any], probes: list[Any], n_a: int,
                  warmup: int, progress: Callable[[int], None] | None
                  ) -> tuple[list[list[AttemptRecord]], str]:
    """``warmup`` calls per agent before the rounds (tasks in turn), kept out of the
    statistics; returns them and the stop reason when the budget or a stop cut them."""
    warm: list[list[AttemptRecord]] = [[] for _ in range(n_a)]
    stop = ""
    try:
        for e in engs:  # tokens per phase: the warm-up calls apart from the rounds
            e.ledger.phase = "warmup"
        for k in range(warmup):
            for ai in range(n_a):
                ti = k % len(tasks)
                idx = engs[ai].allocate(probes[ti], 1)[0]
                warm[ai].append(await attempt(engs[ai], tasks[ti], probes[ti], idx))
                if progress is not None:
                    progress(1)
    except (BudgetExhausted, Interrupted) as exc:
        stop = _stop_of([exc])
    return warm, stop


async def _round(engs: list[Any], tasks: Sequence[Any], probes: list[Any], rng: Any, n_a: int,
                 *, include_outputs: bool
                 ) -> tuple[list[list[AttemptRecord | None]], list[list[int]],
                            list[BaseException]]:
    """One paired run of every task: the tasks concurrently, each task's agents one after
    another in a random order. Returns each task's records by agent (None where a call did
    not run), the orders, and what failed."""
    n_t = len(tasks)
    plan = [[engs[ai].allocate(probes[ti], 1)[0] for ai in range(n_a)] for ti in range(n_t)]
    orders = [[int(x) for x in rng.permutation(n_a)] for _ in range(n_t)]
    got: list[list[AttemptRecord | None]] = [[None] * n_a for _ in range(n_t)]

    async def item(ti: int) -> None:
        for ai in orders[ti]:  # one after another, in this item's random order
            got[ti][ai] = await attempt(engs[ai], tasks[ti], probes[ti], plan[ti][ai],
                                        include_outputs=include_outputs)

    outs = await asyncio.gather(*(item(ti) for ti in range(n_t)), return_exceptions=True)
    return got, orders, [o for o in outs if isinstance(o, BaseException)]


def _settled_stop(pairs: list[_Pair], items_left: int, max_runs: int) -> str:
    """Why to stop once every pair is settled (all decided, or no outcome of the runs left
    can change a pass-rate verdict); empty while one is open."""
    settled = [_settled(p, items_left) for p in pairs]
    if not all(settled):
        return ""
    return "decided" if all(x == "decided" for x in settled) else (
        "futile: no outcome of the remaining runs up to "
        f"{setting('max_runs', max_runs)} can change the pass-rate verdict")


def compare_agents(agents: Sequence[Any], benchmark: Benchmark, *,
                   config: CompareConfig | None = None,
                   labels: Sequence[str] | None = None,
                   refs: Sequence[str] | None = None,
                   progress: Callable[[int], None] | None = None) -> CompareResult:
    """Compare agents on ``benchmark`` with paired, anytime-valid tests.

    Args:
        agents: two or more adapters or callables; the first is the baseline.
        benchmark: from :func:`~agentverity_props.bench.load_benchmark`.
        config: a :class:`CompareConfig`.
        labels: short names (default A, B, C...).
        refs: how the user named each agent (the CLI passes the references typed).

    Example:
        >>> from agentverity_props.bench import parse_benchmark, compare_agents, CompareConfig
        >>> b = parse_benchmark('''
        ... version: "1"
        ... name: demo
        ... tasks:
        ...   - {id: hi, prompt: "say hi", evaluation: {type: exact_match, expected: hi}}
        ... ''')
        >>> r = compare_agents([lambda p: "hi", lambda p: "no"], b,
        ...                    config=CompareConfig(max_runs=20))
        >>> r.verdict(0, 1), r.rounds
        ('A better', 9)
    """
    from ..engine import run_sync
    return run_sync(acompare_agents(agents, benchmark, config=config, labels=labels,
                                    refs=refs, progress=progress))
