"""``run``: meter, then blindness, the dependent-draws check, then noise-calibrated
relations, all through one engine.

Each phase reuses the draws of the phases before it (meter pairs are blindness samples and
relation sources), and the calls each phase actually spent are reported.

Multiplicity: a *finding* (exit 1) is a blind probe set, a violated relation, dependent
draws or an agent that changed during the run. ``alpha`` is family-wise over the four:
relations are tested at ``alpha / 2`` (split again by ``decide.relation_alpha_split``: ``alpha /
(4 R)`` per relation's pooled test, ``alpha / 4`` over the inputs tested one by one), blindness
at ``alpha / 4``, the dependence check at ``alpha / 8`` and the change check at ``alpha / 8``
(``decide/_alpha.py``), so P(any false finding) <= alpha. The meter's call is not a finding; its own
error rate is ``alpha`` in the direction it states. Every guarantee assumes the draws of one
input are independent given the input (the dependence check tests that) and that the agent
does not change during the run (the change check tests that it did not become noisier after
the meter).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .._internal.inputs import clean_inputs
from .._internal.outcome import CandidateStatus, Exit, RelationStatus, StopReason, exit_code
from .._internal.renamed import renamed_attribute as warn_renamed_attribute
from .._internal.settings import setting
from ..decide import RUN_SHARES
from ..diagnose import (
    CHANGE_MAX_TRIALS,
    CHANGE_TRIAL_DRAWS,
    DEFAULT_ALPHA,
    DEFAULT_INDIFFERENCE,
    DEFAULT_LAYER,
    DEFAULT_TOLERANCE,
    PAIRS,
    SPACING,
    BlindnessResult,
    ChangeResult,
    DependenceResult,
    HealthCheck,
    MeterConfig,
    MeterResult,
    blindness_from_keys,
    change_result,
    check_change,
    check_dependence,
    dependence_result,
    dependence_targets,
    resolve_epsilon,
    resolve_tolerance,
    run_meter,
    validate_meter_args,
)
from ..engine import UNSET, Configurable, EngineConfig, EvidencePool, ledger_part
from ..errors import DrawStopped, InvalidArgument
from ..observation import VerdictExtractor
from ..relations import (
    Candidate,
    Profile,
    Relation,
    RelationOutcome,
    RelationResult,
    builtin_relations,
    end_pending,
    flip_of,
    summarise,
    two_sided,
    violation_threshold,
)
from ..relations import profile as get_profile
from ..results import RunDocument
from ._plan_tokens import NoiseEstimate, noise_of_draws
from ._routes import Routes, route_breakdown

#: A HOLDS is wrong with at most this probability per relation (its effect is in fact at
#: least the tolerance): the upper confidence bound is a 95% one.
DEFAULT_HOLDS_ERROR = 0.05

if TYPE_CHECKING:
    from ..engine import Engine, EngineConfig, Probe
    from ..observation import Observation
    from ..relations import EffectJob


SCHEMA = RunDocument.SCHEMA
#: Draws one (relation, input) may spend in ``run`` before it is undecided: an input on which
#: the agent is close to a coin flip cannot be decided at the family's alpha in any sensible
#: number of calls, and ``run`` says so instead of spending the budget there.
RUN_MAX_DRAWS = 120
#: Rounds an input tested on its own may take (a source and a follow-up draw each).
RUN_MAX_ROUNDS = RUN_MAX_DRAWS // 2
BLINDNESS_TOP_UP = 64
#: Inputs seen to flip that the dependence check spends spaced blocks on after the meter
#: (twice when the first set leans towards dependence), and again after the relations, or
#: before a blind or 'verdict-deterministic' call is reported; each set is a rotation of at
#: least SPACING / 2 inputs (spacers fill it up), every one drawn PAIRS times two.
DEPENDENCE_BLOCKS = 2
DEPENDENCE_TOP_UP = 6
DEPENDENCE_MAX_CALLS = 4 * 2 * PAIRS * (SPACING // 2 + DEPENDENCE_TOP_UP)
#: Shares of ``alpha`` for the four kinds of finding (module docstring, "Multiplicity";
#: decide's ``RUN_SHARES``).
ALPHA_SHARES = RUN_SHARES


def _required(labels: Sequence[str]) -> tuple[str, ...]:
    """``require_verdicts`` as a tuple of distinct non-empty labels (eagerly checked)."""
    if isinstance(labels, str):
        raise InvalidArgument("require_verdicts must be a sequence of labels, not one str "
                              "(e.g. ('faq', 'refund'))")
    out = tuple(dict.fromkeys(labels))
    if any(not isinstance(x, str) or not x for x in out):
        raise InvalidArgument("require_verdicts must hold non-empty str labels")
    return out


@dataclass(frozen=True, init=False)
class RunConfig(Configurable):
    """Everything ``run`` can be told: the run's own settings plus one :class:`EngineConfig`.

    ``epsilon`` (or a ``precision`` preset cheap/balanced/strict = 0.10/0.05/0.01) is the
    meter's tolerance on the pair-disagreement rate; ``alpha`` the error rate of every
    decision. ``profile`` (``quick``, ``standard`` — the default —, ``thorough`` or one
    registered with :func:`~agentverity_props.relations.register_profile`) chooses the
    per-input evidence relations buy (relations/_profiles.py); ``edits_per_input``
    overrides its follow-ups per input from a relation's family (``auto``, ``all`` or a
    number); ``confirm_all`` tests every flagged input of a relation on its own (by default a
    relation's first confirmed counterexamples stop its local tests). How the agent is
    called (``budget``, ``max_workers``, ``timeout_s``, the store, ...) is the nested
    ``engine``; those fields may also be given as keywords, which are applied over
    ``engine`` (``RunConfig(budget=200)`` is ``RunConfig(engine=EngineConfig(budget=200))``)
    and read back as attributes. With a
    ``store_path`` and no ``store_mode`` the store mode is ``auto``. ``tolerance`` (the
    largest relation effect a HOLDS allows) reads back resolved: as given, else the
    ``precision`` preset's, else the profile's (``quick``: 0.2), else 0.1. Change settings
    with :meth:`with_fields`, which rebuilds the config through this constructor.

    >>> RunConfig(budget=200, max_workers=1).engine.budget
    200
    """

    epsilon: float | None
    precision: str | None
    alpha: float
    indifference: float
    layer: str
    max_meter_calls: int | None
    blindness_threshold: float
    suppress_health_check: Sequence[HealthCheck | str]
    include_inputs: bool
    engine: EngineConfig
    tolerance: float
    require_verdicts: tuple[str, ...]
    profile: Profile
    edits_per_input: int | str | None
    confirm_all: bool
    judge: Any
    judge_labels: tuple[str, ...] | None

    def __init__(self, *, epsilon: float | None = None, precision: str | None = None,
                 alpha: float = DEFAULT_ALPHA, indifference: float = DEFAULT_INDIFFERENCE,
                 layer: str = DEFAULT_LAYER,
                 max_meter_calls: int | None = None, blindness_threshold: float = 0.9,
                 suppress_health_check: Sequence[HealthCheck | str] = (),
                 include_inputs: bool = False, engine: EngineConfig | None = None,
                 tolerance: float | None = None, require_verdicts: Sequence[str] = (),
                 profile: str | Profile | None = None,
                 edits_per_input: int | str | None = None, confirm_all: bool = False,
                 judge: Any = None, judge_labels: str | Sequence[str] | None = None,
                 **engine_fields: Any) -> None:
        from ..engine import engine_with

        if engine is not None and not isinstance(engine, EngineConfig):
            raise InvalidArgument("RunConfig(engine=...) must be an EngineConfig")
        eng = engine_with(engine, engine_fields, where="RunConfig")
        for name, value in (("epsilon", epsilon), ("precision", precision), ("alpha", alpha),
                            ("indifference", indifference), ("layer", layer),
                            ("max_meter_calls", max_meter_calls),
                            ("blindness_threshold", blindness_threshold),
                            ("suppress_health_check", suppress_health_check),
                            ("include_inputs", include_inputs), ("engine", eng),
                            ("tolerance", tolerance),
                            ("require_verdicts", _required(require_verdicts)),
                            ("profile", get_profile(profile)),
                            ("edits_per_input", edits_per_input),
                            ("confirm_all", bool(confirm_all))):
            object.__setattr__(self, name, value)
        # the judge grading a free-text agent's answers (docs/judges.md), checked now
        object.__setattr__(self, "judge_labels", None)
        object.__setattr__(self, "judge", None)
        if judge_labels is not None and judge is None:
            raise InvalidArgument("judge_labels= needs judge= (the agent grading the answers)")
        if judge is not None:
            from ..judge import as_judge, parse_labels
            object.__setattr__(self, "judge_labels", parse_labels(judge_labels))
            object.__setattr__(self, "judge", as_judge(judge, self.judge_labels))
        # each default resolved once, here: the layers below read ``eps`` / ``tolerance``
        eps = resolve_epsilon(self.epsilon, self.precision)
        object.__setattr__(self, "_eps", eps)
        object.__setattr__(self, "tolerance", resolve_tolerance(tolerance, self.precision,
                                                                self.profile.tolerance))
        # the as-given value of a field resolved here: ``with_fields`` rebuilds from it
        object.__setattr__(self, "_given", {"tolerance": tolerance})
        if edits_per_input is not None:
            from ..relations import per_input
            per_input(builtin_relations("whitespace")[0], 1, edits_per_input)  # validates
        validate_meter_args(epsilon=eps, alpha=self.alpha, indifference=self.indifference,
                            layer=self.layer, max_calls=self.max_meter_calls)
        HealthCheck.parse(self.suppress_health_check)
        if not (0.5 < self.blindness_threshold < 1.0):
            raise InvalidArgument(
                f"blindness_threshold={self.blindness_threshold!r} must be in (0.5, 1)")
        if eng.error_policy not in ("raise", "record"):
            raise InvalidArgument(f"error_policy={eng.error_policy!r}; use 'raise' or 'record'")

    # the engine's settings, read through (one source of truth: ``engine``)
    @property
    def budget(self) -> int | None:
        return self.engine.budget

    @property
    def max_workers(self) -> int:
        return self.engine.max_workers

    @property
    def timeout_s(self) -> float | None:
        return self.engine.timeout_s

    @property
    def error_policy(self) -> str:
        return self.engine.error_policy

    @property
    def store_mode(self) -> str:
        return self.engine.store_mode

    @property
    def extractor(self) -> VerdictExtractor:
        return self.engine.extractor

    @property
    def seed(self) -> int:
        return self.engine.seed

    @property
    def eps(self) -> float:
        """The meter's epsilon (explicit, or the precision preset's, default 0.05), resolved
        once when the config was made."""
        return self._eps  # type: ignore[attr-defined]

    @property
    def tol(self) -> float:
        """Deprecated: ``tolerance`` (the same value, resolved when the config was made)."""
        warn_renamed_attribute("RunConfig", "tol", "tolerance")
        return self.tolerance

    def engine_config(self) -> EngineConfig:
        return self.engine

    @property
    def change_alpha(self) -> float:
        """The changed-agent check's share of ``alpha`` (module docstring, "Multiplicity")."""
        return self.alpha * ALPHA_SHARES["stationarity"]



