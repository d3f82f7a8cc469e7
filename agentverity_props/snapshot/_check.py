"""``check``: re-admit the current agent against a snapshot sequentially, then find drift.

1. **Pre-checks (no call).** The inputs must be exactly the snapshot's (same fingerprint
   scheme and salt), and the verdict extraction the same. Otherwise: not admissible.
2. **Screening.** Draws on inputs picked uniformly at random (seeded), so each outcome
   "the draw differs from its reference" is i.i.d. Bernoulli with mean ``d`` (the average
   mismatch rate), feed :class:`~agentverity_props.decide.BernoulliSPRT` with
   ``p0 = epsilon / r`` and ``p1 = epsilon * r`` (``r`` the snapshot's indifference, 2):
   ``low`` re-admits (at most ``alpha`` of agents with ``d >= p1`` are re-admitted, under
   optional stopping). Then every input not yet drawn gets one draw, so each input is
   screened at least once. A clean agent on 20 inputs costs about 43 calls, where re-running
   the admission costs the meter, blindness, reference and calibration calls again (about
   199; both are reported).
3. **Stability.** If the SPRT says ``high`` (or cannot decide within the cap), mismatches
   are either drift or noise: the meter is rerun. Stochastic or undecided: not admissible
   (rule ``verdict-deterministic``); deterministic: the mismatches are drift.
4. **Confirmation.** Each input with a mismatch gets up to ``k`` fresh draws. Drift is
   confirmed when at least ``c`` of them differ from the reference, where ``c`` makes the
   curtailed two-sample test of :func:`~agentverity_props.decide.drift_plan` reject at
   ``alpha / inputs``: the input's current mismatch rate is higher than its own recorded
   rate (the snapshot's calibration draws, Fisher exact) *and* than the allowed noise
   ``tolerance`` (default ``epsilon * r``, exact binomial). Bonferroni over inputs. An input
   whose recorded rate is too close to 1/2 (``untestable`` in the snapshot) is never called
   drift. The confirmation draws come after the screen chose the input, so they are fresh
   i.i.d. draws whatever the screen did: the probability that an unchanged agent (every
   input drawn as when the snapshot was made, however borderline) shows any drift is at
   most ``alpha``, and so is that of an agent whose every input stays within the tolerance.
   The printed p-value accounts for the curtailment
   (:func:`~agentverity_props.decide.drift_p_value`); ``p_family`` is it times the inputs.

5. **Unchanged during the check.** Drift is a change *since the snapshot*; an agent that
   changes *while it is checked* (a model swapped mid-check) makes every decision above
   compare draws of two agents. The screen's draws are i.i.d. (uniform input), so their
   mismatches bound the early mismatch rate (:func:`~agentverity_props.decide.
   early_upper_bound`, valid at the SPRT's stop); late trials, one fresh draw of a uniformly
   random input each, scored 1 when it differs from its reference, are bet against that
   bound (:class:`~agentverity_props.decide.ChangeTest`). H0: the late mismatch rate is no
   higher than the early one; it fires with probability at most ``alpha / 8`` under H0 (the
   drift family gets the other ``7 alpha / 8``). An agent that drifted before the check and
   stays so is no change: both rates are high alike. When it fires the check's status is
   ``changed`` (exit 1), reported apart from drift. A steady agent pays
   :data:`~agentverity_props.diagnose.CHANGE_MIN_TRIALS` calls (8); the trials stop once
   they sit nearer the screen's estimate than its bound, at 160, or when it fires.

**Cost.** A check never costs more than a new snapshot would: its calls are capped at the
snapshot's own recorded cost (``calls.total``, the "full re-run" figure). When the cap stops
it, the check is incomplete and says to re-create the snapshot instead.

Exit codes: 0 clean, 1 drift or changed during the check, 2 not admissible or incomplete.
"""

from __future__ import annotations

import asyncio
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._internal.fingerprint import short
from .._internal.inputs import clean_inputs
from .._internal.outcome import CheckStatus, InputCheckStatus, StopReason, exit_code
from .._internal.renamed import renamed
from .._internal.settings import setting
from ..decide import (
    CHECK_CHANGE_SHARE,
    check_alpha_split,
    confirmation_plan,
    confirmation_settled,
    drift_p_value,
    modal,
)
from ..engine import EvidencePool, ledger_part
from ..errors import BudgetExhausted, DrawStopped, Interrupted, InvalidArgument
from ..results import CheckDocument
from ..runner import RunConfig
from ._create import Refusal, reference_form
from ._document import input_plan, load_snapshot, validate_snapshot

