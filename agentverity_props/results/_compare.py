
"""The ``compare`` result file format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model
from ._bench import Attempt, Benchmark
from ._common import EngineSettings, RateStats, Tokens
from ._migrations import migrate_compare_v1


class Config(EngineSettings):
    max_runs: Annotated[int, Field(ge=0)]
    min_runs: Annotated[int, Field(ge=0)]
    budget_per_agent: int | None
    latency_margin: Annotated[float, Field(ge=0.0)]
    """a latency win needs the other call to take more than 1 + this times as long"""
    warmup: Annotated[int, Field(ge=0)]
    """untimed calls per agent before the first round"""
    order_seed: int | None
    """seed of the random order within each paired run (null: version 1, fixed order)"""
    margin: float | None = None
    """
    equivalence margin on the mean pass-rate difference (absent in files written before equivalence
    was added)
    """


class Multiplicity(Model):
    method: str
    family_alpha: float | None
    """
    P(any printed verdict names a better agent where there is no difference) <= this; null for a
    migrated version 1 file (not family-wise)
    """
    verdicts: Annotated[int, Field(ge=0)]
    """pairs x metrics x (1 + tasks)"""
    pairs: Annotated[int, Field(ge=0)]
    metrics: list[str]
    tasks: Annotated[int, Field(ge=0)]
    weights: dict[str, float]
    """
    share of alpha per pair: pass_rate, error_rate, latency (overall), equivalence (the pass rate
    within the margin; absent in older files) and per_task (all per-task verdicts)
    """
    alpha_per_verdict: dict[str, float | None]
    """alpha of each overall verdict by metric, and of each per-task verdict"""


class Summary(RateStats):
    tasks: Annotated[int, Field(ge=0)]
    attempts: Annotated[int, Field(ge=0)]
    reliability: Annotated[float | None, Field(ge=0.0, le=1.0)]
    ci_method: str
    pass_at_k: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]]
    """k (as a string) -> estimate"""
    pass_hat_k: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]]
    """k (as a string) -> estimate"""
    consistency: Annotated[float | None, Field(ge=0.0, le=1.0)]


class Task(RateStats):
    id: str
    name: str
    runs: Annotated[int, Field(ge=0)]
    reliability: Annotated[float | None, Field(ge=0.0, le=1.0)]
    """passes / runs"""
    ci_method: str
    """
    clopper-pearson (exact), wilson, or the anytime-valid beta-mixture confidence sequence when the
    task stopped early
    """
    confidence: Annotated[float, Field(ge=0.0, le=1.0)]
    pass_at_k: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]]
    """unbiased pass@k = 1 - C(n-c,k)/C(n,k) for k in 1,2,3,5,10,n (<= n)"""
    pass_hat_k: dict[str, Annotated[float, Field(ge=0.0, le=1.0)]]
    """unbiased pass^k = C(c,k)/C(n,k)"""
    consistency: Annotated[float | None, Field(ge=0.0, le=1.0)]
    """share of the most common literal answer among successful runs"""
    attempts: list[Attempt]


class Warmup(Model):
    calls: Annotated[int, Field(ge=0)]
    errors: Annotated[int, Field(ge=0)]
    latency_s: list[float]


class Agent(Model):
    label: str
    agent: str
    summary: Summary
    tasks: list[Task]
    ledger: dict[str, Any]
    tokens: Tokens | None = None
    """Token usage per phase and its cost (absent in files written before it)."""
    ref: str
    """the agent as the user named it (the CLI reference)"""
    warmup: Warmup


class FurtherRuns(Model):
    """for an inconclusive verdict: further rounds likely to decide it (80% power)"""

    rounds: int | None
    items: int | None
    power: float
    note: str
    max_runs_hint: int | None = None


class Equivalence(Model):
    """
    two one-sided betting e-processes of H+: Delta >= margin and H-: Delta <= -margin at the
    equivalence alpha; equivalent once both reached 1/alpha
    """

    verdict: Literal["equivalent within the margin", "not shown"]
    margin: float
    alpha: float
    threshold: float
    e_value_upper: float | None
    e_value_lower: float | None
    upper_at_round: int | None
    lower_at_round: int | None
    decided_at_round: int | None
    hypotheses: str


class Metric(Model):
    """One metric of a pair (or of one task of a pair): its verdict and evidence."""

    verdict: str
    """'<label> better' or 'inconclusive'"""
    better: str | None
    wins: Annotated[int, Field(ge=0)]
    """items won by a"""
    losses: Annotated[int, Field(ge=0)]
    """items won by b"""
    ties: Annotated[int, Field(ge=0)]
    """concordant items"""
    items: Annotated[int, Field(ge=0)]
    discordant: Annotated[int, Field(ge=0)]
    rounds: Annotated[int, Field(ge=0)]
    e_value: float | None
    threshold: float
    """1/alpha"""
    alpha: float
    effect: float | None
    """observed difference; positive favours a (see effect_label)"""
    effect_label: str
    interval: Annotated[list[float], Field(max_length=2, min_length=2)]
    interval_method: str
    decided_at_round: int | None
    decided_e_value: float | None
    further_runs: FurtherRuns | None
    """for an inconclusive verdict: further rounds likely to decide it (80% power)"""
    verdict_e_value: float | None
    """
    the e-value the verdict rests on: at the decision once decided (latched), else the current
    e-value
    """


class PassRateMetric(Metric):
    """The pass-rate metric: a verdict may also be equivalence (``--margin``)."""

    verdict: str
    """'<label> better', 'equivalent within ±<margin>' or 'inconclusive'"""
    equivalence: Equivalence | None = None
    """
    two one-sided betting e-processes of H+: Delta >= margin and H-: Delta <= -margin at the
    equivalence alpha; equivalent once both reached 1/alpha
    """


class TaskMetrics(Model):
    pass_rate: Metric
    error_rate: Metric
    latency: Metric


class Metrics(TaskMetrics):
    # a pair's overall metrics: the pass rate may also be shown equivalent
    pass_rate: PassRateMetric


class PairTask(Model):
    id: str
    name: str
    metrics: TaskMetrics


class Order(Model):
    """completed paired runs in which each agent ran first (null: version 1, fixed order)"""

    a_first: Annotated[int, Field(ge=0)]
    b_first: Annotated[int, Field(ge=0)]


class Pair(Model):
    a: str
    b: str
    a_agent: str
    b_agent: str
    metrics: Metrics
    latency_median_difference_s: float | None
    """median of latency(a) - latency(b) over items where both calls succeeded"""
    tasks: list[PairTask]
    a_ref: str
    b_ref: str
    order: Order | None
    """completed paired runs in which each agent ran first (null: version 1, fixed order)"""
    latency_median_ratio: float | None
    """median of a's latency / b's latency over items where both succeeded"""


class Calls(Model):
    total: Annotated[int, Field(ge=0)]
    per_agent: dict[str, Annotated[int, Field(ge=0)]]
    max_planned: Annotated[int, Field(ge=0)]
    warmup: Annotated[int, Field(ge=0)]


class Design(Model):
    order: str
    latency: str
    warmup: str


class CompareDocument(Document):
    """
    Written by `agentverity-props compare --format json` and CompareResult.to_dict(). Agents are
    labelled A, B, C... in command-line order; A is the baseline. Within each paired run the agents
    go in a seeded random order; one family-wise alpha covers every verdict (overall and per task).
    Exit code: 0 no later agent is worse than A on pass rate, 1 one is (regression), 2 incomplete.
    """

    TITLE: ClassVar[str] = "agentverity-props comparison result"
    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = \
        {"agentverity_props.compare/1": migrate_compare_v1}


    schema_: Annotated[Literal["agentverity_props.compare/2"], Field(alias="schema")]
    """compare/1 files are migrated to this version on load (agentverity-props report)"""
    benchmark: Benchmark
    complete: bool
    exit_code: Literal[0, 1, 2]
    stop_reason: str
    rounds: Annotated[int, Field(ge=0)]
    """runs of every task per agent"""
    config: Config
    multiplicity: Multiplicity
    agents: list[Agent]
    pairs: list[Pair]
    regressions: list[str]
    calls: Calls
    privacy: str
    design: Design
    guarantee: str
    """the error rate every printed verdict shares, and its assumption"""
    winners: list[str]
    """every verdict (overall or per task) that names a better agent"""