@dataclass(frozen=True)
class RunResult:
    """The result of :func:`run`: diagnostics first, relations after."""

    meter: MeterResult
    blindness: BlindnessResult
    relations: tuple[RelationResult, ...]
    ledger: dict[str, Any]
    phase_calls: dict[str, int]
    agent: str
    config: RunConfig
    stop_reason: str = ""
    inputs: dict[str, str] = field(default_factory=dict, repr=False)
    dependence: DependenceResult | None = None
    change: ChangeResult | None = None
    routes: Routes | None = None
    judge: dict[str, Any] | None = None
    #: the agent's pair disagreement over every source draw of the run (the figure to give
    #: ``plan``: the meter's own stops early on a run of disagreements and overstates it)
    noise: NoiseEstimate | None = None

    def guarantee(self) -> str:
        """The overall statement printed with every run."""
        a = self.config.alpha
        return (f"P(any false finding) <= {a:g} family-wise: relations at "
                f"{a * ALPHA_SHARES['relations']:g} (half over the pooled effects, half over "
                "the inputs tested one by one); each HOLDS is wrong with probability <= "
                f"{DEFAULT_HOLDS_ERROR:g} (the effect is in fact >= the tolerance "
                f"{self.config.tolerance:g}){self._fixed_caveat()}; "
                f"blindness at {a * ALPHA_SHARES['blindness']:g}, dependent draws at "
                f"{a * ALPHA_SHARES['dependence']:g}, a changed agent at "
                f"{a * ALPHA_SHARES['stationarity']:g}; the meter's call is wrong with "
                f"probability <= {a:g}{self._meter_caveat()}; all assuming the draws of one "
                "input are independent given the input (the dependence check tests it) and "
                "that the agent does not change during the run ("
                + self._change_note() + ")" + self._judge_note())

    def _judge_note(self) -> str:
        """With a judge: the verdicts are its consensus labels, and what that leaves of its
        noise in every decision above."""
        j = self.judge
        if j is None:
            return ""
        noise = j.get("noise") or {}
        wrong = noise.get("consensus_error")
        margin = j.get("margin") or 1
        if margin <= 1:
            return ("; the verdicts are one judge call each, so every decision above is about "
                    "the agent's answers as this judge grades them, its noise included")
        bound = "" if wrong is None else (f" (wrong with probability <= {wrong:.4f} at the "
                                          "judge's measured noise)")
        lead = (f"a label leading by the judge's calls needed for an error below "
                f"{j.get('consensus_error_target'):g}, {margin} at the end"
                if j.get("adaptive_margin") else f"a label leading by {margin} of its calls")
        return ("; the verdicts are the judge's consensus on each recorded answer "
                f"({lead}){bound}: every decision above is about the agent's answers as "
                "this judge grades them")

    def _fixed_caveat(self) -> str:
        """A recording's pooled effects are decided on a fixed sample: say the rates are
        approximate there (decide.FixedEffect)."""
        if any((r.effect or {}).get("test") for r in self.relations):
            return (", and its pooled effect's rates on a recording are normal approximations "
                    "over every recorded draw")
        return ""

    def _meter_caveat(self) -> str:
        m = self.meter
        return f" ({m.caveat})" if m.caveat else ""

    def _change_note(self) -> str:
        c = self.change
        if c is None or c.status in ("not run", "suppressed"):
            why = "suppressed" if c is not None and c.status == "suppressed" else "not run"
            return f"not tested in this run: the change check was {why}"
        if c.status == "incomplete":
            return (f"not fully tested: the change check stopped after {c.late_trials} later "
                    "trial(s), before its own stop (budget, interrupt or failed draws)")
        return ("the change check tests that it did not become noisier after the meter, "
                f"on {c.late_trials} later trial(s)")

    @property
    def complete(self) -> bool:
        """False when evidence is missing: a failed draw, an interrupt, a stop, or a budget
        that ran out before the meter decided (whether a trial was in flight when it ran out
        must not decide this)."""
        budget_cut = (self.meter.stop_reason == StopReason.BUDGET
                      and self.meter.call == "undecided")
        return (self.meter.complete and not budget_cut and not self.ledger.get("interrupted")
                and not self.stop_reason
                and not (self.change is not None and self.change.status == "incomplete")
                and not any(r.status in (RelationStatus.INCOMPLETE, RelationStatus.NOT_TESTED)
                            for r in self.relations))

    @property
    def findings(self) -> list[str]:
        out = []
        if self.change is not None and self.change.fired:
            out.append(self.change.warning())
        if self.dependence is not None and self.dependence.fired:
            out.append(self.dependence.warning())
        if self.blindness.status == "blind":
            out.append(f"blind probe set: '{self.blindness.modal_verdict}' is "
                       f"{self.blindness.share:.0%} of verdicts")
        unexercised_ok = HealthCheck.unexercised_relation in HealthCheck.parse(
            self.config.suppress_health_check)
        for r in self.relations:
            if r.status == RelationStatus.VIOLATED:
                out.append(f"relation '{r.relation.name}' violated: {r.statement()}"
                           + (f" [{ON_DEPENDENT_DRAWS}]" if self.on_dependent_draws else ""))
            elif r.status == RelationStatus.NOT_EXERCISED and not unexercised_ok \
                    and not r.unexercised:
                out.append(f"relation '{r.relation.name}' was not exercised: its transform "
                           "left every input unchanged (HealthCheck.unexercised_relation)")
        missing = self.routes.finding() if self.routes is not None else None
        if missing:
            out.append(missing)
        return out

    @property
    def advice(self) -> list[str]:
        """What to do next when the evidence is incomplete or undecided (never a guess that a
        rerun would not follow: budgets are the calls spent plus a floor for what is left)."""
        out: list[str] = []
        budget_named = False  # a line above already says which budget to give
        budget = self.config.budget
        calls = int(self.ledger.get("calls", 0))
        cause = self.ledger.get("stop_cause")
        if cause:
            out.append(f"the agent is failing: {cause}")
            return out
        if self.on_dependent_draws:
            out.append("the draws were found dependent, so no violation or "
                       "'verdict-deterministic' call of this run stands on them (exit 2): "
                       "remove the response cache or sticky state, or send a cache-busting "
                       "nonce on every call (nonce_field= or nonce_header= of from_http, "
                       "nonce_param= of from_callable), then rerun")
        pending = [r for r in self.relations if r.status == RelationStatus.INCOMPLETE]
        if budget is not None and calls >= budget and (pending or not self.meter.complete):
            from ..diagnose import DEFAULT_MAX_CALLS
            meter_cap = self.config.max_meter_calls or DEFAULT_MAX_CALLS
            # likely: eight epochs per undecided relation (a 15%-noise agent needs about
            # five), its follow-ups and a share of the source draws; sure: every cap (the
            # meter's, the blindness top-up, the dependence and change checks, each relation's
            # score cap in whole epochs of two sources and two follow-ups, the per-input
            # screen's cap on every input, and every input tested one by one)
            import math

            from ..relations import MAX_SCORES, SCREEN_MAX_DRAWS, SWEEP_MAX
            width = min(len(self.inputs), SWEEP_MAX) or 1
            rels = len(self.relations)
            per = 8 * width * 3
            typical = int(calls + len(pending) * per) + 1
            cands = sum(r.exercised for r in self.relations)
            sure = (meter_cap + BLINDNESS_TOP_UP + DEPENDENCE_MAX_CALLS
                    + CHANGE_MAX_TRIALS * CHANGE_TRIAL_DRAWS
                    + math.ceil(MAX_SCORES / width) * width * (2 + 2 * rels)
                    + (cands + len(self.inputs)) * SCREEN_MAX_DRAWS
                    + cands * RUN_MAX_DRAWS)
            typical = min(typical, sure)
            out.append(f"the call budget ({budget}) ran out with {len(pending)} relation(s) "
                       f"undecided: {setting('budget', typical)} is likely to be enough and "
                       f"{setting('budget', sure)} is sure to be; add {setting('store')} to "
                       "keep the calls made")
            budget_named = True
        elif self.meter.call == "undecided" and self.meter.advice:
            out.append(self.meter.advice)
        elif self.change is not None and self.change.status == "incomplete":
            more = (CHANGE_MAX_TRIALS - self.change.late_trials) * CHANGE_TRIAL_DRAWS
            out.append(f"the changed-agent check stopped after {self.change.late_trials} "
                       f"trial(s): {setting('budget', calls + more)} lets it finish (or suppress "
                       f"it with {setting('suppress_health_check', 'changed_agent')}, and "
                       "say so)")
            budget_named = True
        short = self.unreachable_holds()
        if short and not budget_named:
            out.append(short)
        untested = [r for r in self.relations if r.status == RelationStatus.NOT_TESTED]
        if untested:
            out.append(f"{len(untested)} requested relation(s) not tested "
                       f"({', '.join(r.relation.name for r in untested)}): give them evidence "
                       "(record their follow-ups) or leave them out with "
                       f"{setting('relations', '')}")
        cal = (self.judge or {}).get("calibration")
        if cal and not cal.get("passed"):  # warned, not refused: say it where advice is read
            out.append(f"{cal['statement']}: every verdict of this run is that judge's")
        undecided = [r for r in self.relations if r.status == RelationStatus.UNDECIDED]
        if undecided and not out:
            out.append(f"{len(undecided)} relation(s) stayed undecided: the agent is too noisy "
                       "to bound their effect within the score cap; raise "
                       f"{setting('tolerance', '')} (a looser claim) or "
                       f"{setting('precision', 'cheap')}, or accept the UNDECIDED status")
        return out

    def unreachable_holds(self) -> str:
        """The budget's verdict on HOLDS, stated before any call (see :func:`budget_note`)."""
        return self._holds_note

    @cached_property
    def _holds_note(self) -> str:
        # which inputs each relation exercises is in its outcomes (skipped = the transform
        # leaves the input as it is): no transform is applied again (100,000 inputs x 8
        # relations took seconds, after a SIGTERM too)
        per_input = None
        if self.relations and all(len(r.outcomes) == len(self.inputs) for r in self.relations):
            moved = Counter(o.fp for r in self.relations for o in r.outcomes
                            if o.status != CandidateStatus.SKIPPED)
            per_input = [moved.get(fp, 0) for fp in self.inputs]
        return budget_note(list(self.inputs.values()), [r.relation for r in self.relations],
                           self.config, per_input=per_input)

    @property
    def on_dependent_draws(self) -> bool:
        """Whether the dependence check fired: every violation of the run then rests on
        draws found dependent, and the run's evidence is incomplete (exit 2), not a finding
        (docs/statistics.md §2b, "When it fires")."""
        return self.dependence is not None and self.dependence.fired

    @property
    def exit_code(self) -> Exit:
        """The one precedence (README, "Exit codes"): incomplete > finding > undecided; draws
        found dependent make the evidence incomplete (no violation stands on them)."""
        return exit_code(incomplete=not self.complete or self.on_dependent_draws,
                         finding=bool(self.findings),
                         undecided=self.meter.call == "undecided"
                         or any(r.status == RelationStatus.UNDECIDED for r in self.relations))

    def summary(self) -> str:
        from ..report import render_run_text
        return render_run_text(self.to_dict(), color=False)

    def to_dict(self, *, include_inputs: bool | None = None) -> dict[str, Any]:
        inc = self.config.include_inputs if include_inputs is None else include_inputs
        keep = setting("include_inputs")
        cfg = self.config
        return {
            "schema": SCHEMA,
            "agent": self.agent,
            "complete": self.complete,
            "exit_code": self.exit_code,
            "stop_reason": self.stop_reason,
            "findings": self.findings,
            "guarantee": self.guarantee(),
            "advice": self.advice,
            "config": {"epsilon": cfg.eps, "alpha": cfg.alpha, "tolerance": cfg.tolerance,
                       "holds_error": DEFAULT_HOLDS_ERROR, "indifference": cfg.indifference,
                       "layer": cfg.layer, "budget": cfg.budget, "max_workers": cfg.max_workers,
                       "timeout_s": cfg.timeout_s, "error_policy": cfg.error_policy,
                       "seed": cfg.seed, "blindness_threshold": cfg.blindness_threshold,
                       "store_mode": cfg.store_mode, "extractor": cfg.extractor.config_id,
                       "edits_per_input": cfg.edits_per_input},
            "profile": cfg.profile.to_dict(),
            "meter": self.meter.to_dict(),
            "noise": None if self.noise is None else self.noise.to_dict(),
            "blindness": self.blindness.to_dict(),
            "dependence": None if self.dependence is None else {
                **self.dependence.to_dict(), **self._audit_stood_in()},
            "stationarity": None if self.change is None else self.change.to_dict(),
            "relations": [_on_dependent(r.to_dict(), self.on_dependent_draws)
                          for r in self.relations],
            "calls": {"total": self.ledger.get("calls", 0), "live": self.ledger.get("calls", 0),
                      "replayed": self.ledger.get("replayed", 0), **self.phase_calls,
                      **({"judge": self.judge["calls"]["judge"]}
                         if self.judge is not None else {})},
            "ledger": ledger_part(self.ledger),
            "tokens": self.ledger.get("tokens"),
            "privacy": ("this report keeps the inputs' text (printed to stdout, or written "
                        f"with {keep}; the 'inputs' field maps each fingerprint to "
                        f"its text); a file written without {keep} keeps "
                        "fingerprints only; no answer text is stored"
                        if inc else "inputs are identified by fingerprint only; no raw prompt "
                        f"or answer text is stored (use {keep} to keep prompts)"),
            "inputs": dict(self.inputs) if inc else None,
            **({"routes": self.routes.to_dict()} if self.routes is not None else {}),
            **({"follow_ups": self.follow_up_texts()} if inc else {}),
            **({"judge": self.judge} if self.judge is not None else {}),
        }

    def _audit_stood_in(self) -> dict[str, str]:
        """The deterministic path's spaced audit, when it stood for the dependence check's
        look at a 'deterministic' call (the check then drew no block)."""
        if self.dependence is None or self.dependence.blocks:
            return {}
        for r in self.relations:
            pi = (r.effect or {}).get("per_input") or {}
            if pi.get("spaced_audit"):
                return {"stood_in": (
                    f"the deterministic path's audit: {pi.get('audited_pairs')} pairs drawn "
                    f"again >= {SPACING} calls after their first draws, every answer the "
                    "same (a cache living fewer calls would have shown the agent's flips)")}
        return {}

    def follow_up_texts(self) -> dict[str, str]:
        """The follow-up text of every confirmed or suspected input, by the follow-up's
        fingerprint (which edit, which typo): kept only where inputs are (``inputs``)."""
        from ..engine import Probe
        out: dict[str, str] = {}
        for r in self.relations:
            wanted = {o.fp for o in r.suspects()}
            for o in r.outcomes:
                if o.status != CandidateStatus.CONFIRMED and o.fp not in wanted:
                    continue
                text = self.inputs.get(o.fp)
                if text is None or o.follow_up_fp in out:
                    continue
                try:
                    follow = _remade(r.relation, text, o.edit)
                except Exception:  # a user transform that fails now: no text, never a crash
                    continue
                if follow is not None and Probe.make(follow).fp == o.follow_up_fp:
                    out[o.follow_up_fp] = follow  # the same edit as was drawn
        return out


