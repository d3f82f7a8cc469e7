"""The meter: is the agent's categorical verdict stable enough to test against?

Estimand
    ``theta`` = the mean, over the probe set, of the probability that two independent draws
    of the same input disagree at the chosen layer (verdict, text or tool sequence).

Design
    Each *trial* picks an input uniformly at random (with replacement, from the meter's own
    seeded generator) and draws it twice. Assumption: the draws of one input are independent
    given the input (no response cache, sticky session or replicas taking turns; the
    ``dependent_draws`` health check of ``run`` tests it). Under it the trial's outcome "the
    two draws disagree" is exactly Bernoulli(``theta``) and independent of every other trial,
    whatever the heterogeneity across inputs (some inputs may flip often, most never):
    nothing is pooled across inputs as if they were alike. Every draw belongs to a pair;
    none is discarded.

Spread pairs
    Trials run in *waves* of ``max(3, max_workers)`` (fewer when the SPRT could decide
    sooner, so a deterministic agent still costs 76 calls): every first draw of the wave,
    then every second draw in an order shuffled by the meter's generator (the last first
    draw's partner never right after it). With one worker the two draws of a pair are never
    back to back, and their positions in the call sequence are random, so an agent whose
    behaviour depends on the call's position (replicas taking turns) is seen as the mixture
    it is. The wave's inputs, draw indices and order are fixed before its draws, and the
    next wave is planned only once this one is fed: the same seed requests the same draws
    in the same order.

    The outcomes feed :class:`~agentverity_props.decide.BernoulliSPRT` with
    ``p0 = epsilon / r`` and ``p1 = epsilon * r`` (``r`` = ``indifference``, default 2),
    checked after every trial:

    - ``verdict-deterministic`` when the SPRT accepts ``theta <= p0``:
      at most ``alpha`` of agents with ``theta >= epsilon * r`` are ever called so;
    - ``verdict-stochastic`` when it accepts ``theta >= p1``:
      at most ``alpha`` of agents with ``theta <= epsilon / r`` are ever called so;
    - ``undecided`` when the call budget ends first (``advice`` says what to do).

    Both bounds hold under optional stopping (Ville's inequality). A pair costs two calls, and
    no grouping of draws beats pairs per call at the boundary (see docs/statistics.md), so
    the pair design gives up nothing while making the outcomes exactly i.i.d.

    An anytime-valid confidence sequence (beta-binomial mixture) for ``theta`` is reported
    alongside (``ci_low``/``ci_high``) and recorded after every trial for the report's plot.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .._internal.outcome import StopReason
from .._internal.settings import setting
from ..decide import BernoulliSPRT, BetaCS, sprt_expected_n
from ..engine import Configurable, EngineConfig, EvidencePool
from ..errors import (
    BudgetExhausted,
    DrawStopped,
    EvidenceExhausted,
    Interrupted,
    InvalidArgument,
)
from ..observation import LAYERS, Observation
from ._presets import (
    DEFAULT_ALPHA,
    DEFAULT_EPSILON,
    DEFAULT_INDIFFERENCE,
    DEFAULT_LAYER,
    PRESETS,
)

if TYPE_CHECKING:
    from ..engine import Engine, Probe


MeterCall = Literal["verdict-deterministic", "verdict-stochastic", "undecided"]

DEFAULT_MAX_CALLS = 600
#: The assumption every printed guarantee rests on (the dependence health check tests it).
ASSUMPTION = "assuming the draws of one input are independent given the input"


@dataclass(frozen=True)
class InputEvidence:
    """What the meter saw of one input (identified by fingerprint only)."""

    fp: str
    draws: int
    pairs: int
    flips: int
    failures: int
    counts: dict[str, int]

    @property
    def flipped(self) -> bool:
        return self.flips > 0 or len(self.counts) > 1

    def to_dict(self) -> dict[str, Any]:
        return {"fp": self.fp, "draws": self.draws, "pairs": self.pairs, "flips": self.flips,
                "failures": self.failures, "counts": dict(self.counts)}


@dataclass(frozen=True)
class MeterResult:
    """The meter's answer. ``call`` is the decision; the rest is its evidence."""

    call: MeterCall
    epsilon: float
    alpha: float
    indifference: float
    layer: str
    calls: int
    draws: int
    pairs: int
    disagreements: int
    ci_low: float
    ci_high: float
    e_value: float
    complete: bool
    failures: int
    failure_kinds: dict[str, int]
    advice: str
    per_input: tuple[InputEvidence, ...]
    history: tuple[tuple[int, float, float], ...] = field(repr=False, default=())
    stop_reason: str = ""
    first_draws: tuple[tuple[str, int], ...] = field(repr=False, default=())

    @property
    def estimate(self) -> float:
        return self.disagreements / self.pairs if self.pairs else math.nan

    @property
    def estimand(self) -> str:
        return (f"theta = mean over the probe set of P(two independent draws of one input "
                f"disagree at layer '{self.layer}')")

    @property
    def caveat(self) -> str:
        """'' when every draw gave a verdict; else what the call rests on: the pairs that
        have both verdicts, and draws missing independently of the verdict they would have
        had (a parser failing on one label breaks that, and with it the error rate)."""
        if not self.failures:
            return ""
        kinds = ", ".join(f"{k} x{v}" for k, v in sorted(self.failure_kinds.items()))
        return (f"incomplete: {self.failures} draw(s) without a verdict ({kinds}); the call "
                f"is over the {self.pairs} pair(s) with both verdicts and its error rate holds "
                "only if a verdict is missing independently of what it would have been")

    @property
    def call_text(self) -> str:
        """The call with its caveat beside it, as printed."""
        return f"{self.call} ({self.caveat})" if self.caveat else self.call

    def guarantee(self) -> str:
        lo, hi = self.epsilon / self.indifference, min(1.0, self.epsilon * self.indifference)
        return ((f"{self.caveat}. " if self.caveat else "")
                + f"P(verdict-deterministic) <= {self.alpha:g} when theta >= {hi:g}; "
                f"P(verdict-stochastic) <= {self.alpha:g} when theta <= {lo:g}; "
                f"valid under optional stopping, {ASSUMPTION}"
                + (", and draws missing at random" if self.caveat else ""))

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.call, "caveat": self.caveat, "estimand": self.estimand,
            "guarantee": self.guarantee(),
            "epsilon": self.epsilon, "alpha": self.alpha, "indifference": self.indifference,
            "layer": self.layer, "calls": self.calls, "draws": self.draws, "pairs": self.pairs,
            "disagreements": self.disagreements,
            "estimate": None if not self.pairs else self.estimate,
            "ci_low": self.ci_low, "ci_high": self.ci_high, "e_value": _finite(self.e_value),
            "complete": self.complete, "failures": self.failures,
            "failure_kinds": dict(self.failure_kinds), "advice": self.advice,
            "stop_reason": self.stop_reason,
            "history": [{"draws": c, "ci_low": lo, "ci_high": hi} for c, lo, hi in self.history],
            "per_input": [e.to_dict() for e in self.per_input],
        }


