"""Draws of whole conversations, made turn by turn through the engine.

A *draw* of a conversation ``C = (t1, ..., tk)`` is one replay: a fresh session, every user
turn sent in order, one engine draw per turn (so the budget, the ledger, concurrency and
timeouts count turns, the calls an agent really receives). Replays of one conversation are
numbered; replay ``r`` is the same transcript for every check that reads it.

The *screen* of an invariant that must never fail (``allowed_rate == 0``) *continues* the screen
of ``C[:-1]`` when the session can be copied (the state machine's own run of the example, one
new turn per step): a k-step example costs k calls to screen, not k(k+1)/2. That draw's prefix
was seen before (by the shorter conversation's decision); it may still feed the violation
e-process, because under that invariant's H0 (it never fails) it never fails after any prefix
either. Every other draw is a replay from the first turn, independent of everything seen.

:class:`ConversationDraws` offers the engine interface :class:`RelationDecider` uses
(``allocate``, ``draw``, ``can_afford``, ``stopping``) over three kinds of probe:

* ``last``: the agent's observation of the conversation's last turn (conversation relations);
* ``check``: an invariant at the last turn, as an Observation with verdict ``holds`` or
  ``violated``;
* ``virtual``: the invariant's null — ``violated`` with probability ``allowed_rate`` from this
  object's own ``random.Random`` — so an invariant is decided by the same two e-processes as a
  relation (H0: the conversation violates no more often than ``allowed_rate``). No agent call.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .._internal.fingerprint import fingerprint
from ..engine import Probe
from ..observation import Observation
from ._checks import Invariant, TurnContext
from ._session import Conversational, Session, SessionAdapter

if TYPE_CHECKING:
    from ..engine import Engine

Kind = Literal["last", "check", "virtual"]
HOLDS, VIOLATED = "holds", "violated"
#: The replay number of the lineage (the screens of "never" invariants, one turn per step).
LINEAGE = -1


def conversation_fp(turns: tuple[str, ...]) -> str:
    """The fingerprint of a conversation (its user turns, in order)."""
    return fingerprint(json.dumps(list(turns), ensure_ascii=False))


@dataclass(frozen=True)
class _Target:
    kind: Kind
    turns: tuple[str, ...]
    invariant: Invariant | None = None
    violation_rate: float = 0.0  # a virtual target: the rate it is violated at


class ConversationDraws:
    """Replays conversations through ``engine`` (module docstring)."""

    def __init__(self, engine: Engine, agent: Conversational, *, seed: int = 0,
                 max_turns: int = 8) -> None:
        self.engine = engine
        self.agent = agent
        self.max_turns = max_turns
        self._targets: dict[str, _Target] = {}
        self._counters: dict[str, int] = {}
        self._replays: dict[str, dict[int, tuple[Observation, ...]]] = {}
        self._lineage: dict[str, Session] = {}
        self._locks: dict[tuple[str, int], asyncio.Lock] = {}
        self._serial = asyncio.Lock()
        self._rng = random.Random(seed)
        self._turn_verdicts: dict[str, Counter[str]] = {}
        #: turn draws made (live calls and store replays)
        self.turn_draws = 0

    # -- probes --------------------------------------------------------------------------

    def last_probe(self, turns: tuple[str, ...]) -> Probe:
        fp = conversation_fp(turns)
        return self._register(Probe(turns[-1], fp + "#last"), _Target("last", turns))

    def check_probe(self, turns: tuple[str, ...], inv: Invariant) -> Probe:
        fp = conversation_fp(turns)
        key = fingerprint("\x1f".join(inv.key()))
        return self._register(Probe(turns[-1], f"{fp}#check:{key}"), _Target("check", turns, inv))

    def virtual_probe(self, allowed_rate: float) -> Probe:
        # the probe's published spelling: recorded virtual draws keep their identity
        return self._register(Probe("", f"virtual:tolerance={allowed_rate!r}"),
                              _Target("virtual", (), violation_rate=allowed_rate))

    def _register(self, probe: Probe, target: _Target) -> Probe:
        self._targets.setdefault(probe.fp, target)
        return probe

    # -- the engine interface RelationDecider uses ---------------------------------------

    def allocate(self, probe: Probe, n: int = 1) -> list[int]:
        start = self._counters.get(probe.fp, 0)
        self._counters[probe.fp] = start + n
        return list(range(start, start + n))

    @property
    def stopping(self) -> bool:
        return self.engine.stopping

    def can_afford(self, n: int) -> bool:
        # a draw is a replay of up to max_turns turns: never start one the budget cannot end
        return self.engine.can_afford(n * self.max_turns)

    async def draw(self, probe: Probe, index: int) -> Observation:
        target = self._targets[probe.fp]
        if target.kind == "virtual":
            return Observation(verdict=VIOLATED if self._rng.random() < target.violation_rate
                               else HOLDS)
        # the screen of a "never" invariant continues the shorter conversation's screen (see
        # the module docstring); every other draw is a replay from the first turn
        lineage = (index == 0 and target.kind == "check" and target.invariant is not None
                   and target.invariant.allowed_rate == 0)
        transcript = await self.replay(target.turns, LINEAGE if lineage else index)
        last = transcript[-1]
        if target.kind == "last" or len(transcript) < len(target.turns) or not last.ok:
            return last
        assert target.invariant is not None
        ctx = TurnContext(target.turns, transcript)
        return Observation(verdict=HOLDS if target.invariant.holds(ctx) else VIOLATED,
                           raw={"turn": ctx.turn})

    # -- replays -------------------------------------------------------------------------

    def transcripts(self, turns: tuple[str, ...]) -> dict[int, tuple[Observation, ...]]:
        """Every replay of ``turns`` made so far, by replay number."""
        return dict(self._replays.get(conversation_fp(turns), {}))

    async def replay(self, turns: tuple[str, ...], index: int) -> tuple[Observation, ...]:
        """Replay ``index`` of ``turns`` (made once, then reused): one observation per turn,
        shorter than ``turns`` when a turn failed (its observation, with the error, last)."""
        fp = conversation_fp(turns)
        done = self._replays.get(fp, {}).get(index)
        if done is not None:
            return done
        lock = self._locks.setdefault((fp, index), asyncio.Lock())
        async with lock:
            done = self._replays.get(fp, {}).get(index)
            if done is not None:
                return done
            out = await self._make(turns, fp, index)
            self._replays.setdefault(fp, {})[index] = out
            return out

    async def _make(self, turns: tuple[str, ...], fp: str, index: int
                    ) -> tuple[Observation, ...]:
        session: Session | None = None
        prefix: tuple[Observation, ...] = ()
        if index == LINEAGE and len(turns) > 1:
            parent = await self.replay(turns[:-1], LINEAGE)
            parent_session = self._lineage.get(conversation_fp(turns[:-1]))
            if len(parent) < len(turns) - 1 or not parent[-1].ok:
                return parent
            if parent_session is not None:
                session = parent_session.fork()
                prefix = parent
        start = len(prefix)
        if session is None:
            session = self.agent.open()
        out = list(prefix)
        keep = False
        # one call at a time (max_workers=1): whole replays in the order they were asked for,
        # so an agent drawing from one seeded Random answers the same on every run
        serial = self._serial if self.engine.config.max_workers == 1 else None
        if serial is not None:
            await serial.acquire()
        try:
            for j in range(start, len(turns)):
                key = (conversation_fp(turns[: j + 1]) + "#lineage" if index == LINEAGE
                       else f"{fp}#turn{j + 1}")
                obs = await self._turn(session, Probe(turns[j], key), max(index, 0))
                out.append(obs)
                # one new draw of the prefix turns[:j+1] (a continued replay's earlier turns
                # were counted when they were made)
                self._note_verdict(turns[: j + 1], obs)
                if not obs.ok:
                    break
            else:
                keep = index == LINEAGE
        finally:
            if serial is not None:
                serial.release()
            if keep and getattr(session, "forkable", True):
                self._lineage[fp] = session
            else:
                session.close()
        return tuple(out)

    async def _turn(self, session: Session, probe: Probe, index: int) -> Observation:
        token = SessionAdapter.using(session)
        try:
            obs = await self.engine.draw(probe, index)
        finally:
            SessionAdapter.release(token)
        self.turn_draws += 1
        return obs

    # -- the agent's turn noise ----------------------------------------------------------

    def _note_verdict(self, prefix: tuple[str, ...], obs: Observation) -> None:
        if obs.ok and obs.verdict is not None:
            c = self._turn_verdicts.setdefault(conversation_fp(prefix), Counter())
            c[obs.verdict] += 1

    def turn_noise(self, prior: float = 0.05) -> float:
        """How often a turn's verdict leaves its modal value across replays of the same
        prefix: ``sum(n - modal count) / sum(n - 1)`` over prefixes drawn at least twice (an
        overestimate for few draws), shrunk toward ``prior`` by one pseudo-draw. A plug-in:
        it only sets the smallest miss rate an invariant's alternative may state."""
        off = den = 0
        for c in self._turn_verdicts.values():
            n = sum(c.values())
            if n >= 2:
                off += n - max(c.values())
                den += n - 1
        return (off + prior) / (den + 1.0)

    def close(self) -> None:
        for s in self._lineage.values():
            s.close()
        self._lineage.clear()
