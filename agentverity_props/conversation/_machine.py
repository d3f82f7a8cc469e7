"""``AgentStateMachine``: conversations as Hypothesis state machines.

Hypothesis's :class:`~hypothesis.stateful.RuleBasedStateMachine` assumes a deterministic
system; an agent is not one. So, as for ``@agent_property``, the *decisions* are made
deterministic instead of the agent: each step's checks are decided once per run (replaying the
conversation with fresh draws) and cached per (conversation, check), so the shrinker and the
final replay see one answer per candidate and Hypothesis never raises ``Flaky``. Shrinking a
failing run removes and simplifies steps, i.e. turns: the report is the shortest conversation
Hypothesis could reach that still violates beyond the agent's noise.

Example:
    >>> from hypothesis import strategies as st
    >>> from agentverity_props.conversation import conversation_machine, from_history, never_before
    >>> def agent(messages):
    ...     return {"text": "ok", "verdict": "chat", "tools": []}
    >>> Machine = conversation_machine(agent=from_history(agent),
    ...     turns=st.sampled_from(["hi", "refund please"]),
    ...     invariants=[never_before("issue_refund", required="lookup_order")], max_turns=3)
    >>> record = run_conversation_test(Machine, max_examples=5)
    >>> record.status, record.minimal
    ('passed', {})
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from .._internal import hypothesis_shim
from .._internal.agent_settings import CONVERSATION_PROFILE, agent_settings
from .._internal.outcome import CandidateStatus
from .._internal.unset import UNSET
from ..errors import Inconclusive, InvalidArgument, PropertyViolation, violation_class
from ._checks import ConversationRelation, Invariant
from ._records import RECORDS, RECORDS_LOCK, ConversationConfig, ConversationRecord
from ._run import ConversationRun
from ._session import conversational

__all__ = ["CONVERSATION_SETTINGS", "AgentStateMachine", "conversation_machine",
           "machine_config", "relation_rule", "run_conversation_test"]

#: Hypothesis settings for conversation tests (the registered profile
#: ``agentverity-conversation``, see :mod:`agentverity_props._internal.agent_settings`; a
#: ``settings=`` passed in overrides them where it changes a value).
CONVERSATION_SETTINGS: dict[str, Any] = {"max_examples": 100, "deadline": None,
                                         "print_blob": True}

_RUNS_LOCK = threading.Lock()


class AgentStateMachine(RuleBasedStateMachine):
    """A conversation with an agent as a Hypothesis state machine.

    Subclass it (or build one with :func:`conversation_machine`): set ``agent`` and the
    checks, and write rules that call :meth:`say` with a user turn drawn from a strategy.
    After every turn each invariant is decided on the conversation so far; the
    ``edit_earlier_turn`` rule (added by :func:`conversation_machine` when relations are given,
    or by ``edit_earlier_turn = relation_rule()`` in a subclass) decides a conversation
    relation on it. Run it with ``Machine.TestCase`` (unittest/pytest) or
    :func:`run_conversation_test`.

    Class attributes:
        agent: a conversational agent (``from_history``, ``from_chat``,
            ``from_strands_conversation``, or a ``from_strands`` adapter).
        conversation_invariants: :class:`Invariant` checked at every turn (Hypothesis's own
            ``invariants`` name is taken).
        conversation_relations: :class:`ConversationRelation` the machine may apply between
            turns.
        max_turns: steps per example (Hypothesis's ``stateful_step_count``).
        alpha: family-wise false-violation rate of the run; beta: false-pass rate of each
            candidate against its alternative; budget: agent calls (turns) the run may spend.
        config: every setting at once (:class:`ConversationConfig`, whose ``engine`` reaches
            every engine setting: retries, fail_fast, the store, ...). An attribute above
            set in the class that sets ``config`` (or in a subclass of it) overrides it.
    """

    agent: ClassVar[Any] = None
    conversation_invariants: ClassVar[Sequence[Invariant]] = ()
    conversation_relations: ClassVar[Sequence[ConversationRelation]] = ()
    max_turns: ClassVar[int] = 6
    alpha: ClassVar[float] = 0.05
    beta: ClassVar[float] = 0.01
    budget: ClassVar[int | None] = 20_000
    max_workers: ClassVar[int] = 4
    timeout_s: ClassVar[float | None] = 60.0
    max_candidates: ClassVar[int | None] = None
    seed_draws: ClassVar[int] = 0
    extractor: ClassVar[Any] = None
    config: ClassVar[ConversationConfig | None] = None

    def __init__(self) -> None:
        super().__init__()
        run = type(self).__dict__.get("_agentverity_run")
        if run is None:
            raise InvalidArgument(
                f"{type(self).__name__} decides its checks within one run: run it with "
                f"{type(self).__name__}.TestCase or run_conversation_test({type(self).__name__})"
                ", not run_state_machine_as_test")
        self._run: ConversationRun = run
        self.turns: tuple[str, ...] = ()
        run.record.examples += 1

    # -- turns ---------------------------------------------------------------------------

    def say(self, message: str) -> None:
        """One user turn, then every invariant decided at it."""
        __tracebackhide__ = True  # pytest: the failure is the conversation's
        if not isinstance(message, str):
            raise InvalidArgument(f"say() takes the user turn as str, got "
                                  f"{type(message).__name__}")
        self.turns = (*self.turns, message)
        for inv in self.conversation_invariants:
            out = self._run.invariant(self.turns, inv)
            self._settle(out)
            if out.status == CandidateStatus.CONFIRMED:
                key = (inv.key(), _fp(self.turns))
                ce = self._run.counterexample(check=inv, turns=self.turns, out=out, key=key)
                d = ce.decision
                raise violation_class(inv.name)(
                    f"invariant '{inv.name}' violated at turn {len(self.turns)} of a "
                    f"{len(self.turns)}-turn conversation, beyond the agent's noise: "
                    f"{d.get('follow_up_violations')}/{d.get('follow_up_draws')} replays "
                    f"violate (allowed rate {inv.allowed_rate:g}; e-value "
                    f"{d.get('e_violation', 0):.3g} >= 1/{self._run.record.alpha_candidate:.3g})"
                    + _conversation_text(ce))

    def edit_earlier_turn(self, data: Any) -> None:
        """A conversation relation on the conversation so far (edit an earlier turn; the last
        turn's verdict must not change)."""
        __tracebackhide__ = True  # pytest: the failure is the conversation's
        rel: ConversationRelation = data.draw(st.sampled_from(list(self.conversation_relations)),
                                              label="relation")
        pos = data.draw(st.integers(0, rel.positions(len(self.turns)) - 1), label="position")
        options = rel.options(self.turns, pos)
        if not options:
            return
        choice = data.draw(st.sampled_from(options), label="edit")
        edited = rel.apply(self.turns, pos, choice)
        if edited == self.turns:
            return
        out = self._run.relation(self.turns, rel, edited)
        self._settle(out)
        if out.status == CandidateStatus.CONFIRMED:
            key = (rel.key(), _fp(self.turns), _fp(edited))
            ce = self._run.counterexample(check=rel, turns=self.turns, out=out, key=key,
                                          edited=edited,
                                          edit={"edit": rel.kind, "position": pos + 1})
            d = ce.decision
            what = {"insert": f"inserting {choice!r} before turn {pos + 1}",
                    "repeat": f"repeating turn {pos + 1}",
                    "paraphrase": f"paraphrasing turn {pos + 1} as {choice!r}"}[rel.kind]
            raise violation_class(rel.name)(
                f"relation '{rel.name}' violated: {what} changes the last turn's verdict from "
                f"{out.source!r} to {out.follow_up!r}; "
                f"{d.get('follow_up_violations')}/{d.get('follow_up_draws')} edited replays vs "
                f"{d.get('source_violations')}/{d.get('source_draws')} replays leave it "
                f"(e-value {d.get('e_violation', 0):.3g})" + _conversation_text(ce))

    def _settle(self, out: Any) -> None:
        from hypothesis import event, reject
        if out.status in (CandidateStatus.INCOMPLETE, CandidateStatus.UNDECIDED):
            event(f"agentverity: conversation check {out.status} ({out.note})")
            reject()

    # -- running -------------------------------------------------------------------------

    @classmethod
    def _to_test_case(cls) -> Any:  # type: ignore[override, unused-ignore]
        import unittest

        machine = cls

        class ConversationTestCase(unittest.TestCase):
            settings = None

            def runTest(self) -> None:
                __tracebackhide__ = True
                run_conversation_test(machine, settings=self.settings)

        ConversationTestCase.__name__ = cls.__name__ + ".TestCase"
        ConversationTestCase.__qualname__ = cls.__qualname__ + ".TestCase"
        return ConversationTestCase


def _conversation_text(ce: Any) -> str:
    """The conversation turn by turn, for the exception (the user's own test fails on it)."""
    lines = [""]
    for i, t in enumerate(ce.turns, 1):
        lines.append(f"  {i}. user: {t.text!r}  ->  agent: {t.verdict} "
                     f"[{', '.join(t.tools) or 'no tool'}]")
    if ce.follow_up:
        lines.append("  edited conversation:")
        for i, t in enumerate(ce.follow_up, 1):
            lines.append(f"  {i}'. user: {t.text!r}  ->  agent: {t.verdict} "
                         f"[{', '.join(t.tools) or 'no tool'}]")
    return "\n".join(lines)


def relation_rule() -> Any:
    """The rule that applies ``conversation_relations`` between turns, for a subclass of
    :class:`AgentStateMachine` that sets them: ``edit_earlier_turn = relation_rule()``.
    (It is not a rule of the base class: a rule that can never run still costs Hypothesis
    choices, and makes failing runs harder to shrink.)"""

    def edit_earlier_turn(self: AgentStateMachine, data: Any) -> None:
        __tracebackhide__ = True
        AgentStateMachine.edit_earlier_turn(self, data)

    return precondition(lambda self: len(self.turns) >= 2)(rule(data=st.data())(
        edit_earlier_turn))


def _fp(turns: tuple[str, ...]) -> str:
    from ._draws import conversation_fp
    return conversation_fp(turns)


def conversation_machine(*, agent: Any, turns: st.SearchStrategy[str],
                         invariants: Sequence[Invariant] = (),
                         relations: Sequence[ConversationRelation] = (),
                         config: ConversationConfig | None = None, max_turns: int = UNSET,
                         alpha: float = UNSET, beta: float = UNSET, budget: int | None = UNSET,
                         max_workers: int = UNSET, timeout_s: float | None = UNSET,
                         extractor: Any = UNSET, name: str = "ConversationMachine",
                         **engine_kwargs: Any) -> type[AgentStateMachine]:
    """An :class:`AgentStateMachine` whose one turn rule draws user turns from ``turns``.

    Args:
        agent: a conversational agent (see :func:`conversational`); refused eagerly when it
            cannot hold a conversation.
        turns: the strategy of user turns (``st.sampled_from(pack)`` shrinks toward the
            first entries: list the simplest turns first).
        invariants / relations: the checks (at least one).
        config: every setting at once (:class:`ConversationConfig`, default
            ``ConversationConfig()``: 6 turns, alpha 0.05, beta 0.01, budget 20000).
        max_turns: steps per example.
        alpha, beta: see :class:`ConversationConfig`.
        budget, max_workers, timeout_s, extractor, **engine_kwargs: any
            :class:`~agentverity_props.engine.EngineConfig` field (``retries=0``,
            ``fail_fast=1``, ...), applied over ``config.engine``; ``extractor`` reads a
            turn's verdict (default: the answer's ``verdict``, else its text) and relations
            compare verdicts.

    A keyword given explicitly overrides the same setting of ``config``; one left out takes
    the config's value.
    """
    from ..engine import configured

    conv = conversational(agent)
    if not isinstance(turns, st.SearchStrategy):
        raise InvalidArgument("turns must be a Hypothesis strategy of str, e.g. "
                              "st.sampled_from([...])")
    invs, rels = tuple(invariants), tuple(relations)
    if not invs and not rels:
        raise InvalidArgument("conversation_machine needs invariants=[...] or relations=[...]")
    conf = configured(ConversationConfig, config,
                      {"max_turns": max_turns, "alpha": alpha, "beta": beta, "budget": budget,
                       "max_workers": max_workers, "timeout_s": timeout_s,
                       "extractor": extractor, **engine_kwargs},
                      where="conversation_machine")

    def user_turn(self: AgentStateMachine, message: str) -> None:
        __tracebackhide__ = True
        self.say(message)

    rules: dict[str, Any] = {"user_turn": rule(message=turns)(user_turn)}
    if rels:
        rules["edit_earlier_turn"] = relation_rule()
    eng = conf.engine
    # the flat attributes mirror the config (read by users and by subclasses)
    attrs = {"agent": conv, "conversation_invariants": invs, "conversation_relations": rels,
             "config": conf, "max_turns": conf.max_turns, "extractor": eng.extractor,
             "alpha": conf.alpha, "beta": conf.beta, "budget": eng.budget,
             "max_workers": eng.max_workers, "timeout_s": eng.timeout_s,
             "max_candidates": conf.max_candidates, "seed_draws": conf.seed,
             **rules, "__module__": __name__}
    return type(name, (AgentStateMachine,), attrs)


#: AgentStateMachine attributes -> the ConversationConfig (or engine) setting each one is
_ATTRIBUTES = {"max_turns": "max_turns", "alpha": "alpha", "beta": "beta",
               "max_candidates": "max_candidates", "seed_draws": "seed", "budget": "budget",
               "max_workers": "max_workers", "timeout_s": "timeout_s", "extractor": "extractor"}


def machine_config(machine: type[AgentStateMachine]) -> ConversationConfig:
    """The settings a run of ``machine`` uses: its ``config`` (default
    ``ConversationConfig()``) with the flat attributes (``budget``, ``alpha``, ...) set in
    the class that sets ``config``, or in a subclass of it, applied over it."""
    from ..engine import configured

    below = [k for k in machine.__mro__
             if isinstance(k, type) and issubclass(k, AgentStateMachine)
             and k is not AgentStateMachine]
    upto = next((i for i, k in enumerate(below) if "config" in k.__dict__), len(below) - 1)
    given = {key: getattr(machine, attr) for attr, key in _ATTRIBUTES.items()
             if any(attr in k.__dict__ for k in below[:upto + 1])}
    return configured(ConversationConfig, machine.config, given, where=machine.__name__)


def run_conversation_test(machine: type[AgentStateMachine], *, settings: Any = None,
                          max_examples: int | None = None, seed: int | None = None
                          ) -> ConversationRecord:
    """Run ``machine`` as a Hypothesis test; return its record (raise on a violation).

    Settings: the profile ``agentverity-conversation`` (``CONVERSATION_SETTINGS``) under
    ``settings`` (a ``hypothesis.settings``; default: the loaded profile), with the policy of
    ``@agent_property``: a value the user changed from Hypothesis's stock default wins;
    ``stateful_step_count`` is the machine's ``max_turns`` unless ``settings`` sets it.

    Raises:
        PropertyViolation: a check's subclass (``<Name>Violation``), the minimal conversation
            in its message and in the record.
        Inconclusive: the budget ran out with candidates undecided and no violation.
    """
    __tracebackhide__ = True
    from hypothesis import settings as Settings
    from hypothesis.errors import Unsatisfiable
    from hypothesis.stateful import run_state_machine_as_test

    if not (isinstance(machine, type) and issubclass(machine, AgentStateMachine)):
        raise InvalidArgument("run_conversation_test expects an AgentStateMachine subclass")
    if machine.agent is None:
        raise InvalidArgument(f"{machine.__name__}.agent is not set: agent = from_history(fn), "
                              "from_chat(factory) or from_strands_conversation(factory)")
    agent = conversational(machine.agent)
    conf = machine_config(machine)
    # the one policy of agent tests (registered profile ``agentverity-conversation``):
    # undecided candidates are rejected by design and agents are slow, not test problems
    merged = agent_settings(settings, profile=CONVERSATION_PROFILE,
                            stateful_step_count=conf.max_turns)
    if max_examples is not None:  # an explicit argument beats any settings object
        merged = Settings(merged, max_examples=max_examples)
    m = conf.max_candidates or merged.max_examples * (conf.max_turns + 1) + 200
    name = f"{machine.__module__}.{machine.__qualname__}"
    run = ConversationRun(agent=agent, test=name, config=conf, max_candidates=m, seed=seed)
    rec = run.record
    rec.seed = hypothesis_shim.seed_of(machine)
    with _RUNS_LOCK:
        if "_agentverity_run" in machine.__dict__:
            raise InvalidArgument(f"{machine.__name__} is already running")
        setattr(machine, "_agentverity_run", run)  # noqa: B010 - read from the class dict
    with RECORDS_LOCK:
        RECORDS.append(rec)
    try:
        try:
            run_state_machine_as_test(machine, settings=merged)
        except PropertyViolation as exc:
            rec.status = "failed"
            rec.blob = _blob(exc)
            raise
        except Unsatisfiable as exc:
            rec.status = "inconclusive"
            cause = run.engine.stop_cause
            raise Inconclusive(f"no conversation check could be decided ({rec.undecided} "
                               f"undecided, {rec.calls} calls, budget exhausted: "
                               f"{rec.budget_exhausted}"
                               + (f"; {cause}" if cause else "") + ") — "
                               + ("fix the agent or its verdict extraction" if cause
                                  else "raise the machine's budget")) from exc
        except BaseException as exc:
            rec.status = "failed" if _has_violation(exc) else "error"
            rec.blob = _blob(exc)
            raise
        if rec.budget_exhausted:
            rec.status = "inconclusive"
            raise Inconclusive(f"agent-call budget ({rec.calls} calls) ran out with "
                               f"{rec.undecided} check(s) undecided and no confirmed violation "
                               "— raise the machine's budget")
        rec.status = "passed"
        return rec
    finally:
        with _RUNS_LOCK:
            delattr(machine, "_agentverity_run")
        run.close()


def _has_violation(exc: BaseException) -> bool:
    if isinstance(exc, PropertyViolation):
        return True
    return any(_has_violation(e) for e in getattr(exc, "exceptions", ()))


def _blob(exc: BaseException) -> str | None:
    """Hypothesis's ``@reproduce_failure(...)`` line, when it printed one."""
    for note in getattr(exc, "__notes__", ()) or ():
        if "@reproduce_failure(" in note:
            return note[note.index("@reproduce_failure("):].strip()
    return None