@dataclass(frozen=True, kw_only=True)
class MeterConfig(Configurable):
    """Everything :func:`~agentverity_props.runner.measure` can be told.

    ``epsilon`` (or a ``precision`` preset) is the meter's limit on the pair-disagreement rate,
    ``alpha`` the error rate of the call, ``indifference`` the SPRT's alternative ratio and
    ``layer`` what is compared (verdict, text, tools). How the agent is called is the nested
    ``engine``: its ``budget`` also caps the meter's calls, its ``seed`` seeds the pairing.

    >>> MeterConfig(engine=EngineConfig(budget=40, retries=0)).engine.retries
    0
    >>> MeterConfig(alpha=0.7)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentverity_props.errors.InvalidArgument: MeterConfig: alpha=0.7 must be in (0, 0.5), ...
    """

    epsilon: float | None = None
    precision: str | None = None
    alpha: float = DEFAULT_ALPHA
    indifference: float = DEFAULT_INDIFFERENCE
    layer: str = DEFAULT_LAYER
    engine: EngineConfig = field(default_factory=EngineConfig)

    def __post_init__(self) -> None:
        if not isinstance(self.engine, EngineConfig):
            raise InvalidArgument(f"MeterConfig: engine must be an EngineConfig, got "
                                  f"{type(self.engine).__name__}; pass engine=EngineConfig(...)")
        try:  # epsilon resolved once, here: the meter reads ``eps``
            object.__setattr__(self, "_eps", resolve_epsilon(self.epsilon, self.precision))
            validate_meter_args(epsilon=self.eps, alpha=self.alpha,
                                indifference=self.indifference, layer=self.layer,
                                max_calls=None)
        except InvalidArgument as exc:
            raise InvalidArgument(f"MeterConfig: {exc}") from None
        if self.engine.budget is not None and self.engine.budget < 2:
            raise InvalidArgument(f"MeterConfig: engine budget={self.engine.budget!r} is below "
                                  "one pair of calls; give at least 2, or None for no cap")

    @property
    def eps(self) -> float:
        """The resolved epsilon (``epsilon``, else the ``precision`` preset's, else 0.05),
        resolved once when the config was made."""
        return self._eps  # type: ignore[attr-defined]


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def resolve_epsilon(epsilon: float | None, precision: str | None) -> float:
    if precision is not None:
        if precision not in PRESETS:
            raise InvalidArgument(
                f"unknown precision {precision!r}; use one of {', '.join(PRESETS)}")
        if epsilon is not None and epsilon != PRESETS[precision]:
            raise InvalidArgument("give either precision or epsilon, not both")
        return PRESETS[precision]
    eps = DEFAULT_EPSILON if epsilon is None else epsilon
    if not (0.0 < eps < 0.5):
        raise InvalidArgument(f"{setting('epsilon', repr(eps))} must be in (0, 0.5), e.g. "
                              f"{DEFAULT_EPSILON:g}")
    return eps


