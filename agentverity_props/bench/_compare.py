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

One family-wise ``alpha`` covers every verdict compare prints (weighted Bonferroni, see
:func:`alpha_split`): per pair, the overall pass rate gets ``alpha/2``, error rate and
latency ``alpha/8`` each, and the per-task verdicts share the last ``alpha/4``. Under
identical agents the chance that any printed verdict names a better agent is at most
``alpha``. The comparison stops once every pair's overall pass-rate verdict is decided, or at
``max_runs`` rounds; no weighted score is ever computed.
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

__all__ = ["METRICS", "CompareConfig", "CompareResult", "acompare_agents", "alpha_split",
           "compare_agents"]

SCHEMA = "agentverity_props.compare/2"
METRICS = ("pass_rate", "error_rate", "latency")
#: shares of the family-wise alpha (per pair): the overall metrics, then all per-task verdicts
WEIGHTS = {"pass_rate": 0.5, "error_rate": 0.125, "latency": 0.125, "per_task": 0.25}
_EFFECT = {"pass_rate": "pass rate of {a} minus pass rate of {b}",
           "error_rate": "error rate of {b} minus error rate of {a}",
           "latency": "P({a} faster by more than {m:.0%}) minus P({b} faster by more than "
                      "{m:.0%}), both calls successful"}
_ASSUMPTION = ("items independent given the past (order randomised per item); for 'no "
               "difference' on latency the agents' latencies are exchangeable")


def alpha_split(alpha: float, pairs: int, tasks: int) -> dict[str, float]:
    """The alpha of each verdict so that all of them together err with probability <= alpha.

    >>> s = alpha_split(0.05, 1, 4)
    >>> s["pass_rate"], s["latency"], round(s["per_task"], 6)
    (0.025, 0.00625, 0.001042)
    >>> round(sum(s[m] for m in METRICS) + 3 * 4 * s["per_task"], 12)
    0.05
    """
    out = {m: alpha * WEIGHTS[m] / pairs for m in METRICS}
    out["per_task"] = alpha * WEIGHTS["per_task"] / (pairs * tasks * len(METRICS))
    return out


@dataclass(frozen=True)
class CompareConfig:
    """How ``compare`` runs.

    Attributes:
        max_runs: at most this many rounds (runs of every task per agent).
        min_runs: at least this many rounds before stopping on a decision.
        alpha: family-wise error rate of every verdict printed (see module doc).
        latency_margin: the practical difference for latency: a call wins only when the
            other took more than ``1 + latency_margin`` times as long (0 = any difference).
        warmup: untimed calls per agent before the first round (0 = none).
        seed: seeds the order of the agents within each item (None = the engine's seed).
        include_outputs: keep prompts and answers in the per-agent results.
        engine: the :class:`~agentverity_props.engine.EngineConfig` of every agent's engine
            (``budget`` caps each agent separately).
    """

    max_runs: int = 50
    min_runs: int = 1
    alpha: float = 0.05
    latency_margin: float = 0.10
    warmup: int = 1
    seed: int | None = None
    include_outputs: bool = False
    engine: EngineConfig | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.max_runs, int) or self.max_runs < 1:
            raise InvalidArgument(f"max_runs={self.max_runs!r} must be an int >= 1")
        if not isinstance(self.min_runs, int) or not 1 <= self.min_runs <= self.max_runs:
            raise InvalidArgument(f"min_runs={self.min_runs!r} must be in 1..max_runs")
        if not (0.0 < self.alpha < 0.5):
            raise InvalidArgument(f"alpha={self.alpha!r} must be in (0, 0.5)")
        if not isinstance(self.latency_margin, (int, float)) or \
                not 0.0 <= self.latency_margin <= 10.0:
            raise InvalidArgument(f"latency_margin={self.latency_margin!r} must be a ratio in "
                                  "[0, 10] (0.1 = faster by more than 10%)")
        if not isinstance(self.warmup, int) or isinstance(self.warmup, bool) or \
                self.warmup < 0:
            raise InvalidArgument(f"warmup={self.warmup!r} must be an int >= 0")
        if self.seed is not None and (not isinstance(self.seed, int) or
                                      isinstance(self.seed, bool)):
            raise InvalidArgument(f"seed={self.seed!r} must be an int or None")

    def engine_config(self) -> Any:
        from ..engine import EngineConfig
        return self.engine if self.engine is not None else EngineConfig()

    @property
    def order_seed(self) -> int:
        return self.seed if self.seed is not None else int(self.engine_config().seed)


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


