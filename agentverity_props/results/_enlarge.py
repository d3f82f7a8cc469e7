"""The ``enlarge`` result file format (``agentverity-props enlarge --report FILE``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model
from ._common import Tokens

__all__ = ["AddedOrigin", "BoundaryFound", "BoundaryPair", "EnlargeDocument", "GrammarSummary",
           "OriginEdit"]

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


class OriginEdit(Model):
    """One edit from a parent probe toward an added input."""

    kind: str
    """``number``, ``swap``, ``lexicon``, ``insert``, ``delete``, ``splice``, ``add_item`` or
    ``generated`` (from your generator)."""
    before: str
    after: str
    slot: str
    """What was edited, in the probes' words ("number after 'cost'")."""
    origin: str
    """Where the new value came from ("probe 4", "lexicon city", "x10")."""
    at: _Count
    """Character offset of the edit in the text it was applied to."""


class AddedOrigin(Model):
    """Where an added input came from: its parent probe and the edits from it."""

    text: str
    verdict: str
    parent: str
    edits: list[OriginEdit]
    describe: str
    shared_words: _Share
    """The share of the input's distinct words its parent probe holds too."""
    evidence: dict[str, Any] | None = None
    """Its confirmation test (absent in files written before it): see
    ``EnlargeDocument.evidence``."""


class BoundaryFound(Model):
    """A boundary location: the adjacent pair on the edit path from a probe to an added input
    whose verdicts differ, and the crossing edit."""

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
    parent: str
    find: str


class GrammarSummary(Model):
    """What the probe grammar learned from the probes."""

    probes: _Count
    number_slots: dict[str, _Count]
    classes: list[str]
    insertions: _Count
    clauses: _Count
    lexicons: list[str]


def migrate_enlarge_v1(d: dict[str, Any]) -> dict[str, Any]:
    """enlarge/1 (a pack search only) -> enlarge/2 (the source, origins and boundaries)."""
    return {**d, "source": "strategy",
            "origins": [], "boundaries": [], "grammar": None,
            "calls_to_first_minority": None}


class EnlargeDocument(Document):
    """Written by ``agentverity-props enlarge --report FILE`` and ``EnlargeResult.to_dict()``.
    The added inputs and boundary pairs are kept verbatim (they are the product); the
    original inputs only as a count."""

    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = \
        {"agentverity_props.enlarge/1": migrate_enlarge_v1}
    TITLE: ClassVar[str] = "agentverity-props enlarged probe set"

    schema_: Annotated[Literal["agentverity_props.enlarge/2"], Field(alias="schema")]
    success: bool
    """The enlarged set was decided not blind (the blindness test ``run`` uses) with its
    modal share at or under the target, before the budget ran out. (In files written before
    ``status``: its single-draw modal share was below the threshold.)"""
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
    tokens: Tokens | None = None
    """Token usage per phase and its cost (absent in files written before it)."""
    cause: str | None
    source: str
    """What generated the added inputs: ``probes`` (learned from your probes, the default),
    ``pack:NAME`` or ``strategy``."""
    origins: list[AddedOrigin]
    """Each added input's parent probe and edits (from-probes search)."""
    boundaries: list[BoundaryFound]
    """Every boundary location tried: the adjacent pair, the crossing edit, its decision."""
    grammar: GrammarSummary | None
    calls_to_first_minority: _Count | None
    advice: str | None = None
    """What to try when the search added too little (e.g. words the probes never use)."""
    status: Literal["ok", "blind", "undecided", "suppressed"] | None = None
    """The enlarged set's blindness: ``ok`` decided not blind, ``blind``, ``undecided``
    (absent in files written before it)."""
    blindness_before: dict[str, Any] | None = None
    """The starting set's blindness test, as ``run`` reports it (``share``, ``ci_low``,
    ``ci_high``, ``status``, ``alpha``, ``method``)."""
    blindness_after: dict[str, Any] | None = None
    """The enlarged set's blindness test (the same shape)."""
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    """Each added input's confirmation: ``text``, ``verdict``, ``draws`` (fresh draws after
    the one that selected it), ``agreeing``, ``e_value``, ``threshold`` (``1/alpha``),
    ``alpha`` (the finds' share over every candidate the budget can test), ``test``."""
    tested: _Count | None = None
    """Candidates whose first draw was a minority verdict, each tested."""
    alphas: dict[str, float] = Field(default_factory=dict)
    """The alpha of each candidate's test (``find``), of the boundary pairs, and of each
    blindness test."""
    privacy: str