def _remade(rel: Relation, text: str, edit: str | None) -> str | None:
    """The follow-up ``edit`` (a family's kind, ``pair N``, or None) made of ``text``."""
    if edit is None:
        return rel.apply(text)
    if rel.pairs is not None and edit.startswith("pair "):
        fus = list(dict.fromkeys(rel.pairs.get(text, ())))
        n = int(edit.split()[1]) - 1
        return fus[n] if 0 <= n < len(fus) else None
    for e in rel.edits:
        if e.kind == edit:
            return e.transform(text)
    return None


# ---------------------------------------------------------------------- orchestration

#: where a run's noise figure comes from (its JSON ``noise.source``)
NOISE_SOURCE = "every source draw of the run (meter, screen, pooled rounds, health checks)"


def relations_given(relations: Sequence[Relation] | None) -> list[Relation]:
    """The relations a ``run`` or ``plan`` tests: ``None`` the eight built-ins, else the
    ``Relation`` objects given (anything else is an eager InvalidArgument)."""
    rels = builtin_relations() if relations is None else list(relations)
    for r in rels:
        if not isinstance(r, Relation):
            raise InvalidArgument(f"relations must be Relation objects, got {type(r).__name__}")
    return rels


async def arun(agent: Any, inputs: Sequence[str], relations: Sequence[Relation] | None = None,
               *, config: RunConfig | None = None,
               progress: Callable[[str, int], None] | None = None,
               engine: Engine | None = None, change_check: bool = True) -> RunResult:
    """Async core of :func:`run`; ``change_check=False`` leaves the late trials of the
    changed-agent check to the caller (a snapshot tests its calibration round instead)."""
    from ..engine import Engine, Probe

    config = config or RunConfig()
    texts = clean_inputs(inputs)
    rels = relations_given(relations)
    suppressed = HealthCheck.parse(config.suppress_health_check)
    own_engine = engine is None
    judged: Any = None
    if config.judge is not None:
        # a free-text agent graded by a judge: one draw = a fresh answer + the judge's
        # consensus on it (judge/); its calls, noise and calibration are their own section
        from ..judge import prepare_judged
        judged, outer = prepare_judged(agent, config.judge, config.engine_config(),
                                       config.judge_labels)
        if engine is not None and engine.agent is not judged:
            judged.close()
            raise InvalidArgument("run with a judge builds its own engine: pass engine=None")
        # offline: the inner engines take the session's call slots and its 429 pause
        eng = engine or Engine(judged, outer, offline=True)
    else:
        eng = engine or Engine(agent, config.engine_config())
    try:
        calibration = None
        if judged is not None:
            from ..judge import calibrate_or_refuse
            calibration = await calibrate_or_refuse(judged)
        probes = [Probe.make(t) for t in texts]
        pool = EvidencePool()
        calls0 = eng.ledger.calls

        def tick(phase: str) -> Callable[[int], None] | None:
            return None if progress is None else (lambda n: progress(phase, n))

        eng.ledger.phase = "meter"  # tokens per phase, as the calls are counted below
        meter = await run_meter(eng, probes, pool, epsilon=config.eps, alpha=config.alpha,
                                indifference=config.indifference, layer=config.layer,
                                max_calls=config.max_meter_calls, seed=config.seed,
                                progress=tick("meter"))
        c_meter = eng.ledger.calls - calls0
        # the draws after the meter's (the health checks') may be scored by the relations'
        # pooled test: their values choose nothing that test reads (relations/_pooled.py)
        after_meter = {ev.fp: max(ev.draws, default=-1) + 1 for ev in pool}
        eng.ledger.phase = "blindness"
        blind = await _blindness(eng, probes, pool, meter, config,
                                 HealthCheck.blind_probe_set in suppressed,
                                 alpha=config.alpha * ALPHA_SHARES["blindness"],
                                 progress=tick("blindness"))
        c_blind = eng.ledger.calls - calls0 - c_meter
        from ..decide import DependenceTest
        dep = DependenceTest(alpha=config.alpha * ALPHA_SHARES["dependence"])
        dep_off = HealthCheck.dependent_draws in suppressed
        dep_rng = np.random.default_rng([config.seed, 2])
        c_dep = 0
        eng.ledger.phase = "dependence"
        if not dep_off:
            for _ in range(2):  # a second round only while the first shows something
                if dep.fired or (dep.blocks and dep.e_value < 2):
                    break
                before = eng.ledger.calls  # agent calls, as every phase counts them
                await check_dependence(
                    eng, dependence_targets(probes, pool, config.layer, dep_rng), pool, dep,
                    layer=config.layer, blocks=DEPENDENCE_BLOCKS, progress=tick("dependence"),
                    parallel=config.max_workers, spacers=_spacers(probes, dep_rng))
                c_dep += eng.ledger.calls - before
        stop = meter.stop_reason if meter.stop_reason == StopReason.INTERRUPTED else ""
        rel_results: list[RelationResult] = []
        c0 = eng.ledger.calls
        eng.ledger.phase = "relations"
        if rels and not eng.stopping:
            rel_results = await run_relations(eng, probes, pool, rels,
                                              alpha=config.alpha * ALPHA_SHARES["relations"],
                                              meter=meter, seed=config.seed,
                                              progress=tick("relations"),
                                              tolerance=config.tolerance, profile=config.profile,
                                              edits_per_input=config.edits_per_input,
                                              dependence_fired=dep_off or dep.fired,
                                              confirm_all=config.confirm_all,
                                              scorable_from=after_meter)
        elif rels:
            rel_results = [RelationResult(r, not_tested="left out: the run stopped before "
                                          "the relations were tested") for r in rels]
            stop = StopReason.INTERRUPTED
        c_rel = eng.ledger.calls - c0
        if not dep_off and not dep.fired and not eng.stopping:
            # a violation or a 'deterministic' call is about to be reported: look once more,
            # on the inputs behind it (every block stays a valid step of the same test)
            # (relations leave many more draws per input: the targets are better known)
            # only where the answer can change a printed decision: a violation (a cache or
            # replicas make false ones), a 'deterministic' call or a blind set (a cache makes
            # an agent look decided); a run whose relations all HOLD on a stochastic agent is
            # not looked at again
            targets = _confirmed_inputs(rel_results, probes)
            violated = any(r.status == RelationStatus.VIOLATED for r in rel_results)
            # a 'deterministic' call whose deterministic path audited spaced re-draws (each
            # at least SPACING calls after its probe's first draw, all agreeing) has had its
            # spaced look (relations/_screen.py screen_once)
            audited = any(((r.effect or {}).get("per_input") or {}).get("spaced_audit")
                          for r in rel_results)
            if (meter.call == "verdict-deterministic" and not audited) \
                    or blind.status == "blind" or violated:
                targets += dependence_targets(probes, pool, config.layer, dep_rng)
                if not targets:
                    # no input seen to flip: a cache whose entries outlive the meter's pairs
                    # shows none either, so spaced blocks go to the probe set itself (only
                    # spaced draws can show the flips such a cache hides)
                    targets = _spacers(probes, dep_rng)[:DEPENDENCE_TOP_UP]
            # a second set only while the first saw spaced answers vary, too few to rule a
            # cache out (a cache over a model that rarely flips); spaced answers that never
            # varied look deterministic even far apart, and a second set rarely changes that
            for i in range(2 if targets else 0):
                if dep.fired or dep.ruled_out or eng.stopping or (i and dep.reach <= 1):
                    break
                before = eng.ledger.calls
                eng.ledger.phase = "dependence"
                await check_dependence(eng, targets, pool, dep, layer=config.layer,
                                       blocks=DEPENDENCE_TOP_UP, progress=tick("dependence"),
                                       parallel=config.max_workers,
                                       spacers=_spacers(probes, dep_rng))
                c_dep += eng.ledger.calls - before
        # the changed-agent check: late trials bet against the meter's bound (module doc)
        from ..decide import ChangeTest
        ch_alpha = config.change_alpha
        ch_off = HealthCheck.changed_agent in suppressed
        ch_test = None
        c_change = fired_call = 0
        ch_cut = False
        live_before_change = eng.ledger.calls
        eng.ledger.phase = "stationarity"
        if change_check and not ch_off and meter.pairs and not eng.stopping:
            ch_test = ChangeTest(alpha=ch_alpha, early_pairs=meter.pairs,
                                 early_disagreements=meter.disagreements)
            c_change, fired_call, ch_cut = await check_change(
                eng, probes, pool, ch_test, layer=config.layer,
                rng=np.random.default_rng([config.seed, 3]), early_estimate=meter.estimate,
                parallel=config.max_workers, progress=tick("stationarity"),
                offset=sum(len(e.draws) for e in pool))
        change = (change_result(ch_test, alpha=ch_alpha, early_calls=meter.draws,
                                calls=c_change,
                                source="trials (3 fresh draws of a random input each)",
                                suppressed=ch_off, fired_call=fired_call, cut=ch_cut)
                  if change_check else None)
        # the change result counts its draws (a replay reports what the run it replays
        # did); the phase tally counts live calls, like every other phase: one sum
        c_change_live = eng.ledger.calls - live_before_change
        eng.ledger.phase = None
        if eng.stopping:
            stop = eng.stop_cause or StopReason.INTERRUPTED
        ledger = eng.ledger.to_dict()
        routes = route_breakdown(probes, pool, meter, rel_results, layer=config.layer,
                                 alpha=config.alpha, required=config.require_verdicts)
        judge_part = None
        if judged is not None:
            from ..judge import judge_section
            rejudged = 0
            if not eng.stopping:  # recorded answers judged again until the noise is known
                rejudged = await judged.measure_noise(seed=config.seed)
            judge_part = judge_section(judged, agent_noise=meter.estimate if meter.pairs
                                       else None, calibration=calibration,
                                       rejudge_calls=rejudged, alpha=config.alpha)
        return RunResult(meter=meter, blindness=blind, relations=tuple(rel_results),
                         ledger=ledger, phase_calls={"meter": c_meter, "blindness": c_blind,
                                                     "dependence": c_dep, "relations": c_rel,
                                                     "stationarity": c_change_live},
                         agent=eng.agent.identity, config=config, stop_reason=stop,
                         inputs={p.fp: p.text for p in probes},
                         dependence=dependence_result(dep, calls=c_dep, suppressed=dep_off),
                         change=change, routes=routes, judge=judge_part,
                         noise=noise_of_draws((pool.get(p.fp).keys(config.layer)
                                               for p in probes), NOISE_SOURCE))
    finally:
        if own_engine:
            await eng.aclose()
        if judged is not None and own_engine:
            judged.close()