if TYPE_CHECKING:
    from ..decide import ChangeTest
    from ..diagnose import ChangeResult
    from ..engine import Engine, Probe


__all__ = ["SCHEMA", "CheckResult", "InputCheck", "acompare_snapshot", "compare_snapshot",
           "confirmation_plan"]

SCHEMA = CheckDocument.SCHEMA
MIN_SCREEN_CAP = 300
#: the changed-during-the-check test's share of ``alpha``; drift gets the rest
CHANGE_SHARE = CHECK_CHANGE_SHARE
#: late trials at most (one draw each, so more than run's 64 three-draw trials): a swap to
#: 30% noise after a clean screen needs about 75 of them; the cost cap still bounds them
CHECK_CHANGE_MAX_TRIALS = 160


@dataclass
class InputCheck:
    """What the check saw of one input."""

    fp: str
    reference: str
    screen: list[str | None] = field(default_factory=list)  # None = failed draw
    confirm: list[str | None] = field(default_factory=list)
    k: int = 0
    c: int = 0
    status: InputCheckStatus = InputCheckStatus.UNSCREENED
    p_value: float | None = None
    note: str = ""
    calibration: dict[str, Any] | None = None  # the snapshot's recorded rate, if any
    snapshot_status: str = "stable"  # stable / borderline / untestable (from the snapshot)
    inputs: int = 1  # the family size (Bonferroni)

    @property
    def mismatched(self) -> bool:
        return any(s is not None and s != self.reference for s in self.screen)

    def current(self) -> str | None:
        """The most common non-reference answer seen (the drifted-to verdict)."""
        return modal(x for x in (*self.screen, *self.confirm)
                     if x is not None and x != self.reference)

    def to_dict(self) -> dict[str, Any]:
        sc = [s for s in self.screen if s is not None]
        cf = [s for s in self.confirm if s is not None]
        return {"fp": self.fp, "status": self.status, "reference": self.reference,
                "current": self.current(),
                "screen": {"draws": len(self.screen), "matches": sc.count(self.reference),
                           "failures": self.screen.count(None)},
                "confirmation": {"draws": len(self.confirm),
                                 "mismatches": sum(x != self.reference for x in cf),
                                 "failures": self.confirm.count(None), "k": self.k,
                                 "c": self.c, "p_value": self.p_value,
                                 "p_family": None if self.p_value is None else
                                 min(1.0, self.p_value * self.inputs)},
                "snapshot_status": self.snapshot_status,
                "calibration": None if not self.calibration else
                {"draws": int(self.calibration.get("draws", 0)),
                 "mismatches": int(self.calibration.get("mismatches", 0))},
                "note": self.note}


