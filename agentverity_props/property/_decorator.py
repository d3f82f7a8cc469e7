"""``@agent_property``: metamorphic relations as Hypothesis properties of a stochastic agent.

Hypothesis assumes a deterministic test; an agent is not. So the *decision* is made
deterministic instead of the agent: for each (relation, source, follow-up) the outcome is
decided once per test run by the relation procedure of :mod:`agentverity_props.relations`
(the same one ``run`` uses: fresh draws through the engine, so a store can record and replay
them) and cached under a key naming the whole decision (the relation's type, layer, order,
expected value and check, the source and the follow-up). Every re-execution by Hypothesis
(the shrinker, the final replay) reads the cache, so agent noise never surfaces as
``FlakyFailure``.

Error control, both ways. False violations: every candidate Hypothesis evaluates (generated,
explicit ``@example``, shrinking) that needs rounds beyond its screen is one test of the
family; at most ``max_candidates`` are tested, each at ``alpha / max_candidates``, so a
relation the agent truly satisfies fails the test with probability at most ``alpha``, however
many examples and shrink steps ran, assuming the draws of one input are independent given the
input: on the first confirmed violation a dependent-draws check (blocks of back-to-back draws,
:class:`~agentverity_props.diagnose.HealthCheck` ``dependent_draws``) runs once, and when it
fires the failure and the test's warnings say the violation may come from a response cache or
replicas rather than the agent. False passes: each candidate is dismissed with probability
at most ``beta`` when it violates at least as reliably as the stated alternative (learned
from the agent's noise, then from the violations already confirmed in this test), so shrink
steps are not lost to a clean screen on a noisy agent. A candidate that could not be decided
(budget, quota, draw allowance) is ``reject()``-ed: Hypothesis treats it as invalid, never as
a pass or a failure.

Example:
    >>> from hypothesis import given, strategies as st
    >>> from agentverity_props import agent_property, from_callable
    >>> gate = from_callable(lambda p: "block" if "ATTACK" in p else "allow")
    >>> @agent_property(agent=gate)
    ... @given(prompt=st.sampled_from(["hi", "an attack"]))
    ... def test_gate_ignores_case(check, prompt):
    ...     check.invariant(prompt, prompt.upper(), name="case")
    >>> test_gate_ignores_case()  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    CaseViolation: ...
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
import os
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._internal import hypothesis_shim
from .._internal.agent_settings import agent_settings
from .._internal.outcome import CandidateStatus
from .._internal.plugin import plugin_config, plugin_options
from .._internal.settings import current_edge, setting, speaking
from .._internal.unset import UNSET
from ..diagnose import HealthCheck, blindness_from_keys
from ..engine import EvidencePool, LoopThread
from ..errors import (
    AgentHealthWarning,
    Inconclusive,
    InvalidArgument,
    PropertyViolation,
    violation_class,
)
from ..relations import Relation, RelationOutcome, violation_threshold
from ..relations import profile as get_profile
from ._records import (
    _RECORDS_LOCK,
    RECORDS,
    Counterexample,
    PropertyConfig,
    PropertyRecord,
)

if TYPE_CHECKING:
    from ..engine import Engine, EngineConfig, Probe


#: Draws a candidate may spend before the first confirmation (then the pooled effect decides).
SCREEN_MAX_DRAWS = 40
#: Spaced blocks of the dependent-draws check on a confirmed violation, and on a diffuse
#: one (no example confirmed): a response cache or a sticky session makes every input's
#: draws agree more than independent ones, which the pooled scores read as a small effect
#: spread over the examples, so a diffuse violation is checked harder (on a sticky cache
#: in front of a clean 15%-noise gate, 8 blocks missed it in 1 run of 40;
#: tests/stats/test_dependence.py).
DEPENDENCE_BLOCKS = 8
DIFFUSE_DEPENDENCE_BLOCKS = 16
#: Times the dependent-draws check may be fed again while its pairs could not be spaced far
#: enough apart (too few inputs seen when the first violation came).
DEPENDENCE_RUNS = 3

#: Hypothesis settings for agent-priced tests (the registered profile ``agentverity``, see
#: :mod:`agentverity_props._internal.agent_settings`); a user's ``@settings`` overrides any.
AGENT_SETTINGS_DEFAULTS: dict[str, Any] = {"max_examples": 25, "deadline": None}

#: the check of the @agent_property test running now (read by the ``inner_test`` hook)
_RUNNING: contextvars.ContextVar[AgentCheck | None] = contextvars.ContextVar(
    "agentverity_check", default=None)


# ----------------------------------------------------------------------------- plumbing


@dataclass(frozen=True)
class _Options:
    agent: Any
    alpha: float
    candidate_beta: float
    epsilon: float
    layer: str
    max_candidates: int
    suppress_health_check: frozenset[HealthCheck]
    tolerance: float = 0.1
    holds_error: float = 0.05
    #: the effect a pooled VIOLATED shows exceeded (the profile's, relations/_profiles.py)
    violation: float = 0.1


# ------------------------------------------------------------------------------- check


class AgentCheck:
    """The ``check`` argument of an ``@agent_property`` test.

    Each method decides one relation between a source prompt and its follow-up (cached per
    test run) and raises the relation's own :class:`~agentverity_props.errors.PropertyViolation`
    subclass when a violation beats the agent's noise.
    """

    def __init__(self, opts: _Options, record: PropertyRecord, loop: LoopThread,
                 engine: Engine, inner: Callable[..., Any] | None) -> None:
        self._opts = opts
        self._record = record
        self._loop = loop
        self._engine = engine
        self._pool = EvidencePool()
        self._cache: dict[tuple[object, ...], RelationOutcome] = {}
        #: the arguments of the example running now (set by the ``inner_test`` hook)
        self._given: dict[str, Any] = {}
        from ..decide import EvidenceLearner
        self.learner = EvidenceLearner()
        self._anchor_keys: dict[str, str] = {}
        self._calls_at: dict[tuple[object, ...], int] = {}
        #: the arguments Hypothesis drew for each evaluated example (its @example line)
        self._given_at: dict[tuple[object, ...], dict[str, Any]] = {}
        #: examples first evaluated before any confirmation (screened, not decided in full)
        self._screened: set[tuple[object, ...]] = set()
        #: examples decided in full after the first phase (suspects of a relation)
        self._decided_full: set[tuple[object, ...]] = set()
        self._dependence: str | None = None  # the check's warning, once it is final
        self._dep_test: Any = None  # its DependenceTest, fed again while too little spaced
        self._dep_runs = 0
        self._dep_inputs = 0
        #: every distinct (relation, source, follow-up) evaluated, by relation: the pooled
        #: effect is decided over them once Hypothesis is done
        self._seen: dict[tuple[str, ...], tuple[Relation, dict[Any, Any]]] = {}

    # -- public relation methods -----------------------------------------------------

    def invariant(self, source: str, follow_up: str, *, name: str = "invariant",
                  layer: str | None = None) -> None:
        """The follow-up must get the same verdict as the source."""
        __tracebackhide__ = True  # pytest: the failure is the user's test
        rel = Relation(name, "invariant", _identity, layer=layer or self._opts.layer)
        self._decide(rel, source, follow_up)

    def monotone(self, source: str, follow_up: str, *, order: Sequence[str],
                 decreasing: bool = False, name: str = "monotone",
                 layer: str | None = None) -> None:
        """The follow-up's verdict must not be lower in ``order`` (higher if ``decreasing``)."""
        __tracebackhide__ = True  # pytest: the failure is the user's test
        rel = Relation(name, "monotone", _identity, layer=layer or self._opts.layer,
                       order=tuple(order), decreasing=decreasing)
        self._decide(rel, source, follow_up)

    def directional(self, source: str, follow_up: str, *,
                    expected: str | Callable[[str], str], name: str = "directional",
                    layer: str | None = None) -> None:
        """The follow-up's verdict must equal ``expected`` (a label or f(source verdict))."""
        __tracebackhide__ = True  # pytest: the failure is the user's test
        rel = Relation(name, "directional", _identity, layer=layer or self._opts.layer,
                       expected=expected)
        self._decide(rel, source, follow_up)

    def relation(self, rel: Relation, source: str) -> None:
        """Apply a :class:`Relation` (its transform makes the follow-up) to ``source``."""
        __tracebackhide__ = True  # pytest: the failure is the user's test
        if not isinstance(rel, Relation):
            raise InvalidArgument(f"check.relation expects a Relation, got {type(rel).__name__}")
        self._decide(rel, source, rel.apply(source))

    # -- machinery ---------------------------------------------------------------------

    def _decide(self, rel: Relation, source: str, follow_up: str) -> None:
        __tracebackhide__ = True  # pytest: the failure is the user's test
        from hypothesis import event, reject

        if not isinstance(source, str) or not isinstance(follow_up, str):
            raise InvalidArgument("check methods take the source and follow-up prompts as str")
        if source == follow_up:
            event("agentverity: follow-up identical to source (skipped)")
            reject()
        from ..engine import Probe

        src, fu = Probe.make(source), Probe.make(follow_up)
        key = (rel.decision_key(), src.fp, fu.fp)
        if key not in self._cache:
            if not self._record.confirmed:
                self._screened.add(key)
            self._cache[key] = self._evaluate(rel, src, fu)
            self._calls_at[key] = self._record.calls
            self._given_at[key] = self._given_kwargs()
        out = self._cache[key]
        self._seen.setdefault(rel.decision_key(), (rel, {}))[1].setdefault(key, (src, fu, out))
        if out.status == CandidateStatus.INCOMPLETE or (
                out.status == CandidateStatus.UNDECIDED and key not in self._screened):
            # while shrinking, an undecided step must not read as a pass (the shrinker would
            # lose it); one met before any confirmation is an example the pooled effect scores,
            # and stays one when Hypothesis replays it (a replay that turned a valid example
            # invalid would be a FlakyFailure)
            event(f"agentverity: candidate {out.status} ({out.note})")
            reject()
        if out.source is not None:
            self._anchor_keys.setdefault(src.fp, out.source)
        event(f"agentverity: {rel.name} {out.status}")
        if out.status != CandidateStatus.CONFIRMED:
            return
        raise self._violation(rel, source, follow_up, out, key)

    def _violation(self, rel: Relation, source: str, follow_up: str, out: RelationOutcome,
                   key: tuple[object, ...], *, note: str = "") -> PropertyViolation:
        """The failure of a confirmed example (recorded as the minimal one so far)."""
        rec = self._record
        # a suspect confirmed after a pooled violation, met again on the second run: from
        # here on Hypothesis shrinks, and every step is decided in full
        rec.confirmed = max(rec.confirmed, 1)
        ce = self._counterexample(rel, source, follow_up, out, self._calls_at.get(key, rec.calls),
                                  self._given_at.get(key))
        rec.minimal = ce
        cls = violation_class(rel.name)
        from ..engine import Probe

        src, fu = Probe.make(source), Probe.make(follow_up)
        c = out.decision or {}
        warning = self._dependence_warning(rel, src, fu)
        from ..decide import account

        acc = account({"alpha": rec.alpha_candidate, **c})
        how = (f"source verdict {out.source!r}, follow-up {out.follow_up!r}; "
               f"{acc.sentence()}; alpha_candidate is {rec.alpha_split()}")
        return cls(
            (f"{warning}\n  " if warning else "") +
            f"relation '{rel.name}' ({rel.rtype}) violated beyond the agent's noise: {how}"
            f"\n  source:    {source!r}\n  follow-up: {follow_up!r}"
            f"\n  reproduce: {ce.example_literal()}" + (f"\n  {note}" if note else ""))

    def _dependence_warning(self, rel: Relation, src: Probe, fu: Probe, *,
                            blocks: int = DEPENDENCE_BLOCKS) -> str:
        """The dependent-draws check on a violation (``blocks`` spaced blocks on its
        follow-up and source and on inputs seen to flip, the examples' other inputs spacing
        the pairs apart; counted in the budget): its warning, a note when the pairs could not be
        spaced SPACING calls apart (too few inputs seen yet: fed again, up to
        DEPENDENCE_RUNS times, as more are seen), or '' (also when suppressed)."""
        if HealthCheck.dependent_draws in self._opts.suppress_health_check:
            return ""
        if self._dependence is not None:
            return self._dependence
        import random

        from ..decide import DependenceTest
        from ..diagnose import SPACING, check_dependence, dependence_result, dependence_targets

        # the violation's pair first, then the examples' other inputs that were seen to
        # flip, most able to show a cache first (chosen from earlier draws: the blocks
        # are fresh, so the test keeps its alpha); every input seen spaces the pairs
        seen = {p.fp: p for _, ex in self._seen.values() for s_, f_, _ in ex.values()
                for p in (s_, f_) if p.fp not in (fu.fp, src.fp)}
        if self._dep_test is None:
            self._dep_test = DependenceTest(alpha=self._record.alpha)
        test = self._dep_test
        if len(seen) + 2 > self._dep_inputs:
            more = dependence_targets(list(seen.values()), self._pool, rel.layer,
                                      random.Random(f"dependence:{self._record.seed}"))
            spacers = sorted(seen.values(), key=lambda p: p.fp)
            self._loop.run(check_dependence(self._engine, [fu, src, *more[:4]], self._pool,
                                            test, layer=rel.layer, blocks=blocks,
                                            spacers=spacers))
            self._dep_runs += 1
            self._dep_inputs = len(seen) + 2
            led = self._engine.ledger
            self._record.calls, self._record.replayed = led.calls, led.replayed
        res = dependence_result(test, calls=0)
        spaced = test.spacing is not None and test.spacing >= SPACING
        text = res.warning() or ("" if spaced else (
            "dependent draws not ruled out: the check could not space repeats of an input "
            f"{SPACING} calls apart (too few inputs seen; fewest calls between spaced "
            f"repeats: {test.spacing or 0}), so a response cache whose entries live that "
            "long could make this violation; give the test more distinct inputs, or send a "
            "cache-busting nonce on every call (nonce_field= or nonce_header= of from_http, "
            "nonce_param= of from_callable) and rerun"))
        if res.fired or spaced or self._dep_runs >= DEPENDENCE_RUNS \
                or self._engine.stopping:
            self._dependence = text
            if text:
                self._record.warnings.append(text)
        return text

    def _counterexample(self, rel: Relation, source: str, follow_up: str,
                        out: RelationOutcome, calls_at: int,
                        given: dict[str, Any] | None = None) -> Counterexample:
        rec = self._record
        ce = Counterexample(test=rec.test, relation=rel.name, rtype=rel.rtype, source=source,
                            follow_up=follow_up, source_value=out.source,
                            follow_up_value=out.follow_up,
                            confirmation=dict(out.decision or {}),
                            kwargs=self._given_kwargs() if given is None else given,
                            calls_at_confirmation=calls_at)
        if rec.first is None:
            rec.first = ce
        return ce

    def _given_kwargs(self) -> dict[str, Any]:
        """The arguments Hypothesis passed to the user's test (for the @example literal),
        as the ``inner_test`` hook received them."""
        return {n: v for n, v in self._given.items() if _literal_ok(v)}

    def _evaluate(self, rel: Relation, src: Probe, fu: Probe) -> RelationOutcome:
        rec = self._record
        rec.candidates += 1
        out = self._loop.run(self._evaluate_async(rel, src, fu))
        led = self._engine.ledger
        rec.calls, rec.replayed = led.calls, led.replayed
        rec.tally(out, out_of_budget=lambda: self._engine.remaining == 0
                  or not self._engine.can_afford(1))
        return out

    def _may_test(self) -> bool:
        """One more candidate tested beyond its screen, within the family's quota."""
        return self._record.take_confirmation()

    async def _evaluate_async(self, rel: Relation, src: Probe, fu: Probe, *,
                              full: bool = False) -> RelationOutcome:
        from ..relations import Candidate, RelationDecider

        out = RelationOutcome(fp=src.fp, follow_up_fp=fu.fp)
        # before any confirmation a candidate that shows nothing stops early (futility): the
        # pooled effect over every example is what a pass rests on; while shrinking (or
        # ``full``: a suspect of a pooled violation), every step is decided in full
        screening = not (full or self._record.confirmed)
        decider = RelationDecider(self._engine, self._pool,
                                  alpha_candidate=self._record.alpha_candidate,
                                  candidate_beta=self._opts.candidate_beta,
                                  learner=self.learner,
                                  may_test=self._may_test, futility=screening,
                                  max_draws=SCREEN_MAX_DRAWS if screening else None)
        await decider.decide([Candidate(rel, src, fu, out)])
        return out

    @property
    def epsilon(self) -> float:
        return self._opts.epsilon

    def anchor_keys(self) -> list[str]:
        return list(self._anchor_keys.values())