def validate_meter_args(*, epsilon: float, alpha: float, indifference: float, layer: str,
                        max_calls: int | None) -> None:
    if not (0.0 < alpha < 0.5):
        raise InvalidArgument(f"alpha={alpha!r} must be in (0, 0.5), e.g. 0.05")
    if not (indifference > 1.0):
        raise InvalidArgument(f"indifference={indifference!r} must be > 1 (default 2)")
    if layer not in LAYERS:
        raise InvalidArgument(f"layer={layer!r}; use one of {', '.join(LAYERS)}")
    if max_calls is not None and max_calls < 2:
        raise InvalidArgument(f"max_calls={max_calls!r} must be at least 2 (one pair)")


async def run_meter(engine: Engine, probes: list[Probe], pool: EvidencePool, *, epsilon: float,
                    alpha: float, indifference: float = 2.0, layer: str = "verdict",
                    max_calls: int | None = None, seed: int = 0,
                    progress: Any = None) -> MeterResult:
    """Run the meter through ``engine`` over ``probes``; draws land in ``pool``.

    Wave after wave (module docstring, "Spread pairs"): plan the wave, draw it, feed its
    trials to the SPRT in the order they were planned; then the call, with its advice."""
    validate_meter_args(epsilon=epsilon, alpha=alpha, indifference=indifference, layer=layer,
                        max_calls=max_calls)
    meter = _Meter(engine, probes, pool, epsilon=epsilon, alpha=alpha,
                   indifference=indifference, layer=layer, max_calls=max_calls, seed=seed,
                   progress=progress)
    while wave := meter.plan_wave():
        firsts, seconds = await meter.draw_wave(wave)
        for k, (probe, idx) in enumerate(wave.trials):
            meter.feed(probe, idx, firsts[k], seconds.get(k))
    return meter.result()


@dataclass(frozen=True)
class _Wave:
    """One wave of trials, fixed before any of its draws: each trial's input and its two
    draw indices, and the order in which the second draws are made."""

    trials: list[tuple[Probe, list[int]]]
    order: list[int]

    def __bool__(self) -> bool:
        return bool(self.trials)