@dataclass
class _Pair:
    i: int
    j: int
    overall: dict[str, PooledSign]
    per_task: list[dict[str, PooledSign]]
    latency_diffs: list[float] = field(default_factory=list)
    latency_ratios: list[float] = field(default_factory=list)
    first: list[int] = field(default_factory=lambda: [0, 0])  # items where i / j ran first


def _shown_e(s: PooledSign) -> float:
    """The e-value the verdict rests on: at the decision once decided (the call is latched,
    valid when made), else the current one."""
    return s.decided_e if s.decided_e is not None else s.e_value


@dataclass(frozen=True)
class CompareResult:
    """The result of :func:`compare_agents`; ``to_dict()`` is compare/2 JSON."""

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
    refs: tuple[str, ...] = ()
    warmups: tuple[tuple[AttemptRecord, ...], ...] = ()

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
    def winners(self) -> list[str]:
        """Every verdict that names a better agent (overall and per task), as printed."""
        out = []
        for p in self.pairs:
            for m in METRICS:
                if p.overall[m].decision is not None:
                    out.append(f"{self.labels[p.i]} vs {self.labels[p.j]} {m}")
                out.extend(f"{self.labels[p.i]} vs {self.labels[p.j]} {m} task {t.id}"
                           for ti, t in enumerate(self.benchmark.tasks)
                           if p.per_task[ti][m].decision is not None)
        return out

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

    @property
    def guarantee(self) -> str:
        a = self.config.alpha
        return (f"family-wise: the chance that any verdict printed here names a better agent "
                f"where there is no difference is at most {a:g} (weighted Bonferroni over "
                f"{self.verdict_count} verdicts, each read at round boundaries by Ville's "
                f"inequality); assumption: {_ASSUMPTION}")

    @property
    def verdict_count(self) -> int:
        return len(self.pairs) * len(METRICS) * (1 + len(self.benchmark.tasks))

    def _metric_dict(self, s: PooledSign, metric: str, a: str, b: str,
                     items_per_round: int, plan: bool = True) -> dict[str, Any]:
        lo, hi = s.interval()
        verdict = "inconclusive" if s.decision is None else \
            f"{a if s.decision == 'first' else b} better"
        more = None
        if s.decision is None and plan:  # overall verdicts only: per task it costs seconds
            more = runs_needed(s.wins, s.losses, s.items, alpha=s.alpha,
                               items_per_round=items_per_round)
            if more["rounds"] is not None:
                more["max_runs_hint"] = self.rounds + more["rounds"]
        return {"verdict": verdict,
                "better": None if s.decision is None else (a if s.decision == "first" else b),
                **s.state(), "verdict_e_value": _shown_e(s), "effect": s.effect,
                "effect_label": _EFFECT[metric].format(a=a, b=b,
                                                       m=self.config.latency_margin),
                "interval": [lo, hi],
                "interval_method": "product of beta-mixture confidence sequences for "
                                   "P(discordant) and P(A wins | discordant), each at alpha/2; "
                                   "anytime-valid at round boundaries",
                "decided_at_round": s.decided_at_round, "decided_e_value": s.decided_e,
                "further_runs": more}

    def _agent_dict(self, k: int) -> dict[str, Any]:
        cfg = self.config
        tasks = self.benchmark.tasks
        t_rows = []
        for ti, task in enumerate(tasks):
            st = TaskStats(self.attempts[k][ti])
            t_rows.append({"id": task.id, "name": task.name, **st.metrics(
                alpha=cfg.alpha, interval="exact", stopped_early=True),
                "attempts": [x.to_dict() for x in st.attempts]})
        summ = summarize([TaskStats(self.attempts[k][ti]) for ti in range(len(tasks))],
                         alpha=cfg.alpha)
        warm = self.warmups[k] if self.warmups else ()
        return {"label": self.labels[k], "ref": self._ref(k), "agent": self.agents[k],
                "summary": summ, "tasks": t_rows,
                "warmup": {"calls": len(warm),
                           "errors": sum(w.status == "ERROR" for w in warm),
                           "latency_s": [w.latency_s for w in warm if w.ok]},
                "ledger": self.ledgers[k]}

    def _ref(self, k: int) -> str:
        return self.refs[k] if self.refs else self.agents[k]

    def to_dict(self) -> dict[str, Any]:
        cfg = self.config
        eng = cfg.engine_config()
        tasks = self.benchmark.tasks
        pairs = []
        for p in self.pairs:
            a, b = self.labels[p.i], self.labels[p.j]
            pairs.append({
                "a": a, "b": b, "a_ref": self._ref(p.i), "b_ref": self._ref(p.j),
                "a_agent": self.agents[p.i], "b_agent": self.agents[p.j],
                "order": {"a_first": p.first[0], "b_first": p.first[1]},
                "metrics": {m: self._metric_dict(p.overall[m], m, a, b, len(tasks))
                            for m in METRICS},
                "latency_median_difference_s": median(p.latency_diffs)
                if p.latency_diffs else None,
                "latency_median_ratio": median(p.latency_ratios)
                if p.latency_ratios else None,
                "tasks": [{"id": t.id, "name": t.name,
                           "metrics": {m: self._metric_dict(p.per_task[ti][m], m, a, b, 1,
                                                            plan=False)
                                       for m in METRICS}} for ti, t in enumerate(tasks)],
            })
        m = self.benchmark.model
        warm = sum(len(w) for w in self.warmups)
        total = sum(int(led.get("calls", 0)) for led in self.ledgers)
        return {
            "schema": SCHEMA,
            "benchmark": {"name": m.name, "version": m.version, "description": m.description,
                          "path": self.benchmark.path, "tasks": len(tasks)},
            "complete": self.complete, "exit_code": self.exit_code,
            "stop_reason": self.stop_reason, "rounds": self.rounds,
            "config": {"max_runs": cfg.max_runs, "min_runs": cfg.min_runs, "alpha": cfg.alpha,
                       "latency_margin": cfg.latency_margin, "warmup": cfg.warmup,
                       "order_seed": cfg.order_seed,
                       "include_outputs": cfg.include_outputs, "budget_per_agent": eng.budget,
                       "max_workers": eng.max_workers, "timeout_s": eng.timeout_s,
                       "retries": eng.retries, "error_policy": eng.error_policy,
                       "store_mode": eng.store_mode, "seed": eng.seed},
            "design": {"order": "agents of an item run one after another in a uniformly "
                                "random order (seeded numpy Generator, independent per task "
                                "and round); tasks of a round run concurrently",
                       "latency": "the call's own duration measured by the adapter around "
                                  "the call; a win needs the other call to take more than "
                                  f"{1 + cfg.latency_margin:g}x as long",
                       "warmup": f"{cfg.warmup} untimed call(s) per agent before the first "
                                 "round, counted in the ledger and the budget, not in the "
                                 "statistics"},
            "multiplicity": {"method": "weighted bonferroni", "family_alpha": cfg.alpha,
                             "verdicts": self.verdict_count, "pairs": len(self.pairs),
                             "metrics": list(METRICS), "tasks": len(tasks),
                             "weights": dict(WEIGHTS), "alpha_per_verdict": dict(self.alphas)},
            "guarantee": self.guarantee,
            "agents": [self._agent_dict(k) for k in range(len(self.labels))],
            "pairs": pairs,
            "winners": self.winners,
            "regressions": self.regressions,
            "calls": {"total": total, "warmup": warm,
                      "per_agent": {lab: int(led.get("calls", 0)) for lab, led
                                    in zip(self.labels, self.ledgers, strict=True)},
                      "max_planned": (cfg.max_runs * len(tasks) + cfg.warmup)
                      * len(self.labels)},
            "privacy": "prompts and answers are identified by fingerprint only"
                       if not cfg.include_outputs else "answers included (truncated)",
        }

    def summary(self) -> str:
        from ..report import render_compare_text
        return render_compare_text(self.to_dict(), color=False)


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
    if len(agents) < 2:
        raise InvalidArgument("compare needs at least two agents")
    if not isinstance(benchmark, Benchmark):
        raise InvalidArgument("benchmark must come from load_benchmark() or parse_benchmark()")
    labs = tuple(labels) if labels is not None else _labels(len(agents))
    if len(labs) != len(agents) or len(set(labs)) != len(labs):
        raise InvalidArgument("labels must be distinct, one per agent")
    if refs is not None and len(refs) != len(agents):
        raise InvalidArgument("refs must name every agent, one per agent")
    own = engines is None
    engs = list(engines) if engines is not None else \
        [Engine(a, config.engine_config()) for a in agents]
    tasks = benchmark.tasks
    n_t, n_a = len(tasks), len(agents)
    pair_idx = list(itertools.combinations(range(n_a), 2))
    alphas = alpha_split(config.alpha, len(pair_idx), n_t)
    pairs = [_Pair(i, j, {m: PooledSign(alphas[m]) for m in METRICS},
                   [{m: PooledSign(alphas["per_task"]) for m in METRICS} for _ in tasks])
             for i, j in pair_idx]
    probes = [Probe.make(t.prompt) for t in tasks]
    rng = np.random.default_rng([config.order_seed, 0x636F6D70])  # own stream: "comp"
    runs: list[list[list[AttemptRecord]]] = [[[] for _ in tasks] for _ in agents]
    warm: list[list[AttemptRecord]] = [[] for _ in agents]
    rounds = 0
    stop = ""

    async def item(ti: int, idx: list[int], order: list[int],
                   got: list[AttemptRecord | None]) -> None:
        for ai in order:  # one after another, in this item's random order
            got[ai] = await attempt(engs[ai], tasks[ti], probes[ti], idx[ai],
                                    include_outputs=config.include_outputs)

    try:
        try:
            for k in range(config.warmup):
                for ai in range(n_a):
                    ti = k % n_t
                    idx = engs[ai].allocate(probes[ti], 1)[0]
                    warm[ai].append(await attempt(engs[ai], tasks[ti], probes[ti], idx))
                    if progress is not None:
                        progress(1)
        except (BudgetExhausted, Interrupted) as exc:
            stop = _stop_of([exc])
        while not stop and rounds < config.max_runs:
            plan = [[engs[ai].allocate(probes[ti], 1)[0] for ai in range(n_a)]
                    for ti in range(n_t)]
            orders = [[int(x) for x in rng.permutation(n_a)] for _ in range(n_t)]
            got: list[list[AttemptRecord | None]] = [[None] * n_a for _ in range(n_t)]
            outs = await asyncio.gather(*(item(ti, plan[ti], orders[ti], got[ti])
                                          for ti in range(n_t)), return_exceptions=True)
            for ti in range(n_t):
                for ai in range(n_a):
                    rec = got[ti][ai]
                    if rec is not None:
                        runs[ai][ti].append(rec)
            failed = [o for o in outs if isinstance(o, BaseException)]
            if failed:
                stop = _stop_of(failed)
                break
            rounds += 1
            if progress is not None:
                progress(n_t * n_a)
            full = [[r for r in row if r is not None] for row in got]
            _feed(pairs, full, orders, float(config.latency_margin))
            if rounds >= config.min_runs and all(p.overall["pass_rate"].decision
                                                 for p in pairs):
                stop = "decided"
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
