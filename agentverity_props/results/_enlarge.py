"""The ``enlarge`` result file format (``agentverity-props enlarge --report FILE``)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model

__all__ = ["BoundaryPair", "EnlargeDocument"]

_Count = Annotated[int, Field(ge=0)]
_Share = Annotated[float, Field(ge=0.0, le=1.0)]


class BoundaryPair(Model):
    """An input and an edit of it on which the agent's verdict differs beyond its noise."""

    source: str
    follow_up: str
    edit: dict[str, Any]
    source_verdict: str
    follow_up_verdict: str
    decision: dict[str, Any]
    """The relation candidate's decision (the same shape as a run outcome's ``decision``)."""


class EnlargeDocument(Document):
    """Written by ``agentverity-props enlarge --report FILE`` and ``EnlargeResult.to_dict()``.
    The added inputs and boundary pairs are kept verbatim (they are the product); the
    original inputs only as a count."""

    SCHEMA: ClassVar[str] = "agentverity_props.enlarge/1"
    TITLE: ClassVar[str] = "agentverity-props enlarged probe set"
    FILE: ClassVar[str] = "enlarge.schema.json"

    schema_: Annotated[Literal["agentverity_props.enlarge/1"], Field(alias="schema")]
    success: bool
    """The enlarged set's modal share is below the blindness threshold."""
    complete: bool
    stop_reason: str
    threshold: Annotated[float, Field(gt=0.5, lt=1.0)]
    target_share: _Share
    modal_verdict: str | None
    skew_before: _Share | None
    skew_after: _Share | None
    distribution_before: dict[str, _Count]
    distribution_after: dict[str, _Count]
    original: _Count
    added: list[str]
    boundary_pairs: list[BoundaryPair]
    calls: _Count
    phase_calls: dict[str, _Count]
    budget: _Count
    ledger: dict[str, Any]
    cause: str | None
    privacy: str