def _identity(text: str) -> str:
    return text


def _literal_ok(value: Any) -> bool:
    """Whether ``repr(value)`` is Python that rebuilds it, for the ``@example(...)`` line:
    JSON-like data, and the ``Perturbation`` values (and tuples of them) the shipped
    follow-up strategies draw."""
    from ..relations import Perturbation

    if isinstance(value, Perturbation):
        return True
    if isinstance(value, (tuple, list)):
        return all(_literal_ok(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _literal_ok(v) for k, v in value.items())
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


# --------------------------------------------------------------------------- decorator


def agent_property(*, agent: Any, config: PropertyConfig | None = None,
                   epsilon: float = UNSET, alpha: float = UNSET, beta: float = UNSET,
                   budget: int | None = UNSET, layer: str = UNSET,
                   tolerance: float | None = UNSET, holds_error: float = UNSET,
                   max_candidates: int | None = UNSET, max_workers: int = UNSET,
                   timeout_s: float | None = UNSET, store_path: str | None = UNSET,
                   store_mode: str | None = UNSET, extractor: Any = UNSET,
                   suppress_health_check: Sequence[HealthCheck | str] = UNSET,
                   profile: str | None = UNSET,
                   **engine_kwargs: Any
                   ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turn a Hypothesis ``@given`` test taking ``check`` into a property of ``agent``.

    Args:
        agent: an adapter or a callable ``prompt -> str | dict | Observation``.
        config: every other setting at once (:class:`PropertyConfig`, default
            ``PropertyConfig()``: the defaults below, and ``EngineConfig(budget=4000)``).
        epsilon: the agent's noise (share of source re-draws that disagree with the
            source's modal verdict) above which the test warns that the verdict is unstable
            (``HealthCheck.unstable_verdict``): the warning is raised only when a
            ``1 - alpha`` confidence bound on the noise, from the draws this test made, lies
            above ``epsilon`` (default 0.05).
        alpha: family-wise false-violation rate of the test (all examples and shrink steps
            together; default 0.05).
        beta: false-pass rate of each candidate against its stated alternative (a violation
            at least as reliable as the agent's answers, then as the violations already
            confirmed in this test; default 0.01).
        budget: agent calls this test may spend (default 4000; ``None``: unlimited). When it
            runs out the remaining candidates are rejected and, without a confirmed
            violation, the test fails with :class:`~agentverity_props.errors.Inconclusive`.
        layer: ``verdict`` (default), ``text`` or ``tools``.
        tolerance: the largest pooled effect (excess disagreement over the generated
            examples) a pass allows; default 0.1 (the pytest option
            ``--agentverity-tolerance`` when given). Above it the test fails, with the
            pooled evidence; undecided at the budget, it is ``Inconclusive``.
        holds_error: the largest probability that a pass is wrong (the effect is in fact at
            least the tolerance; default 0.05).
        max_candidates: confirmations allowed (Bonferroni family size); default
            ``max_examples + 200`` for the shrinker.
        profile: ``quick``, ``standard`` (default) or ``thorough`` (or one registered with
            :func:`~agentverity_props.relations.register_profile`): the per-example evidence,
            its ``beta`` when ``beta`` is not given (the pytest option
            ``--agentverity-profile`` overrides it).
        store_path / store_mode: record/replay store (the pytest plugin's
            ``--agentverity-store`` is used when not given).
        max_workers, timeout_s, extractor, **engine_kwargs: any
            :class:`~agentverity_props.engine.EngineConfig` field (``retries=0``,
            ``fail_fast=1``, ...), applied over ``config.engine``.

    A keyword given explicitly overrides the same setting of ``config``; one left out takes
    the config's value. The pytest plugin's ``--agentverity-budget``, ``-alpha``,
    ``-epsilon`` and ``-tolerance`` override both.

    Apply it *above* ``@given``; ``@settings``, ``@example`` and pytest fixtures compose.
    Defaults for agents (25 examples, no deadline, no explain phase) apply wherever the
    user's ``@settings`` does not set a value.
    """
    given: dict[str, Any] = {
        "epsilon": epsilon, "alpha": alpha, "beta": beta, "budget": budget, "layer": layer,
        "tolerance": tolerance, "holds_error": holds_error, "max_candidates": max_candidates,
        "max_workers": max_workers, "timeout_s": timeout_s, "store_path": store_path,
        "store_mode": store_mode, "extractor": extractor,
        "suppress_health_check": suppress_health_check, "profile": profile,
        **engine_kwargs}
    conf, plugin_mode = _property_config(config, given)
    from ..adapters import as_adapter

    adapter = as_adapter(agent)

    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        return _decorated(test, adapter, conf, plugin_mode)

    return decorate


def _property_config(config: PropertyConfig | None, given: dict[str, Any]
                     ) -> tuple[PropertyConfig, str | None]:
    """The test's settings: ``given`` (the keywords, UNSET when left out) over ``config``;
    and a store mode given without a store path, kept apart (the path is the pytest
    plugin's, known at run time)."""
    from ..engine import configured

    plugin_mode = None
    mode, path = given["store_mode"], given["store_path"]
    if mode is not UNSET and mode is not None and path is UNSET and (
            config is None or config.engine.store_path is None):
        plugin_mode = given.pop("store_mode")
    return configured(PropertyConfig, config, given, where="agent_property"), plugin_mode


def _base_options(adapter: Any, conf: PropertyConfig) -> dict[str, Any]:
    """The settings of one run of the test (:class:`_Options`), read from its config: the
    test's own, with the pytest plugin's options already applied (:func:`plugin_config`)."""
    tolerance = conf.tolerance
    assert tolerance is not None  # resolved by PropertyConfig
    return {
        "agent": adapter, "alpha": conf.alpha, "candidate_beta": conf.candidate_beta,
        "epsilon": conf.epsilon, "layer": conf.layer,
        "suppress_health_check": frozenset(conf.suppress_health_check),
        "tolerance": tolerance, "holds_error": conf.holds_error, "judge": conf.judge,
        "violation": violation_threshold(get_profile(conf.profile), tolerance)}


def _decorated(test: Callable[..., Any], adapter: Any, conf: PropertyConfig,
               plugin_mode: str | None) -> Callable[..., Any]:
    """The property test replacing ``test`` (a Hypothesis test taking ``check``): called
    without ``check``, it runs ``test`` with the check of a fresh run
    (:func:`_run_property`)."""
    if not getattr(test, "is_hypothesis_test", False):
        raise InvalidArgument(
            f"@agent_property must be applied above @given (on {test.__name__}): "
            "@agent_property(agent=...) then @given(...) then def test(check, ...)")
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]
    params = list(inspect.signature(test).parameters.values())
    if "check" not in [p.name for p in params]:
        raise InvalidArgument(
            f"{test.__name__} must take a `check` argument that @given does not draw: "
            "def test(check, prompt): ...")
    outer_sig = inspect.Signature([p for p in params if p.name != "check"])
    _hand_check_over(test, inner)

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest: the failure is the user's test
        return _run_property(test, wrapper, inner, adapter, conf, plugin_mode, args, kwargs)

    wrapper.__signature__ = outer_sig  # type: ignore[attr-defined]
    # our defaults must not look like a user's @settings (that would make a user's
    # @settings above us an error); they are merged at call time instead.
    hypothesis_shim.drop_applied_mark(wrapper)
    wrapper._agentverity_property = True  # type: ignore[attr-defined]
    return wrapper


def _hand_check_over(test: Any, inner: Callable[..., Any]) -> None:
    """Route every example of ``test`` through Hypothesis's documented hook
    (``test.hypothesis.inner_test``): each runs with the arguments @given drew, so the check
    of the running test is handed over and those arguments are known for the @example
    line."""
    def with_check(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest: the failure is the user's test
        check = _RUNNING.get()
        if check is None:
            raise InvalidArgument(f"{test.__name__} runs under @agent_property only: call "
                                  "the decorated test, not its inner Hypothesis test")
        check._given = {k: v for k, v in kwargs.items() if k != "check"}
        kwargs["check"] = check
        return inner(*args, **kwargs)

    functools.update_wrapper(with_check, inner)
    test.hypothesis.inner_test = with_check


def _own_setting(key: str) -> str:
    """A setting of the test as its caller sets it: the decorator's keyword (``budget=``),
    and under the pytest plugin also the plugin's option."""
    own = f"{key}= in @agent_property"
    return own if current_edge() != "pytest" else f"{own} or {setting(key)}"


def _plugin_option(name: str) -> Any:
    """The pytest plugin's option for the test running now (None outside pytest)."""
    return plugin_options().get(name)


def _plugin_active() -> bool:
    """True while the pytest plugin runs this test (its options apply to it)."""
    return bool(plugin_options())


def _run_property(test: Any, wrapper: Any, inner: Any, adapter: Any, conf: PropertyConfig,
                  plugin_mode: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]
                  ) -> Any:
    __tracebackhide__ = True  # pytest: the failure is the user's test
    # under the plugin, messages name its options (--agentverity-budget N): decided here, the
    # edge where the plugin's settings meet the test's own; elsewhere the caller's terms
    with speaking("pytest" if _plugin_active() else current_edge()):
        return _run_property_in(test, wrapper, inner, adapter, conf, plugin_mode, args,
                                kwargs)


def _run_property_in(test: Any, wrapper: Any, inner: Any, adapter: Any, conf: PropertyConfig,
                     plugin_mode: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]
                     ) -> Any:
    """One run of the property test: its settings (the test's config with the pytest
    plugin's options applied through its constructor, :func:`plugin_config`), its store and
    Hypothesis settings, a fresh record, engine and check; then the test itself
    (:func:`_run_test`), the pooled effects once it passed, and its health warnings. The
    engine is closed and the record's calls counted however the test ends."""
    __tracebackhide__ = True  # pytest: the failure is the user's test
    from ..engine import Engine

    conf = plugin_config(conf, plugin_options())
    base = _base_options(adapter, conf)
    store_path, mode = _store_of(conf.engine, plugin_mode)
    merged = _apply_settings(test, wrapper, replayable=mode != "off")
    m = conf.max_candidates or (merged.max_examples + 200)
    name = f"{getattr(inner, '__module__', '?')}::{getattr(inner, '__qualname__', '?')}"
    record = _new_record(test, name, base, alpha=conf.alpha, max_candidates=m,
                         store_path=store_path)
    cfg = replace(conf.engine, store_path=store_path, store_mode=mode)  # type: ignore[arg-type]
    loop = LoopThread()
    # this test's draws are its own in the store: every test numbers a probe's draws from 0,
    # so two tests sharing a prompt would otherwise claim (and, recording, replace) each
    # other's draws, and a replay would read draws this test never made
    scope = _plugin_option("test") or name
    judged = None
    if base["judge"] is not None:  # the judge's label is the verdict (docs/judges.md)
        from ..judge import prepare_judged
        judged, outer = prepare_judged(base["agent"], base["judge"], cfg)
        engine = Engine(judged, outer, offline=True)
    else:
        engine = Engine(base["agent"], cfg, store_scope=scope if mode != "off" else None)
    opts = _Options(max_candidates=m, **{k: v for k, v in base.items() if k != "judge"})
    check = AgentCheck(opts, record, loop, engine, inner)
    with _RECORDS_LOCK:
        RECORDS.append(record)
    token = _RUNNING.set(check)
    try:
        result = _run_test(test, args, kwargs, check, record, engine)
        seed = hypothesis_shim.replay_seed(test)

        def rerun() -> None:
            # the same examples again (cached outcomes: no calls) until the confirmed suspect,
            # which now fails: Hypothesis shrinks it
            __tracebackhide__ = True
            with hypothesis_shim.seeded(test, seed):
                test(*args, check=check, **kwargs)

        _after_pass(record, check, base, rerun)
        _warn_health(record)
        return result
    finally:
        _RUNNING.reset(token)
        loop.run(engine.aclose())
        loop.close()
        if judged is not None:
            judged.close()
        led = engine.ledger
        record.calls, record.replayed = led.calls, led.replayed


def _store_of(eng_cfg: EngineConfig, plugin_mode: str | None) -> tuple[Any, str]:
    """The store the test records to or replays from, and its mode: the test's own store
    (the plugin's mode beats ``auto``), else the pytest plugin's (``off`` without one)."""
    if eng_cfg.store_mode != "off":  # a store of its own; the plugin's mode beats "auto"
        mode: str = eng_cfg.store_mode
        if mode == "auto":
            mode = _plugin_option("store_mode") or mode
        return eng_cfg.store_path, mode
    # no store of its own: the pytest plugin's
    store_path = _plugin_option("store")
    return store_path, (plugin_mode or _plugin_option("store_mode")
                        or ("auto" if store_path else "off"))


def _apply_settings(test: Any, wrapper: Any, *, replayable: bool) -> Any:
    """Give ``test`` the Hypothesis settings of an agent-priced test: the user's
    ``@settings`` (above or below the decorator) over the agent defaults, or the loaded
    profile when there is no ``@settings`` anywhere; returns them."""
    above = hypothesis_shim.settings_applied(wrapper)
    below = hypothesis_shim.settings_applied(test)
    if not hasattr(test, "_agentverity_original_settings"):
        test._agentverity_original_settings = hypothesis_shim.settings_of(test)
    user_settings = (hypothesis_shim.settings_of(wrapper) if above
                     else test._agentverity_original_settings)
    # no @settings anywhere: the loaded profile is the user's choice
    merged = agent_settings(user_settings if above or below else None,
                            replayable=replayable)
    hypothesis_shim.use_settings(test, merged)
    hypothesis_shim.copy_decorations(wrapper, test)
    return merged


def _new_record(test: Any, name: str, base: dict[str, Any], *, alpha: float,
                max_candidates: int, store_path: Any) -> PropertyRecord:
    """The record of this run of the test, with the alpha of each example confirmed one by
    one: the relations' split (decide/_alpha.py) gives half of ``alpha`` to those examples
    (each at alpha / 2 / max_candidates), half to the pooled effects."""
    from ..decide import candidate_alpha
    return PropertyRecord(test=name, agent=base["agent"].identity, alpha=alpha,
                          alpha_candidate=candidate_alpha(alpha, max_candidates),
                          max_candidates=max_candidates,
                          seed=hypothesis_shim.seed_of(test),
                          store=_store_name(store_path))


def _run_test(test: Any, args: tuple[Any, ...], kwargs: dict[str, Any], check: AgentCheck,
              record: PropertyRecord, engine: Engine) -> Any:
    """Run the Hypothesis test with ``check`` and return its result; when it raises, the
    record's status says how it ended (``failed`` on a violation, ``error`` otherwise), and
    a run where Hypothesis found no candidate it could decide raises :class:`Inconclusive`
    (with the agent's failures when its calls failed) instead."""
    __tracebackhide__ = True  # pytest: the failure is the user's test
    try:
        return test(*args, check=check, **kwargs)
    except PropertyViolation:
        record.status = "failed"
        raise
    except Exception as exc:
        from hypothesis.errors import Unsatisfiable
        if isinstance(exc, Unsatisfiable) and record.undecided:
            record.status = "inconclusive"
            failing = _failure_cause(engine)
            fix = ("fix the agent (or its verdict extraction) and rerun" if failing else
                   f"raise {_own_setting('budget')}")
            raise Inconclusive(
                f"no candidate could be decided ({record.undecided} undecided, "
                f"{record.calls} calls, budget exhausted: {record.budget_exhausted}"
                + (f"; the agent's calls failed: {failing}" if failing else "")
                + f") — {fix}") from exc
        record.status = "failed" if _contains_violation(exc) else "error"
        raise
    except BaseException as exc:
        if _contains_violation(exc):
            record.status = "failed"
        else:
            record.status = "error"
        raise


def _store_name(store: Any) -> str | None:
    """The store as the record names it: its path, or a store object's class."""
    if store is None or isinstance(store, str):
        return store
    if isinstance(store, os.PathLike):
        return os.fspath(store)
    return type(store).__name__


def _warn_health(record: PropertyRecord) -> None:
    """Each health finding of a passing test as an :class:`AgentHealthWarning` (users filter
    it, or turn it into an error: ``-W error::agentverity_props.errors.AgentHealthWarning``)."""
    __tracebackhide__ = True  # pytest: the warning is the user's test's
    for text in record.warnings:
        try:
            warnings.warn(AgentHealthWarning(f"{record.test}: {text}"), stacklevel=4)
        except AgentHealthWarning:
            record.status = "failed"  # the user made health findings errors
            raise


def _failure_cause(engine: Engine) -> str | None:
    """Why the agent's draws failed, when they did: the engine's stop cause, else the first
    failure sample (already redacted by the engine)."""
    if engine.stop_cause:
        return engine.stop_cause
    led = engine.ledger.to_dict()
    samples = [m for ms in (led.get("failure_samples") or {}).values() for m in ms]
    return samples[0] if samples else None


def _contains_violation(exc: BaseException) -> bool:
    if isinstance(exc, PropertyViolation):
        return True
    return any(_contains_violation(e) for e in getattr(exc, "exceptions", ()))


def _pooled_effects(record: PropertyRecord, check: AgentCheck, base: dict[str, Any],
                    rerun: Callable[[], None] | None = None) -> None:
    """The relation decision over the distinct examples the test generated, in the one
    order of ``run`` (:func:`~agentverity_props.relations.decide_in_order`) with this
    test's steps (:class:`_PropertySteps`): each example's screen ran while Hypothesis
    generated it; the examples it flagged are decided in full; then the pooled effect of
    every relation, at ``alpha / 2`` over the relations: a violation fails the test, an
    undecided one (budget) is ``Inconclusive``."""
    __tracebackhide__ = True  # pytest: the failure is the user's test
    from ..relations import decide_in_order

    steps = _PropertySteps(record, check, base, rerun)
    if steps.rels:
        _now(decide_in_order(steps, screened=True, deterministic=False))


def _now(coro: Any) -> None:
    """Run a coroutine whose steps never suspend (each blocks on the engine's loop thread
    itself, ``check._loop.run``) to its end, here: the user's test may itself be running
    inside an event loop, where ``asyncio.run`` is refused."""
    __tracebackhide__ = True  # pytest: the failure is the user's test
    try:
        coro.send(None)
    except StopIteration:
        return
    coro.close()
    raise RuntimeError("a property's relation step suspended outside the engine's loop")


class _PropertySteps:
    """``@agent_property``'s steps of the relation decision (relations/_order.py).

    ``local``: the examples the screen flagged (e-value >= ``FLAG`` either way), then, on a
    pooled violation, its examples most unlike their sources, are decided in full, at most
    ``LOCAL_SUSPECTS`` each time (each at ``alpha_candidate``, within the candidates' family
    quota). One that is confirmed is met again on a second run of the Hypothesis test over the
    same examples (``rerun``; cached outcomes cost no call), where it fails and Hypothesis
    shrinks it. Only if none is confirmed is a pooled violation reported as diffuse."""

    def __init__(self, record: PropertyRecord, check: AgentCheck, base: dict[str, Any],
                 rerun: Callable[[], None] | None) -> None:
        self.record, self.check, self.base, self.rerun = record, check, base, rerun
        self.rels = [(rel, seen) for rel, seen in check._seen.values() if seen]

    async def deterministic(self) -> bool:
        return False  # the meter does not run before a property test

    async def screen(self) -> None:
        """Each example was screened when Hypothesis ran it (``AgentCheck._evaluate``)."""

    async def local(self, *, most: int | None) -> None:
        __tracebackhide__ = True  # pytest: the failure is the user's test
        from ..relations import Candidate

        for rel, seen in self.rels:
            # examples whose screen already leaned toward a violation (either direction), as
            # `run` tests its flagged inputs before the pooled epochs: a bug on a few
            # examples is found on them, not diluted in the pooled mean
            flagged = [Candidate(rel, src, fu, RelationOutcome(fp=src.fp, follow_up_fp=fu.fp))
                       for src, fu, out in seen.values()
                       if out.status == CandidateStatus.UNDECIDED
                       and _screen_evidence(out) >= FLAG]
            _confirm_suspects(self.record, self.check, rel, flagged, self.rerun)

    async def pooled(self, *, max_epochs: int | None) -> None:
        __tracebackhide__ = True  # pytest: the failure is the user's test
        from ..relations import (
            Candidate,
            PooledEffects,
            RelationResult,
            effect_jobs,
            summarise,
        )

        record, check, base = self.record, self.check, self.base
        groups = []
        probes: dict[str, Any] = {}
        pair = None
        if check.learner.noise_n:
            u = check.learner.noise()
            pair = 2 * u * (1 - u)
        for rel, seen in self.rels:
            cands: list[Candidate] = []
            for src, fu, out in seen.values():
                if out.status == CandidateStatus.INCOMPLETE:
                    continue
                probes.setdefault(src.fp, src)
                cands.append(Candidate(rel, src, fu,
                                       RelationOutcome(fp=src.fp, follow_up_fp=fu.fp)))
            groups.append((RelationResult(rel), cands))
        # the noise behind `pair` is the learner's, measured on every layer the test checks
        jobs = effect_jobs(groups, tolerance=base["tolerance"], alpha=record.alpha,
                           holds_error=base["holds_error"], pair_disagreement=pair,
                           verdict_prior_only=False, family=len(self.rels),
                           violation=base["violation"])
        if not jobs:
            return
        check._loop.run(PooledEffects(check._engine, check._pool, jobs, list(probes.values()),
                                      seed=record.seed or 0, noise=pair,
                                      adapt_noise=True).run(max_epochs=max_epochs))
        led = check._engine.ledger
        record.calls, record.replayed = led.calls, led.replayed
        failing = None
        for j in jobs:
            st = summarise(j)
            record.effects[j.result.relation.name] = st
            if st["status"] == "violated" and failing is None:
                failing = j
        if failing is not None:
            self._violated(failing)
        undecided = [j for j in jobs if j.test.status == "undecided"]
        if undecided:
            record.status = "inconclusive"
            names = ", ".join(j.result.relation.name for j in undecided)
            raise Inconclusive(
                f"the effect of {names} over the generated examples could not be bounded "
                f"below the tolerance {base['tolerance']:g} ({undecided[0].note or 'undecided'}; "
                f"{record.calls} calls) — raise {_own_setting('budget')}, or "
                f"{_own_setting('tolerance')}")

    def _violated(self, failing: Any) -> None:
        """A pooled violation: its examples most unlike their sources decided in full (a
        confirmed one fails the test, shrunk), else the violation reported as diffuse."""
        __tracebackhide__ = True  # pytest: the failure is the user's test
        from ..relations import summarise

        record, check = self.record, self.check
        record.status = "failed"
        rel, st = failing.result.relation, summarise(failing)
        worst = sorted(failing.candidates, key=lambda c: -_example_excess(check, c))[:3]
        _confirm_suspects(record, check, rel, failing.candidates, self.rerun)
        shown = "".join(f"\n  example: {c.source.text!r} -> {c.follow_up.text!r}"
                        for c in worst)
        # the dependent-draws check, as for a confirmed example: a cache or a sticky session
        # makes draws of one input agree more than independent ones would, which the pooled
        # scores read as an effect
        warning = check._dependence_warning(rel, worst[0].source, worst[0].follow_up,
                                            blocks=DIFFUSE_DEPENDENCE_BLOCKS) if worst else ""
        raise violation_class(rel.name)(
            (f"{warning}\n  " if warning else "") +
            f"relation '{rel.name}' ({rel.rtype}) violated over the generated examples: "
            f"effect {st['estimate']:+.3f}, bounds [{st['lower']:+.3f}, {st['upper']:+.3f}] "
            f"above the tolerance {st['tolerance']:g} (excess disagreement over "
            f"{len(failing.candidates)} examples; wrong with probability <= "
            f"{st['alpha']:.3g}); the violation is diffuse, no single example was confirmed, "
            f"so none is minimal — the examples most unlike their sources:{shown}")


#: Examples of a relation decided in full after the first phase, most unlike their
#: sources first: those its screen flagged, then (on a pooled violation) its most unlike.
LOCAL_SUSPECTS = 3
#: A screen's e-value (either direction) that flags its example (no alpha is spent: the
#: example is then decided in full at alpha_candidate).
FLAG = 4.0


def _screen_evidence(out: RelationOutcome) -> float:
    d = out.decision or {}
    return max(float(d.get("e_violation") or 0.0), float(d.get("e_reverse") or 0.0))


def _confirm_suspects(record: PropertyRecord, check: AgentCheck, rel: Relation,
                      candidates: Sequence[Any], rerun: Callable[[], None] | None) -> None:
    """Decide the ``LOCAL_SUSPECTS`` examples most unlike their sources in full; raise the
    violation of a confirmed one (shrunk by ``rerun`` when it regenerates it). Returns when
    none is confirmed."""
    __tracebackhide__ = True  # pytest: the failure is the user's test
    import asyncio

    scored = [(_example_excess(check, c), i, c) for i, c in enumerate(candidates)
              if (rel.decision_key(), c.source.fp, c.follow_up.fp) not in check._decided_full]
    suspects = [c for x, _, c in sorted(scored, key=lambda t: (-t[0], t[1])) if x > 0]
    suspects = suspects[:LOCAL_SUSPECTS]
    if not suspects:
        return
    check._decided_full.update((rel.decision_key(), c.source.fp, c.follow_up.fp)
                               for c in suspects)

    async def decide_all() -> list[RelationOutcome]:
        return list(await asyncio.gather(*(
            check._evaluate_async(rel, c.source, c.follow_up, full=True) for c in suspects)))

    outs = check._loop.run(decide_all())
    led = check._engine.ledger
    record.calls, record.replayed = led.calls, led.replayed
    found = None
    for c, out in zip(suspects, outs, strict=True):
        key = (rel.decision_key(), c.source.fp, c.follow_up.fp)
        record.raw_violations += out.raw
        if out.status == CandidateStatus.CONFIRMED:
            check._cache[key] = out
            check._calls_at[key] = record.calls
            found = found or (c, out, key)
    if found is None:
        return
    if rerun is not None:
        rerun()  # raises the violation, shrunk, when Hypothesis regenerates the example
    c, out, key = found
    raise check._violation(
        rel, c.source.text, c.follow_up.text, out, key,
        note="found among the examples of a pooled violation; not shrunk (the second run of "
             "the test did not generate it again)")


def _example_excess(check: AgentCheck, c: Any) -> float:
    from ..relations import suspicion
    layer = c.relation.layer
    keys = [k for k in check._pool.get(c.source.fp).keys(layer) if k is not None]
    fkeys = [k for k in check._pool.get(c.follow_up.fp).keys(layer) if k is not None]
    return suspicion(c.relation, keys, fkeys)


def _after_pass(record: PropertyRecord, check: AgentCheck, base: dict[str, Any],
                rerun: Callable[[], None] | None = None) -> None:
    __tracebackhide__ = True  # pytest: the failure is the user's test
    _pooled_effects(record, check, base, rerun)
    suppressed: frozenset[HealthCheck] = base["suppress_health_check"]
    if record.budget_exhausted:
        record.status = "inconclusive"
        raise Inconclusive(
            f"agent-call budget ({record.calls} calls) ran out with {record.undecided} "
            f"candidate(s) undecided and no confirmed violation — raise "
            f"{_own_setting('budget')}")
    keys = check.anchor_keys()
    if len(keys) >= 10 and HealthCheck.blind_probe_set not in suppressed:
        blind = blindness_from_keys(keys, alpha=record.alpha)
        if blind.status == "blind":
            record.warnings.append(
                f"blind: {blind.share:.0%} of {len(keys)} generated sources got verdict "
                f"'{blind.modal_verdict}'; relations may pass vacuously (use borderline "
                "regions, `agentverity-props enlarge`, or suppress_health_check="
                "[HealthCheck.blind_probe_set])")
    if HealthCheck.unstable_verdict not in suppressed:
        from ..decide import beta_cs_interval
        k, n = int(check.learner.noise_k), int(check.learner.noise_n)
        eps = check.epsilon
        if n and beta_cs_interval(k, n, record.alpha)[0] > eps:
            record.warnings.append(
                f"unstable verdict: {k}/{n} source re-draws disagreed with the source's modal "
                f"verdict (noise above epsilon={eps:g} at confidence {1 - record.alpha:g}); "
                "violations cost more draws to decide on a noisy agent (see the meter)")