class _Meter:
    """One run of the meter: its SPRT, confidence sequence and generator, and the tally of
    the trials fed so far."""

    def __init__(self, engine: Engine, probes: list[Probe], pool: EvidencePool, *,
                 epsilon: float, alpha: float, indifference: float, layer: str,
                 max_calls: int | None, seed: int, progress: Any) -> None:
        self.engine, self.probes, self.pool, self.layer = engine, probes, pool, layer
        self.epsilon, self.alpha, self.indifference = epsilon, alpha, indifference
        self.progress = progress
        p0, p1 = epsilon / indifference, min(1.0, epsilon * indifference)
        self.sprt = BernoulliSPRT(p0, p1, alpha=alpha)
        self.cs = BetaCS(alpha)
        self.rng = np.random.default_rng(seed)
        self.cap = DEFAULT_MAX_CALLS if max_calls is None else max_calls
        self.calls0 = engine.ledger.calls
        # trials in flight at once. Up to a wave's other trials may finish after the
        # decision: they are kept as evidence, never discarded.
        workers = max(1, engine.config.max_workers)
        # a wave of trials: every first draw, then every second draw in a shuffled order, so
        # the two draws of a pair are never back to back (module docstring, "Spread pairs")
        self.wave_size = max(3, workers)
        self.scheduled = 0
        self.decision: Any = None  # the SPRT's Decision, once it decides
        self.stop_reason = ""
        self.pairs = self.disagreements = self.failures = 0
        self.fail_kinds: Counter[str] = Counter()
        self.flips: Counter[str] = Counter()
        self.pair_count: Counter[str] = Counter()
        self.first_draws: list[tuple[str, int]] = []
        self.history: list[tuple[int, float, float]] = []

    def may_schedule(self) -> bool:
        """Whether one more trial may be planned: not once decided or stopped, nor when the
        engine is stopping, the meter's call cap or the engine's budget has no room for two
        more calls (the first reason found becomes the stop reason)."""
        if self.decision is not None or self.stop_reason:
            return False
        if self.engine.stopping:
            self.stop_reason = StopReason.INTERRUPTED
            return False
        if 2 * self.scheduled + 2 > self.cap:
            self.stop_reason = f"meter call cap reached ({self.cap} calls)"
            return False
        if not self.engine.can_afford(2):
            self.stop_reason = StopReason.BUDGET
            return False
        return True

    def plan_wave(self) -> _Wave:
        """The next wave, planned from the meter's own generator before any of its draws
        (and only once the previous wave is fed): the draws requested depend on outcomes
        only, never on timing. At most as many trials as the SPRT needs to decide at its
        fastest; empty when no trial may be scheduled."""
        trials: list[tuple[Probe, list[int]]] = []
        size = max(2, min(self.wave_size, _fewest_to_decide(self.sprt)))
        while len(trials) < size and self.may_schedule():
            probe = self.probes[int(self.rng.integers(len(self.probes)))]
            trials.append((probe, self.engine.allocate(probe, 2)))
            self.scheduled += 1
        if not trials:
            return _Wave(trials, [])
        order = [int(i) for i in self.rng.permutation(len(trials))]
        if len(order) > 1 and order[0] == len(trials) - 1:
            # the last first draw's partner never comes right after it
            order[0], order[1] = order[1], order[0]
        return _Wave(trials, order)

    async def draw_wave(self, wave: _Wave) -> tuple[list[Observation | DrawStopped],
                                                    dict[int, Observation | DrawStopped]]:
        """Every first draw of the wave, then the second draw of each trial whose first
        draw was made, in the wave's order: (first draws, second draws by trial index)."""
        firsts = await asyncio.gather(*(self._one(p, idx[0]) for p, idx in wave.trials))
        todo = [k for k in wave.order if isinstance(firsts[k], Observation)]
        got = await asyncio.gather(*(self._one(wave.trials[k][0], wave.trials[k][1][1])
                                     for k in todo))
        return list(firsts), dict(zip(todo, got, strict=True))

    async def _one(self, probe: Probe, idx: int) -> Observation | DrawStopped:
        """One draw, kept in the pool; a stopped draw is returned, not raised."""
        try:
            obs = await self.engine.draw(probe, idx)
        except DrawStopped as exc:
            return exc
        self.pool.add(probe.fp, idx, obs)
        return obs

    def feed(self, probe: Probe, idx: list[int], a: Observation | DrawStopped,
             b: Observation | DrawStopped | None) -> None:
        """One trial's outcome: a stopped draw or a draw without a key at the layer counts
        as a failure (and no pair); otherwise the pair's disagreement updates the tally,
        the confidence sequence and, until it decides, the SPRT."""
        if isinstance(a, DrawStopped):
            self._stopped(a)
            return
        if isinstance(b, DrawStopped):
            self._stopped(b)
            return
        assert b is not None
        ka, kb = a.key(self.layer), b.key(self.layer)
        if ka is None or kb is None:
            for o in (a, b):
                if o.key(self.layer) is None:
                    self.failures += 1
                    self.fail_kinds[o.error.kind if o.error else "no_decision"] += 1
            return
        self.pairs += 1
        self.first_draws.append((probe.fp, idx[0]))
        self.pair_count[probe.fp] += 1
        dis = ka != kb
        self.disagreements += dis
        self.flips[probe.fp] += dis
        self.cs.update(dis)
        self.history.append((2 * self.pairs, *self.cs.interval()))
        if self.decision is None:
            self.decision = self.sprt.update(dis)
        if self.progress is not None:
            self.progress(2)

    def _stopped(self, exc: DrawStopped) -> None:
        """A draw the engine stopped: a failure of its kind, and (the first time) the stop
        reason its type names."""
        kind = getattr(exc, "kind", type(exc).__name__)
        self.fail_kinds[str(kind)] += 1
        self.failures += 1
        if not self.stop_reason:
            self.stop_reason = {BudgetExhausted: StopReason.BUDGET,
                                EvidenceExhausted: StopReason.EVIDENCE,
                                Interrupted: StopReason.INTERRUPTED}.get(
                type(exc), f"agent call failed ({kind}) under error policy 'raise'")

    def result(self) -> MeterResult:
        """The call (``undecided`` without an SPRT decision, its e-value then the larger
        likelihood ratio), the evidence behind it, and the advice when undecided."""
        sprt = self.sprt
        ci_low, ci_high = self.cs.interval()
        stop_reason = self.stop_reason
        if self.decision is None:
            call: MeterCall = "undecided"
            e_value = math.exp(max(sprt.llr, -sprt.llr)) if sprt.n else 1.0
        else:
            call = ("verdict-deterministic" if self.decision.call == "low"
                    else "verdict-stochastic")
            e_value = self.decision.e_value
            stop_reason = stop_reason or "decided"
        per_input = _per_input(self.probes, self.pool, self.layer, self.pair_count,
                               self.flips)
        calls = self.engine.ledger.calls - self.calls0
        complete = self.failures == 0 and stop_reason != StopReason.INTERRUPTED
        result = MeterResult(
            call=call, epsilon=self.epsilon, alpha=self.alpha, indifference=self.indifference,
            layer=self.layer, calls=calls, draws=sum(e.draws for e in per_input),
            pairs=self.pairs, disagreements=self.disagreements,
            ci_low=ci_low, ci_high=ci_high, e_value=e_value, complete=complete,
            failures=self.failures, failure_kinds=dict(self.fail_kinds), advice="",
            per_input=per_input, history=tuple(self.history),
            stop_reason=stop_reason or "decided", first_draws=tuple(self.first_draws))
        return _with_advice(result, sprt)


