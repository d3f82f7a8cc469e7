"""Regression references: :func:`create_snapshot` (checked by :mod:`._check`).

A snapshot records, per input fingerprint, the agent's *reference verdict* (the majority of
its draws) so that a later version of the agent can be checked against it. A reference is
only worth keeping when it is stable and informative, so a snapshot is **refused** unless
every admission rule holds (each is named in the refusal):

``complete``
    every draw needed was made (no failures, budget end or interrupt) and every input has
    a reference;
``verdict-deterministic``
    the meter calls the verdict deterministic at ``epsilon``, and every input's draws have
    a strict majority;
``not-blind``
    the blindness health check says ``ok`` (``undecided`` refuses too: add inputs with
    other verdicts, e.g. with ``agentverity-props enlarge``; ``suppressed`` refuses);
``independent-draws``
    the dependent-draws health check of the run did not fire (a cache, a sticky session or
    replicas taking turns make a 'deterministic' verdict and its references unreliable);
``unchanged-agent``
    the calibration draws do not contradict the admission: the changed-agent check
    (:class:`~agentverity_props.decide.ChangeTest`, at the run's change share of ``alpha``)
    bets the calibration round (every input's fresh draws, scored by their share of
    disagreeing pairs) against the meter's bound on the pair disagreement; when it fires the
    agent became noisier after it was admitted (a model swapped mid-run) and the references
    describe an agent that is gone;
``required-verdicts``
    every verdict of ``RunConfig(require_verdicts=...)`` / ``--require-verdicts`` was
    produced by some draw (a reference set that never reaches a route cannot guard it);
``accepted``
    the user approved the references (``accept_reference=True`` / ``--accept-reference``).

**Calibration.** The meter certifies the *average* instability, not each input's: one input
of twenty at 50/50 passes it. So once the references are fixed, every input gets a fixed
number of fresh draws (``calibration_draws``, default 6) and the snapshot records how many
differed from the reference. ``check`` tests each input against that recorded rate (a
two-sample test, :func:`~agentverity_props.decide.drift_plan`), which is what keeps its
false-drift rate on an unchanged agent at ``alpha`` however borderline an input is. The
calibration draws come after the admission decision and never change it, so they are an
unbiased sample of the admitted agent. Inputs that flipped while measured are listed as
``borderline``; those whose recorded rate is too close to 1/2 for drift ever to be confirmed
are listed as ``untestable`` (check screens them but never calls them drift).

The file holds no prompt: inputs are identified by fingerprint (HMAC-SHA-256 when
``AGENTVERITY_PROPS_SALT`` is set); at the ``text`` layer the reference answers are
fingerprinted too; per input only counts are kept. It is written atomically (temp file,
fsync, rename): a crash mid-write leaves the previous snapshot intact.

Older ``snapshot/1`` files are read through :func:`migrate_snapshot` (nothing is lost; inputs
that flipped at admission are tested against their admission counts, the others against the
tolerance as before; re-create the snapshot for the full guarantee).
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._internal.fingerprint import fingerprint, salt_from_env, short
from .._internal.inputs import clean_inputs
from .._internal.settings import setting
from ..diagnose import ChangeResult, change_result
from ..errors import (
    BadInput,
    DrawStopped,
    InvalidArgument,
)
from ..runner import RunConfig, RunResult, arun

# load_snapshot is re-exported (in __all__) for code that imported it from here
from ._document import SCHEMA, input_note, input_plan, load_snapshot, write_snapshot

if TYPE_CHECKING:
    from ..diagnose import BlindnessResult
    from ..engine import Engine, Probe


__all__ = ["CALIBRATION_DRAWS", "Refusal", "SnapshotResult", "acreate_snapshot",
           "create_snapshot", "load_snapshot", "majority", "reference_form",
           "write_snapshot"]

CALIBRATION_DRAWS = 6
RULES = ("complete", "verdict-deterministic", "not-blind", "independent-draws",
         "unchanged-agent", "required-verdicts", "accepted")
MAX_REFERENCE_TOP_UP = 3
PRIVACY = ("inputs are identified by fingerprint only; no prompt is stored (reference "
           "answers at the text layer are fingerprinted too; per input only counts are kept)")


@dataclass(frozen=True)
class Refusal:
    """One admission rule that failed, and why."""

    rule: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message}


def reference_form(key: str, layer: str) -> str:
    """How a verdict key is stored: literal labels, fingerprinted answers (text layer)."""
    return fingerprint(key, salt_from_env()) if layer == "text" else key


def majority(counts: Mapping[str, int]) -> str | None:
    """The strict-majority key of ``counts`` (None when empty or tied)."""
    top = Counter(counts).most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


@dataclass(frozen=True)
class SnapshotResult:
    """The outcome of :func:`create_snapshot`.

    ``document`` is the snapshot/2 dict (also for a refused snapshot, whose ``admission``
    lists the failed rules); it is written only when admitted.
    """

    document: dict[str, Any]
    refusals: tuple[Refusal, ...]
    run: RunResult = field(repr=False)
    path: str | None = None

    @property
    def admitted(self) -> bool:
        return not self.refusals

    @property
    def exit_code(self) -> int:
        """0 admitted (and written when a path was given), 2 refused."""
        return 0 if self.admitted else 2

    def to_dict(self) -> dict[str, Any]:
        return self.document

    def write(self, path: str | Path) -> SnapshotResult:
        """Write the snapshot atomically; refused snapshots raise :class:`BadInput`."""
        if not self.admitted:
            raise BadInput(self.refusal_message(), "nothing was written")
        write_snapshot(path, self.document)
        return replace(self, path=str(path))

    def refusal_message(self) -> str:
        return "snapshot refused: " + "; ".join(f"[{r.rule}] {r.message}"
                                                for r in self.refusals)

    def summary(self) -> str:
        from ..report import render_snapshot_text
        return render_snapshot_text(self.to_dict(), color=False)


# ------------------------------------------------------------------ creating


async def _top_up(eng: Engine, probe: Probe, counts: Counter[str], layer: str) -> tuple[int, int]:
    """Draw until ``counts`` has a strict majority (at most 3 draws): (draws, failures)."""
    draws = fails = 0
    while majority(counts) is None and draws < MAX_REFERENCE_TOP_UP:
        if eng.stopping or not eng.can_afford(1):
            break
        try:
            obs = await eng.draw(probe, eng.allocate(probe, 1)[0])
        except DrawStopped:
            fails += 1
            break
        draws += 1
        key = obs.key(layer)
        if key is None:
            fails += 1
            continue
        counts[reference_form(key, layer)] += 1
    return draws, fails


async def _calibrate(eng: Engine, probe: Probe, ref: str, layer: str,
                     m: int) -> tuple[dict[str, int], list[str]]:
    """``m`` fresh draws after the reference is fixed: how many differ from it (and the keys,
    for the changed-agent check; never stored)."""
    async def one() -> str | None:
        try:
            obs = await eng.draw(probe, eng.allocate(probe, 1)[0])
        except DrawStopped:
            return None
        key = obs.key(layer)
        return None if key is None else reference_form(key, layer)

    if eng.stopping or not eng.can_afford(m):
        return {"draws": 0, "mismatches": 0, "failures": m}, []
    keys = await asyncio.gather(*(one() for _ in range(m)))
    got = [k for k in keys if k is not None]
    return {"draws": len(got), "mismatches": sum(k != ref for k in got),
            "failures": len(keys) - len(got)}, got


async def acreate_snapshot(agent: Any, inputs: Sequence[str], *,
                           config: RunConfig | None = None, accept_reference: bool = False,
                           output: str | Path | None = None, engine: Engine | None = None,
                           calibration_draws: int = CALIBRATION_DRAWS,
                           progress: Callable[[str, int], None] | None = None
                           ) -> SnapshotResult:
    """Async core of :func:`create_snapshot`: the run (meter and blindness), the reference
    draws, the calibration round and its changed-agent check, in that order (calls counted
    per phase), then the admission and the document."""
    from ..engine import Engine, Probe

    config = config or RunConfig()
    _check_arguments(accept_reference, calibration_draws)
    texts = clean_inputs(inputs)
    own = engine is None
    eng = engine or Engine(agent, config.engine_config())
    try:
        run = await arun(agent, texts, [], config=config, engine=eng, progress=progress,
                         change_check=False)
        layer = config.layer
        calls_before = eng.ledger.calls
        eng.ledger.phase = "reference"  # tokens per phase, as the calls below
        probes = [Probe.make(t) for t in texts]
        refs = await _references(eng, probes, run, layer)
        ref_calls = eng.ledger.calls - calls_before
        eng.ledger.phase = "calibration"
        cals, cal_keys = await _calibration_round(eng, probes, refs, layer, calibration_draws,
                                                  progress)
        calls_change = eng.ledger.calls
        eng.ledger.phase = "change"
        run = replace(run, change=await _calibration_change(
            eng, probes, run, config, cal_keys, calibration_draws))
        calls_change = eng.ledger.calls - calls_change
        eng.ledger.phase = None
        cal_calls = eng.ledger.calls - calls_before - ref_calls - calls_change
        cal_failed = sum(c["failures"] for c in cals if c is not None)
        drift_tolerance = min(0.49, config.eps * config.indifference)
        from ..decide import bonferroni
        alpha_input = bonferroni(config.alpha, len(probes))
        rows, no_ref, tied = _input_rows(probes, run, refs, cals, tolerance=drift_tolerance,
                                         alpha_input=alpha_input)
        refusals = _admission(run, no_ref, tied, accept_reference, interrupted=eng.stopping,
                              layer=layer, cal_failed=cal_failed)
        doc = _document(run, config, eng, probes, rows, refusals,
                        calibration={
                            "draws_per_input": calibration_draws if any(cals) else 0,
                            "tolerance": drift_tolerance, "alpha_per_input": alpha_input},
                        calls={"reference": ref_calls, "calibration": cal_calls,
                               "change": calls_change})
        result = SnapshotResult(document=doc, refusals=tuple(refusals), run=run)
        if output is not None and result.admitted:
            result = result.write(output)
        return result
    finally:
        if own:
            await eng.aclose()


def _check_arguments(accept_reference: Any, calibration_draws: Any) -> None:
    """Refuse an ``accept_reference`` that is not a bool and a ``calibration_draws`` that is
    not an integer from 1 to 100, before any call."""
    if not isinstance(accept_reference, bool):
        raise InvalidArgument("accept_reference must be True or False")
    if isinstance(calibration_draws, bool) or not isinstance(calibration_draws, int) \
            or not 1 <= calibration_draws <= 100:
        raise InvalidArgument(f"calibration_draws={calibration_draws!r} must be an integer "
                              f"from 1 to 100 (default {CALIBRATION_DRAWS})")


@dataclass(frozen=True)
class _References:
    """Each input's reference draws: the meter's, topped up (only when ``viable``) until
    they have a strict majority.

    Attributes:
        viable: no rule other than the references' own already refuses (the run is
            complete, the verdict deterministic, the probe set not blind, no required verdict
            missing): only then are references worth completing, and calibrating.
        counts: per fingerprint, the count of each reference form (:func:`reference_form`).
        top_ups: per input (in probe order), the top-up's (draws, failures).
        refs: per fingerprint, the strict-majority reference (None: tied or no draw).
    """

    viable: bool
    counts: dict[str, Counter[str]]
    top_ups: list[tuple[int, int]]
    refs: dict[str, str | None]


async def _references(eng: Engine, probes: list[Probe], run: RunResult,
                      layer: str) -> _References:
    """The references: the meter's counts per input, topped up concurrently when viable
    (:class:`_References`); a refusal costs no extra call."""
    evidence = {e.fp: e for e in run.meter.per_input}
    counts = {p.fp: Counter({reference_form(k, layer): v for k, v in
                             evidence[p.fp].counts.items()}) for p in probes}
    viable = run.complete and run.meter.call == "verdict-deterministic" and \
        run.blindness.status == "ok" and not (run.routes and run.routes.missing)
    if viable:
        tops = list(await asyncio.gather(*(_top_up(eng, p, counts[p.fp], layer)
                                           for p in probes)))
    else:
        tops = [(0, 0)] * len(probes)
    return _References(viable=viable, counts=counts, top_ups=tops,
                       refs={p.fp: majority(counts[p.fp]) for p in probes})


async def _calibration_round(eng: Engine, probes: list[Probe], refs: _References, layer: str,
                             m: int, progress: Callable[[str, int], None] | None
                             ) -> tuple[list[dict[str, int] | None], list[list[str]]]:
    """The calibration (module doc): ``m`` fresh draws of every input once every reference
    is fixed, made only when the references are viable and every input has one. Per input
    (in probe order) its draws, mismatches and failures (None: not calibrated), and the keys
    the changed-agent check scores ([] when not calibrated)."""
    if not (refs.viable and all(refs.refs.values())):
        return [None] * len(probes), []
    got = await asyncio.gather(*(_calibrate(eng, p, str(refs.refs[p.fp]), layer, m)
                                 for p in probes))
    if progress is not None:
        progress("calibration", m * len(probes))
    return [c for c, _ in got], [k for _, k in got]


def _input_rows(probes: list[Probe], run: RunResult, refs: _References,
                cals: list[dict[str, int] | None], *, tolerance: float, alpha_input: float
                ) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Each input's row of the document (its reference, draws, counts, calibration and, once
    calibrated without a failure, its drift status and note), and the inputs (short
    fingerprints) that have no reference although viable: those with no usable draw, and
    those whose draws tie."""
    evidence = {e.fp: e for e in run.meter.per_input}
    rows = []
    no_ref: list[str] = []
    tied: list[str] = []
    for p, (extra, fails), cal in zip(probes, refs.top_ups, cals, strict=True):
        ev = evidence[p.fp]
        ref = refs.refs[p.fp]
        c = refs.counts[p.fp]
        if ref is None and refs.viable:
            (tied if sum(c.values()) else no_ref).append(p.short)
        row: dict[str, Any] = {"fp": p.fp, "reference": ref, "draws": ev.draws + extra,
                               "counts": dict(c), "failures": ev.failures + fails,
                               "flipped": len(c) > 1, "calibration": cal}
        status = ""
        if cal is not None and not cal["failures"]:
            status = input_plan(row, tolerance=tolerance, alpha_input=alpha_input)[1]
        row["status"] = status or None
        row["note"] = input_note(row, status) if status else ""
        rows.append(row)
    return rows, no_ref, tied


