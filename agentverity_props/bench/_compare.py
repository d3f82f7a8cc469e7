"""``compare``: two or more agents on the same tasks in the same order, paired run by run.

Each *round* runs every task once per agent (task order fixed; draw indices reserved in that
order, so record/replay reproduces a comparison). Run ``i`` of task ``t`` by one agent is
paired with run ``i`` of task ``t`` by another. Three metrics per agent pair, each an
anytime-valid paired sign test on discordant items (:mod:`agentverity_props.decide`):

- ``pass_rate`` (primary): A wins an item when it passes and B does not;
- ``error_rate``: A wins when B's call errored and A's did not;
- ``latency``: A wins when both calls succeeded and A answered faster.

Multiple comparisons (Bonferroni): each overall metric verdict is at ``alpha / pairs``;
per-task verdicts are at ``alpha / (tasks * metrics * pairs)``. The comparison stops once
every pair's overall pass-rate verdict is decided, or at ``max_runs`` rounds; no weighted
score is ever computed.
"""

from __future__ import annotations

import asyncio
import itertools
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Any

from .._internal.outcome import StopReason, exit_code
from ..decide import PooledSign, runs_needed
from ..errors import BudgetExhausted, Interrupted, InvalidArgument
from ._load import Benchmark
from ._results import AttemptRecord, TaskStats, summarize
from ._run import attempt

if TYPE_CHECKING:
    from ..engine import EngineConfig

__all__ = ["METRICS", "CompareConfig", "CompareResult", "acompare_agents", "compare_agents"]

SCHEMA = "agentverity_props.compare/1"
METRICS = ("pass_rate", "error_rate", "latency")
_EFFECT = {"pass_rate": "pass rate of {a} minus pass rate of {b}",
           "error_rate": "error rate of {b} minus error rate of {a}",
           "latency": "P({a} faster) minus P({b} faster), both calls successful"}


@dataclass(frozen=True)
class CompareConfig:
    """How ``compare`` runs.

    Attributes:
        max_runs: at most this many rounds (runs of every task per agent).
        min_runs: at least this many rounds before stopping on a decision.
        alpha: family-wise error rate of the verdicts (see module doc).
        include_outputs: keep prompts and answers in the per-agent results.
        engine: the :class:`~agentverity_props.engine.EngineConfig` of every agent's engine
            (``budget`` caps each agent separately).
    """

    max_runs: int = 50
    min_runs: int = 1
    alpha: float = 0.05
    include_outputs: bool = False
    engine: EngineConfig | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.max_runs, int) or self.max_runs < 1:
            raise InvalidArgument(f"max_runs={self.max_runs!r} must be an int >= 1")
        if not isinstance(self.min_runs, int) or not 1 <= self.min_runs <= self.max_runs:
            raise InvalidArgument(f"min_runs={self.min_runs!r} must be in 1..max_runs")
        if not (0.0 < self.alpha < 0.5):
            raise InvalidArgument(f"alpha={self.alpha!r} must be in (0, 0.5)")

    def engine_config(self) -> Any:
        from ..engine import EngineConfig
        return self.engine if self.engine is not None else EngineConfig()


def _outcome(metric: str, a: AttemptRecord, b: AttemptRecord) -> int:
    if metric == "pass_rate":
        return int(a.status == "PASS") - int(b.status == "PASS")
    if metric == "error_rate":
        return int(b.status == "ERROR") - int(a.status == "ERROR")
    if not (a.ok and b.ok) or a.latency_s == b.latency_s:
        return 0
    return 1 if a.latency_s < b.latency_s else -1


