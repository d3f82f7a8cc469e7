
"""The ``snapshot`` result file format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from ._base import Document, Model
from ._common import Stationarity, Tokens
from ._migrations import migrate_snapshot


class Rule(Model):
    rule: Literal["complete", "verdict-deterministic", "not-blind", "independent-draws",
                  "unchanged-agent", "required-verdicts", "accepted"]
    passed: bool
    message: str


class Admission(Model):
    admitted: bool
    rules: list[Rule]


#: a positive, finite number (what check's statistics divide by and take logarithms of)
Positive = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


class Config(Model):
    epsilon: Positive
    alpha: Positive
    indifference: Positive
    layer: Literal["verdict", "text", "tools"]
    extractor: str
    seed: int
    blindness_threshold: float


class Fingerprints(Model):
    scheme: Literal["sha256", "hmac-sha256"]
    salted: bool


class InputCalibration(Model):
    """
    fresh draws after the reference was fixed and how many differed from it; null when not
    calibrated (a refused snapshot)
    """

    draws: Annotated[int, Field(ge=0)]
    mismatches: Annotated[int, Field(ge=0)]
    failures: Annotated[int, Field(ge=0)]

    @model_validator(mode="after")
    def _mismatches_are_draws(self) -> InputCalibration:
        if self.mismatches > self.draws:
            raise ValueError(f"mismatches ({self.mismatches}) exceed draws ({self.draws})")
        return self


class Input(Model):
    fp: str
    reference: str | None
    """
    majority verdict (literal; a fingerprint at the text layer); null only in a refused snapshot
    """
    draws: Annotated[int, Field(ge=0)]
    counts: dict[str, Annotated[int, Field(ge=0)]]
    failures: Annotated[int, Field(ge=0)]
    flipped: bool
    calibration: InputCalibration | None
    """
    fresh draws after the reference was fixed and how many differed from it; null when not
    calibrated (a refused snapshot)
    """
    status: Literal["stable", "borderline", "untestable"] | None
    note: str


class Meter(Model):
    call: Literal["verdict-deterministic", "verdict-stochastic", "undecided"]
    calls: Annotated[int, Field(ge=0)]
    pairs: Annotated[int, Field(ge=0)]
    disagreements: Annotated[int, Field(ge=0)]
    estimate: float | None
    ci_low: float
    ci_high: float
    e_value: float | None
    guarantee: str
    stop_reason: str
    advice: str


class Calls(Model):
    """what creating the snapshot cost: check's full re-run estimate"""

    total: Annotated[int, Field(ge=0)]
    meter: Annotated[int, Field(ge=0)]
    blindness: Annotated[int, Field(ge=0)]
    reference: Annotated[int, Field(ge=0)]
    dependence: Annotated[int | None, Field(ge=0)] = None
    """the dependent-draws check's spaced blocks (a cache can make a noisy agent look
    deterministic; absent in files written before it)"""
    calibration: Annotated[int | None, Field(ge=0)] = None
    change: Annotated[int | None, Field(ge=0)] = None
    """
    late trials of the changed-agent check beyond the calibration round (0 unless the round leaned
    towards a change)
    """
    replayed: Annotated[int | None, Field(ge=0)] = None
    """
    draws the snapshot rests on that came from a store instead of a live call (a preview's,
    reused when it is accepted); the phases count live calls. Absent in files written before it.
    """


class CalibrationPlan(Model):
    draws_per_input: Annotated[int, Field(ge=0)]
    source: Literal["independent", "admission"]
    """
    independent: fresh draws after the references were fixed; admission: a migrated snapshot/1
    (admission counts of inputs that flipped)
    """
    tolerance: float | None = None
    alpha_per_input: float | None = None
    borderline: list[str] | None = None
    """
    fingerprints of inputs that flipped or had a calibration mismatch: tested against their own
    recorded rate
    """
    untestable: list[str] | None = None
    """
    fingerprints of inputs whose recorded rate is too close to 1/2 for drift to be confirmed: never
    called drift
    """
    note: str


class SnapshotDocument(Document):
    """
    Written by `agentverity-props snapshot` and create_snapshot(); read by `check`. Written only
    when admission.admitted is true (the command's --format json output shows refused ones too). No
    prompt is stored: inputs are identified by SHA-256 (HMAC-SHA-256 with AGENTVERITY_PROPS_SALT)
    fingerprints. Version 2 adds a calibration sample per input (fresh draws after the references
    were fixed): check tests each input against its own recorded mismatch rate.
    """

    TITLE: ClassVar[str] = "agentverity-props snapshot (regression reference)"
    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = \
        {"agentverity_props.snapshot/1": migrate_snapshot}


    schema_: Annotated[Literal["agentverity_props.snapshot/2"], Field(alias="schema")]
    """
    snapshot/1 files are still read: load_snapshot() migrates them in memory (see migrated_from)
    """
    created_at: Annotated[str, Field(json_schema_extra={"format": "date-time"})]
    """When the snapshot was written (ISO 8601, UTC)."""
    tool_version: str
    agent: str
    admission: Admission
    config: Config
    fingerprints: Fingerprints
    reference_form: Literal["literal", "fingerprint"]
    inputs: list[Input]
    meter: Meter
    blindness: dict[str, Any]
    """as in run.schema.json"""
    calls: Calls
    tokens: Tokens | None = None
    """Token usage per phase and its cost (absent in files written before it)."""
    """what creating the snapshot cost: check's full re-run estimate"""
    privacy: str
    migrated_from: str | None = None
    """present only on a document migrated in memory from an older version"""
    calibration: CalibrationPlan
    stationarity: Stationarity | None = None
    """
    The changed-agent health check (docs/statistics.md): the meter's pairs against later draws.
    Absent in files written before it.
    """
