"""Parts shared by several result kinds."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._base import Model

__all__ = ["CandidateCounts", "EngineSettings", "RateStats", "Stationarity"]


class Stationarity(Model):
    """
    The changed-agent health check (docs/statistics.md): the meter's pairs against later draws.
    Absent in files written before it.
    """

    status: Literal["changed", "not detected", "incomplete", "not run", "suppressed"]
    estimand: str
    guarantee: str
    alpha: float
    early_bound: Annotated[float, Field(ge=0.0, le=1.0)]
    early_pairs: Annotated[int, Field(ge=0)]
    early_disagreements: Annotated[int, Field(ge=0)]
    early_calls: Annotated[int, Field(ge=0)]
    late_trials: Annotated[int, Field(ge=0)]
    late_mean: float | None
    e_value: float | None
    calls: Annotated[int, Field(ge=0)]
    source: str
    fired_call: Annotated[int, Field(ge=0)]
    warning: str


class TokenPart(Model):
    """The tokens of one phase's successful live calls (or of all of them)."""

    calls: Annotated[int, Field(ge=0)]
    """successful live calls"""
    calls_reporting: Annotated[int, Field(ge=0)]
    """of which the adapter reported a token count"""
    input: Annotated[int, Field(ge=0)] | None
    """input tokens (null: not reported, or not split from output by the adapter)"""
    output: Annotated[int, Field(ge=0)] | None
    total: Annotated[int, Field(ge=0)] | None
    """null: no call reported tokens (never 0 for "not reported")"""
    cost: Annotated[float, Field(ge=0)] | None
    """at the price given (null: no price, or no input/output split)"""


class PriceUsed(Model):
    """The price the user gave (per 1,000 tokens)."""

    model: str | None
    input_per_1k: Annotated[float, Field(ge=0)]
    output_per_1k: Annotated[float, Field(ge=0)]
    currency: str


class Tokens(TokenPart):
    """
    Token usage of this run's live calls as the adapter reported it, in total and per phase, and
    its cost at the user's price. Replayed draws are free and not counted. Absent in files written
    before it.
    """

    phases: dict[str, TokenPart]
    """per phase (the phases the calls are counted in); empty when the command has none"""
    reported: bool
    """false: the adapter reported no usage (the totals are null, not 0)"""
    adapter_cost: float | None
    """the sum of the costs the adapter itself reported, when it did"""
    price: PriceUsed | None
    note: str
    """what the totals cover (calls without usage, no input/output split), or empty"""


class EngineSettings(Model):
    """How a bench or compare run called its agents (both kinds' ``config``)."""

    alpha: float
    include_outputs: bool
    max_workers: Annotated[int, Field(ge=0)]
    timeout_s: float | None
    retries: Annotated[int, Field(ge=0)]
    error_policy: str
    store_mode: str
    seed: int


class RateStats(Model):
    """The counts, interval and call statistics of a pass rate: a bench or compare task, or
    their summary over tasks."""

    passes: Annotated[int, Field(ge=0)]
    failures: Annotated[int, Field(ge=0)]
    errors: Annotated[int, Field(ge=0)]
    ci_low: Annotated[float, Field(ge=0.0, le=1.0)]
    ci_high: Annotated[float, Field(ge=0.0, le=1.0)]
    error_rate: Annotated[float | None, Field(ge=0.0, le=1.0)]
    latency_p50_s: float | None
    latency_p95_s: float | None
    tokens: int | None
    cost_usd: float | None


class CandidateCounts(Model):
    """The evidence of a per-candidate decision (a run outcome's ``decision``, a
    counterexample's ``confirmation``): its other e-processes, the draws on each side and the
    anytime-valid p-value."""

    e_pass: Annotated[float | None, Field(ge=0.0)] = None
    e_reverse: Annotated[float | None, Field(ge=0.0)] = None
    """The reverse e-process of a two-sided candidate (a follow-up more decided than its
    source); null for a one-sided candidate."""
    follow_up_violations: Annotated[int | None, Field(ge=0)] = None
    follow_up_draws: Annotated[int | None, Field(ge=0)] = None
    source_violations: Annotated[int | None, Field(ge=0)] = None
    source_draws: Annotated[int | None, Field(ge=0)] = None
    rounds: Annotated[int | None, Field(ge=0)] = None
