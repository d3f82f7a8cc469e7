"""One conversation test run: the engine, the decisions and their cache.

Every check on a conversation is a *candidate* decided once per run by the relation procedure
(:class:`~agentverity_props.relations.RelationDecider`, the two e-processes of
:class:`~agentverity_props.decide.CandidateTest`) and cached under (the check's key, the
conversation's fingerprint[, the edited conversation's]): every re-execution by Hypothesis (the
shrinker, the final replay) reads the cache, so agent noise never surfaces as ``Flaky``.

* An **invariant** at the last turn of conversation ``C``: follow-up draws are replays of
  ``C`` scored ``holds``/``violated``; the "source" is a virtual coin that is ``violated``
  with probability ``allowed_rate``, so H0 is ``P(violated) <= allowed_rate`` and a violation is
  confirmed only by fresh replays of the conversation (rounds), never by the screen alone.
* A **conversation relation**: source draws are replays of ``C`` (its last turn's verdict),
  follow-up draws replays of the edited conversation; H0 as for every relation: the edit makes
  the last turn leave the source's modal verdict no more often than a replay of ``C`` does.

Family-wise error: at most ``max_candidates`` candidates go beyond their screen, each at
``alpha / max_candidates``. The alternative of an invariant is learned as for relations, with
the agent's *turn noise* in place of the source's noise (the virtual source has none): how
often a turn's verdict changes between replays of the same prefix, measured on this run's
replays (see docs/conversations.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..decide import Alternative, EvidenceLearner, bonferroni
from ..engine import Engine, EvidencePool, LoopThread
from ..relations import Candidate, Relation, RelationDecider, RelationOutcome
from ._checks import ConversationRelation, Invariant, TurnContext
from ._draws import HOLDS, ConversationDraws, conversation_fp
from ._records import (
    ConversationConfig,
    ConversationCounterexample,
    ConversationRecord,
    TurnEvidence,
)
from ._session import Conversational, SessionAdapter

if TYPE_CHECKING:
    from ..engine import Probe
    from ..observation import Observation


class _InvariantLearner(EvidenceLearner):
    """An invariant's learner. Its "source" is the virtual null, which carries no agent noise,
    so the agent's noise is taken from its turns instead: the alternative never states a miss
    rate below what the agent's turn noise implies (``1.5 x`` it before a confirmation,
    ``1.25 x`` after, as for relations). A violation that shows on 85% of replays of a
    15%-noise agent is then decided by replays, not dismissed on one clean screen."""

    def __init__(self, turn_noise: Callable[[], float]) -> None:
        super().__init__(prior_noise=0.0)
        self._turn_noise = turn_noise

    def alternative(self, noise: float | None = None) -> Alternative:
        noise = max(self.noise() if noise is None else noise, self._turn_noise())
        return super().alternative(noise)


def _identity(text: str) -> str:
    return text


class ConversationRun:
    """The state of one conversation test run (shared by every example Hypothesis runs)."""

    def __init__(self, *, agent: Conversational, test: str, max_candidates: int,
                 config: ConversationConfig | None = None, seed: int | None = None,
                 **settings: Any) -> None:
        """``config`` (default ``ConversationConfig()``) with ``settings`` (``alpha``,
        ``budget``, ``max_turns``, any engine field, ...) applied over it."""
        from ..engine import configured

        config = configured(ConversationConfig, config, settings, where="ConversationRun")
        self.loop = LoopThread()
        self.engine = Engine(SessionAdapter(agent), config.engine)
        self.draws = ConversationDraws(self.engine, agent,
                                       seed=config.seed if seed is None else seed,
                                       max_turns=config.max_turns + 1)
        self.pool = EvidencePool()
        self.beta = config.beta
        self.record = ConversationRecord(
            test=test, agent=agent.identity, alpha=config.alpha,
            alpha_candidate=bonferroni(config.alpha, max_candidates), beta=config.beta,
            max_candidates=max_candidates, max_turns=config.max_turns)
        self._cache: dict[tuple[object, ...], RelationOutcome] = {}
        self._calls_at: dict[tuple[object, ...], int] = {}
        self._learners: dict[tuple[str, ...], EvidenceLearner] = {}
        self.relation_learner = EvidenceLearner()

    # -- decisions -----------------------------------------------------------------------

    def invariant(self, turns: tuple[str, ...], inv: Invariant) -> RelationOutcome:
        key = (inv.key(), conversation_fp(turns))
        if key not in self._cache:
            learner = self._learners.get(inv.key())
            if learner is None:
                learner = self._learners[inv.key()] = _InvariantLearner(self.draws.turn_noise)
            rel = Relation(inv.name, "invariant", _identity)
            src = self.draws.virtual_probe(inv.allowed_rate)
            fu = self.draws.check_probe(turns, inv)
            self._cache[key] = self._evaluate(rel, src, fu, learner)
            self._calls_at[key] = self.engine.ledger.calls
        return self._cache[key]

    def relation(self, turns: tuple[str, ...], rel: ConversationRelation,
                 edited: tuple[str, ...]) -> RelationOutcome:
        key = (rel.key(), conversation_fp(turns), conversation_fp(edited))
        if key not in self._cache:
            relation = Relation(rel.name, "invariant", _identity, layer=rel.layer)
            src, fu = self.draws.last_probe(turns), self.draws.last_probe(edited)
            self._cache[key] = self._evaluate(relation, src, fu, self.relation_learner)
            self._calls_at[key] = self.engine.ledger.calls
        return self._cache[key]

    def calls_at(self, key: tuple[object, ...]) -> int:
        return self._calls_at.get(key, self.engine.ledger.calls)

    def _evaluate(self, rel: Relation, src: Probe, fu: Probe,
                  learner: EvidenceLearner) -> RelationOutcome:
        rec = self.record
        rec.candidates += 1
        out = RelationOutcome(fp=src.fp, follow_up_fp=fu.fp)
        decider = RelationDecider(self.draws, self.pool,  # type: ignore[arg-type]
                                  alpha_candidate=rec.alpha_candidate,
                                  candidate_beta=self.beta,
                                  learner=learner, may_test=self._may_test)
        self.loop.run(decider.decide([Candidate(rel, src, fu, out)]))
        self._sync()
        # out of budget when a round of replays no longer fits
        rec.tally(out, out_of_budget=lambda: not self.draws.can_afford(2))
        return out

    def _may_test(self) -> bool:
        return self.record.take_confirmation()

    def _sync(self) -> None:
        led = self.engine.ledger
        self.record.calls, self.record.replayed = led.calls, led.replayed
        self.record.turn_draws = self.draws.turn_draws

    # -- evidence for reports ------------------------------------------------------------

    def violating_replay(self, turns: tuple[str, ...], inv: Invariant | None = None
                         ) -> tuple[Observation, ...]:
        """A replay of ``turns`` on which ``inv`` failed at the last turn (else the first
        complete replay): the answers the report shows beside each turn."""
        replays = [t for _, t in sorted(self.draws.transcripts(turns).items())
                   if len(t) == len(turns) and t[-1].ok]
        if inv is not None:
            for t in replays:
                if not inv.holds(TurnContext(turns, t)):
                    return t
        return replays[0] if replays else ()

    def counterexample(self, *, check: Invariant | ConversationRelation, turns: tuple[str, ...],
                       out: RelationOutcome, key: tuple[object, ...],
                       edited: tuple[str, ...] = (), edit: dict[str, Any] | None = None
                       ) -> ConversationCounterexample:
        inv = check if isinstance(check, Invariant) else None
        shown = self.violating_replay(turns, inv)
        follow: tuple[Observation, ...] = ()
        if edited:
            fu_value = out.follow_up
            cands = [t for _, t in sorted(self.draws.transcripts(edited).items())
                     if len(t) == len(edited) and t[-1].ok]
            follow = next((t for t in cands if t[-1].key(check.to_dict().get("layer", "verdict"))
                           == fu_value), cands[0] if cands else ())
        ce = ConversationCounterexample(
            check=check.name, kind="invariant" if inv else "relation",
            description=check.description, turns=_evidence(turns, shown),
            decision=dict(out.decision or {}), calls_at_confirmation=self.calls_at(key),
            follow_up=_evidence(edited, follow) if edited else (), edit=dict(edit or {}),
            source_value=None if inv else out.source,
            follow_up_value=None if inv else out.follow_up)
        if self.record.first is None:
            self.record.first = ce
        self.record.minimal[check.name] = ce
        return ce

    def close(self) -> None:
        try:
            self.loop.run(self.engine.aclose())
        finally:
            self.draws.close()
            self.loop.close()
            self._sync()


def _evidence(turns: tuple[str, ...], obs: tuple[Observation, ...]) -> tuple[TurnEvidence, ...]:
    out = []
    for i, text in enumerate(turns):
        o = obs[i] if i < len(obs) else None
        out.append(TurnEvidence(text, None if o is None else o.verdict,
                                () if o is None else tuple(t.name for t in o.tools)))
    return tuple(out)


__all__ = ["HOLDS", "ConversationRun"]
