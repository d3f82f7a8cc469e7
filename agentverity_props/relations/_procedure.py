"""Deciding relation candidates through the engine: screen, then rounds until a decision.

One procedure for ``run``, ``@agent_property`` and ``enlarge``. For each candidate
(relation, source, follow-up):

1. *Reference*: the modal verdict of the source's draws so far (one is drawn if there is
   none; a run reuses the meter's). It is recomputed before every step, from draws made before
   that step, so the tests of :mod:`agentverity_props.decide` stay valid as it moves.
2. *Screen*: one follow-up draw scored against the reference. On a quiet agent a clean screen
   dismisses the candidate at once (the pass e-process crosses ``1/beta``).
3. *Steps*: what :meth:`CandidateTest.next_draws` asks for — a round (a fresh source re-draw
   and a fresh follow-up draw, in an order drawn at random per round) or, while the
   follow-ups look clean on a quiet agent, a follow-up draw alone — until the violation
   e-process crosses ``1/alpha_candidate``
   (``confirmed``), the pass e-process crosses ``1/beta`` (``pass``), or the draw allowance
   runs out (``undecided``).

Candidates are advanced in *waves*: every undecided candidate's next step is planned and its
draw indices allocated in a fixed order, every candidate's first draw runs (concurrently),
then every candidate's second draw, and the outcomes are fed back in the same order. So the
two draws of a round are spread apart and their order is random: an agent whose answer
depends on the call's position (replicas taking turns) is not systematically seen as
"source on one replica, follow-up on the other". The decisions assume the draws of an input
are independent given the input; the ``dependent_draws`` health check tests it.
The draws requested (hence what a record/replay store serves)
depend on outcomes only, never on timing. What the run learns (the agent's noise, the
alternative) is updated between candidates in that same order, and a candidate's alternative
is fixed when it starts.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal.outcome import CandidateStatus
from ..decide import CandidateTest, EvidenceLearner, modal
from ..errors import DrawStopped
from ._model import Relation, RelationOutcome

if TYPE_CHECKING:
    from ..engine import Engine, EvidencePool, Probe
    from ..observation import Observation

#: The default false-pass rate of a candidate against its alternative.
DEFAULT_CANDIDATE_BETA = 0.01
#: The share of beta spent on the reference being noise (the rest: the pass e-process).
REFERENCE_SHARE = 0.2
#: Source draws alone a candidate may ask for to settle its reference (then rounds).
SETTLE_SOURCE_DRAWS = 8


@dataclass(slots=True)  # 800,000 of them on a 100,000-input run
class Candidate:
    """One (relation, source, follow-up) being decided, with its outcome record."""

    relation: Relation
    source: Probe
    follow_up: Probe
    outcome: RelationOutcome
    test: CandidateTest | None = None
    plan: tuple[str, ...] = ()
    indices: dict[str, int] = field(default_factory=dict)
    got: dict[str, Observation | None] = field(default_factory=dict)
    settled: bool = True
    order: random.Random | None = None
    source_only: int = 0


def off_reference(pool: EvidencePool, fp: str, layer: str) -> tuple[int, int]:
    """(draws away from the modal verdict, usable draws) of one probe."""
    keys = [k for k in pool.get(fp).keys(layer) if k is not None]
    if not keys:
        return 0, 0
    return len(keys) - max(Counter(keys).values()), len(keys)


def reference_lead(pool: EvidencePool, fp: str, layer: str, ref: str) -> int:
    """How many more of the probe's draws gave ``ref`` than gave any other verdict."""
    counts = Counter(k for k in pool.get(fp).keys(layer) if k is not None)
    others = [n for k, n in counts.items() if k != ref]
    return counts.get(ref, 0) - max(others, default=0)


#: The most source draws a reference may need to lead by (a near coin flip never settles).
MAX_SETTLING_LEAD = 10


