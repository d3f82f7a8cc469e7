"""What the relation procedures of ``run`` share (the pooled epochs, the per-input screen,
the local tests): one relation's job, and drawing a plan of (probe, index) pairs."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import DrawStopped, EvidenceExhausted
from ._model import Relation, RelationResult

if TYPE_CHECKING:
    from ..decide import EffectTest, FixedEffect
    from ..engine import Engine, EvidencePool, Probe
    from ..observation import Observation
    from ._procedure import Candidate

#: Scores a relation's pooled test may use before it is undecided.
MAX_SCORES = 1500


@dataclass
class EffectJob:
    """One relation's candidates and its pooled test."""

    result: RelationResult
    candidates: list[Candidate]
    #: the sequential test; on a recording, the fixed-sample one (relations/_pooled.py)
    test: EffectTest | FixedEffect
    note: str = ""
    incomplete: bool = False
    by_input: dict[str, list[Candidate]] = field(default_factory=dict)
    unexercised: str = ""
    #: the per-input screen's outcome per candidate id (relations/_screen.py); None: the
    #: relation was not screened (VIOLATED by its pooled test, or not exercised)
    screen: dict[int, str] | None = None
    #: the per-input screen of each candidate (by id), begun before the first epoch
    pairs: dict[int, Any] = field(default_factory=dict)
    #: the engine's call count when the pooled test decided
    decided_at: int | None = None
    #: the violation the per-input screen rules out (the profile's ``screen_size``)
    screen_size: float = 0.5
    #: the screen's beta (the profile's ``screen_beta``)
    screen_beta: float = 0.05
    #: set when the screen took the deterministic path (relations/_screen.py screen_once):
    #: the meter's bound on a draw's flip rate and the audit's size
    screen_path: dict[str, Any] | None = None
    #: ``taken``, ``refused: why``, or empty (not tried)
    deterministic_path: str = ""

    #: a relation already VIOLATED by a confirmed input: its pooled test runs one epoch
    #: only (for the printed effect and bounds), since no pooled decision can change it
    settled: bool = False

    @property
    def live(self) -> bool:
        if self.settled and self.test.batches >= 1:
            return False
        return (self.test.status == "undecided" and not self.incomplete
                and not self.unexercised and self.test.scores() < MAX_SCORES)


def two_sided(rel: Relation) -> bool:
    """Whether the relation is symmetric in source and follow-up (both score sides)."""
    return rel.rtype == "invariant" and rel.check is None


async def draw_all(engine: Engine, pool: EvidencePool, plan: Sequence[tuple[Probe, int]], *,
                   rng: random.Random | None = None,
                   exhausted: set[tuple[str, int]] | None = None
                   ) -> dict[tuple[str, int], Observation]:
    """Make the draws of ``plan`` concurrently and add them to ``pool``. With ``rng`` they
    start in an order drawn from it: the source and follow-up of a round are never tied to
    neighbouring call positions. A draw the recording does not hold is noted in
    ``exhausted``; one an interrupt stopped is left out."""
    order = list(plan)
    if rng is not None:
        rng.shuffle(order)
    out: dict[tuple[str, int], Observation] = {}

    async def one(p: Probe, i: int) -> None:
        if engine.stopping:
            return
        try:
            obs = await engine.draw(p, i)
        except EvidenceExhausted:
            if exhausted is not None:
                exhausted.add((p.fp, i))
            return
        except DrawStopped:
            return
        pool.add(p.fp, i, obs)
        out[(p.fp, i)] = obs

    await asyncio.gather(*(one(p, i) for p, i in order))
    return out