def _admission(run: RunResult, no_ref: list[str], tied: list[str], accepted: bool, *,
               interrupted: bool, layer: str, cal_failed: int) -> list[Refusal]:
    """The failed admission rules (:func:`_rules`), with ``unchanged-agent`` in its place
    (before ``accepted``) when the calibration's changed-agent check fired."""
    refusals = _rules(run, no_ref, tied, accepted, interrupted=interrupted, layer=layer,
                      cal_failed=cal_failed)
    if run.change is not None and run.change.fired:
        at = len(refusals) - (bool(refusals) and refusals[-1].rule == "accepted")
        refusals.insert(at, Refusal("unchanged-agent", run.change.warning()
                                    + " — the calibration contradicts the admission: a "
                                    "reference would describe an agent that is gone"))
    return refusals


def _document(run: RunResult, config: RunConfig, eng: Engine, probes: list[Probe],
              rows: list[dict[str, Any]], refusals: list[Refusal], *,
              calibration: dict[str, Any], calls: dict[str, int]) -> dict[str, Any]:
    """The snapshot/2 document: the admission (every rule, passed or not), the config, the
    rows, the calibration (``calibration``: draws per input, tolerance, alpha per input),
    the meter, blindness and changed-agent evidence, and the calls per phase (``calls``:
    reference, calibration and change; the run's phases from ``run``)."""
    from .._internal.version import __version__

    layer = config.layer
    scheme = probes[0].fp.split(":", 1)[0]
    m, b = run.meter, run.blindness
    return {
        "schema": SCHEMA,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tool_version": __version__,
        "agent": run.agent,
        "admission": {"admitted": not refusals, "rules": [
            {"rule": r, "passed": all(x.rule != r for x in refusals),
             "message": "; ".join(x.message for x in refusals if x.rule == r) or "ok"}
            for r in RULES]},
        "config": {"epsilon": config.eps, "alpha": config.alpha,
                   "indifference": config.indifference, "layer": layer,
                   "extractor": config.extractor.config_id, "seed": config.seed,
                   "blindness_threshold": config.blindness_threshold},
        "fingerprints": {"scheme": scheme, "salted": scheme.startswith("hmac")},
        "reference_form": "fingerprint" if layer == "text" else "literal",
        "calibration": {
            "draws_per_input": calibration["draws_per_input"],
            "source": "independent",
            "tolerance": calibration["tolerance"],
            "alpha_per_input": calibration["alpha_per_input"],
            "borderline": [r["fp"] for r in rows if r["status"] == "borderline"],
            "untestable": [r["fp"] for r in rows if r["status"] == "untestable"],
            "note": "fresh draws after the references were fixed; check tests each "
                    "input against its own recorded mismatch rate"},
        "inputs": rows,
        "meter": {"call": m.call, "calls": m.calls, "pairs": m.pairs,
                  "disagreements": m.disagreements,
                  "estimate": m.estimate if m.pairs else None, "ci_low": m.ci_low,
                  "ci_high": m.ci_high, "e_value": m.e_value, "guarantee": m.guarantee(),
                  "stop_reason": m.stop_reason, "advice": m.advice},
        "blindness": _private_blindness(b.to_dict(), layer),
        "stationarity": None if run.change is None else run.change.to_dict(),
        "calls": {"total": eng.ledger.calls, "meter": run.phase_calls.get("meter", 0),
                  "blindness": run.phase_calls.get("blindness", 0),
                  "dependence": run.phase_calls.get("dependence", 0),
                  "reference": calls["reference"], "calibration": calls["calibration"],
                  "change": calls["change"], "replayed": eng.ledger.replayed},
        "tokens": eng.ledger.tokens(),
        "privacy": PRIVACY,
    }


