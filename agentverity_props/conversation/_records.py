"""Results of conversation tests: minimal failing conversations and per-test records.

Plain data with a versioned ``to_dict`` (schema ``ConversationDocument.SCHEMA``, JSON
Schema in ``docs/schemas/conversation-1.json``), read by the renderers of
:mod:`agentverity_props.report` and by the pytest plugin's summary.

Privacy: a record keeps each user turn's fingerprint and, only when ``include_inputs`` is
set, its text; agent answers are never kept (verdicts and tool names are).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal.fingerprint import fingerprint
from ..engine import Configurable
from ..relations import CandidateRecord
from ..results import ConversationDocument

if TYPE_CHECKING:
    from ..engine import EngineConfig

CONVERSATION_SCHEMA = ConversationDocument.SCHEMA

#: a conversation test's call budget (every turn of every replay) when none is given
DEFAULT_CONVERSATION_BUDGET = 20_000


def _conversation_engine() -> EngineConfig:
    from ..engine import EngineConfig
    return EngineConfig(budget=DEFAULT_CONVERSATION_BUDGET)


@dataclass(frozen=True, kw_only=True)
class ConversationConfig(Configurable):
    """Everything a conversation test can be told (:func:`conversation_machine`, or the
    ``config`` attribute of an :class:`AgentStateMachine`).

    ``max_turns`` is the steps per example, ``alpha`` the family-wise false-violation rate of
    the run, ``beta`` each candidate's false-pass rate against its alternative,
    ``max_candidates`` the Bonferroni family (default ``max_examples * (max_turns + 1) +
    200``), ``seed`` seeds the replays' draws. How the agent is called is the nested
    ``engine`` (default ``EngineConfig(budget=20000)``; its budget counts every turn of every
    replay, its error policy must stay ``record``, its extractor reads a turn's verdict).

    >>> from agentverity_props.engine import EngineConfig
    >>> ConversationConfig(engine=EngineConfig(budget=300, fail_fast=1)).engine.fail_fast
    1
    >>> ConversationConfig(max_turns=0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentverity_props.errors.InvalidArgument: ConversationConfig: max_turns=0 must be an int ...
    """

    max_turns: int = 6
    alpha: float = 0.05
    beta: float = 0.01
    max_candidates: int | None = None
    seed: int = 0
    engine: EngineConfig = field(default_factory=_conversation_engine)

    def __post_init__(self) -> None:
        from ..engine import EngineConfig
        from ..errors import InvalidArgument

        def bad(msg: str) -> InvalidArgument:
            return InvalidArgument(f"ConversationConfig: {msg}")

        if not isinstance(self.engine, EngineConfig):
            raise bad(f"engine must be an EngineConfig, got {type(self.engine).__name__}; "
                      "pass engine=EngineConfig(...)")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not (0.0 < value < 0.5):
                raise bad(f"{name}={value!r} must be in (0, 0.5), e.g. 0.05")
        if self.engine.budget is not None and self.engine.budget < 2:
            raise bad(f"budget={self.engine.budget!r} must be >= 2 or None (no cap)")
        if not _is_int(self.max_turns) or self.max_turns < 1:
            raise bad(f"max_turns={self.max_turns!r} must be an int >= 1, e.g. 6")
        if self.max_candidates is not None and (
                not _is_int(self.max_candidates) or self.max_candidates < 1):
            raise bad(f"max_candidates={self.max_candidates!r} must be an int >= 1 or None")
        if not _is_int(self.seed):
            raise bad(f"seed={self.seed!r} must be an int")
        if self.engine.error_policy != "record":
            raise bad("engine error_policy must be 'record' (a failed call is incomplete "
                      "evidence, never a verdict); drop error_policy='raise'")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

__all__ = ["CONVERSATION_SCHEMA", "RECORDS", "ConversationCounterexample",
           "ConversationRecord", "TurnEvidence", "conversation_report",
           "records"]


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


def records() -> list[ConversationRecord]:
    """A copy of this process's conversation test records, oldest first (the plugin's channel,
    as ``agentverity_props.property.records``)."""
    with RECORDS_LOCK:
        return list(RECORDS)
