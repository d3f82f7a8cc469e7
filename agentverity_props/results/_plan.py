
"""The ``plan`` result file format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model
from ._common import PriceUsed
from ._migrations import migrate_plan_v1


class Config(Model):
    epsilon: float
    alpha: float
    tolerance: float
    budget: int | None
    max_workers: Annotated[int, Field(ge=1)]
    layer: str
    seed: int
    latency_s: float | None
    profile: str | None = None
    """The profile the run is planned under (absent in files written before profiles)."""
    budget_margin: Annotated[float, Field(ge=0.0)] | None = None
    """The share added to a budget at a noise above zero, for an agent unlike the synthetic
    one (absent in files written before it)."""


class Reach(Model):
    budget: int | None
    reached: Annotated[int, Field(ge=0)]
    decisions: dict[str, int]


class WallS(Model):
    mean: float
    low: float
    high: float


class PlanTokens(Model):
    input: WallS
    output: WallS
    total: WallS


class TokensPerCall(Model):
    """Mean tokens of one call: stated, or measured on a store or an earlier report."""

    input: Annotated[float, Field(ge=0.0)]
    output: Annotated[float, Field(ge=0.0)]
    source: str
    calls: Annotated[int, Field(ge=1)] | None
    """how many recorded calls the mean is over (null: stated)"""


class Spread(Model):
    mean: Annotated[float, Field(ge=0.0)]
    se: Annotated[float, Field(ge=0.0)]
    median: Annotated[float, Field(ge=0.0)]
    low: Annotated[float, Field(ge=0.0)]
    high: Annotated[float, Field(ge=0.0)]


class Calls(Model):
    meter: Spread
    blindness: Spread
    dependence: Spread
    relations: Spread
    stationarity: Spread | None = None
    """The changed-agent check's late trials (absent in files written before it)."""
    total: Spread


class ScreenPrice(Model):
    """The per-input screen at this noise: follow-up draws that clear one (input, relation)
    pair (a violation of 'size' beyond the noise ruled out at error 1 - 'power'): median and
    90th percentile; source draws per input (shared by its relations); the follow-ups added
    beyond the first sweep's; the share of pairs the screen's cap leaves not screened. Null:
    no simulated pair cleared within the cap."""

    size: float
    power: float
    follow_ups: int | None
    follow_ups_p90: int | None
    sources: int | None
    added_follow_ups: int | None
    not_screened_pct: Annotated[int, Field(ge=0, le=100)]


class PlanJudge(Model):
    per_answer: Annotated[float, Field(ge=0.0)]
    """The judge's mean calls on one answer (its consensus rule, simulated)."""
    calls: WallS
    """The judge's calls at this level: mean, low and high."""


class Level(Model):
    noise: Annotated[float, Field(ge=0.0, lt=1.0)]
    """The pair disagreement planned for: the figure run prints over the whole run."""
    flip: Annotated[float, Field(ge=0.0, lt=1.0)]
    """The synthetic agent's per-call flip share that gives that pair disagreement."""
    seeds: Annotated[int, Field(ge=1)]
    calls: Calls
    reach: dict[str, Reach]
    """
    Decision ('meter', 'blindness', 'relation:NAME', 'run') -> the budget every simulated run took
    it within (null: not taken in every run), how many runs took it, and what they decided.
    """
    tokens: PlanTokens | None = None
    """The level's total calls x the tokens per call (only with a tokens-per-call)."""
    cost: WallS | None = None
    """Those tokens at the price given (only with --price)."""
    wall_s: WallS | None = None
    budget_enough: bool | None = None
    screen: ScreenPrice | None = None
    judge: PlanJudge | None = None
    """With a judge (docs/judges.md): its calls per answer under its consensus rule and its
    calls at this level (the agent's calls times that), their own phase."""


class PlanDocument(Document):
    """
    Written by agentverity-props plan --format json (PlanResult.to_dict()). No agent was called:
    every figure comes from the run pipeline on a synthetic offline agent; 'assumptions' states what
    it assumes. Inputs are counted, never stored.
    """

    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = \
        {"agentverity_props.plan/1": migrate_plan_v1}
    TITLE: ClassVar[str] = (
        "agentverity-props plan: the calls a run will need, simulated before any call")


    schema_: Annotated[Literal["agentverity_props.plan/2"], Field(alias="schema")]
    inputs: Annotated[int, Field(ge=1)]
    """Distinct inputs in the probe set."""
    relations: list[str]
    exercised: dict[str, Annotated[int, Field(ge=0)]]
    """Relation name -> inputs its transform changes."""
    config: Config
    hold_floor: Annotated[int, Field(ge=0)]
    """The fewest calls besides the meter's before any HOLDS is possible (exact)."""
    tokens_per_call: TokensPerCall | None = None
    """What one call takes (absent in files written before it; null: not given)."""
    price: PriceUsed | None = None
    """The price per 1,000 tokens given (--price), or null."""
    levels: Annotated[list[Level], Field(min_length=1)]
    assumptions: list[str]
    warnings: list[str] = Field(default_factory=list)
    """What to know before trusting the plan (e.g. a noise estimate too thin to plan with)."""