def run(agent: Any, inputs: Sequence[str], relations: Sequence[Relation] | None = None, *,
        config: RunConfig | None = None,
        progress: Callable[[str, int], None] | None = None) -> RunResult:
    """Meter the agent, check the probe set for blindness, then test relations.

    Args:
        agent: an adapter (``from_callable``, ``from_strands``, ``from_http``) or a callable
            ``prompt -> str | dict | Observation``.
        inputs: the probe set (distinct, non-empty prompts).
        relations: relations to test; ``None`` = the eight built-ins, ``[]`` = none.
        config: a :class:`RunConfig`.

    Example:
        >>> from agentverity_props import run, from_callable
        >>> gate = from_callable(lambda p: "block" if "attack" in p else "allow")
        >>> result = run(gate, ["hello there", "plan an attack"], relations=[])
        >>> result.meter.call
        'verdict-deterministic'
    """
    from ..engine import run_sync
    return run_sync(arun(agent, inputs, relations, config=config, progress=progress))


def budget_note(texts: Sequence[str], relations: Sequence[Relation], config: RunConfig, *,
                per_input: Sequence[int] | None = None) -> str:
    """'' when the budget can reach HOLDS on the relations, else a sentence saying it cannot
    (printed before the first call by the CLI, and kept in the result's advice).
    ``per_input``: how many relations move each input, when already known."""
    if config.budget is None or not relations:
        return ""
    need = min_relation_calls(texts, relations, config.tolerance, per_input=per_input,
                              sampled=not config.profile.screen)
    if need <= config.budget:
        return ""
    return (f"{setting('budget', config.budget)} cannot reach HOLDS on any relation at "
            f"tolerance {config.tolerance:g}: bounding an effect below it takes at least {need} "
            f"calls here besides the meter's; raise {setting('budget', '')} (to {need + 100} or "
            f"more) or {setting('tolerance', '')}")