def _fewest_to_decide(sprt: BernoulliSPRT) -> int:
    """Trials before the SPRT could possibly decide (all agreeing or all disagreeing): a wave
    no larger than that never draws past a decision it could have made at its fastest."""
    low = (sprt.llr - sprt._lower) / -sprt._llr0 if sprt._llr0 < 0 else math.inf
    high = (sprt._upper - sprt.llr) / sprt._llr1 if sprt._llr1 > 0 else math.inf
    return max(1, math.ceil(min(low, high) - 1e-9))


def _per_input(probes: list[Probe], pool: EvidencePool, layer: str, pair_count: Counter[str],
               flips: Counter[str]) -> tuple[InputEvidence, ...]:
    out = []
    for p in probes:
        ev = pool.get(p.fp)
        out.append(InputEvidence(fp=p.fp, draws=len(ev.draws), pairs=pair_count[p.fp],
                                 flips=flips[p.fp], failures=ev.failures(),
                                 counts=dict(ev.counts(layer))))
    return tuple(out)


def _with_advice(r: MeterResult, sprt: BernoulliSPRT) -> MeterResult:
    from dataclasses import replace

    if r.call != "undecided":
        return r
    if r.pairs == 0:
        why = r.stop_reason or "no usable pair"
        if r.failures:
            kinds = ", ".join(f"{k} x{v}" for k, v in sorted(r.failure_kinds.items()))
            advice = (f"no usable pair of draws ({why}; failures: {kinds}): fix the agent or "
                      "its verdict extraction, then rerun")
        else:
            advice = (f"no usable pair of draws ({why}): raise {setting('budget', '')} to at "
                      "least 80")
        return replace(r, advice=advice)
    theta = min(max(r.estimate, 1e-4), 0.99)
    more = sprt_expected_n(sprt.p0, sprt.p1, theta, alpha=sprt.alpha, max_n=5000)
    if r.stop_reason == "interrupted":
        advice = (f"interrupted: rerun (add {setting('store')} {setting('record')} to keep "
                  "draws across runs)")
    elif r.stop_reason == StopReason.EVIDENCE:
        advice = (f"the recording ran out of draws: at the observed rate ~{r.estimate:.3f} a "
                  f"decision needs about {2 * more:.0f} more draws; record more repeats of "
                  "each input and assess again")
    elif sprt.p0 < theta < sprt.p1:
        advice = (f"the disagreement rate ~{r.estimate:.3f} lies in the indifference zone "
                  f"({sprt.p0:g}, {sprt.p1:g}) around epsilon={r.epsilon:g}: deciding needs "
                  f"~{2 * more:.0f} more calls ({setting('budget', '')}); or pick a precision "
                  "preset whose "
                  "epsilon is further from it (cheap=0.10, strict=0.01), or treat the agent as "
                  "stochastic and rely on noise-calibrated relations")
    else:
        advice = (f"{r.stop_reason}: at the observed rate ~{r.estimate:.3f} a decision needs "
                  f"about {2 * more:.0f} more calls; rerun with "
                  f"{setting('budget', int(r.calls + 2 * more + 20))}")
    return replace(r, advice=advice)
