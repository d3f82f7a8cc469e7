"""The ``boundary`` result file format (``agentverity-props boundary --format json``)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document
from ._common import Tokens

__all__ = ["BoundaryDocument"]

_Count = Annotated[int, Field(ge=0)]
_Share = Annotated[float, Field(ge=0.0, le=1.0)]


class BoundaryDocument(Document):
    """Written by ``agentverity-props boundary --format json``: the adjacent pair on the edit
    path between two inputs where the verdict flips, and how it was reached. The two inputs'
    texts are kept verbatim (they are the command's arguments and its product)."""

    TITLE: ClassVar[str] = "agentverity-props boundary location"

    schema_: Annotated[Literal["agentverity_props.boundary/1"], Field(alias="schema")]
    status: Literal["located", "undecided", "no-crossing", "incomplete"]
    low: str
    high: str
    low_verdict: str | None
    high_verdict: str | None
    edit: dict[str, Any]
    """The crossing edit: ``kind`` (number, replace, insert, delete), ``before``, ``after``,
    ``context`` / ``next`` (the words around it), ``position``, ``word`` (in a phrase)."""
    description: str
    """In the inputs' words: ``cost 1,990 → 2,010 flips approve → manager``."""
    steps: _Count
    calls: _Count
    reason: str
    decision: dict[str, Any] | None
    """The adjacent pair's relation-candidate decision (a run outcome's ``decision`` shape)."""
    step_error: _Share
    a_verdict: str | None
    b_verdict: str | None
    units: _Count
    step_log: list[dict[str, Any]]
    attempts: _Count
    lead: _Count
    resolution: float
    alpha: float
    stochastic: dict[str, Any] | None
    graded: bool
    tokens: Tokens | None = None