async def _calibration_change(eng: Engine, probes: list[Probe], run: RunResult,
                              config: RunConfig, keys: list[list[str]],
                              m: int) -> ChangeResult:
    """The changed-agent check on the calibration round: every input once, scored by the
    share of disagreeing pairs among its ``m`` fresh draws (not run unless every input gave
    ``m`` verdicts: a round needs every input alike). When the round leans towards a
    change without showing it, late trials of uniformly random inputs continue the same
    e-process (:func:`~agentverity_props.diagnose.check_change`; calls counted apart)."""
    import numpy as np

    from ..decide import ChangeTest, pair_disagreement
    from ..diagnose import check_change
    from ..engine import EvidencePool

    alpha = config.change_alpha
    early = run.meter.draws
    drawn = eng.ledger.calls + eng.ledger.replayed  # this run's draws so far
    test = None
    calls = fired_call = 0
    cut = False
    if keys and run.meter.pairs and all(len(k) == m for k in keys):
        test = ChangeTest(alpha=alpha, early_pairs=run.meter.pairs,
                          early_disagreements=run.meter.disagreements)
        if test.update_round([pair_disagreement(k) for k in keys]):
            fired_call = drawn
        elif not eng.stopping:
            calls, fired_call, cut = await check_change(
                eng, probes, EvidencePool(), test, layer=config.layer,
                rng=np.random.default_rng([config.seed, 4]), early_estimate=run.meter.estimate,
                parallel=config.max_workers, offset=drawn)
    return change_result(test, alpha=alpha, early_calls=early, calls=calls,
                         source="scores (every input's calibration draws, then trials of a "
                         "random input)" if calls else "scores (every input's calibration draws)",
                         fired_call=fired_call, cut=cut)