def min_relation_calls(texts: Sequence[str], relations: Sequence[Relation],
                       tolerance: float, *, per_input: Sequence[int] | None = None,
                       sampled: bool = False) -> int:
    """The fewest calls any run of these relations needs before a HOLDS is possible: every
    exercised relation needs ``min_scores_to_hold`` scores, one follow-up draw each, made in
    whole epochs with one shared source draw per input (the meter's calls not counted).
    ``per_input`` (how many of the relations change each text) is computed when not given.
    ``sampled``: the epochs may be uniform samples of the inputs (a profile without a
    screen, off the deterministic path), the first of ``first_sample(inputs)`` inputs, which
    may all be inputs that the fewest relations change. Every epoch after the first draws
    ``LATER_EPOCH`` inputs (relations/_pooled.py)."""
    import math

    from ..decide import min_scores_to_hold
    from ..relations import LATER_EPOCH, SWEEP_MAX, first_sample

    n_min = min_scores_to_hold(tolerance, DEFAULT_HOLDS_ERROR)
    if per_input is None:
        per_input = [sum(r.apply(t) != t for r in relations) for t in texts]
    exercised = [k for k in per_input if k]
    if not exercised:
        return 0

    def later(first: int) -> int:
        # the input visits after a first epoch of ``first``, in whole later epochs
        return math.ceil(max(0, n_min - first) / LATER_EPOCH) * LATER_EPOCH

    fewest = 1 + min(exercised)
    width = min(len(exercised), SWEEP_MAX)
    mean_rel = sum(exercised) / len(exercised)
    swept = int(width * (1 + mean_rel) + later(width) * fewest)
    if not sampled:
        return swept
    # the deterministic path still sweeps every input first: the smaller of the two
    first = first_sample(len(exercised))
    return min(swept, (first + later(first)) * fewest)


