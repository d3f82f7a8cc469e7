"""The order of a relation decision: the one copy of it.

Every relation decision of ``run`` and of ``@agent_property`` takes the same steps in the same
order, written once here (:func:`decide_in_order`); what each step does on its inputs is the
caller's :class:`Steps`:

1. **deterministic** — on the meter's certificate of a deterministic verdict, one follow-up
   draw a pair, audited by spaced re-draws (relations/_screen.py ``screen_once``); True when
   it screened every pair.
2. **screen** — every (input, follow-up) pair's own evidence: ``run`` screens the probe set
   at the profile's size and beta (relations/_screen.py); ``@agent_property`` screened each
   generated example while Hypothesis ran it (:class:`~agentverity_props.relations.
   RelationDecider`), so its step has nothing left to do.
3. **local** — the flagged inputs tested one by one at the local share of alpha
   (``localise``; a property's flagged examples decided in full).
4. **pooled** — each relation's pooled effect over the inputs, scoring the earlier steps'
   draws before drawing more (relations/_pooled.py).

A profile without a screen (``quick``) takes one pooled epoch in place of the screen (unless
the deterministic path screened every pair; that epoch, like every later one, is a uniform
sample of the inputs: relations/_pooled.py), then tests the ``QUICK_LOCAL`` inputs of each
relation most unlike their sources in it among the drawn ones whose draws differ beyond
chance, then the pooled epochs. ``tests/unit/
test_one_relation_procedure.py`` fails if a second copy of this order appears.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from .._internal.outcome import CandidateStatus

if TYPE_CHECKING:
    from ..engine import Engine, EvidencePool
    from ._draws import EffectJob
    from ._pooled import PooledEffects

#: Inputs of each relation tested one by one under a profile without a screen (``quick``):
#: the most suspicious after the first pooled epoch of those whose draws differ beyond chance
#: (relations/_pooled.py ``beyond_chance``).
QUICK_LOCAL = 3


class Steps(Protocol):
    """What each step of a relation decision does (module docstring)."""

    async def deterministic(self) -> bool: ...

    async def screen(self) -> None: ...

    async def local(self, *, most: int | None) -> None: ...

    async def pooled(self, *, max_epochs: int | None) -> None: ...


async def decide_in_order(steps: Steps, *, screened: bool, deterministic: bool) -> None:
    """Take the steps of a relation decision in their one order (module docstring)."""
    det = deterministic and await steps.deterministic()
    if screened:
        await steps.screen()
        await steps.local(most=None)
    else:
        if not det:
            await steps.pooled(max_epochs=1)
        await steps.local(most=QUICK_LOCAL)
    await steps.pooled(max_epochs=None)


class RunSteps:
    """``run``'s steps over one probe set (diagnose/_run.py ``run_relations``).

    Args:
        engine / pool: where draws come from and go.
        jobs: one pooled job per exercised relation.
        pooled: the pooled test, prepared (``PooledEffects.prepare``) before any step.
        local_alpha: the family-wise alpha of the inputs tested one by one.
        seq_local: the jobs whose flagged inputs are tested sequentially (on a recording the
            invariant relations are tested on every recorded draw by the pooled test).
        screen_beta: the screen's beta (the profile's).
        pair: the meter's pair disagreement (the screen's noise prior).
        flip_bound: the meter's bound on a draw's flip rate, when the deterministic path
            may be taken (None: it may not).
        spacing: calls an audited re-draw comes after its probe's first draw at least.
        max_rounds: rounds an input tested on its own may take.
    """

    def __init__(self, engine: Engine, pool: EvidencePool, jobs: Sequence[EffectJob],
                 pooled: PooledEffects, *, local_alpha: float, seq_local: Sequence[EffectJob],
                 screen_beta: float, pair: float | None, flip_bound: float | None,
                 spacing: int, max_rounds: int, seed: int = 0,
                 progress: Callable[[int], None] | None = None,
                 confirm_all: bool = False) -> None:
        self.engine, self.pool, self.jobs, self.pooled_test = engine, pool, list(jobs), pooled
        self.local_alpha, self.seq_local = local_alpha, list(seq_local)
        self.screen_beta, self.pair, self.flip_bound = screen_beta, pair, flip_bound
        self.spacing, self.max_rounds, self.seed = spacing, max_rounds, seed
        self.progress, self.confirm_all = progress, confirm_all

    async def deterministic(self) -> bool:
        from ._screen import screen_once

        if self.flip_bound is None or self.engine.stopping:
            return False
        ok = await screen_once(self.engine, self.pool, self.jobs, flip_bound=self.flip_bound,
                               seed=self.seed, progress=self.progress, spacing=self.spacing)
        for j in self.jobs:
            j.deterministic_path = ("taken" if j.screen_path else "") if ok else (
                "refused: an audited re-draw differed from its probe's first draw (the "
                "meter's certificate does not hold for these draws)")
        if ok:
            # every pair is screened: the first epoch needs no quiet screen's follow-ups,
            # and visits every input, as before any profile had sampled epochs
            self.pooled_test.first_follow_ups = 0
            self.pooled_test.sampled = False
        return ok

    async def screen(self) -> None:
        from ._screen import screen

        if not self.engine.stopping:
            await screen(self.engine, self.pool, self.jobs, beta=self.screen_beta,
                         pair_disagreement=self.pair, seed=self.seed, progress=self.progress)

    async def local(self, *, most: int | None) -> None:
        from ._pooled import localise

        jobs = self.seq_local if most is None else [j for j in self.jobs if not j.unexercised]
        if jobs and not self.engine.stopping:
            await localise(self.engine, self.pool, jobs, alpha=self.local_alpha,
                           max_rounds=self.max_rounds, seed=self.seed, progress=self.progress,
                           most=most, confirm_all=self.confirm_all,
                           sampled=self.pooled_test.sampled)

    async def pooled(self, *, max_epochs: int | None) -> None:
        if max_epochs is None:
            # a relation with a confirmed counterexample is decided: one epoch shows its
            # effect
            for j in self.jobs:
                j.settled = any(c.outcome.status == CandidateStatus.CONFIRMED
                                for c in j.candidates)
        await self.pooled_test.run(max_epochs=max_epochs)
