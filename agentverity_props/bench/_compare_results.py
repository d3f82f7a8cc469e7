"""compare/2 results as frozen data: every pair's tests and ``to_dict()``, the versioned JSON.

The comparison itself (random order, warm-up, rounds) is in :mod:`._compare`; the renderers
(text, JUnit, HTML) read only the dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Any

from .._internal.outcome import StopReason, exit_code
from ..decide import (
    COMPARE_METRICS,
    COMPARE_WEIGHTS,
    PooledEquivalence,
    PooledSign,
    compare_alpha_split,
    runs_needed,
)
from ..errors import InvalidArgument
from ..results import CompareDocument
from ._results import AttemptRecord, TaskStats, summarize

if TYPE_CHECKING:
    from ..engine import EngineConfig

__all__ = ["METRICS", "SCHEMA", "WEIGHTS", "CompareConfig", "CompareResult", "alpha_split"]

SCHEMA = CompareDocument.SCHEMA
METRICS = COMPARE_METRICS
#: shares of the family-wise alpha per pair (decide's ``COMPARE_WEIGHTS``)
WEIGHTS = COMPARE_WEIGHTS
_EFFECT = {"pass_rate": "pass rate of {a} minus pass rate of {b}",
           "error_rate": "error rate of {b} minus error rate of {a}",
           "latency": "P({a} faster by more than {m:.0%}) minus P({b} faster by more than "
                      "{m:.0%}), both calls successful"}
_ASSUMPTION = ("items independent given the past (order randomised per item); for 'no "
               "difference' on latency the agents' latencies are exchangeable")


@dataclass(frozen=True)
class CompareConfig:
    """How ``compare`` runs.

    Attributes:
        max_runs: at most this many rounds (runs of every task per agent).
        margin: the equivalence margin on the pass rate: a pair is "equivalent within the
            margin" once its mean pass-rate difference is shown to lie strictly inside
            ``(-margin, margin)`` (0.1 = ten percentage points).
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
    margin: float = 0.10
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
        if not isinstance(self.margin, (int, float)) or isinstance(self.margin, bool) or \
                not 0.0 < self.margin < 1.0:
            raise InvalidArgument(f"margin={self.margin!r} must be a difference of pass "
                                  "rates in (0, 1) (0.1 = ten percentage points)")
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


def alpha_split(alpha: float, pairs: int, tasks: int) -> dict[str, float]:
    """The alpha of each verdict (:func:`~agentverity_props.decide.compare_alpha_split`)."""
    return compare_alpha_split(alpha, pairs, tasks)


@dataclass
class _Pair:
    i: int
    j: int
    overall: dict[str, PooledSign]
    per_task: list[dict[str, PooledSign]]
    latency_diffs: list[float] = field(default_factory=list)
    latency_ratios: list[float] = field(default_factory=list)
    first: list[int] = field(default_factory=lambda: [0, 0])  # items where i / j ran first
    equivalence: PooledEquivalence | None = None


def _equivalent_text(p: _Pair, metric: str) -> str:
    """The equivalence verdict of a pair's pass rate ('' unless shown)."""
    eq = p.equivalence
    if metric != "pass_rate" or eq is None or eq.decision is None:
        return ""
    return f"equivalent within ±{eq.margin:g}"


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
        """``"<label> better"``, ``"equivalent within ±<margin>"`` (pass rate only) or
        ``"inconclusive"`` for agents ``a`` and ``b`` (indices)."""
        for p in self.pairs:
            if (p.i, p.j) in ((a, b), (b, a)):
                d = p.overall[metric].decision
                if d is None:
                    return _equivalent_text(p, metric) or "inconclusive"
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
    def equivalences(self) -> list[str]:
        """Pairs shown equivalent within the margin on pass rate, as printed."""
        return [f"{self.labels[p.i]} vs {self.labels[p.j]} pass rate "
                f"{_equivalent_text(p, 'pass_rate')}" for p in self.pairs
                if _equivalent_text(p, "pass_rate")]

    @property
    def guarantee(self) -> str:
        a = self.config.alpha
        return (f"family-wise: the chance that any verdict printed here names a better agent "
                f"where there is no difference, or calls two agents equivalent whose mean "
                f"pass rates differ by {self.config.margin:g} or more, is at most {a:g} "
                f"(weighted Bonferroni over {self.verdict_count} verdicts, each read at round "
                f"boundaries by Ville's inequality); assumption: {_ASSUMPTION}")

    @property
    def verdict_count(self) -> int:
        return len(self.pairs) * (len(METRICS) * (1 + len(self.benchmark.tasks)) + 1)

    def _metric_dict(self, s: PooledSign, metric: str, a: str, b: str,
                     items_per_round: int, plan: bool = True,
                     pair: _Pair | None = None) -> dict[str, Any]:
        lo, hi = s.interval()
        equiv = _equivalent_text(pair, metric) if pair is not None else ""
        verdict = (equiv or "inconclusive") if s.decision is None else \
            f"{a if s.decision == 'first' else b} better"
        more = None
        extra: dict[str, Any] = {}
        if pair is not None and pair.equivalence is not None and metric == "pass_rate":
            extra["equivalence"] = pair.equivalence.state()
        if s.decision is None and plan and not equiv:  # overall only: per task it costs
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
                "further_runs": more, **extra}

    def _agent_dict(self, k: int) -> dict[str, Any]:
        from ..engine import ledger_part
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
                "ledger": ledger_part(self.ledgers[k]),
                "tokens": self.ledgers[k].get("tokens")}

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
                "metrics": {m: self._metric_dict(p.overall[m], m, a, b, len(tasks), pair=p)
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
                       "margin": cfg.margin, "latency_margin": cfg.latency_margin,
                       "warmup": cfg.warmup,
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