@dataclass
class _Pair:
    i: int
    j: int
    overall: dict[str, PooledSign]
    per_task: list[dict[str, PooledSign]]
    latency_diffs: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class CompareResult:
    """The result of :func:`compare_agents`; ``to_dict()`` is compare/1 JSON."""

    labels: tuple[str, ...]
    agents: tuple[str, ...]
    benchmark: Any
    config: CompareConfig
    attempts: tuple[tuple[tuple[AttemptRecord, ...], ...], ...]  # [agent][task] -> runs
    pairs: tuple[Any, ...]
    rounds: int
    ledgers: tuple[dict[str, Any], ...]
    stop_reason: str = ""
    alphas: dict[str, float] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """No interrupt, budget left, and no failed agent call (an ERROR run is missing
        evidence for the paired analysis)."""
        return self.stop_reason not in (StopReason.INTERRUPTED, StopReason.BUDGET) and \
            not any(a.status == "ERROR" for agent in self.attempts for task in agent
                    for a in task)

    def verdict(self, a: int, b: int, metric: str = "pass_rate") -> str:
        """``"<label> better"`` or ``"inconclusive"`` for agents ``a`` and ``b`` (indices)."""
        for p in self.pairs:
            if (p.i, p.j) in ((a, b), (b, a)):
                d = p.overall[metric].decision
                if d is None:
                    return "inconclusive"
                first = self.labels[p.i] if d == "first" else self.labels[p.j]
                return f"{first} better"
        raise KeyError((a, b))

    @property
    def regressions(self) -> list[str]:
        """Agents decided worse than the first one (the baseline) on pass rate."""
        out = []
        for p in self.pairs:
            if p.i == 0 and p.overall["pass_rate"].decision == "first":
                out.append(f"{self.labels[p.j]} has a lower pass rate than {self.labels[0]}")
        return out

    @property
    def exit_code(self) -> int:
        """2 incomplete > 1 a later agent is worse than the first on pass rate > 0."""
        return exit_code(incomplete=not self.complete, finding=bool(self.regressions))

    def _metric_dict(self, s: PooledSign, metric: str, a: str, b: str,
                     items_per_round: int) -> dict[str, Any]:
        lo, hi = s.interval()
        verdict = "inconclusive" if s.decision is None else \
            f"{a if s.decision == 'first' else b} better"
        more = None
        if s.decision is None:
            more = runs_needed(s.wins, s.losses, s.items, alpha=s.alpha,
                               items_per_round=items_per_round)
            if more["rounds"] is not None:
                more["max_runs_hint"] = self.rounds + more["rounds"]
        return {"verdict": verdict,
                "better": None if s.decision is None else (a if s.decision == "first" else b),
                **s.state(), "effect": s.effect, "effect_label": _EFFECT[metric].format(a=a, b=b),
                "interval": [lo, hi],
                "interval_method": "product of beta-mixture confidence sequences for "
                                   "P(discordant) and P(A wins | discordant), each at alpha/2; "
                                   "anytime-valid at round boundaries",
                "decided_at_round": s.decided_at_round, "decided_e_value": s.decided_e,
                "further_runs": more}

    def to_dict(self) -> dict[str, Any]:
        cfg = self.config
        eng = cfg.engine_config()
        tasks = self.benchmark.tasks
        agents = []
        for k, (label, ident) in enumerate(zip(self.labels, self.agents, strict=True)):
            t_rows = []
            for ti, task in enumerate(tasks):
                st = TaskStats(self.attempts[k][ti])
                t_rows.append({"id": task.id, "name": task.name, **st.metrics(
                    alpha=cfg.alpha, interval="exact", stopped_early=True),
                    "attempts": [x.to_dict() for x in st.attempts]})
            summ = summarize([TaskStats(self.attempts[k][ti]) for ti in range(len(tasks))],
                             alpha=cfg.alpha)
            agents.append({"label": label, "agent": ident, "summary": summ, "tasks": t_rows,
                           "ledger": self.ledgers[k]})
        pairs = []
        for p in self.pairs:
            a, b = self.labels[p.i], self.labels[p.j]
            pairs.append({
                "a": a, "b": b, "a_agent": self.agents[p.i], "b_agent": self.agents[p.j],
                "metrics": {m: self._metric_dict(p.overall[m], m, a, b, len(tasks))
                            for m in METRICS},
                "latency_median_difference_s": median(p.latency_diffs)
                if p.latency_diffs else None,
                "tasks": [{"id": t.id, "name": t.name,
                           "metrics": {m: self._metric_dict(p.per_task[ti][m], m, a, b, 1)
                                       for m in METRICS}} for ti, t in enumerate(tasks)],
            })
        m = self.benchmark.model
        total = sum(int(led.get("calls", 0)) for led in self.ledgers)
        return {
            "schema": SCHEMA,
            "benchmark": {"name": m.name, "version": m.version, "description": m.description,
                          "path": self.benchmark.path, "tasks": len(tasks)},
            "complete": self.complete, "exit_code": self.exit_code,
            "stop_reason": self.stop_reason, "rounds": self.rounds,
            "config": {"max_runs": cfg.max_runs, "min_runs": cfg.min_runs, "alpha": cfg.alpha,
                       "include_outputs": cfg.include_outputs, "budget_per_agent": eng.budget,
                       "max_workers": eng.max_workers, "timeout_s": eng.timeout_s,
                       "retries": eng.retries, "error_policy": eng.error_policy,
                       "store_mode": eng.store_mode, "seed": eng.seed},
            "multiplicity": {"method": "bonferroni", "pairs": len(self.pairs),
                             "metrics": list(METRICS), "tasks": len(tasks), **self.alphas},
            "agents": agents,
            "pairs": pairs,
            "regressions": self.regressions,
            "calls": {"total": total, "per_agent": {lab: int(led.get("calls", 0)) for lab, led
                                                    in zip(self.labels, self.ledgers,
                                                           strict=True)},
                      "max_planned": cfg.max_runs * len(tasks) * len(self.labels)},
            "privacy": "prompts and answers are identified by fingerprint only"
                       if not cfg.include_outputs else "answers included (truncated)",
        }

    def summary(self) -> str:
        from ..report import render_compare_text
        return render_compare_text(self.to_dict(), color=False)


