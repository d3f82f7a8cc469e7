"""What a conversation is checked for: invariants on every turn, and conversation relations.

An :class:`Invariant` is a predicate on one turn in its conversation (a :class:`TurnContext`:
the user turns so far and the agent's observations of them); it is checked at the last turn
of every conversation prefix the state machine builds. A :class:`ConversationRelation` edits
an earlier part of the conversation (insert an irrelevant turn, repeat a turn, paraphrase one)
and says the *last* turn's verdict must not change.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .._internal.renamed import renamed
from ..errors import InvalidArgument
from ..observation import LAYERS, Observation, ToolCall

__all__ = ["ConversationRelation", "Invariant", "TurnContext", "insert_irrelevant",
           "never_before", "paraphrase_turn", "repeat_turn"]


@dataclass(frozen=True)
class TurnContext:
    """One turn of one draw of a conversation: the user turns up to it and the agent's
    observation of each (the last one is the turn checked)."""

    messages: tuple[str, ...]
    observations: tuple[Observation, ...]

    @property
    def turn(self) -> int:
        """The checked turn, counted from 1."""
        return len(self.messages)

    @property
    def reply(self) -> Observation:
        return self.observations[-1]

    def tool_calls(self) -> list[tuple[int, ToolCall]]:
        """Every tool call of the conversation so far, in order, with its turn (from 1)."""
        return [(i + 1, t) for i, obs in enumerate(self.observations) for t in obs.tools]


@dataclass(frozen=True, init=False)
class Invariant:
    """A predicate every turn must satisfy (``fn(ctx) -> bool``, True when it holds).

    Args:
        name: short identifier (reports, the exception class ``<Name>Violation``).
        fn: the predicate on a :class:`TurnContext`; must be deterministic.
        allowed_rate: the share of draws on which the predicate may fail without it being
            a violation (default 0: it must never fail; a draw that fails is still confirmed
            by fresh replays before it is reported). The test's H0 is ``P(violated) <=
            allowed_rate``.
        description: one line for reports.
        tolerance: the deprecated old name of ``allowed_rate`` (a ``DeprecationWarning``).
    """

    name: str
    fn: Callable[[TurnContext], bool]
    allowed_rate: float = 0.0
    description: str = ""

    def __init__(self, name: str, fn: Callable[[TurnContext], bool],
                 allowed_rate: float | None = None, description: str = "", *,
                 tolerance: float | None = None) -> None:
        rate = renamed("Invariant", "tolerance", "allowed_rate", tolerance, allowed_rate)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "allowed_rate", 0.0 if rate is None else rate)
        object.__setattr__(self, "description", description)
        self.__post_init__()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgument("Invariant name must be a non-empty string")
        if not callable(self.fn):
            raise InvalidArgument(f"Invariant {self.name!r}: fn must be callable(ctx) -> bool")
        rate = self.allowed_rate
        if rate.__class__ is bool or not isinstance(rate, (int, float)) \
                or not (0.0 <= rate < 0.5):
            raise InvalidArgument(f"Invariant {self.name!r}: allowed_rate={rate!r} "
                                  "must be in [0, 0.5)")

    @property
    def tolerance(self) -> float:
        """Deprecated: :attr:`allowed_rate`."""
        warnings.warn("Invariant.tolerance is deprecated, use Invariant.allowed_rate",
                      DeprecationWarning, stacklevel=2)
        return self.allowed_rate

    def holds(self, ctx: TurnContext) -> bool:
        return bool(self.fn(ctx))

    def key(self) -> tuple[str, ...]:
        # the published key spelling: the draws a store recorded keep their identity
        return ("invariant", self.name, f"tolerance={self.allowed_rate!r}",
                _callable_key(self.fn))

    def to_dict(self) -> dict[str, Any]:
        # "tolerance": the conversation result's published field (conversation/1)
        return {"kind": "invariant", "name": self.name, "tolerance": self.allowed_rate,
                "description": self.description}


def never_before(tool: str, *, required: str, name: str | None = None) -> Invariant:
    """Invariant: every successful call to ``tool`` in a turn comes after a successful call to
    ``required`` earlier in the same conversation (this turn or an earlier one).

    >>> inv = never_before("issue_refund", required="lookup_order")
    >>> ctx = TurnContext(("refund 1002",), (Observation(tools=(ToolCall("issue_refund"),)),))
    >>> inv.holds(ctx)
    False
    """
    if not tool or not required:
        raise InvalidArgument("never_before needs a tool name and required=<tool name>")

    def fn(ctx: TurnContext) -> bool:
        seen = False
        for turn, call in ctx.tool_calls():
            if call.status != "success":
                continue
            if call.name == required:
                seen = True
            elif call.name == tool and turn == ctx.turn and not seen:
                return False
        return True

    fn.__qualname__ = f"never_before({tool!r}, required={required!r})"
    return Invariant(name or f"{tool}_after_{required}", fn,
                     description=f"never calls {tool} before {required} in this conversation")


Kind = Literal["insert", "repeat", "paraphrase"]


@dataclass(frozen=True)
class ConversationRelation:
    """An edit of an earlier turn that must not change the last turn's verdict.

    ``insert``: put ``choices[i]`` before turn ``p`` (an irrelevant turn; ``p`` may be the
    last turn, so the insertion lands right before it); ``repeat``: say earlier turn ``p``
    twice; ``paraphrase``: replace earlier turn ``p`` by one of ``variants(text)``. The state
    machine draws ``p`` and the choice, so Hypothesis shrinks them with the conversation.
    """

    name: str
    kind: Kind
    choices: tuple[str, ...] = ()
    variants: Callable[[str], Sequence[str]] | None = None
    layer: str = "verdict"
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("insert", "repeat", "paraphrase"):
            raise InvalidArgument(f"ConversationRelation kind={self.kind!r}; use insert, "
                                  "repeat or paraphrase")
        if self.kind == "insert" and not self.choices:
            raise InvalidArgument(f"relation {self.name!r}: insert needs choices=[turn, ...]")
        if self.kind == "paraphrase" and self.variants is None:
            raise InvalidArgument(f"relation {self.name!r}: paraphrase needs variants=fn")
        if self.layer not in LAYERS:
            raise InvalidArgument(f"relation {self.name!r}: layer={self.layer!r}; use one of "
                                  + ", ".join(LAYERS))

    def options(self, turns: Sequence[str], position: int) -> list[str]:
        """The edits available at ``position`` (the inserted turns, the paraphrases)."""
        if self.kind == "insert":
            return list(self.choices)
        if position >= len(turns) - 1:
            return []
        if self.kind == "repeat":
            return [turns[position]]
        assert self.variants is not None
        return [v for v in self.variants(turns[position]) if v != turns[position]]

    def positions(self, n_turns: int) -> int:
        """How many positions the edit can take in an ``n_turns`` conversation: an insertion
        goes before any turn up to the last one; a repeat or paraphrase edits an earlier
        turn."""
        return n_turns if self.kind == "insert" else n_turns - 1

    def apply(self, turns: Sequence[str], position: int, choice: str) -> tuple[str, ...]:
        t = list(turns)
        if not 0 <= position < self.positions(len(t)) or len(t) < 2:
            raise InvalidArgument(f"relation {self.name!r}: position {position} is not an "
                                  f"earlier turn of a {len(t)}-turn conversation")
        if self.kind == "insert":
            t.insert(position, choice)
        elif self.kind == "repeat":
            t.insert(position + 1, t[position])
        else:
            t[position] = choice
        return tuple(t)

    def key(self) -> tuple[str, ...]:
        return ("relation", self.name, self.kind, self.layer,
                _callable_key(self.variants) if self.variants else "-")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "relation", "name": self.name, "edit": self.kind, "layer": self.layer,
                "description": self.description}


def insert_irrelevant(choices: Sequence[str], *, name: str = "irrelevant_turn") -> \
        ConversationRelation:
    """Inserting one of ``choices`` (small talk) before an earlier turn must not change the
    last turn's verdict."""
    return ConversationRelation(name, "insert", tuple(choices),
                                description="an irrelevant turn inserted earlier must not "
                                            "change the last turn's verdict")