#: What a violation reported beside dependent draws says, on every line that states it.
ON_DEPENDENT_DRAWS = ("rests on dependent draws: the dependence check fired, so this is not a "
                      "finding until a run whose check does not fire confirms it (exit 2)")


def _on_dependent(d: dict[str, Any], dependent: bool) -> dict[str, Any]:
    """A relation's dict, marked when it is VIOLATED on draws found dependent."""
    if dependent and d.get("status") == RelationStatus.VIOLATED:
        d["dependent_draws"] = ON_DEPENDENT_DRAWS
    return d


def _spacers(probes: list[Probe], rng: np.random.Generator) -> list[Probe]:
    """The probe set in a seeded random order: the inputs that space a dependence set's
    pairs apart (their own blocks are evidence too)."""
    return [probes[int(i)] for i in rng.permutation(len(probes))]


def _confirmed_inputs(results: Sequence[RelationResult], probes: list[Probe]) -> list[Probe]:
    """The follow-up and the source of every confirmed violation, in report order."""
    from ..engine import Probe

    by_fp = {p.fp: p for p in probes}
    out: list[Probe] = []
    for r in results:
        for o in r.outcomes:
            if o.status == CandidateStatus.CONFIRMED and o.fp in by_fp:
                src = by_fp[o.fp]
                out += [Probe.make(r.relation.apply(src.text)), src]
    return out


