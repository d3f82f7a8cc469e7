
"""The ``counterexample`` result file format."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model
from ._common import CandidateCounts
from ._run import Alternative


class Confirmation(CandidateCounts):
    """The candidate's decision (the two e-processes of the per-candidate test; the same
    fields as a run outcome's ``decision``, every one optional here: older files lack some)."""

    test: str | None = None
    call: Literal["pass", "confirmed", "undecided", "incomplete"] | None = None
    alpha: float | None = None
    beta: float | None = None
    alternative: Alternative | None = None
    e_violation: Annotated[float | None, Field(ge=0.0)] = None
    k: Annotated[int | None, Field(ge=0)] = None
    p_value: Annotated[float | None, Field(ge=0.0, le=1.0)] = None


class Counterexample(Model):
    """A confirmed violating input: the minimal one, or the first one found."""

    relation: str
    rtype: Literal["invariant", "monotone", "directional"]
    source: str
    follow_up: str
    source_value: str | None
    follow_up_value: str | None
    confirmation: Confirmation
    example: str
    calls_at_confirmation: Annotated[int, Field(ge=0)]


class Reproduce(Model):
    example: str | None
    seed: Any
    store: str | None
    hint: str | None


class Test(Model):
    test: str
    agent: str
    status: Literal["passed", "failed", "error", "inconclusive"]
    alpha: float
    alpha_candidate: float
    max_candidates: Annotated[int, Field(ge=0)]
    calls: Annotated[int, Field(ge=0)]
    replayed: Annotated[int, Field(ge=0)]
    shrink_calls: Annotated[int, Field(ge=0)]
    candidates: Annotated[int, Field(ge=0)]
    confirmations: Annotated[int, Field(ge=0)]
    raw_violations: Annotated[int, Field(ge=0)]
    confirmed: Annotated[int, Field(ge=0)]
    undecided: Annotated[int, Field(ge=0)]
    budget_exhausted: bool
    minimal: Counterexample | None
    first: Counterexample | None
    reproduce: Reproduce
    warnings: list[str]
    privacy: str
    effects: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """
    Per relation: its pooled effect over the distinct examples the test generated (estimate, bounds,
    tolerance, status; docs/statistics.md §3). Absent in files written before it.
    """
    shrink_complete: bool | None = None
    """
    False when the budget ran out during the test: `minimal` is then the smallest failing input
    found, not known to be minimal. Absent in files written before it.
    """


class CounterexampleDocument(Document):
    """
    Written by the pytest plugin with --agentverity-report PATH (and counterexample_report()).
    Minimal and first inputs are kept verbatim because the user's own test fails on them.
    """

    TITLE: ClassVar[str] = "agentverity-props property-test outcomes and minimal counterexamples"


    schema_: Annotated[
        Literal["agentverity_props.counterexample/1"], Field(alias="schema")
    ]
    tests: list[Test]