def repeat_turn(*, name: str = "repeated_turn") -> ConversationRelation:
    """Saying an earlier turn twice must not change the last turn's verdict."""
    return ConversationRelation(name, "repeat",
                                description="repeating an earlier turn must not change the "
                                            "last turn's verdict")


def paraphrase_turn(variants: Callable[[str], Sequence[str]] | Mapping[str, Sequence[str]], *,
                    name: str = "paraphrased_turn") -> ConversationRelation:
    """Replacing an earlier turn by a paraphrase (``variants(text)`` or a mapping text ->
    paraphrases) must not change the last turn's verdict."""
    if isinstance(variants, Mapping):
        table = {k: tuple(v) for k, v in variants.items()}

        def fn(text: str) -> Sequence[str]:
            return table.get(text, ())
        fn.__qualname__ = "paraphrases" + repr(sorted(table.items()))[:200]
        return ConversationRelation(name, "paraphrase", variants=fn,
                                    description="a paraphrased earlier turn must not change "
                                                "the last turn's verdict")
    return ConversationRelation(name, "paraphrase", variants=variants,
                                description="a paraphrased earlier turn must not change the "
                                            "last turn's verdict")


def _callable_key(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    base = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
    if code is None:
        return base
    cells = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            cells.append(repr(cell.cell_contents)[:200])
        except ValueError:
            cells.append("<empty>")
    return f"{base}@{code.co_firstlineno}:{hash(code.co_code)}|{'|'.join(cells)}"