def _private_blindness(b: dict[str, Any], layer: str) -> dict[str, Any]:
    """At the text layer the blindness keys are answers: fingerprint them too."""
    if layer != "text":
        return b
    out = dict(b)
    if out.get("modal_verdict") is not None:
        out["modal_verdict"] = reference_form(out["modal_verdict"], layer)
    out["distribution"] = {reference_form(k, layer): v
                           for k, v in (out.get("distribution") or {}).items()}
    return out


def _blindness_fix(b: BlindnessResult, *, n_inputs: int) -> str:
    """The concrete next step for a probe set that is (or may be) blind: how many inputs
    with another verdict bring the share down by the interval's width below the threshold."""
    if b.share is None or b.ci_high is None or not n_inputs:
        return "add inputs with other verdicts (agentverity-props enlarge)"
    width = max(b.ci_high - b.share, 0.0)
    target = max(0.5, b.threshold - width)
    modal_inputs = b.share * n_inputs
    need = max(1, math.ceil(modal_inputs / target - n_inputs))
    return (f"add at least {need} input(s) whose verdict is not '{b.modal_verdict}' (share "
            f"{target:.0%} or less leaves room for the interval): "
            f"{setting('enlarge_threshold', f'{min(0.99, max(0.51, target)):.2f}')} does it")


