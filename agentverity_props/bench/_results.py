"""Benchmark results as frozen data; ``to_dict()`` is the versioned JSON (bench/2).

bench/2 over bench/1: a task the sequential rule leaves undecided at the run cap is UNDECIDED
(version 1 decided it on its point estimate); reliability, pass@k and pass^k are unbiased
under the stopping rule (version 1: proportions of the runs made, biased when a task stopped
early), pass@k / pass^k are null where k exceeds the runs made and nothing unbiased exists,
and the observed share of passing runs is ``observed_rate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import TYPE_CHECKING, Any, Literal

from .._internal.outcome import StopReason, TaskStatus, exit_code
from .._internal.settings import setting
from ..decide import UNBIASED, EarlyStop, Estimates, StopRule, bonferroni, estimate
from ..errors import InvalidArgument
from ..results import BenchDocument
from ._metrics import k_values, pass_at_k, pass_hat_k, percentile, rate_interval, share_of_mode

if TYPE_CHECKING:
    from ..engine import EngineConfig

__all__ = ["SCHEMA", "AttemptRecord", "BenchConfig", "BenchResult", "EarlyStop", "TaskResult",
           "TaskStats"]


SCHEMA = BenchDocument.SCHEMA
ESTIMATOR = UNBIASED
def _privacy_off() -> str:
    return ("prompts and answers are identified by SHA-256 fingerprint only "
            f"(use {setting('include_outputs')} to keep them)")
PRIVACY_ON = "prompts and answers (truncated to 2000 characters) are included"


@dataclass(frozen=True)
class BenchConfig:
    """How ``bench`` runs. Keyword-only; every field has a default.

    Attributes:
        runs: runs per task (None = the file's ``runs``, else 1).
        early_stop: ``"exact"`` (curtailment, same verdicts as ``"off"``), ``"sequential"``
            (anytime-valid SPRT per task) or ``"off"`` (always ``runs`` runs).
        alpha: error rate of sequential decisions and ``1 - confidence`` of intervals.
        margin: half-width of the indifference zone of the sequential rule.
        interval: ``"exact"`` (Clopper-Pearson) or ``"wilson"`` for tasks run to the end.
        include_outputs: keep prompts and answer texts (truncated) in the result.
        engine: the :class:`~agentverity_props.engine.EngineConfig` (None = defaults).
    """

    runs: int | None = None
    early_stop: EarlyStop = "exact"
    alpha: float = 0.05
    margin: float = 0.05
    interval: Literal["exact", "wilson"] = "exact"
    include_outputs: bool = False
    engine: EngineConfig | None = None

    def __post_init__(self) -> None:
        if self.runs is not None and (not isinstance(self.runs, int) or self.runs < 1):
            raise InvalidArgument(f"runs={self.runs!r} must be an int >= 1")
        if self.early_stop not in ("exact", "sequential", "off"):
            raise InvalidArgument(f"early_stop={self.early_stop!r}; use exact, sequential "
                                  "or off")
        if not (0.0 < self.alpha < 0.5):
            raise InvalidArgument(f"alpha={self.alpha!r} must be in (0, 0.5)")
        if not (0.0 < self.margin < 0.5):
            raise InvalidArgument(f"margin={self.margin!r} must be in (0, 0.5)")
        if self.interval not in ("exact", "wilson"):
            raise InvalidArgument(f"interval={self.interval!r}; use exact or wilson")
        if self.engine is not None:
            from ..engine import EngineConfig
            if not isinstance(self.engine, EngineConfig):
                raise InvalidArgument("engine must be an EngineConfig")

    def engine_config(self) -> EngineConfig:
        from ..engine import EngineConfig
        return self.engine if self.engine is not None else EngineConfig()



@dataclass(frozen=True)
class AttemptRecord:
    """One run of one task: ``PASS`` / ``FAIL`` / ``ERROR`` and what it cost."""

    index: int
    status: TaskStatus
    latency_s: float
    output_fp: str | None
    output: str | None
    message: str | None
    ok: bool
    tokens: int | None = None
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "status": self.status, "latency_s": self.latency_s,
                "output_fp": self.output_fp, "output": self.output, "message": self.message,
                "tokens": self.tokens, "cost_usd": self.cost_usd}


def _sum_known(values: list[Any]) -> Any:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


@dataclass(frozen=True)
class TaskStats:
    """Metrics of a list of attempts (one task, or one agent's runs of a task)."""

    attempts: tuple[AttemptRecord, ...]

    @property
    def runs(self) -> int:
        return len(self.attempts)

    @property
    def passes(self) -> int:
        return sum(a.status == "PASS" for a in self.attempts)

    @property
    def failures(self) -> int:
        return sum(a.status == "FAIL" for a in self.attempts)

    @property
    def errors(self) -> int:
        return sum(a.status == "ERROR" for a in self.attempts)

    @property
    def reliability(self) -> float | None:
        return self.passes / self.runs if self.runs else None

    @property
    def error_rate(self) -> float | None:
        return self.errors / self.runs if self.runs else None

    @property
    def consistency(self) -> float | None:
        return share_of_mode([a.output_fp for a in self.attempts if a.output_fp is not None])

    def latencies(self) -> list[float]:
        return [a.latency_s for a in self.attempts if a.ok]

    def pass_at(self) -> dict[str, float]:
        n, c = self.runs, self.passes
        return {str(k): pass_at_k(n, c, k) for k in k_values(n)} if n else {}

    def pass_hat(self) -> dict[str, float]:
        n, c = self.runs, self.passes
        return {str(k): pass_hat_k(n, c, k) for k in k_values(n)} if n else {}

    def metrics(self, *, alpha: float, interval: str, stopped_early: bool,
                estimates: Estimates | None = None) -> dict[str, Any]:
        """JSON-ready metrics; with ``estimates`` (bench/2) reliability and pass@k / pass^k
        are those unbiased estimates and ``observed_rate`` is passes / runs."""
        lo, hi, method = rate_interval(self.passes, self.runs, alpha=alpha, method=interval,
                                       stopped_early=stopped_early)
        lat = self.latencies()
        if estimates is not None:
            return {**self.metrics(alpha=alpha, interval=interval,
                                   stopped_early=stopped_early),
                    "reliability": estimates.reliability, "observed_rate": self.reliability,
                    "pass_at_k": estimates.pass_at, "pass_hat_k": estimates.pass_hat,
                    "estimator": estimates.method}
        return {
            "runs": self.runs, "passes": self.passes, "failures": self.failures,
            "errors": self.errors, "reliability": self.reliability, "ci_low": lo,
            "ci_high": hi, "ci_method": method, "confidence": 1 - alpha,
            "pass_at_k": self.pass_at(), "pass_hat_k": self.pass_hat(),
            "consistency": self.consistency, "error_rate": self.error_rate,
            "latency_p50_s": percentile(lat, 50), "latency_p95_s": percentile(lat, 95),
            "tokens": _sum_known([a.tokens for a in self.attempts]),
            "cost_usd": _sum_known([a.cost_usd for a in self.attempts]),
        }


@dataclass(frozen=True)
class TaskResult:
    """One task's runs and verdict.

    ``status``: ``PASS``; ``FAIL``; ``ERROR`` (not passed, and every non-passing run was an
    error: the agent or a custom evaluator failed, nothing was judged wrong); ``INCOMPLETE``
    (budget or interrupt stopped it before a verdict); ``UNDECIDED`` (the sequential rule
    reached the run cap without deciding).
    """

    id: str
    name: str
    category: str | None
    prompt_fp: str
    prompt: str | None
    evaluation: str
    threshold: float
    planned_runs: int
    stats: TaskStats
    decision: str | None
    decided_by: str
    stop_reason: str = ""
    alpha: float = 0.05
    interval: str = "exact"
    estimates: Estimates | None = None

    @classmethod
    def build(cls, task: Any, attempts: list[AttemptRecord], *,
              decision: tuple[str, str] | None, stop_reason: str, config: BenchConfig,
              include_prompt: bool, rule: StopRule | None = None) -> TaskResult:
        """``rule``: a fresh copy of the stopping rule the runs were made under (for the
        unbiased estimates); None = no early stopping (every planned run made)."""
        from .._internal.fingerprint import fingerprint, salt_from_env
        est = None
        if rule is not None:
            est = estimate([a.status == "PASS" for a in attempts], rule,
                           k_values(task.runs))
        return cls(id=task.id, name=task.name, category=task.spec.category,
                   prompt_fp=fingerprint(task.prompt, salt_from_env()),
                   prompt=task.prompt if include_prompt else None,
                   evaluation=task.describe_evaluation(), threshold=task.threshold,
                   planned_runs=task.runs, stats=TaskStats(tuple(attempts)),
                   decision=decision[0] if decision else None,
                   decided_by=decision[1] if decision else "", stop_reason=stop_reason,
                   alpha=config.alpha, interval=config.interval, estimates=est)

    @property
    def status(self) -> TaskStatus:
        if self.decision is None:
            return TaskStatus.INCOMPLETE
        if self.decision == "undecided":
            return TaskStatus.UNDECIDED
        if self.decision == "pass":
            return TaskStatus.PASS
        if self.stats.failures == 0 and self.stats.errors > 0:
            return TaskStatus.ERROR
        return TaskStatus.FAIL

    @property
    def calls_saved(self) -> int:
        return self.planned_runs - self.stats.runs

    def to_dict(self) -> dict[str, Any]:
        early = self.stats.runs < self.planned_runs
        return {
            "id": self.id, "name": self.name, "category": self.category,
            "prompt_fp": self.prompt_fp, "prompt": self.prompt, "evaluation": self.evaluation,
            "status": self.status, "decision": self.decision, "decided_by": self.decided_by,
            "stop_reason": self.stop_reason, "threshold": self.threshold,
            "planned_runs": self.planned_runs, "calls_saved": self.calls_saved,
            **self.stats.metrics(alpha=self.alpha, interval=self.interval, stopped_early=early,
                                 estimates=self.estimates),
            "attempts": [a.to_dict() for a in self.stats.attempts],
        }


def _mean_known(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return fmean(known) if known else None


def _mean_all(values: Sequence[float | None]) -> float | None:
    """The mean, or None if any value is missing (a partial mean would be biased)."""
    return fmean(values) if values and None not in values else None  # type: ignore[arg-type]


def summarize(stats: Sequence[TaskStats], *, alpha: float,
              statuses: Sequence[str] | None = None,
              estimates: Sequence[Estimates | None] | None = None,
              planned: Sequence[int] | None = None) -> dict[str, Any]:
    """Benchmark-wide metrics (pass@k / pass^k / consistency: unweighted means over tasks).

    With ``estimates`` (bench/2): reliability, pass@k and pass^k are means over tasks of the
    per-task unbiased estimates (so unbiased for the mean over tasks of the task's pass
    rate, pass@k, pass^k), k up to the smallest planned runs. A k that some task cannot
    estimate (it stopped before k runs without settling them) is null: averaging the others
    would be biased. ``pass_k_tasks`` counts the tasks that have it.
    """
    from ._metrics import clopper_pearson

    every = tuple(a for st in stats for a in st.attempts)
    pooled = TaskStats(every)
    lo, hi = clopper_pearson(pooled.passes, pooled.runs, alpha)
    n_min = min((st.runs for st in stats), default=0)
    ks = k_values(n_min) if n_min else []
    cons = [c for c in (st.consistency for st in stats) if c is not None]
    lat = pooled.latencies()
    out: dict[str, Any] = {"tasks": len(stats)}
    if statuses is not None:
        out.update(passed=statuses.count("PASS"), failed=statuses.count("FAIL"),
                   errored=statuses.count("ERROR"), incomplete=statuses.count("INCOMPLETE"))
        if estimates is not None:
            out["undecided"] = statuses.count("UNDECIDED")
    out.update({
        "attempts": pooled.runs, "passes": pooled.passes, "failures": pooled.failures,
        "errors": pooled.errors, "reliability": pooled.reliability, "ci_low": lo,
        "ci_high": hi, "ci_method": "clopper-pearson on pooled attempts (descriptive: tasks "
                                    "differ and runs may stop early)",
        "pass_at_k": {str(k): fmean(pass_at_k(st.runs, st.passes, k) for st in stats)
                      for k in ks},
        "pass_hat_k": {str(k): fmean(pass_hat_k(st.runs, st.passes, k) for st in stats)
                       for k in ks},
        "consistency": fmean(cons) if cons else None, "error_rate": pooled.error_rate,
        "latency_p50_s": percentile(lat, 50), "latency_p95_s": percentile(lat, 95),
        "tokens": _sum_known([a.tokens for a in every]),
        "cost_usd": _sum_known([a.cost_usd for a in every]),
    })
    if estimates is not None:
        ests = [e for e in estimates if e is not None]
        ks = k_values(min(planned)) if planned else []
        out.update({
            "observed_rate": pooled.reliability,
            "reliability": _mean_known([e.reliability for e in ests]),
            "reliability_method": "mean over tasks of each task's unbiased pass-rate estimate",
            "ci_method": "clopper-pearson on pooled attempts, around observed_rate "
                         "(descriptive: tasks differ and runs may stop early)",
            "pass_at_k": {str(k): _mean_all([e.pass_at.get(str(k)) for e in ests])
                          for k in ks},
            "pass_hat_k": {str(k): _mean_all([e.pass_hat.get(str(k)) for e in ests])
                           for k in ks},
            "pass_k_tasks": {f"pass{name}{k}": sum(getattr(e, attr).get(str(k)) is not None
                                               for e in ests)
                             for k in ks for name, attr in (("@", "pass_at"),
                                                            ("^", "pass_hat"))},
            "estimator": ESTIMATOR if all(e.method == ESTIMATOR for e in ests) else
            "mean over tasks; see each task's estimator (some are biased plain proportions)"})
    return out


@dataclass(frozen=True)
class BenchResult:
    """The result of :func:`~agentverity_props.bench.run_benchmark`."""

    agent: str
    benchmark: Any
    config: BenchConfig
    tasks: tuple[TaskResult, ...]
    ledger: dict[str, Any] = field(default_factory=dict)
    stop_reason: str = ""
    #: calls to the judges of judge evaluators during this run (not agent calls)
    judge_calls: int = 0

    @property
    def complete(self) -> bool:
        """Every task decided, no interrupt, and no failed agent call: an ERROR run is graded
        as agentverdict does, but a failed call is missing evidence, so the exit code is 2."""
        return all(t.decision is not None for t in self.tasks) and \
            self.stop_reason != StopReason.INTERRUPTED and \
            not any(t.stats.errors for t in self.tasks)

    @property
    def exit_code(self) -> int:
        """2 incomplete > 1 a task failed or errored > 2 a task undecided > 0 all passed."""
        statuses = [t.status for t in self.tasks]
        return exit_code(incomplete=not self.complete,
                         finding=any(s in ("FAIL", "ERROR") for s in statuses),
                         undecided="UNDECIDED" in statuses)

    @property
    def guarantee(self) -> str:
        """What the verdicts promise, as printed in every format."""
        cfg = self.config
        n = len(self.tasks)
        if cfg.early_stop == "sequential":
            each = bonferroni(cfg.alpha, n)
            return (f"sequential pass-rate SPRT per task at alpha/tasks = {cfg.alpha:g}/{n}: "
                    f"P(PASS) <= {each:.3g} for a task whose true pass rate is <= "
                    f"threshold - {cfg.margin:g}, P(FAIL) <= {each:.3g} when it is "
                    f">= threshold + {cfg.margin:g}; at most {cfg.alpha:g} for any wrong "
                    "verdict over the benchmark, whatever the cap on runs "
                    f"({setting('runs', '')}; the cap's exact final test "
                    "included; a task it leaves undecided is UNDECIDED); assumes a task's "
                    "runs are independent with one pass rate")
        what = "curtailed: the verdict" if cfg.early_stop == "exact" else "the verdict"
        return (f"{what} of each task is whether at least ceil(threshold x runs) of its "
                "planned runs pass; it describes these runs and claims no error rate about "
                f"the true pass rate (use {setting('early_stop', 'sequential')} for that)")

    def task(self, task_id: str) -> TaskResult:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def to_dict(self) -> dict[str, Any]:
        from ..engine import ledger_part
        cfg = self.config
        eng = cfg.engine_config()
        planned = sum(t.planned_runs for t in self.tasks)
        made = sum(t.stats.runs for t in self.tasks)
        m = self.benchmark.model
        return {
            "schema": SCHEMA,
            "agent": self.agent,
            "benchmark": {"name": m.name, "version": m.version, "description": m.description,
                          "path": self.benchmark.path, "tasks": len(self.tasks)},
            "complete": self.complete,
            "exit_code": self.exit_code,
            "stop_reason": self.stop_reason,
            "config": {"runs": cfg.runs, "early_stop": cfg.early_stop, "alpha": cfg.alpha,
                       "margin": cfg.margin, "interval": cfg.interval,
                       "include_outputs": cfg.include_outputs, "budget": eng.budget,
                       "max_workers": eng.max_workers, "timeout_s": eng.timeout_s,
                       "retries": eng.retries, "error_policy": eng.error_policy,
                       "store_mode": eng.store_mode, "seed": eng.seed},
            "guarantee": self.guarantee,
            "summary": summarize([t.stats for t in self.tasks], alpha=cfg.alpha,
                                 statuses=[t.status for t in self.tasks],
                                 estimates=[t.estimates for t in self.tasks],
                                 planned=[t.planned_runs for t in self.tasks]),
            "calls": {"attempts": made, "planned": planned, "saved": planned - made,
                      "ledger_calls": self.ledger.get("calls", 0),
                      "judge_calls": self.judge_calls},
            "tasks": [t.to_dict() for t in self.tasks],
            "ledger": ledger_part(self.ledger),
            "tokens": self.ledger.get("tokens"),
            "privacy": PRIVACY_ON if cfg.include_outputs else _privacy_off(),
        }

    def summary(self) -> str:
        from ..report import render_bench_text
        return render_bench_text(self.to_dict(), color=False)