def _labels(n: int) -> tuple[str, ...]:
    letters = string.ascii_uppercase
    return tuple(letters[i] if i < 26 else f"A{i}" for i in range(n))


async def acompare_agents(agents: Sequence[Any], benchmark: Benchmark, *,
                          config: CompareConfig | None = None,
                          labels: Sequence[str] | None = None,
                          engines: Sequence[Any] | None = None,
                          progress: Callable[[int], None] | None = None) -> CompareResult:
    """Async core of :func:`compare_agents`."""
    from ..engine import Engine, Probe

    config = config or CompareConfig()
    if len(agents) < 2:
        raise InvalidArgument("compare needs at least two agents")
    if not isinstance(benchmark, Benchmark):
        raise InvalidArgument("benchmark must come from load_benchmark() or parse_benchmark()")
    labs = tuple(labels) if labels is not None else _labels(len(agents))
    if len(labs) != len(agents) or len(set(labs)) != len(labs):
        raise InvalidArgument("labels must be distinct, one per agent")
    own = engines is None
    engs = list(engines) if engines is not None else \
        [Engine(a, config.engine_config()) for a in agents]
    tasks = benchmark.tasks
    n_t, n_a = len(tasks), len(agents)
    pair_idx = list(itertools.combinations(range(n_a), 2))
    a_overall = config.alpha / len(pair_idx)
    a_task = config.alpha / (n_t * len(METRICS) * len(pair_idx))
    pairs = [_Pair(i, j, {m: PooledSign(a_overall) for m in METRICS},
                   [{m: PooledSign(a_task) for m in METRICS} for _ in tasks])
             for i, j in pair_idx]
    probes = [Probe.make(t.prompt) for t in tasks]
    runs: list[list[list[AttemptRecord]]] = [[[] for _ in tasks] for _ in agents]
    rounds = 0
    stop = ""
    try:
        while rounds < config.max_runs:
            plan = [(ai, ti, engs[ai].allocate(probes[ti], 1)[0])
                    for ti in range(n_t) for ai in range(n_a)]
            outs = await asyncio.gather(*(
                attempt(engs[ai], tasks[ti], probes[ti], idx,
                        include_outputs=config.include_outputs)
                for ai, ti, idx in plan), return_exceptions=True)
            failed = [o for o in outs if isinstance(o, BaseException)]
            for (ai, ti, _), o in zip(plan, outs, strict=True):
                if isinstance(o, AttemptRecord):
                    runs[ai][ti].append(o)
            if failed:
                first = failed[0]
                if isinstance(first, Interrupted):
                    stop = StopReason.INTERRUPTED
                elif isinstance(first, BudgetExhausted):
                    stop = StopReason.BUDGET
                else:
                    raise first
                break  # a partial round is never fed to the tests (pooled validity)
            rounds += 1
            if progress is not None:
                progress(len(plan))
            for p in pairs:
                for ti in range(n_t):
                    ra, rb = runs[p.i][ti][-1], runs[p.j][ti][-1]
                    if ra.ok and rb.ok:
                        p.latency_diffs.append(ra.latency_s - rb.latency_s)
                    for m in METRICS:
                        sign = _outcome(m, ra, rb)
                        p.overall[m].add(sign)
                        p.per_task[ti][m].add(sign)
                        p.per_task[ti][m].end_round()
                for m in METRICS:
                    p.overall[m].end_round()
            if rounds >= config.min_runs and all(p.overall["pass_rate"].decision
                                                 for p in pairs):
                stop = "decided"
                break
            if any(e.stopping for e in engs):
                stop = StopReason.INTERRUPTED
                break
        else:
            stop = f"max runs reached ({config.max_runs})"
        return CompareResult(
            labels=labs, agents=tuple(e.agent.identity for e in engs), benchmark=benchmark,
            config=config, attempts=tuple(tuple(tuple(r) for r in per_agent)
                                          for per_agent in runs),
            pairs=tuple(pairs), rounds=rounds, ledgers=tuple(e.ledger.to_dict() for e in engs),
            stop_reason=stop, alphas={"overall_alpha": a_overall, "per_task_alpha": a_task})
    finally:
        if own:
            for e in engs:
                await e.aclose()


def compare_agents(agents: Sequence[Any], benchmark: Benchmark, *,
                   config: CompareConfig | None = None,
                   labels: Sequence[str] | None = None,
                   progress: Callable[[int], None] | None = None) -> CompareResult:
    """Compare agents on ``benchmark`` with paired, anytime-valid tests.

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
        ('A better', 8)
    """
    from ..engine import run_sync
    return run_sync(acompare_agents(agents, benchmark, config=config, labels=labels,
                                    progress=progress))