def _rules(run: RunResult, no_ref: list[str], tied: list[str], accepted: bool, *,
           interrupted: bool, layer: str, cal_failed: int = 0) -> list[Refusal]:
    out: list[Refusal] = []
    m, b = run.meter, run.blindness
    if not run.complete or no_ref or interrupted or cal_failed:
        why = []
        # every failed draw of the run (meter, blindness, relations), not the meter's alone
        failures = run.ledger.get("failures") or m.failures
        kinds_map = run.ledger.get("failure_kinds") or m.failure_kinds
        if failures:
            kinds = ", ".join(f"{k} x{v}" for k, v in sorted(kinds_map.items()))
            why.append(f"{failures} draw(s) failed ({kinds})")
        if run.stop_reason or interrupted:
            why.append(run.stop_reason or "interrupted")
        if no_ref:
            why.append(f"{len(no_ref)} input(s) have no usable draw ({', '.join(no_ref[:3])})")
        if cal_failed:
            why.append(f"{cal_failed} calibration draw(s) failed or were not made")
        if not why:
            why.append(m.stop_reason or "evidence incomplete")
        out.append(Refusal("complete", "the run is incomplete: " + "; ".join(why)
                           + f" — fix the failures or raise {setting('budget', '')}, then rerun"))
    if m.call != "verdict-deterministic":
        out.append(Refusal("verdict-deterministic", (
            f"the meter {_METER_SAID.get(m.call, 'calls it ' + str(m.call))} at epsilon "
            f"{m.epsilon:g} (pair disagreement CI [{m.ci_low:.3f}, {m.ci_high:.3f}])"
            + (f"; {m.advice}" if m.advice else "")
            + " — a reference needs a deterministic verdict"
            + ("" if m.call != "verdict-stochastic" else
               "; next: make the verdict deterministic (temperature 0, a fixed seed, or a "
               "coarser layer) and rerun, or test this agent with agentverity-props run "
               "(relations beyond its noise) or bench (pass rates), which need no "
               "reference"))))
    elif tied:
        out.append(Refusal("verdict-deterministic", (
            f"{len(tied)} input(s) have no majority verdict ({', '.join(tied[:3])}) — "
            "remove them or raise epsilon")))
    dep = run.dependence
    if dep is not None and dep.fired:
        # the admission (a deterministic verdict, the references) assumes independent draws
        out.append(Refusal("independent-draws", dep.warning()))
    if b.status != "ok":
        modal = b.modal_verdict if layer != "text" or b.modal_verdict is None else \
            "answer " + short(reference_form(b.modal_verdict, layer))
        share = "" if b.share is None else (
            f": '{modal}' is {b.share:.0%} of {b.sample} sampled verdicts "
            f"(CI [{b.ci_low:.3f}, {b.ci_high:.3f}], threshold {b.threshold:g})")
        todo = _blindness_fix(b, n_inputs=len(run.inputs) or b.sample or 0)
        msg = {"blind": f"the probe set is blind{share} — a reference would test little; "
                        f"{todo}",
               "undecided": f"blindness is undecided{share} — {todo}, then rerun",
               "suppressed": "the blindness health check is suppressed — a reference needs "
                             "it; do not suppress blind_probe_set"}[b.status]
        out.append(Refusal("not-blind", msg))
    missing = run.routes.finding() if run.routes is not None else None
    if missing:
        out.append(Refusal("required-verdicts", missing))
    if not accepted:
        out.append(Refusal("accepted", "the references were not approved — review the "
                           f"verdicts, then rerun with {setting('accept_reference')}"))
    return out


