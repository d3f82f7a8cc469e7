
"""The ``check`` result file format."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model
from ._common import Stationarity, Tokens


class Snapshot(Model):
    created_at: str
    agent: str
    epsilon: float
    alpha: float
    indifference: float
    layer: str
    inputs: Annotated[int, Field(ge=0)]
    calls: dict[str, Any]
    same_agent: bool | None
    calibration_source: Literal["independent", "admission"] | None = None
    migrated_from: str | None = None


class InadmissibleItem(Model):
    rule: Literal["input-set", "extractor", "verdict-deterministic", "complete"]
    message: str


class Admission(Model):
    rule: Literal["sprt"]
    call: Literal["low", "high"] | None
    """low = re-admitted"""
    p0: float
    p1: float
    alpha: float
    n: Annotated[int, Field(ge=0)]
    mismatches: Annotated[int, Field(ge=0)]
    e_value: float | None
    estimand: str | None = None
    guarantee: str | None = None


class Stability(Model):
    """the meter rerun when the screen could not re-admit"""

    call: str | None = None
    calls: Annotated[int | None, Field(ge=0)] = None
    pairs: Annotated[int | None, Field(ge=0)] = None
    ci_low: float | None = None
    ci_high: float | None = None
    advice: str | None = None
    complete: bool | None = None


class Drift(Model):
    inputs: Annotated[int, Field(ge=0)]
    fps: list[str]
    tolerance: float
    alpha_per_input: float
    method: str
    untestable: list[str]
    """inputs the snapshot lists as untestable: screened, never called drift"""
    guarantee: str


class Screen(Model):
    draws: Annotated[int, Field(ge=0)]
    matches: Annotated[int, Field(ge=0)]
    failures: Annotated[int, Field(ge=0)]


class Confirmation(Model):
    draws: Annotated[int, Field(ge=0)]
    mismatches: Annotated[int, Field(ge=0)]
    failures: Annotated[int, Field(ge=0)]
    k: Annotated[int, Field(ge=0)]
    c: Annotated[int, Field(ge=0)]
    p_value: float | None
    """
    exact p-value of the curtailed test: the full k draws would have reached at least the observed
    mismatches (<= alpha_per_input exactly when drift is reported)
    """
    p_family: float | None
    """
    p_value times the number of inputs (Bonferroni), capped at 1: <= alpha exactly when drift is
    reported
    """


class Calibration(Model):
    draws: Annotated[int, Field(ge=0)]
    mismatches: Annotated[int, Field(ge=0)]


class Input(Model):
    fp: str
    status: Literal["clean", "drift", "noise", "incomplete", "unconfirmed", "unscreened"]
    reference: str
    current: str | None
    """most common non-reference answer seen"""
    screen: Screen
    confirmation: Confirmation
    note: str
    snapshot_status: Literal["stable", "borderline", "untestable"]
    calibration: Calibration | None


class Calls(Model):
    total: Annotated[int, Field(ge=0)]
    screen: Annotated[int, Field(ge=0)]
    stability: Annotated[int, Field(ge=0)]
    confirm: Annotated[int, Field(ge=0)]
    full_rerun_estimate: Annotated[int, Field(ge=0)]
    """calls the snapshot cost (meter + blindness + reference draws)"""
    saved: int
    """full_rerun_estimate - total (negative when the check had to rerun the meter)"""
    change: Annotated[int | None, Field(ge=0)] = None
    """calls of the changed-during-the-check trials (absent in files written before it)"""


class CheckDocument(Document):
    """
    Written by `agentverity-props check --format json` and CheckResult.to_dict(). status clean (exit
    0), drift (exit 1), inadmissible or incomplete (exit 2; the failed rules are in inadmissible).
    Version 2: each input is tested against its own recorded mismatch rate from the snapshot's
    calibration (and the tolerance); p-values account for the curtailed stopping rule.
    """

    TITLE: ClassVar[str] = "agentverity-props snapshot check"


    schema_: Annotated[Literal["agentverity_props.check/2"], Field(alias="schema")]
    agent: str
    status: Literal["clean", "drift", "changed", "inadmissible", "incomplete"]
    exit_code: Literal[0, 1, 2]
    snapshot: Snapshot
    inadmissible: list[InadmissibleItem]
    admission: Admission
    stability: Stability | None
    """the meter rerun when the screen could not re-admit"""
    drift: Drift
    inputs: list[Input]
    calls: Calls
    ledger: dict[str, Any]
    tokens: Tokens | None = None
    """Token usage per phase and its cost (absent in files written before it)."""
    privacy: str
    stationarity: Stationarity | None = None
    """
    The changed-agent health check (docs/statistics.md): the meter's pairs against later draws.
    Absent in files written before it.
    """