def own_settled(pool: EvidencePool, fp: str, layer: str, ref: str, beta_ref: float) -> bool:
    """Whether the input's *own* source draws back ``ref`` as its modal verdict well enough
    that a reference made of noise has probability at most ``beta_ref``.

    A noise label with share ``p < 1/2`` ever leads the modal one by ``L`` draws with
    probability at most ``(p / (1 - p))^L`` (gambler's ruin); ``p`` is this input's own
    off-reference rate, ``(off + 1) / (draws + 2)``, never the pooled noise of other inputs: a
    quiet probe set says nothing about the one input that is a coin flip. A quiet input
    settles after 4 agreeing draws at ``beta_ref = 0.01``; a 65/35 input after a lead of 8;
    a coin flip never.

    >>> from agentverity_props.engine import EvidencePool
    >>> from agentverity_props.observation import Observation
    >>> pool = EvidencePool()
    >>> for i in range(3):
    ...     pool.add("x", i, Observation(verdict="allow"))
    >>> own_settled(pool, "x", "verdict", "allow", 0.01)
    False
    >>> pool.add("x", 3, Observation(verdict="allow"))
    >>> own_settled(pool, "x", "verdict", "allow", 0.01)
    True
    """
    off, n = off_reference(pool, fp, layer)
    p = (off + 1.0) / (n + 2.0)
    if p >= 0.5:
        return False
    need = math.ceil(math.log(beta_ref) / math.log(p / (1.0 - p)) - 1e-9)
    return need <= MAX_SETTLING_LEAD and reference_lead(pool, fp, layer, ref) >= need


def reference(pool: EvidencePool, fp: str, layer: str) -> str | None:
    """The modal verdict of the probe's draws so far (ties: the label seen first)."""
    return modal(k for k in pool.get(fp).keys(layer) if k is not None)