#: the meter's call in words (``the meter finds the verdict stochastic``)
_METER_SAID = {"verdict-stochastic": "finds the verdict stochastic (verdict-stochastic)",
               "undecided": "could not decide whether the verdict is deterministic "
                            "(undecided)",
               "verdict-deterministic": "finds the verdict deterministic"}


def create_snapshot(agent: Any, inputs: Sequence[str], *, config: RunConfig | None = None,
                    accept_reference: bool = False, output: str | Path | None = None,
                    calibration_draws: int = CALIBRATION_DRAWS,
                    progress: Callable[[str, int], None] | None = None) -> SnapshotResult:
    """Measure the agent and, if every admission rule holds, record its reference verdicts.

    Runs the meter and the blindness check (no relations), then tops up inputs the meter
    did not draw (or drew to a tie) until each has a strict-majority verdict, then draws
    every input ``calibration_draws`` more times to record its own mismatch rate (both
    skipped when another rule already refuses, so a refusal costs no extra call). Without
    ``accept_reference`` nothing is written: use it to preview.

    Args:
        agent: an adapter or a callable ``prompt -> str | dict | Observation``.
        inputs: the probe set.
        config: a :class:`~agentverity_props.diagnose.RunConfig` (epsilon, alpha, layer, engine).
        accept_reference: the user approves the references.
        output: write the snapshot here (atomically) when admitted.
        calibration_draws: fresh draws per input after the references are fixed (the rate
            check tests each input against; more draws, fewer confirmation draws later).

    Returns:
        A :class:`SnapshotResult`; ``.admitted``, ``.refusals``, ``.exit_code``.

    Example:
        >>> from agentverity_props import create_snapshot
        >>> res = create_snapshot(lambda p: "block" if "attack" in p else "allow",
        ...                       ["attack 1", "hello", "attack 2", "hi there"])
        >>> res.admitted, [r.rule for r in res.refusals]
        (False, ['accepted'])
    """
    from ..engine import run_sync
    return run_sync(acreate_snapshot(agent, inputs, config=config,
                                     accept_reference=accept_reference, output=output,
                                     calibration_draws=calibration_draws, progress=progress))