async def _blindness(eng: Engine, probes: list[Probe], pool: EvidencePool, meter: MeterResult,
                     config: RunConfig, suppressed: bool, *, alpha: float,
                     progress: Callable[[int], None] | None = None) -> BlindnessResult:
    """Blindness from the meter's first draws, topped up by single draws on random inputs."""
    keys: list[str] = []
    for fp, idx in meter.first_draws:
        obs = pool.get(fp).draws.get(idx)
        k = obs.key(config.layer) if obs is not None else None
        if k is not None:
            keys.append(k)
    def drawn(p: Probe) -> list[str]:
        return [k for k in pool.get(p.fp).keys(config.layer) if k is not None]

    # every input's draws, kept up to date below by the inputs each wave drew (not re-read
    # for every input each wave: a 100,000-input run tops up in a dozen waves)
    per_input = [drawn(p) for p in probes]
    where: dict[str, list[int]] = {}
    for j, p in enumerate(probes):
        where.setdefault(p.fp, []).append(j)
    res = blindness_from_keys(keys, threshold=config.blindness_threshold, alpha=alpha,
                              suppressed=suppressed, per_input=per_input)
    if suppressed or res.status != "undecided":
        return res
    rng = np.random.default_rng([config.seed, 1])
    made = 0
    while made < BLINDNESS_TOP_UP:
        # draws on random inputs in waves of the engine's width (the bounds are anytime-valid,
        # so checking after each wave is as valid as after each draw, and much faster)
        width = min(config.max_workers, BLINDNESS_TOP_UP - made)
        if eng.stopping or not eng.can_afford(width):
            width = 1 if not eng.stopping and eng.can_afford(1) else 0
        if not width:
            break
        at = [int(rng.integers(len(probes))) for _ in range(width)]
        plan = [(probes[j], eng.allocate(probes[j], 1)[0]) for j in at]

        async def one(p: Probe, i: int) -> Observation | None:
            try:
                return await eng.draw(p, i)
            except DrawStopped:
                return None

        got = await asyncio.gather(*(one(p, i) for p, i in plan))
        made += width
        stopped = False
        for (p, i), obs in zip(plan, got, strict=True):
            if obs is None:
                stopped = True
                continue
            pool.add(p.fp, i, obs)
            if progress is not None:
                progress(1)
            k = obs.key(config.layer)
            if k is not None:
                keys.append(k)
        for fp in {probes[j].fp for j in at}:
            for j in where[fp]:  # every position of that input
                per_input[j] = drawn(probes[j])
        res = blindness_from_keys(keys, threshold=config.blindness_threshold,
                                  alpha=alpha, per_input=per_input)
        if stopped or res.status != "undecided":
            break
    return res


