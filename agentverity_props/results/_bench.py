
"""The ``bench`` result file format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model
from ._common import EngineSettings, RateStats, Tokens
from ._migrations import migrate_bench_v1


class Benchmark(Model):
    name: str
    version: str
    description: str | None
    path: str
    tasks: Annotated[int, Field(ge=0)]


class Config(EngineSettings):
    runs: int | None
    early_stop: Literal["exact", "sequential", "off"]
    margin: float
    interval: Literal["exact", "wilson"]
    budget: int | None


class Summary(RateStats):
    tasks: Annotated[int, Field(ge=0)]
    passed: Annotated[int, Field(ge=0)]
    failed: Annotated[int, Field(ge=0)]
    errored: Annotated[int, Field(ge=0)]
    incomplete: Annotated[int, Field(ge=0)]
    attempts: Annotated[int, Field(ge=0)]
    reliability: Annotated[float | None, Field(ge=0.0, le=1.0)]
    """mean over tasks of the per-task unbiased pass-rate estimates"""
    ci_method: str
    pass_at_k: dict[str, Annotated[float | None, Field(ge=0.0, le=1.0)]]
    """
    k (as a string) -> mean over tasks of the unbiased per-task estimates; null (n/a) when some task
    has none (it stopped before k runs without settling them); k in 1,2,3,5,10,n up to the smallest
    planned runs
    """
    pass_hat_k: dict[str, Annotated[float | None, Field(ge=0.0, le=1.0)]]
    """as pass_at_k, for pass^k"""
    consistency: Annotated[float | None, Field(ge=0.0, le=1.0)]
    undecided: Annotated[int, Field(ge=0)]
    observed_rate: Annotated[float | None, Field(ge=0.0, le=1.0)]
    """pooled passes / attempts (descriptive)"""
    reliability_method: str
    estimator: str
    pass_k_tasks: dict[str, Annotated[int, Field(ge=0)]]
    """'pass@k' / 'pass^k' -> number of tasks that have that estimate"""


class Calls(Model):
    attempts: Annotated[int, Field(ge=0)]
    """task runs made"""
    planned: Annotated[int, Field(ge=0)]
    """runs x tasks"""
    saved: Annotated[int, Field(ge=0)]
    """planned - attempts (early stopping)"""
    ledger_calls: Annotated[int, Field(ge=0)]
    """live agent calls incl. retries"""
    judge_calls: Annotated[int, Field(ge=0)] | None = None
    """calls to the judges of judge evaluators (not agent calls; absent in files before it)"""


class Attempt(Model):
    index: Annotated[int, Field(ge=0)]
    status: Literal["PASS", "FAIL", "ERROR"]
    latency_s: float
    output_fp: str | None
    """sha256 of the answer text (null when the call failed)"""
    output: str | None
    """answer text (first 2000 characters) with --include-outputs, else null"""
    message: str | None
    """why it failed or errored"""
    tokens: int | None
    cost_usd: float | None


class Task(RateStats):
    id: str
    name: str
    category: str | None
    prompt_fp: str
    prompt: str | None
    """with --include-outputs only"""
    evaluation: str
    """human-readable evaluator list"""
    status: Literal["PASS", "FAIL", "ERROR", "INCOMPLETE", "UNDECIDED"]
    decision: Literal["pass", "fail", "undecided"] | None
    decided_by: str
    stop_reason: str
    threshold: Annotated[float, Field(ge=0.0, le=1.0)]
    planned_runs: Annotated[int, Field(ge=0)]
    calls_saved: Annotated[int, Field(ge=0)]
    runs: Annotated[int, Field(ge=0)]
    reliability: Annotated[float | None, Field(ge=0.0, le=1.0)]
    """
    pass rate, unbiased under the stopping rule (Rao-Blackwellised first-run indicator; passes /
    runs without early stopping)
    """
    ci_method: str
    """
    clopper-pearson (exact), wilson, or the anytime-valid beta-mixture confidence sequence when the
    task stopped early
    """
    confidence: Annotated[float, Field(ge=0.0, le=1.0)]
    pass_at_k: dict[str, Annotated[float | None, Field(ge=0.0, le=1.0)]]
    """
    unbiased under the stopping rule: 1 - E[first k runs all failed | runs, passes], k in
    1,2,3,5,10,planned runs; null = n/a (k > runs made and not settled by them)
    """
    pass_hat_k: dict[str, Annotated[float | None, Field(ge=0.0, le=1.0)]]
    """
    unbiased under the stopping rule: E[first k runs all passed | runs, passes]; null = n/a (k >
    runs made)
    """
    consistency: Annotated[float | None, Field(ge=0.0, le=1.0)]
    """share of the most common literal answer among successful runs"""
    attempts: list[Attempt]
    observed_rate: Annotated[float | None, Field(ge=0.0, le=1.0)]
    """passes / runs made (biased when the task stopped early)"""
    estimator: str


class MovedTask(Model):
    id: str
    kind: Literal["changed", "flaky", "new", "gone", "same"]
    """changed: the verdict moved and every run agreed within each result; flaky: some runs
    passed and some did not (a stochastic verdict); new / gone: in one result only"""
    before_status: str | None
    status: str | None
    before: list[Annotated[int, Field(ge=0)]] | None
    """[passes, runs] in the baseline"""
    now: list[Annotated[int, Field(ge=0)]] | None
    """[passes, runs] now"""
    delta: float | None
    """share of passing runs now minus then"""


class Moved(Model):
    """What moved since a baseline bench result (``bench --baseline``); descriptive."""

    baseline: str | None
    """the baseline file as given"""
    baseline_agent: str | None
    same_benchmark: bool
    changed: Annotated[int, Field(ge=0)]
    flaky: Annotated[int, Field(ge=0)]
    note: str
    tasks: list[MovedTask]


class BenchDocument(Document):
    """
    Written by `agentverity-props bench --format json` and BenchResult.to_dict() (version 2; version
    1 files are migrated on load). Exit code: 0 every task passed, 1 a task failed or errored, 2
    incomplete (budget, interrupt, failed call) or a task UNDECIDED at the --runs cap (sequential
    mode).
    """

    TITLE: ClassVar[str] = "agentverity-props benchmark result"
    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = \
        {"agentverity_props.bench/1": migrate_bench_v1}


    schema_: Annotated[Literal["agentverity_props.bench/2"], Field(alias="schema")]
    agent: str
    benchmark: Benchmark
    complete: bool
    exit_code: Literal[0, 1, 2]
    stop_reason: str
    config: Config
    guarantee: str
    """what the verdicts promise (error rate and assumption), as printed"""
    summary: Summary
    calls: Calls
    tasks: list[Task]
    ledger: dict[str, Any]
    tokens: Tokens | None = None
    """Token usage per phase and its cost (absent in files written before it)."""
    privacy: str
    moved: Moved | None = None
    """with --baseline OLD.json: per task, what moved since that result (descriptive)"""