class RelationDecider:
    """Decides candidates against one engine and evidence pool (module docstring).

    Args:
        engine: the engine every draw goes through.
        pool: the run's evidence (source draws are read from and added to it).
        alpha_candidate: the false-violation rate of each candidate (the family's share).
        candidate_beta: the false-pass rate of each candidate against its alternative.
        learner: what the run has learned so far (shared across calls).
        may_test: called before a candidate's first round; False makes it undecided (the
            family's quota of tested candidates is spent).
    """

    def __init__(self, engine: Engine, pool: EvidencePool, *, alpha_candidate: float,
                 candidate_beta: float = DEFAULT_CANDIDATE_BETA,
                 learner: EvidenceLearner | None = None,
                 may_test: Callable[[], bool] | None = None, max_draws: int | None = None,
                 futility: bool = False, seed: int = 0,
                 progress: Callable[[int], None] | None = None) -> None:
        self.engine, self.pool = engine, pool
        self.alpha_candidate, self.candidate_beta = alpha_candidate, candidate_beta
        self.learner = learner or EvidenceLearner()
        self.may_test = may_test
        self.max_draws = max_draws
        self.futility = futility
        self.seed = seed
        self.progress = progress
        #: live draws planned in this step but not made yet (see _affordable)
        self._planned = 0
        self._decisions: dict[tuple[Any, ...], dict[str, Any]] = {}

    async def decide(self, candidates: Sequence[Candidate]) -> None:
        """Decide every candidate (each ends pass/confirmed/undecided/incomplete)."""
        live = [c for c in candidates if c.outcome.status == CandidateStatus.PENDING]
        await self._anchor_sources(live)
        for c in live:
            self._start(c)
        live = [c for c in live if c.outcome.status == CandidateStatus.PENDING]
        while live:
            self._planned = 0
            for c in live:
                self._plan(c)
            live = [c for c in live if c.outcome.status == CandidateStatus.PENDING]
            for c in live:
                c.got = {}
            # every candidate's first draw of the step, then every second one: the source and
            # follow-up of a round are never back to back, in an order drawn per round
            for pos in range(2):
                await asyncio.gather(*(self._draw_at(c, pos) for c in live
                                       if pos < len(c.indices)))
            if self.progress is not None:
                self.progress(sum(len(c.indices) for c in live))
            for c in live:
                self._feed(c)
            live = [c for c in live if c.outcome.status == CandidateStatus.PENDING]

    # -- steps -------------------------------------------------------------------------------

    async def _anchor_sources(self, live: Sequence[Candidate]) -> None:
        need: list[Probe] = []
        seen: set[str] = set()  # by fingerprint: `in need` made this quadratic in the inputs
        for c in live:
            if c.source.fp not in seen and \
                    reference(self.pool, c.source.fp, c.relation.layer) is None:
                seen.add(c.source.fp)
                need.append(c.source)
        left = self.engine.remaining if getattr(self.engine, "live_only", False) else None
        if left is not None:
            need = need[:left]  # the others could not be drawn: no task is made for them
        plan = [(p, self.engine.allocate(p, 1)[0]) for p in need]
        await asyncio.gather(*(self._draw(p, i) for p, i in plan))

    def _start(self, c: Candidate) -> None:
        out = c.outcome
        ref = reference(self.pool, c.source.fp, c.relation.layer)
        if ref is None:
            out.status = CandidateStatus.INCOMPLETE
            out.note = _why_no_source(self.pool, c.source.fp)
            return
        out.source = ref
        kw: dict[str, Any] = {"futility": self.futility}
        if self.max_draws is not None:
            kw["max_draws"] = self.max_draws
        noise = self._noise(c)
        c.test = CandidateTest(alpha=self.alpha_candidate,
                               beta=self.candidate_beta * (1 - REFERENCE_SHARE),
                               alternative=self.learner.alternative(noise), noise=noise,
                               two_sided=c.relation.rtype == "invariant"
                               and c.relation.check is None, **kw)

    def _noise(self, c: Candidate) -> float:
        return self.learner.local_noise(*off_reference(self.pool, c.source.fp,
                                                       c.relation.layer))

    def _settled(self, c: Candidate) -> bool:
        ref = c.outcome.source
        assert ref is not None
        return own_settled(self.pool, c.source.fp, c.relation.layer, ref,
                           self.candidate_beta * REFERENCE_SHARE)

    def _plan(self, c: Candidate) -> None:
        test = c.test
        assert test is not None
        if self.engine.stopping or not self.engine.can_afford(1):
            # before the settling computation: after a stop (or once the budget is gone) a
            # 100,000-input run would spend many seconds planning draws it cannot make
            self._finish(c, CandidateStatus.INCOMPLETE, "draws not made (budget or interrupt)")
            return
        c.settled = self._settled(c)
        if not test.screened:
            # the screen: a follow-up alone once the noise estimate is trusted and the
            # reference settled; a round before (it also measures the noise)
            quick = c.settled and self.learner.warmed_up
            c.plan = ("follow_up",) if quick else ("source", "follow_up")
        elif (not c.settled and test.last_follow_up_violates is False
              and c.source_only < SETTLE_SOURCE_DRAWS):
            # the follow-ups agree with an unsettled reference: settle it with source draws
            # alone (they serve every relation of the input) before paying for rounds
            c.plan = ("source",)
        else:
            c.plan = test.next_draws(settled=c.settled)
        # A candidate counts in the family's quota before its first round (the violation
        # e-process lives on rounds), whether that round is its screen (before the noise is
        # warmed up) or comes after a follow-up screen: every candidate that can be confirmed
        # is one of at most max_candidates, each e-process starting at 1 when it is counted.
        if len(c.plan) == 2 and test.rounds == 0 and self.may_test is not None \
                and not self.may_test():
            self._finish(c, CandidateStatus.UNDECIDED,
                         "the family's quota of tested candidates is spent")
            return
        if self.engine.stopping or not self._affordable(len(c.plan)):
            self._finish(c, CandidateStatus.INCOMPLETE, "draws not made (budget or interrupt)")
            return
        c.indices = {}
        for what in c.plan:
            probe = c.source if what == "source" else c.follow_up
            c.indices[what] = self.engine.allocate(probe, 1)[0]
        if len(c.indices) == 2:
            # which of source and follow-up is drawn first: random per round, from the
            # candidate's own generator (seeded by the run's seed and the candidate), so the
            # order is reproducible and never tied to a call position
            if c.order is None:
                c.order = random.Random(f"{self.seed}:{c.relation.name}:{c.source.fp}:"
                                        f"{c.follow_up.fp}")
            if c.order.random() < 0.5:
                c.indices = dict(reversed(list(c.indices.items())))

    def _shared(self, decision: dict[str, Any]) -> dict[str, Any]:
        """One dict for equal decisions: on a large probe set most candidates end with the
        same untouched test state, and 800,000 copies of it would take a gigabyte."""
        try:
            key = tuple((k, tuple(sorted(v.items())) if isinstance(v, dict) else v)
                        for k, v in decision.items())
            return self._decisions.setdefault(key, decision)
        except TypeError:  # an unhashable value: keep this one as it is
            return decision

    def _affordable(self, n: int) -> bool:
        """Whether ``n`` more draws fit in the budget, counting those already planned in this
        step when every draw is live: a 100,000-input run would otherwise plan (and hold in
        memory as tasks) one draw per candidate that the budget can never pay for."""
        if not getattr(self.engine, "live_only", False):  # draws may be replayed for free
            return self.engine.can_afford(n)
        if not self.engine.can_afford(self._planned + n):
            return False
        self._planned += n
        return True

    async def _draw_at(self, c: Candidate, pos: int) -> None:
        what, idx = list(c.indices.items())[pos]
        probe = c.source if what == "source" else c.follow_up
        c.got[what] = await self._draw(probe, idx)

    def _feed(self, c: Candidate) -> None:
        test, out, rel = c.test, c.outcome, c.relation
        assert test is not None
        ref = out.source
        assert ref is not None
        keys: dict[str, str] = {}
        for what, obs in c.got.items():
            out.draws += obs is not None
            key = None if obs is None else obs.key(rel.layer)
            if key is None:
                self._finish(c, CandidateStatus.INCOMPLETE,
                             _why(obs, f"{what.replace('_', '-')} draw"))
                return
            keys[what] = key
        if "follow_up" not in keys:
            # a settling draw: it measures the input's noise, decides nothing
            c.source_only += 1
            s_off = rel.baseline_violates(ref, keys["source"])
            self.learner.observe_noise(int(s_off), 1)
            if s_off:
                self.learner.observe_off_label(keys["source"])
            out.source = reference(self.pool, c.source.fp, rel.layer) or ref
            return
        f_viol = not rel.holds(ref, keys["follow_up"])
        s_viol = None if "source" not in keys else rel.baseline_violates(ref, keys["source"])
        if s_viol:
            self.learner.observe_off_label(keys["source"])
        if not test.screened:
            out.follow_up = keys["follow_up"]
            out.raw = f_viol
        if s_viol is not None:
            rev = None
            if test.two_sided:
                # the follow-up's modal verdict before this round's draw
                ev, idx = self.pool.get(c.follow_up.fp), c.indices["follow_up"]
                before = [k for k in (ev.draws[i].key(rel.layer) for i in sorted(ev.draws)
                                      if i < idx) if k is not None]
                r_f = modal(before)
                if r_f is not None:
                    rev = (keys["source"] != r_f, keys["follow_up"] != r_f)
            decision = test.round(follow_up=f_viol, source=s_viol, settled=c.settled,
                                  reverse=rev)
        else:
            decision = test.follow_up(f_viol, settled=c.settled)
        # the next step scores against the modal verdict of every source draw so far
        out.source = reference(self.pool, c.source.fp, rel.layer) or ref
        if decision is not None:
            status = {"violation": CandidateStatus.CONFIRMED,
                      "pass": CandidateStatus.PASS}.get(decision.call, CandidateStatus.UNDECIDED)
            why = str(decision.detail.get("why", "")) if decision.detail else ""
            self._finish(c, status, "" if status != CandidateStatus.UNDECIDED else
                         (why if why.startswith("futile") else
                          "neither e-process crossed its threshold within "
                          f"{test.max_draws} draws"))
            if status == CandidateStatus.CONFIRMED:
                # the verdicts shown beside a confirmation: the source's modal verdict and the
                # follow-up's (not the screen's draw, which may have been noise)
                fkeys = [k for k in self.pool.get(c.follow_up.fp).keys(rel.layer)
                         if k is not None]
                if fkeys:
                    out.follow_up = modal(fkeys)

    def _finish(self, c: Candidate, status: CandidateStatus, note: str) -> None:
        out, test = c.outcome, c.test
        out.status, out.note = status, note
        if test is not None:
            if test.decision is None:
                test.give_up(note)
            out.decision = self._shared({**test.state(), "call": status})
            self.learner.observe(test)

    async def _draw(self, probe: Probe, index: int) -> Observation | None:
        eng = self.engine
        if eng.stopping or not eng.can_afford(1):
            return None
        try:
            obs = await eng.draw(probe, index)
        except DrawStopped:
            return None
        self.pool.add(probe.fp, index, obs)
        return obs


def _why_no_source(pool: EvidencePool, fp: str) -> str:
    ev = pool.get(fp)
    if not ev.draws:
        return "no source draw was made (budget, interrupt or failure)"
    obs = ev.draws[max(ev.draws)]
    return _why(obs, "source draw")


def _why(obs: Observation | None, what: str) -> str:
    if obs is None:
        return f"{what} not made (budget, interrupt or failure)"
    if obs.error is not None:
        return f"{what} failed: {obs.error.kind}"
    return f"{what} had no verdict ({obs.no_decision.reason if obs.no_decision else '?'})"
