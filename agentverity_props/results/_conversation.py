
"""The ``conversation`` result file format."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model


class Reproduce(Model):
    seed: Any
    blob: str | None
    """Hypothesis's @reproduce_failure(...) line"""
    hint: str | None


class Turn(Model):
    fp: str
    """fingerprint of the user turn"""
    text: str | None
    """the user turn, only with include_inputs"""
    verdict: str | None
    """the agent's verdict at this turn, on one violating replay"""
    tools: list[str]
    """tools the agent called at this turn, in order"""


class Counterexample(Model):
    check: str
    kind: Literal["invariant", "relation"]
    description: str
    n_turns: Annotated[int, Field(ge=1)]
    turns: list[Turn]
    """the minimal conversation, turn by turn"""
    follow_up: list[Turn]
    """relations: the edited conversation"""
    edit: dict[str, Any]
    """relations: the edit (kind, 1-based position)"""
    source_value: str | None
    follow_up_value: str | None
    decision: dict[str, Any]
    """the candidate test's state when it stopped (e-values, draws, the alternative)"""
    calls_at_confirmation: Annotated[int, Field(ge=0)]


class Test(Model):
    test: str
    agent: str
    status: Literal["running", "passed", "failed", "inconclusive", "error"]
    alpha: float
    alpha_candidate: float
    beta: float
    max_candidates: int
    max_turns: int
    calls: int
    """agent turns called (live)"""
    turn_draws: int
    replayed: int
    shrink_calls: int
    examples: int
    candidates: int
    """(conversation, check) decisions made"""
    confirmations: int
    raw_violations: int
    confirmed: int
    undecided: int
    budget_exhausted: bool
    minimal: list[Counterexample]
    """one minimal conversation per violated check"""
    first: Counterexample | None
    reproduce: Reproduce
    warnings: list[str]
    privacy: str


class ConversationDocument(Document):
    """
    Written by conversation_report() and the pytest plugin (--agentverity-conversation-report PATH).
    User turns are fingerprints unless include_inputs is true; agent answers are never kept.
    """

    TITLE: ClassVar[str] = (
        "agentverity-props conversation tests and their minimal failing conversations")


    schema_: Annotated[
        Literal["agentverity_props.conversation/1"], Field(alias="schema")
    ]
    include_inputs: bool
    tests: list[Test]
