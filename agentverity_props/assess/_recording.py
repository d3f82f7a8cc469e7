"""Recorded evidence, whatever tool made it: inputs, each with its draws in the order they
were made, and how that order is known.

A :class:`Recording` is what every reader (promptfoo export, JSONL, the record store)
produces and what :func:`~agentverity_props.assess.assess` replays. It never calls an
agent; it only says what was observed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._internal.settings import setting
from ..errors import BadInput

if TYPE_CHECKING:
    from ..observation import Observation

__all__ = ["RecordedDraw", "RecordedInput", "Recording", "group_draws"]


@dataclass(frozen=True)
class RecordedDraw:
    """One recorded answer: the input it answered, where it falls in the draw order (None =
    unknown) and what was observed (a failed call is an observation with ``error`` set)."""

    text: str
    order: int | None
    observation: Observation
    where: str = ""


@dataclass(frozen=True)
class RecordedInput:
    """One input and its draws, first draw first."""

    text: str
    draws: tuple[Observation, ...]
    #: each draw's index in the engine's order (a record store's own); None: 0, 1, 2, ...
    indices: tuple[int, ...] | None = None

    def counts(self, layer: str = "verdict") -> Counter[str]:
        """Verdicts (or texts, tool sequences) of the draws that gave one."""
        return Counter(k for k in (o.key(layer) for o in self.draws) if k is not None)

    @property
    def failures(self) -> int:
        return sum(o.error is not None for o in self.draws)


@dataclass(frozen=True)
class Recording:
    """Evidence recorded elsewhere, ready to be assessed without calling any agent.

    Attributes:
        source: the format it came from (``promptfoo``, ``jsonl``, ``store``).
        agent: the identity the report names (a provider id, a store's agent...).
        inputs: every input, in the order of its first draw.
        order: how the draw order was taken (said in the report's notes).
        order_known: False when the file does not say in which order the draws were made.
        notes: what the reader left out or noticed, one sentence each.
        follow_ups: recorded draws of texts that are not in the probe set but are relations'
            follow-ups of its inputs (a record store's: ``run`` draws them, they are not
            probes of the meter).
        exact_replay: the draws are a ``run``'s own (a record store): they are replayed in
            ``run``'s schedule, so the same seed and workers give the run's decisions. Else
            (a file) each relation's pooled effect is decided once on every recorded draw.
    """

    source: str
    agent: str
    inputs: tuple[RecordedInput, ...]
    order: str
    order_known: bool = True
    notes: tuple[str, ...] = field(default=())
    follow_ups: tuple[RecordedInput, ...] = field(default=())
    exact_replay: bool = False

    @property
    def draws(self) -> int:
        return sum(len(i.draws) for i in self.inputs + self.follow_ups)

    def texts(self) -> list[str]:
        return [i.text for i in self.inputs]

    def split(self, layer: str = "verdict") -> list[RecordedInput]:
        """The inputs whose recorded draws gave more than one answer at ``layer``."""
        return [i for i in self.inputs if len(i.counts(layer)) > 1]

    def summary(self, layer: str = "verdict") -> dict[str, object]:
        """What was recorded, for the report (inputs by fingerprint only)."""
        from ..engine import Probe

        # each entry says whether it is an input of the probe set or a relation's follow-up:
        # a count of inputs never counts follow-ups
        per_input = [{"fp": Probe.make(i.text).fp, "draws": len(i.draws),
                      "failures": i.failures, "counts": dict(i.counts(layer)),
                      "follow_up": n >= len(self.inputs)}
                     for n, i in enumerate(self.inputs + self.follow_ups)]
        return {"source": self.source, "agent": self.agent, "inputs": len(self.inputs),
                "follow_ups": len(self.follow_ups),
                "draws": self.draws,
                "failed_draws": sum(i.failures for i in self.inputs + self.follow_ups),
                "order": self.order, "order_known": self.order_known,
                "notes": list(self.notes), "per_input": per_input}


def group_draws(draws: Iterable[RecordedDraw], *, source: str, agent: str, order: str,
                where: str, notes: Sequence[str] = ()) -> Recording:
    """Draws grouped by input text, each input's draws sorted by their order, inputs in the
    order of their first draw. Either every draw has an order or none has (then the file's
    own order is kept and ``order_known`` is False); two draws with the same order are
    refused (the order would be ambiguous)."""
    items = list(draws)
    if not items:
        raise BadInput(f"{where} holds no recorded draw", "pass a file with at least one "
                       "answer per input (two or more to measure anything)")
    known = [d for d in items if d.order is not None]
    if known and len(known) != len(items):
        missing = next(d for d in items if d.order is None)
        raise BadInput(f"{missing.where or where}: no draw order, while other draws have one",
                       f"give every draw its order, or none (and say {setting('file_order')})")
    order_known = bool(known)
    if order_known:
        seen: dict[int, RecordedDraw] = {}
        for d in items:
            assert d.order is not None
            if d.order in seen:
                raise BadInput(f"{d.where or where}: draw order {d.order} is also the order of "
                               f"{seen[d.order].where or 'another draw'}",
                               "give each draw a distinct order (the sequence the calls "
                               "were made in)")
            seen[d.order] = d
        items = sorted(items, key=lambda d: d.order if d.order is not None else 0)
    by_text: dict[str, list[Observation]] = {}
    for d in items:
        by_text.setdefault(d.text, []).append(d.observation)
    inputs = tuple(RecordedInput(t, tuple(obs)) for t, obs in by_text.items())
    return Recording(source=source, agent=agent, inputs=inputs, order=order,
                     order_known=order_known, notes=tuple(notes))


def observed(output: object, extractor: object, *, latency_s: float = 0.0,
             verdict: str | None = None, tools: Sequence[object] | None = None) -> Observation:
    """The observation of one recorded answer, its verdict taken as ``run`` takes it (the
    extractor: default, ``--verdict-key`` or ``--verdict-regex``). A string holding a JSON
    object is also read as that object, so ``--verdict-key`` works on a model's JSON answer.
    An answer of another type is a failed draw (``bad_output``), never a verdict. A recorded
    ``verdict`` is the verdict (no extraction); ``tools`` are names or
    ``{"name", "arguments", "status"}`` objects, in call order."""
    import json

    from ..errors import AgentCallError
    from ..observation import CallFailure, Observation, coerce_output

    try:
        obs = coerce_output(output)
        calls = coerce_output({"tools": list(tools)}).tools if tools is not None else obs.tools
    except AgentCallError as exc:
        return Observation(error=CallFailure("bad_output", str(exc)))
    raw = obs.raw
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            parsed = json.loads(output)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            raw = parsed
    obs = Observation(obs.text, obs.verdict, calls, raw, latency_s)
    if verdict is not None:
        return Observation(obs.text, verdict, calls, raw, latency_s)
    return extractor.apply(obs)  # type: ignore[attr-defined]


def failed(kind: str, message: str) -> Observation:
    """A recorded draw that failed (a provider error): incomplete evidence, never a verdict."""
    from ..observation import CallFailure, Observation

    return Observation(error=CallFailure(kind, " ".join(message.split())[:500]))