@dataclass(frozen=True)
class CheckResult:
    """The result of :func:`compare_snapshot`; ``to_dict()`` is check/1 JSON."""

    status: CheckStatus
    agent: str
    snapshot: dict[str, Any]
    inadmissible: tuple[Refusal, ...]
    inputs: tuple[InputCheck, ...]
    admission: dict[str, Any]
    stability: dict[str, Any] | None
    calls: dict[str, Any]
    #: the per-input mismatch rate still called noise (the drift limit; not
    #: ``RunConfig.tolerance``, the relations' effect limit)
    drift_tolerance: float
    alpha_input: float
    ledger: dict[str, Any] = field(default_factory=dict)
    change: ChangeResult | None = None

    @property
    def tolerance(self) -> float:
        """Deprecated: :attr:`drift_tolerance`."""
        warnings.warn("CheckResult.tolerance is deprecated, use CheckResult.drift_tolerance",
                      DeprecationWarning, stacklevel=2)
        return self.drift_tolerance

    @property
    def drifted(self) -> list[str]:
        return [i.fp for i in self.inputs if i.status == "drift"]

    @property
    def exit_code(self) -> int:
        return exit_code(incomplete=self.status not in ("clean", "drift", "changed"),
                         finding=self.status in ("drift", "changed"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA, "agent": self.agent, "status": self.status,
            "exit_code": self.exit_code, "snapshot": self.snapshot,
            "inadmissible": [r.to_dict() for r in self.inadmissible],
            "admission": self.admission, "stability": self.stability,
            "drift": {"inputs": len(self.drifted), "fps": self.drifted,
                      # check/1's published name of the drift tolerance
                      "tolerance": self.drift_tolerance, "alpha_per_input": self.alpha_input,
                      "method": "curtailed test per input: worse than its own recorded rate "
                                "(Fisher exact vs the snapshot's calibration draws) and than "
                                "the tolerance (exact binomial); Bonferroni over inputs; "
                                "p-values account for the curtailment",
                      "untestable": [i.fp for i in self.inputs
                                     if i.snapshot_status == "untestable"],
                      "guarantee": self.guarantee()},
            "inputs": [i.to_dict() for i in self.inputs],
            "stationarity": None if self.change is None else self.change.to_dict(),
            "calls": self.calls, "ledger": ledger_part(self.ledger),
            "tokens": self.ledger.get("tokens"),
            "privacy": "inputs are identified by fingerprint only",
        }

    def guarantee(self) -> str:
        alpha = self.snapshot.get("alpha")
        cal = self.snapshot.get("calibration_source", "independent")
        base = (f"P(any input reported as drift) <= {alpha:g} when the agent is unchanged "
                "since the snapshot (each input drawn as then, however borderline) or every "
                "input stays within the tolerance; valid under this check's stopping; "
                "assumes independent draws given the input")
        if cal != "independent":
            base += ("; this snapshot/1 file has no calibration sample, so for inputs that "
                     "never flipped the guarantee holds only if they stay within the "
                     "tolerance — re-create the snapshot")
        return base

    def summary(self) -> str:
        from ..report import render_check_text
        return render_check_text(self.to_dict(), color=False)


def _prechecks(doc: Mapping[str, Any], probes: list[Probe], extractor_id: str) -> list[Refusal]:
    out = []
    scheme = doc["fingerprints"].get("scheme")
    now = probes[0].fp.split(":", 1)[0]
    if scheme != now:
        need = "set" if scheme == "hmac-sha256" else "unset"
        out.append(Refusal("input-set", f"the snapshot fingerprints inputs with {scheme}, "
                           f"now {now} — {need} AGENTVERITY_PROPS_SALT as when it was made"))
    else:
        ref_fps = {e["fp"] for e in doc["inputs"]}
        cur = {p.fp for p in probes}
        extra, missing = sorted(cur - ref_fps), sorted(ref_fps - cur)
        if extra or missing:
            parts = []
            if extra:
                parts.append(f"{len(extra)} input(s) are not in the snapshot "
                             f"({', '.join(short(f) for f in extra[:3])})")
            if missing:
                parts.append(f"{len(missing)} snapshot input(s) are missing from "
                             f"{setting('inputs', '')} "
                             f"({', '.join(short(f) for f in missing[:3])})")
            salt = " (or AGENTVERITY_PROPS_SALT differs)" if scheme == "hmac-sha256" else ""
            out.append(Refusal("input-set", "; ".join(parts) + f"{salt} — pass the inputs "
                               "the snapshot was made with"))
    if doc["config"]["extractor"] != extractor_id:
        out.append(Refusal("extractor", f"the snapshot's verdicts were extracted with "
                           f"{doc['config']['extractor']}, now {extractor_id} — use the same "
                           f"{setting('verdict')}"))
    return out


async def _draw_key(eng: Engine, probe: Probe, layer: str) -> str | None:
    """One draw's reference-form key; None for a failed or undecided draw."""
    obs = await eng.draw(probe, eng.allocate(probe, 1)[0])
    key = obs.key(layer)
    return None if key is None else reference_form(key, layer)


async def acompare_snapshot(agent: Any, inputs: Sequence[str],
                            snapshot: str | Path | Mapping[str, Any], *,
                            config: RunConfig | None = None,
                            drift_tolerance: float | None = None,
                            engine: Engine | None = None,
                            progress: Callable[[str, int], None] | None = None,
                            tolerance: float | None = None) -> CheckResult:
    """Async core of :func:`compare_snapshot`."""
    drift_tolerance = renamed("acompare_snapshot", "tolerance", "drift_tolerance", tolerance,
                              drift_tolerance)
    from ..decide import BernoulliSPRT
    from ..engine import Engine, Probe

    config = config or RunConfig()
    doc = validate_snapshot(dict(snapshot)) if isinstance(snapshot, Mapping) else \
        load_snapshot(snapshot)
    cfg = doc["config"]
    eps, alpha, r, layer = (float(cfg["epsilon"]), float(cfg["alpha"]),
                            float(cfg["indifference"]), str(cfg["layer"]))
    drift_tolerance = min(0.49, eps * r) if drift_tolerance is None else drift_tolerance
    if drift_tolerance.__class__ is bool or not isinstance(drift_tolerance, (int, float)) \
            or not (0.0 < drift_tolerance < 0.5):
        raise InvalidArgument(f"drift_tolerance={drift_tolerance!r} must be in (0, 0.5)")
    texts = clean_inputs(inputs)
    probes = [Probe.make(t) for t in texts]
    n = len(probes)
    alpha_change, alpha_input = check_alpha_split(alpha, max(n, len(doc["inputs"])))
    cal_doc = doc.get("calibration") or {}
    meta = {"created_at": doc["created_at"], "agent": doc["agent"], "epsilon": eps,
            "alpha": alpha, "indifference": r, "layer": layer, "inputs": len(doc["inputs"]),
            "calls": doc["calls"], "same_agent": None,
            "calibration_source": str(cal_doc.get("source", "independent")),
            "migrated_from": doc.get("migrated_from")}
    entries = {e["fp"]: e for e in doc["inputs"]}
    empty_adm = {"rule": "sprt", "call": None, "p0": eps / r, "p1": min(1.0, eps * r),
                 "alpha": alpha, "n": 0, "mismatches": 0, "e_value": None}
    own = engine is None
    eng = engine or Engine(agent, config.engine_config())
    try:
        meta["same_agent"] = eng.agent.identity == doc["agent"]
        pre = _prechecks(doc, probes, config.extractor.config_id)
        if pre:
            return CheckResult(CheckStatus.INADMISSIBLE, eng.agent.identity, meta, tuple(pre), (),
                               empty_adm, None, _calls(eng, doc, {}), drift_tolerance,
                               alpha_input, eng.ledger.to_dict())
        checks = [_input_check(entries[p.fp], drift_tolerance, alpha_input,
                               max(n, len(doc["inputs"]))) for p in probes]
        run = _CheckRun(eng, probes, checks, layer, doc, progress)
        sprt = BernoulliSPRT(eps / r, min(1.0, eps * r), alpha=alpha)
        decision = await _screen_phase(run, sprt, np.random.default_rng([config.seed, 7]))
        admission = {**empty_adm, "call": decision.call if decision else None,
                     "n": sprt.n, "mismatches": sprt.successes,
                     "e_value": decision.e_value if decision else math.exp(abs(sprt.llr)),
                     "estimand": "mean over inputs of P(a draw differs from its reference)",
                     "guarantee": f"P(re-admit) <= {alpha:g} when that rate is >= "
                                  f"{min(1.0, eps * r):g}; valid under optional stopping"}
        # 3. stability, only when the screen could not re-admit
        stability = None
        inadmissible: list[Refusal] = []
        if (decision is None or decision.call == "high") and not run.stop and not eng.stopping:
            stability = await _stability_phase(run, inadmissible, config, epsilon=eps,
                                               alpha=alpha, indifference=r)
        await _confirm_phase(run, drift_tolerance, skip=bool(inadmissible))
        change = await _change_phase(run, sprt, alpha=alpha_change, seed=config.seed,
                                     skip=bool(inadmissible))
        eng.ledger.phase = None
        for ch in checks:
            _settle(ch, screened=any(s is not None for s in ch.screen),
                    skipped=bool(inadmissible))
        status = _check_status(run, inadmissible, change)
        return CheckResult(status, eng.agent.identity, meta, tuple(inadmissible),
                           tuple(checks), admission, stability, _calls(eng, doc, run.phase),
                           drift_tolerance, alpha_input, eng.ledger.to_dict(), change=change)
    finally:
        if own:
            await eng.aclose()


class _CheckRun:
    """One check's shared state: the engine, the inputs' checks, the calls spent under the
    cost cap (never more than re-creating the snapshot, module docstring "Cost"), the
    calls of each phase and why it stopped early (empty while it runs on)."""

    def __init__(self, eng: Engine, probes: list[Probe], checks: list[InputCheck], layer: str,
                 doc: Mapping[str, Any], progress: Callable[[str, int], None] | None) -> None:
        self.eng, self.probes, self.checks, self.layer = eng, probes, checks, layer
        self.progress = progress
        self.workers = max(1, eng.config.max_workers)
        self.phase: dict[str, int] = {}
        self.stop = ""
        # its live calls and the draws it replayed (a preview's)
        self.full = (int(doc["calls"].get("total", 0))
                     + int(doc["calls"].get("replayed") or 0)) or None
        self.spent = 0
        self.capped = (f"the check reached the cost of a new snapshot ({self.full} calls) — "
                       "re-create the snapshot instead (agentverity-props snapshot)")

    def take(self) -> bool:
        """Reserve one call under the cost cap (before the draw: exact with workers)."""
        if self.full is not None and self.spent >= self.full:
            return False
        self.spent += 1
        return True

    @property
    def at_cap(self) -> bool:
        """True once every call the cost cap allows is spent."""
        return self.full is not None and self.spent >= self.full

    async def screen(self, idx: int) -> str | None:
        """One screening draw of input ``idx``; None (and the stop reason) when it failed."""
        if not self.take():
            self.stop = self.stop or self.capped
            return None
        try:
            return await _draw_key(self.eng, self.probes[idx], self.layer)
        except DrawStopped as exc:
            self.stop = self.stop or _why(exc)
            return None


async def _screen_phase(run: _CheckRun, sprt: Any, rng: Any) -> Any:
    """Step 2: i.i.d. screening draws until the SPRT decides (2a), then every input screened
    at least once (2b); returns the SPRT's decision (None when it did not decide)."""
    eng, checks = run.eng, run.checks
    n = len(checks)
    cap = max(MIN_SCREEN_CAP, 3 * n)
    if run.full is not None:
        # half of it at most for the screen: a screen that slow (a mismatch rate near
        # epsilon) leaves the rest to the stability meter and the confirmations
        cap = min(cap, max(run.full // 2, n))
    drawn = 0
    c0 = eng.ledger.calls
    eng.ledger.phase = "screen"  # tokens per phase, as the calls are counted
    # 2a. i.i.d. screening until the SPRT decides (batches keep the choice of draws a
    # function of earlier outcomes only: replay makes the same draws)
    decision = None
    while decision is None and drawn < cap and not run.stop and not eng.stopping:
        batch = [int(rng.integers(n)) for _ in range(min(run.workers, cap - drawn))]
        keys = await asyncio.gather(*(run.screen(i) for i in batch))
        drawn += len(batch)
        for i, key in zip(batch, keys, strict=True):
            checks[i].screen.append(key)
            if key is not None and decision is None:
                decision = sprt.update(key != checks[i].reference)
        if run.progress is not None:
            run.progress("screen", len(batch))
    # 2b. coverage: every input screened at least once (one retry after a failure)
    for _ in range(2):
        todo = [i for i, ch in enumerate(checks) if all(s is None for s in ch.screen)]
        if not todo or run.stop or eng.stopping:
            break
        keys = await asyncio.gather(*(run.screen(i) for i in todo))
        for i, key in zip(todo, keys, strict=True):
            checks[i].screen.append(key)
    run.phase["screen"] = eng.ledger.calls - c0
    return decision


async def _stability_phase(run: _CheckRun, inadmissible: list[Refusal], config: RunConfig, *,
                           epsilon: float, alpha: float,
                           indifference: float) -> dict[str, Any] | None:
    """Step 3: the stability meter (when the screen could not re-admit), within what the
    cost cap leaves; a verdict no longer deterministic is a refusal in ``inadmissible``.
    Returns the meter's summary (None when it could not run)."""
    from ..diagnose import DEFAULT_MAX_CALLS, run_meter

    eng = run.eng
    c1 = eng.ledger.calls
    eng.ledger.phase = "stability"
    own_cap = config.max_meter_calls or DEFAULT_MAX_CALLS
    meter_cap = own_cap if run.full is None else min(own_cap, run.full - run.spent)
    m = None
    if meter_cap < 2:
        run.stop = run.capped
    else:
        m = await run_meter(eng, run.probes, EvidencePool(), epsilon=epsilon, alpha=alpha,
                        indifference=indifference, layer=run.layer, max_calls=meter_cap,
                        seed=config.seed)
        run.spent += eng.ledger.calls - c1
        if m.call == "undecided" and meter_cap < own_cap and \
                m.stop_reason.startswith("meter call cap"):
            run.stop = run.capped  # undecided because of the cost cap, not the agent
    run.phase["stability"] = eng.ledger.calls - c1
    if m is None:
        return None
    stability = {"call": m.call, "calls": m.calls, "pairs": m.pairs,
                 "ci_low": m.ci_low, "ci_high": m.ci_high, "advice": m.advice,
                 "complete": m.complete}
    if run.stop == run.capped:
        pass
    elif m.call != "verdict-deterministic" and m.complete:
        inadmissible.append(Refusal("verdict-deterministic", (
            f"the agent's verdict is now {m.call} at epsilon {epsilon:g} (pair "
            f"disagreement CI [{m.ci_low:.3f}, {m.ci_high:.3f}]) — it cannot be "
            "compared with a deterministic reference"
            + (f"; {m.advice}" if m.advice else ""))))
    elif not m.complete:
        run.stop = run.stop or m.stop_reason or "stability meter incomplete"
    return stability


async def _confirm_phase(run: _CheckRun, drift_tolerance: float, *, skip: bool) -> None:
    """Step 4: confirmation draws of every mismatched input (not when ``skip``, or the cost
    cap is reached)."""
    eng, checks = run.eng, run.checks
    c2 = eng.ledger.calls
    eng.ledger.phase = "confirm"
    if not skip and run.stop != run.capped:
        await asyncio.gather(*(_confirm(eng, ch, run.probes[i], run.layer, drift_tolerance,
                                        run.take) for i, ch in enumerate(checks)
                               if ch.mismatched and ch.k))
        if run.at_cap and any(ch.mismatched and ch.k and ch.confirm and ch.confirm[-1] is None
                              for ch in checks):
            run.stop = run.stop or run.capped
    run.phase["confirm"] = eng.ledger.calls - c2


async def _change_phase(run: _CheckRun, sprt: Any, *, alpha: float, seed: Any,
                        skip: bool) -> Any:
    """Step 5: unchanged during the check (module docstring), late trials against the
    screen; None when skipped."""
    eng = run.eng
    c3 = eng.ledger.calls
    eng.ledger.phase = "change"
    change = None
    if not skip and run.stop != run.capped and not eng.stopping:
        change = await _change_during_check(
            eng, run.probes, run.checks, sprt.n, sprt.successes, alpha=alpha, layer=run.layer,
            rng=np.random.default_rng([seed, 8]), take=run.take, workers=run.workers,
            offset=eng.ledger.calls + eng.ledger.replayed)
        if change.status == "incomplete" and run.at_cap:
            run.stop = run.stop or run.capped
    run.phase["change"] = eng.ledger.calls - c3
    return change


def _check_status(run: _CheckRun, inadmissible: list[Refusal], change: Any) -> CheckStatus:
    """The check's status from what its steps found; an incomplete check says why in
    ``inadmissible`` (the ``complete`` refusal)."""
    eng, checks = run.eng, run.checks
    # a failed call is missing evidence, as in run and snapshot: it may be exactly the
    # draw that would have differed, so "clean" would be a guess
    failed = eng.ledger.failures
    if inadmissible:
        return CheckStatus.INADMISSIBLE
    if change is not None and change.fired:
        return CheckStatus.CHANGED  # whatever else was seen: two agents were compared
    if run.stop or eng.stopping or failed or any(ch.status == "incomplete" for ch in checks) \
            or (change is not None and change.status == "incomplete"):
        stop = run.stop
        if eng.stopping:
            stop = StopReason.INTERRUPTED
        elif failed and not stop:
            kinds = ", ".join(f"{k} x{v}" for k, v in eng.ledger.failure_kinds.items())
            stop = f"{failed} agent call(s) failed ({kinds})"
        if not stop and change is not None and change.status == "incomplete":
            stop = "the changed-agent check could not finish its trials"
        inadmissible.append(Refusal("complete", _incomplete_msg(checks, stop)))
        return CheckStatus.INCOMPLETE
    return (CheckStatus.DRIFT if any(ch.status == InputCheckStatus.DRIFT for ch in checks)
            else CheckStatus.CLEAN)


async def _change_during_check(eng: Engine, probes: Sequence[Probe], checks: list[InputCheck],
                               early_n: int, early_mismatches: int, *, alpha: float,
                               layer: str, rng: Any, take: Callable[[], bool], workers: int,
                               offset: int) -> ChangeResult:
    """Step 5 of the module docstring: late trials (one fresh draw of a uniformly random
    input, scored 1 when it differs from its reference) bet against the screen's bound."""
    from ..decide import ChangeTest
    from ..diagnose import change_result, change_settled

    def result(test: ChangeTest | None, *, calls: int, fired_call: int = 0,
               cut: bool = False) -> ChangeResult:
        return change_result(
            test, alpha=alpha, early_calls=offset, calls=calls, fired_call=fired_call, cut=cut,
            source="trials (a fresh draw of a random input each)", during="check",
            early_phase="the screen",
            scores="d = mean over the inputs of P(a draw differs from its reference), in the "
                   "screen's draws (early) against later draws (late); H0: d_late <= d_early")

    if not early_n:
        return result(None, calls=0)
    test: ChangeTest = ChangeTest(alpha=alpha, early_pairs=early_n,
                                  early_disagreements=early_mismatches)
    estimate = early_mismatches / early_n
    made = fired_call = planned = 0
    cut = False
    top = CHECK_CHANGE_MAX_TRIALS
    while planned < top and not test.fired and not change_settled(test, estimate):
        batch = [int(rng.integers(len(probes)))
                 for _ in range(max(1, min(workers, top - planned)))]
        planned += len(batch)

        async def one(i: int) -> tuple[bool, str | None]:
            if not take():
                return False, None
            try:
                return True, await _draw_key(eng, probes[i], layer)
            except DrawStopped:
                return False, None

        got = await asyncio.gather(*(one(i) for i in batch))
        for i, (ok, key) in zip(batch, got, strict=True):
            if not ok:
                cut = True
                continue
            made += 1
            if key is not None and not test.fired and \
                    test.update(1.0 if key != checks[i].reference else 0.0):
                fired_call = offset + made
        if cut or eng.stopping:
            cut = cut or not test.fired
            break
    return result(test, calls=made, fired_call=fired_call, cut=cut and not test.fired)


def _why(exc: Exception) -> str:
    if isinstance(exc, BudgetExhausted):
        return StopReason.BUDGET
    if isinstance(exc, Interrupted):
        return StopReason.INTERRUPTED
    return f"agent call failed ({getattr(exc, 'kind', 'error')}) under error policy 'raise'"


def _incomplete_msg(checks: list[InputCheck], stop: str) -> str:
    bad = [short(ch.fp) for ch in checks if ch.status == "incomplete"]
    parts = [stop] if stop else []
    if bad:
        parts.append(f"{len(bad)} input(s) lack evidence ({', '.join(bad[:3])})")
    return ("the check is incomplete: " + "; ".join(parts) + " — fix the failures or raise "
            f"{setting('budget', '')}, then rerun")


def _input_check(entry: Mapping[str, Any], drift_tolerance: float, alpha_input: float,
                 family: int) -> InputCheck:
    """The input's test plan: its own recorded rate (if any) and the tolerance."""
    plan, status = input_plan(entry, tolerance=drift_tolerance, alpha_input=alpha_input)
    k, c = plan or (0, 0)
    return InputCheck(entry["fp"], entry["reference"], k=k, c=c,
                      calibration=entry.get("calibration") or None, snapshot_status=status,
                      inputs=family)


async def _confirm(eng: Engine, ch: InputCheck, probe: Probe, layer: str, drift_tolerance: float,
                   take: Callable[[], bool] = lambda: True) -> None:
    """Curtailed two-sample test (:func:`~agentverity_props.decide.drift_plan`); the p-value
    accounts for the curtailment (:func:`~agentverity_props.decide.drift_p_value`).
    ``take`` reserves a call under the check's cost cap (a refused draw is missing)."""
    mism = 0
    for done in range(ch.k):
        if confirmation_settled(mism, done, k=ch.k, c=ch.c):
            break
        if not take():
            ch.confirm.append(None)
            break
        try:
            key = await _draw_key(eng, probe, layer)
        except DrawStopped:
            ch.confirm.append(None)
            break
        ch.confirm.append(key)
        if key is None:
            break
        mism += key != ch.reference
    cal = ch.calibration or {}
    ch.p_value = drift_p_value(mism, a=int(cal.get("mismatches", 0)),
                               m=int(cal.get("draws", 0)), k=ch.k,
                               tolerance=drift_tolerance) if ch.confirm else None


def _settle(ch: InputCheck, *, screened: bool, skipped: bool) -> None:
    if not screened:
        ch.status, ch.note = InputCheckStatus.INCOMPLETE, "no usable screening draw"
        return
    if not ch.mismatched:
        ch.status = InputCheckStatus.CLEAN
        return
    if skipped:
        ch.status = InputCheckStatus.UNCONFIRMED
        ch.note = "not confirmed: the evidence is not admissible"
        return
    if not ch.k:
        ch.status = InputCheckStatus.UNCONFIRMED
        cal = ch.calibration or {}
        ch.note = (f"untestable: {cal.get('mismatches', 0)} of {cal.get('draws', 0)} "
                   "calibration draws differed from the reference when the snapshot was "
                   "made, too close to 1/2 for drift to be confirmed; never called drift")
        return
    mism = sum(x is not None and x != ch.reference for x in ch.confirm)
    if mism >= ch.c:
        ch.status = InputCheckStatus.DRIFT
        ch.note = f"{mism} of {len(ch.confirm)} confirmation draws differ from the reference"
        if ch.calibration:
            ch.note += (f" (then {ch.calibration.get('mismatches', 0)} of "
                        f"{ch.calibration.get('draws', 0)} calibration draws did)")
    elif None in ch.confirm:
        ch.status, ch.note = InputCheckStatus.INCOMPLETE, "a confirmation draw failed"
    else:
        ch.status = InputCheckStatus.NOISE
        ch.note = "a screening draw differed, within the allowed noise on confirmation"


def _calls(eng: Engine, doc: Mapping[str, Any], phase: dict[str, int]) -> dict[str, Any]:
    # what a full re-run costs: the snapshot's live calls and the draws it replayed
    full = int(doc["calls"].get("total", 0)) + int(doc["calls"].get("replayed") or 0)
    total = int(eng.ledger.calls)
    return {"total": total, "screen": phase.get("screen", 0),
            "stability": phase.get("stability", 0), "confirm": phase.get("confirm", 0),
            "change": phase.get("change", 0), "full_rerun_estimate": full,
            "saved": full - total}


def compare_snapshot(agent: Any, inputs: Sequence[str],
                     snapshot: str | Path | Mapping[str, Any], *,
                     config: RunConfig | None = None, drift_tolerance: float | None = None,
                     progress: Callable[[str, int], None] | None = None,
                     tolerance: float | None = None) -> CheckResult:
    """Check the agent against a snapshot: sequential re-admission, then per-input drift.

    ``epsilon``, ``alpha``, ``indifference`` and ``layer`` come from the snapshot; ``config``
    supplies the engine settings, the seed and the verdict extractor (which must match the
    snapshot's).

    Args:
        agent: the (new version of the) agent.
        inputs: the snapshot's inputs.
        snapshot: a snapshot file path or its loaded dict.
        config: engine settings, seed, extractor (its ``tolerance``, the relations' effect
            limit, plays no part here).
        drift_tolerance: the per-input mismatch rate still called noise (default
            ``epsilon * indifference``, at most 0.49); drift also needs a rate above the
            input's own recorded one.
        tolerance: the deprecated old name of ``drift_tolerance`` (a
            ``DeprecationWarning``).

    Returns:
        A :class:`CheckResult`: ``status`` clean / drift / inadmissible / incomplete,
        ``exit_code`` 0 / 1 / 2 / 2.
    """
    from ..engine import run_sync
    drift_tolerance = renamed("compare_snapshot", "tolerance", "drift_tolerance", tolerance,
                              drift_tolerance)
    return run_sync(acompare_snapshot(agent, inputs, snapshot, config=config,
                                      drift_tolerance=drift_tolerance, progress=progress))