async def run_relations(eng: Engine, probes: list[Probe], pool: EvidencePool,
                        relations: Sequence[Relation], *, alpha: float,
                        holds_error: float = DEFAULT_HOLDS_ERROR,
                        meter: MeterResult | None = None,
                        seed: int = 0, progress: Callable[[int], None] | None = None,
                        tolerance: float = DEFAULT_TOLERANCE,
                        profile: Profile | None = None,
                        edits_per_input: int | str | None = None,
                        dependence_fired: bool = True,
                        confirm_all: bool = False,
                        scorable_from: dict[str, int] | None = None) -> list[RelationResult]:
    """Screen every (relation, input) pair, test the flagged inputs one by one, then decide
    every relation's pooled effect over the probe set (``relations/_pooled.py``, "Order").
    Under a profile without a screen (``quick``): the pooled effect first, then the inputs
    most unlike their sources in its draws one by one. Each input's follow-ups come from
    the relation's family of edits (:func:`~agentverity_props.relations.follow_ups`).

    ``alpha`` (the relations' share of the run's) is split by
    :func:`~agentverity_props.decide.relation_alpha_split`: half over the relations' pooled
    tests (``alpha / (2 R)`` each, then over its sides), half over the inputs tested one by
    one (each at ``alpha / (2 m)``, ``m`` the inputs admitted). A HOLDS is wrong with
    probability at most ``holds_error`` per relation (its effect on some side is in fact at least
    the tolerance). Every guarantee assumes the draws of one input are independent given the
    input. The meter's pairs size the first bets, the screen's noise prior, and are the
    first source draws.
    """
    from ..decide import local_family_split, relation_alpha_split
    from ..engine import Probe
    from ..relations import (
        PooledEffects,
        RunSteps,
        decide_in_order,
        effect_jobs,
        follow_ups,
    )

    prof = get_profile(profile)
    results = [RelationResult(r) for r in relations]
    groups: list[tuple[RelationResult, list[Candidate]]] = []
    texts = [p.text for p in probes]
    for res in results:
        cands: list[Candidate] = []
        rows = follow_ups(res.relation, texts, seed=seed,
                          edits_per_input=(prof.edits_per_input if edits_per_input is None
                                           else edits_per_input))
        for p, row in zip(probes, rows, strict=True):
            for kind, y in row:
                fu = Probe.make(y)
                out = RelationOutcome(fp=p.fp, follow_up_fp=fu.fp, edit=kind)
                res.outcomes.append(out)
                if y == p.text:
                    out.status = CandidateStatus.SKIPPED
                    continue
                cands.append(Candidate(res.relation, p, fu, out))
        groups.append((res, cands))
    pair = (meter.disagreements / meter.pairs) if meter is not None and meter.pairs else None
    # tolerance: resolved by the caller (RunConfig.tolerance); a VIOLATED at the profile's
    # violation threshold while its own tolerance is in force (quick: holds at 0.2, finds 0.1)
    jobs = effect_jobs(groups, tolerance=tolerance, alpha=alpha, holds_error=holds_error,
                       pair_disagreement=pair,
                       violation=violation_threshold(prof, tolerance))
    if not jobs:
        return results
    for j in jobs:
        j.screen_size, j.screen_beta = prof.screen_size, prof.screen_beta
    split = relation_alpha_split(alpha, len(jobs))
    from ..decide import quiet_clearance
    # the deterministic path (relations/_screen.py screen_once): only on the meter's
    # certificate, with no dependence between draws found (a cache makes a noisy agent look
    # deterministic to repeats close together; the audit's re-draws come later)
    det = (prof.deterministic_path and meter is not None and not eng.finite_evidence
           and meter.call == "verdict-deterministic" and not dependence_fired)
    flip_bound = flip_of(meter.ci_high) if det and meter is not None else 0.0
    screened = prof.screen or eng.finite_evidence
    # the per-input screen first, then the flagged inputs one by one, then the pooled epochs
    # (which score the screen's and the local tests' draws before drawing more; on a
    # recording, one fixed-sample decision on every recorded draw); under a profile without
    # a screen, one pooled epoch first (relations/_order.py)
    pooled = PooledEffects(eng, pool, jobs, probes, seed=seed, progress=progress,
                           first_follow_ups=quiet_clearance(prof.screen_beta,
                                                            prof.screen_size)
                           if screened else 0,
                           noise=pair, adapt_noise=True,
                           sampled=not screened,
                           scorable_from=None if eng.finite_evidence else scorable_from)
    await pooled.prepare()
    seq_local, local_alpha = list(jobs), split["local"]
    if eng.finite_evidence:
        # a recording file: an invariant relation's inputs are tested one by one on every
        # recorded draw (an exact test, relations/_pooled.py) with the jobs' share of the
        # local alpha; the others keep the sequential local tests with theirs
        fixed = [j for j in jobs if two_sided(j.result.relation)]
        seq_local = [j for j in jobs if not two_sided(j.result.relation)]
        each, local_alpha = local_family_split(local_alpha, len(fixed), len(seq_local))
        pooled.fixed_local = {id(j): each for j in fixed}
    steps = RunSteps(eng, pool, jobs, pooled, local_alpha=local_alpha, seq_local=seq_local,
                     screen_beta=prof.screen_beta, pair=pair,
                     flip_bound=flip_bound if det else None, spacing=SPACING,
                     max_rounds=RUN_MAX_ROUNDS, seed=seed, progress=progress,
                     confirm_all=confirm_all)
    await decide_in_order(steps, screened=screened, deterministic=det)
    return _finish(jobs, results, prof, sampled=pooled.sampled)


def _finish(jobs: Sequence[EffectJob], results: list[RelationResult], prof: Profile, *,
            sampled: bool) -> list[RelationResult]:
    for j in jobs:
        j.result.unexercised = j.unexercised
    for j in jobs:
        j.result.effect = summarise(j)
        j.result.effect["profile"] = prof.name
        if j.deterministic_path:
            j.result.effect["deterministic_path"] = j.deterministic_path
    end_pending(jobs, sampled=sampled)
    return results


def measure(agent: Any, inputs: Sequence[str], *, config: MeterConfig | None = None,
            epsilon: float | None = UNSET, precision: str | None = UNSET,
            alpha: float = UNSET, budget: int | None = UNSET, layer: str = UNSET,
            indifference: float = UNSET, max_workers: int = UNSET, seed: int = UNSET,
            **engine_kwargs: Any) -> MeterResult:
    """Meter the stability of the agent's categorical verdict (see ``_meter`` module doc).

    Args:
        agent: an adapter or a callable.
        inputs: the probe set.
        config: every setting at once (:class:`MeterConfig`, default ``MeterConfig()``:
            epsilon 0.05, alpha 0.05, indifference 2, layer ``verdict``, no budget, 4
            workers, seed 0).
        epsilon, precision, alpha, layer, indifference: the meter's settings
            (:class:`MeterConfig`).
        budget, max_workers, seed, **engine_kwargs: any :class:`~agentverity_props.engine.
            EngineConfig` field (``retries=0``, ``fail_fast=1``, ``store_path=...``),
            applied over ``config.engine``.

    A keyword given explicitly overrides the same setting of ``config``; one left out
    takes the config's value.

    Example:
        >>> from agentverity_props import measure, from_callable
        >>> m = measure(from_callable(lambda p: "allow"), ["a", "b", "c"], max_workers=1)
        >>> m.call, m.calls  # 38 clean pairs (with 4 workers, the trials in flight finish too)
        ('verdict-deterministic', 76)
    """
    from ..engine import Engine, Probe, configured, run_sync

    cfg = configured(MeterConfig, config,
                     {"epsilon": epsilon, "precision": precision, "alpha": alpha,
                      "layer": layer, "indifference": indifference, "budget": budget,
                      "max_workers": max_workers, "seed": seed, **engine_kwargs},
                     where="measure")
    eps, budget = cfg.eps, cfg.engine.budget

    async def go() -> MeterResult:
        async with Engine(agent, cfg.engine) as eng:
            probes = [Probe.make(t) for t in clean_inputs(inputs)]
            return await run_meter(eng, probes, EvidencePool(), epsilon=eps, alpha=cfg.alpha,
                                   indifference=cfg.indifference, layer=cfg.layer,
                                   max_calls=budget, seed=cfg.engine.seed)

    return run_sync(go())
