"""Results of conversation tests: minimal failing conversations and per-test records.

Plain data with a versioned ``to_dict`` (schema ``agentverity_props.conversation/1``, JSON
Schema in ``docs/schemas/conversation-1.json``), read by the renderers of
:mod:`agentverity_props.report` and by the pytest plugin's summary.

Privacy: a record keeps each user turn's fingerprint and, only when ``include_inputs`` is
set, its text; agent answers are never kept (verdicts and tool names are).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .._internal.fingerprint import fingerprint
from ..relations import CandidateRecord

CONVERSATION_SCHEMA = "agentverity_props.conversation/1"

__all__ = ["CONVERSATION_SCHEMA", "RECORDS", "ConversationCounterexample",
           "ConversationRecord", "TurnEvidence", "conversation_report"]


@dataclass(frozen=True)
class TurnEvidence:
    """One turn of the minimal conversation, and what one violating replay did there."""

    text: str
    verdict: str | None
    tools: tuple[str, ...]

    def to_dict(self, *, include_inputs: bool) -> dict[str, Any]:
        return {"fp": fingerprint(self.text), "text": self.text if include_inputs else None,
                "verdict": self.verdict, "tools": list(self.tools)}


@dataclass
class ConversationCounterexample:
    """A confirmed violation of one check on one conversation (the minimal one once Hypothesis
    has shrunk it)."""

    check: str
    kind: str                                  # "invariant" | "relation"
    description: str
    turns: tuple[TurnEvidence, ...]            # the conversation (a violating replay's answers)
    decision: dict[str, Any]
    calls_at_confirmation: int
    follow_up: tuple[TurnEvidence, ...] = ()   # relations: the edited conversation
    edit: dict[str, Any] = field(default_factory=dict)
    source_value: str | None = None
    follow_up_value: str | None = None

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    def to_dict(self, *, include_inputs: bool = False) -> dict[str, Any]:
        return {"check": self.check, "kind": self.kind, "description": self.description,
                "n_turns": self.n_turns,
                "turns": [t.to_dict(include_inputs=include_inputs) for t in self.turns],
                "follow_up": [t.to_dict(include_inputs=include_inputs) for t in self.follow_up],
                "edit": dict(self.edit), "source_value": self.source_value,
                "follow_up_value": self.follow_up_value, "decision": self.decision,
                "calls_at_confirmation": self.calls_at_confirmation}


@dataclass(kw_only=True)
class ConversationRecord(CandidateRecord):
    """What one conversation test run spent and found."""

    beta: float
    max_turns: int
    turn_draws: int = 0
    examples: int = 0
    first: ConversationCounterexample | None = None
    minimal: dict[str, ConversationCounterexample] = field(default_factory=dict)
    blob: str | None = None

    def reproduce(self) -> dict[str, Any]:
        return {"seed": self.seed, "blob": self.blob,
                "hint": ("add the @reproduce_failure(...) line above the machine class (or "
                         "@seed(...)) to rerun this conversation; decisions are made again "
                         "with fresh draws") if self.minimal else None}

    def to_dict(self, *, include_inputs: bool = False) -> dict[str, Any]:
        return {
            **self.counters(), "beta": self.beta, "max_turns": self.max_turns,
            "turn_draws": self.turn_draws, "examples": self.examples,
            "minimal": [ce.to_dict(include_inputs=include_inputs)
                        for ce in self.minimal.values()],
            "first": self.first.to_dict(include_inputs=include_inputs) if self.first else None,
            "reproduce": self.reproduce(),
            "privacy": ("user turns kept verbatim" if include_inputs else
                        "user turns as fingerprints (include_inputs=True keeps their text)")
                       + "; agent answers never kept",
        }


def conversation_report(records: list[ConversationRecord], *, include_inputs: bool = False
                        ) -> dict[str, Any]:
    """The versioned JSON document of conversation tests and their minimal conversations."""
    return {"schema": CONVERSATION_SCHEMA, "include_inputs": include_inputs,
            "tests": [r.to_dict(include_inputs=include_inputs) for r in records]}


#: records of every conversation test run in this process (the pytest plugin reads them)
RECORDS: list[ConversationRecord] = []
RECORDS_LOCK = threading.Lock()
