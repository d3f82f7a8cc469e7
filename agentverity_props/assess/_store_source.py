"""The project's own record store (``--store PATH`` of ``run``, ``snapshot``...) as a
:class:`Recording`.

The store keeps fingerprints, never prompt texts, so the inputs come from a probe set file:
each input's draws are the store's rows of its fingerprint, in draw-index order (the order
the engine planned them in). Every input of the probe set is kept, drawn or not: with the
recording run's seed and workers, the decisions then ask for exactly the draws run made.
Only rows recorded under the same verdict extraction are used (a recording made with one
extractor is never read under another); a store holding several agents needs ``agent`` to
say which.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._internal.settings import setting
from ..errors import BadInput
from ._recording import RecordedInput, Recording

if TYPE_CHECKING:
    from ..relations import Relation

__all__ = ["load_store"]


def load_store(path: str | Path, inputs: Sequence[str], *, extractor_id: str,
               agent: str | None = None,
               relations: Sequence[Relation] | None = None) -> Recording:
    """The draws of ``inputs`` in the store at ``path``, and of their follow-ups under
    ``relations`` (None: the built-ins, as ``run``'s default): the store keeps fingerprints,
    so a follow-up's draws are found through the relation's transform of each input.

    Raises:
        BadInput: not a store, several agents and none chosen, or no draw of these inputs
            under this extraction.
    """
    from ..engine import Probe
    from ..store import Store

    p = Path(path)
    with Store(p, create=False, read_only=True) as store:
        rows = list(store.rows())
    agents = sorted({r.agent for r in rows})
    if not agents:
        raise BadInput(f"store {p} holds no recorded draw",
                       f"record with {setting('run_store')} first")
    if agent is None:
        if len(agents) > 1:
            raise BadInput(f"store {p} holds draws of {len(agents)} agents "
                           f"({', '.join(agents[:5])})", f"choose one with {setting('agent_id')}")
        agent = agents[0]
    elif agent not in agents:
        raise BadInput(f"store {p} has no draws of agent {agent!r}",
                       f"use one of {', '.join(agents[:5])}")
    mine = [r for r in rows if r.agent == agent]
    extractors = sorted({r.extractor for r in mine})
    mine = [r for r in mine if r.extractor == extractor_id]
    if not mine:
        raise BadInput(f"store {p} has draws of {agent} only under the verdict extraction(s) "
                       f"{', '.join(extractors)}, not {extractor_id}",
                       f"pass the {setting('verdict')} the draws were recorded with")
    by_fp: dict[str, list[tuple[int, object]]] = {}
    for r in mine:
        by_fp.setdefault(r.fp, []).append((r.draw_index, r.observation))
    recorded: list[RecordedInput] = []
    absent = 0
    for text in inputs:
        draws = sorted(by_fp.pop(Probe.make(text).fp, []), key=lambda t: t[0])
        absent += not draws
        # kept even without draws: the probe set is the one the draws were planned on, so
        # the same seed picks the same inputs (a pick of this one finds no evidence)
        recorded.append(RecordedInput(text, tuple(o for _, o in draws),  # type: ignore[misc]
                                      tuple(i for i, _ in draws)))
    follow_ups: list[RecordedInput] = []
    for text in _follow_up_texts(inputs, relations):
        draws = sorted(by_fp.pop(Probe.make(text).fp, []), key=lambda t: t[0])
        if draws:
            follow_ups.append(RecordedInput(text, tuple(o for _, o in draws),  # type: ignore[misc]
                                            tuple(i for i, _ in draws)))
    notes = []
    if absent:
        notes.append(f"{absent} input(s) of the probe set have no recorded draw (a decision "
                     "that picks one finds no evidence)")
    if by_fp:
        notes.append(f"{len(by_fp)} recorded input(s) are neither in the probe set nor a "
                     "follow-up of one under the relations assessed (the store keeps "
                     "fingerprints only) and are left out")
    if absent == len(recorded):
        raise BadInput(f"store {p} has no draw of any input of the probe set",
                       f"pass the probe set the draws were recorded with ({setting('inputs', '')})")
    return Recording(source="store", agent=agent, inputs=tuple(recorded),
                     order="draw index (the order the engine planned the draws in)",
                     notes=tuple(notes), follow_ups=tuple(follow_ups), exact_replay=True)


def _follow_up_texts(inputs: Sequence[str], relations: Sequence[Relation] | None) -> list[str]:
    """Every relation's transform of every input that is not itself an input, first seen
    first (a transform that fails on an input has no follow-up there)."""
    from ..relations import builtin_relations, every_follow_up

    probes = set(inputs)
    out: dict[str, None] = {}
    for r in builtin_relations() if relations is None else relations:
        for t in inputs:
            try:
                made = every_follow_up(r, t)  # each kind of a family a run may have tried
            except Exception:
                continue
            for y in made:
                if y not in probes:
                    out.setdefault(y, None)
    return list(out)
