"""``assess``: every diagnosis of ``run`` on recorded evidence, with no agent call.

The recording is written into a private record store and ``run`` replays it: the meter,
blindness, the dependence check and the relations are the same code, so the report, its
JSON (``calls.live == 0``) and the exit code are ``run``'s by construction. A draw the
recording does not hold raises :class:`~agentverity_props.errors.EvidenceExhausted` (a
stopped draw): the decision that wanted it is incomplete or undecided, never guessed, and
no live call is ever made (the store is read in replay mode only). A recorded failed call (a
provider error) makes the whole assessment incomplete, whether or not a decision replayed
it, as a failed call makes a ``run`` incomplete.

Draw order. Each input's draws replay in their recorded order: the meter pairs draws 0-1,
2-3, ... of an input and the dependence check reads blocks of consecutive draws, so the
order must be the one the calls were made in. Evidence whose order is unknown is refused
unless the dependence check is suppressed (the meter's pairs need no order when the draws
are independent, which is then an assumption nothing tests).

Relations. A relation is tested only on the (source, follow-up) pairs whose follow-up is
itself a recorded input (a record store's follow-ups are found through the relation's
transform of each input of the probe set). A relation asked for (``relations`` given, or
a store's, whose default is ``run``'s built-ins) with no such pair is ``NOT TESTED`` (exit
2: incomplete evidence, never clean); a file's default built-ins without a pair are left
out, and said so.

Whole recordings. A file's draws are free, so after the per-input screen and the local
tests each relation's pooled effect is decided once on every recorded draw of its inputs
and follow-ups (:class:`~agentverity_props.decide.FixedEffect`, a fixed sample: full
U-statistics, normal-approximation bounds checked by simulation), instead of by the
sequential epochs, whose capped bets would leave most of a recording unread or undecided.
A store is replayed in ``run``'s own schedule instead, so that its decisions are the run's.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._internal.settings import setting
from ..engine import Engine
from ..errors import BadInput, EvidenceExhausted, InvalidArgument, ReplayMiss

if TYPE_CHECKING:
    from ..engine import Probe
    from ..observation import Observation
    from ..relations import Relation
    from ..runner import RunConfig, RunResult
    from ._recording import Recording

__all__ = ["AssessPlan", "aassess", "assess", "plan_assessment"]


class _RecordedAgent:
    """The agent a recording stands for: its identity, never called (the engine replays)."""

    is_async = False

    def __init__(self, identity: str) -> None:
        self.identity = identity

    def invoke(self, prompt: str) -> Observation:  # pragma: no cover - replay never calls it
        raise EvidenceExhausted("assess never calls an agent")

    async def ainvoke(self, prompt: str) -> Observation:  # pragma: no cover
        raise EvidenceExhausted("assess never calls an agent")


class _RecordingEngine(Engine):
    """An engine in replay mode whose missing draw is the end of the evidence (a stopped
    draw, as a spent budget is), not an error."""

    def __init__(self, agent: Any, config: Any, held: dict[str, int], *,
                 finite: bool = True) -> None:
        super().__init__(agent, config)
        self._held = held
        self.finite_evidence = finite

    def evidence_left(self, probe: Probe) -> int | None:
        with self._counter_lock:
            return self._held.get(probe.fp, 0) - self._counters.get(probe.fp, 0)

    async def draw(self, probe: Probe, index: int | None = None) -> Observation:
        try:
            return await super().draw(probe, index)
        except ReplayMiss:
            n = self._held.get(probe.fp, 0)
            raise EvidenceExhausted(
                f"the recording holds {n} draw(s) of input {probe.fp[:19]}; a decision wanted "
                "another") from None


@dataclass(frozen=True)
class AssessPlan:
    """What ``assess`` will replay: the inputs, the relations that have recorded pairs, and
    the notes the report carries (relations left out, how the order was taken)."""

    recording: Recording
    relations: tuple[Relation, ...]
    notes: tuple[str, ...]
    #: requested relations that cannot be tested on this recording, with the reason: they are
    #: reported ``NOT TESTED`` (exit 2), never left out silently
    untested: tuple[tuple[Relation, str], ...] = ()
    #: every relation in the order asked for (the report keeps it)
    order: tuple[str, ...] = ()


def plan_assessment(recording: Recording, relations: Sequence[Relation] | None,
                    config: RunConfig) -> AssessPlan:
    """Check the recording can be assessed and restrict relations to recorded pairs.

    Raises:
        BadInput: the draw order is unknown while the dependence check needs it.
    """
    from ..diagnose import HealthCheck
    from ..relations import builtin_relations, every_follow_up

    notes = list(recording.notes)
    suppressed = HealthCheck.parse(config.suppress_health_check)
    if not recording.order_known:
        if HealthCheck.dependent_draws not in suppressed:
            raise BadInput(f"the {recording.source} evidence does not say in which order its "
                           "draws were made, and the dependent-draws check needs it",
                           "give every draw its order (JSONL: an integer 'order'; or "
                           f"{setting('file_order')} when the lines are in call order), or "
                           f"pass {setting('suppress_health_check', 'dependent_draws')}")
        notes.append("draw order unknown: the draws of an input are paired in file order, "
                     "assuming they are independent (the dependence check is suppressed)")
    else:
        notes.append(f"draw order: {recording.order}")
    hint = keyless_json_hint(recording, config.extractor)
    if hint:
        notes.append(hint)
    texts = recording.texts()
    with_draws = {i.text for i in recording.inputs + recording.follow_ups if i.draws}
    # explicitly requested relations (and a store's, which are run's: the built-ins by
    # default) are tested or reported NOT TESTED; a file's default built-ins without a
    # recorded pair are left out, and said so
    requested = relations is not None or recording.source == "store"
    kept: list[Relation] = []
    untested: list[tuple[Relation, str]] = []
    left: list[str] = []
    rels = list(builtin_relations() if relations is None else relations)
    for r in rels:
        moved: dict[str, list[str]] = {}
        for t in texts:
            ys = every_follow_up(r, t)  # each kind of a family a run may have tried
            if ys:
                moved[t] = ys
        pairs = {t: ys for t, ys in moved.items()
                 if t in with_draws and any(y in with_draws for y in ys)}
        if not moved and requested:
            kept.append(r)  # as run reports it: NOT EXERCISED, its transform moves nothing
            continue
        if not pairs:
            if not requested:
                left.append(r.name)
            elif recording.source == "store":
                untested.append((r, "no follow-up recorded: the store holds no draw of its "
                                    f"transform of any of the {len(moved)} input(s) it "
                                    f"changes (record with {setting('run_store')} and this "
                                    "relation)"))
            else:
                untested.append((r, f"its transform produced no recorded pair: of the "
                                    f"{len(moved)} recorded input(s) it changes, none becomes "
                                    "a recorded input (record its follow-ups, e.g. its "
                                    "transform of each input)"))
            continue
        if len(pairs) < len(moved):
            notes.append(f"relation '{r.name}': {len(moved) - len(pairs)} of the {len(moved)} "
                         "input(s) it changes have no recorded follow-up and are left out of "
                         "it")
        whole = all(y in with_draws for ys in moved.values() for y in ys)
        kept.append(r if whole else _restrict(r, pairs, with_draws))
    if left:
        notes.append(f"relation(s) left out, no recorded (source, follow-up) pair: "
                     f"{', '.join(left)}")
    if untested:
        notes.append(f"requested relation(s) NOT TESTED, no recorded pair: "
                     f"{', '.join(r.name for r, _ in untested)} (exit 2)")
    if kept and not recording.exact_replay:
        notes.append("each relation's pooled effect is decided once on every recorded draw "
                     "of its inputs and follow-ups (a fixed sample)")
    return AssessPlan(recording, tuple(kept), tuple(notes), tuple(untested),
                      tuple(r.name for r in rels))


def _restrict(r: Relation, pairs: dict[str, list[str]], recorded: set[str]) -> Relation:
    """``r`` with only the follow-ups the recording holds: each kind of a family (or each
    pair brought) leaves an input unchanged where its follow-up was not recorded, so the
    rotation passes over it, as the run that recorded them did."""
    from ..relations import Edit

    def only(fn: Callable[[str], str]) -> Callable[[str], str]:
        def transform(text: str) -> str:
            if text not in pairs:
                return text
            y = fn(text)
            return y if y in recorded else text
        return transform

    if r.pairs is not None:
        return replace(r, transform=only(r.transform),
                       pairs={t: tuple(y for y in ys if y in recorded)
                              for t, ys in r.pairs.items() if t in pairs})
    if r.edits:
        return replace(r, transform=only(r.transform),
                       edits=tuple(Edit(e.kind, only(e.transform)) for e in r.edits))
    return replace(r, transform=only(r.transform))


async def aassess(recording: Recording, relations: Sequence[Relation] | None = None, *,
                  config: RunConfig | None = None,
                  progress: Callable[[str, int], None] | None = None,
                  plan: AssessPlan | None = None) -> RunResult:
    """Async core of :func:`assess`."""
    from ..runner import RunConfig, arun

    config = config or RunConfig()
    if config.error_policy != "record":
        raise InvalidArgument("assess keeps failed draws as incomplete evidence: "
                              "error_policy must be 'record'")
    plan = plan or plan_assessment(recording, relations, config)
    with tempfile.TemporaryDirectory(prefix="agentverity-assess-") as tmp:
        path = os.path.join(tmp, "evidence.db")
        held = _write_store(recording, path, config.extractor.config_id)
        eng_cfg = replace(config.engine, store_path=path, store_mode="replay", budget=None,
                          fail_fast=None)
        cfg = replace(config, engine=eng_cfg)
        eng = _RecordingEngine(_RecordedAgent(recording.agent), eng_cfg, held,
                               finite=not recording.exact_replay)
        try:
            with eng.install_signal_handlers():
                result = await arun(eng.agent, recording.texts(), list(plan.relations),
                                    config=cfg, engine=eng, progress=progress)
        finally:
            await eng.aclose()
    if plan.untested:
        from ..relations import RelationResult

        done = {r.relation.name: r for r in result.relations}
        for rel, why in plan.untested:
            done[rel.name] = RelationResult(rel, not_tested=why)
        ranked = [done[n] for n in plan.order if n in done]
        ranked += [r for n, r in done.items() if n not in plan.order]
        result = replace(result, relations=tuple(ranked))
    failed = sum(i.failures for i in recording.inputs + recording.follow_ups)
    if failed and not result.stop_reason:
        # a failed call is incomplete evidence, whether or not a decision replayed it
        result = replace(result, stop_reason=f"{failed} recorded draw(s) failed")
    return result


def assess(recording: Recording, relations: Sequence[Relation] | None = None, *,
           config: RunConfig | None = None,
           progress: Callable[[str, int], None] | None = None,
           plan: AssessPlan | None = None) -> RunResult:
    """Run's diagnoses on recorded evidence: meter, blindness, dependence check, and the
    relations whose (source, follow-up) pairs were recorded; no agent is called.

    Example:
        >>> from agentverity_props.assess import Recording, RecordedInput
        >>> from agentverity_props.observation import Observation
        >>> flip = [Observation(verdict=v) for v in ["allow", "block"] * 13]
        >>> rec = Recording("jsonl", "recorded", (RecordedInput("hi", tuple(flip)),), "order")
        >>> r = assess(rec, relations=[])
        >>> r.meter.call, r.ledger["calls"]
        ('verdict-stochastic', 0)
    """
    from ..engine import run_sync
    return run_sync(aassess(recording, relations, config=config, progress=progress,
                            plan=plan))


def _write_store(recording: Recording, path: str, extractor_id: str) -> dict[str, int]:
    """Every recorded draw into a fresh store, keyed as the engine reads it; returns the
    number of draws of each fingerprint."""
    from ..engine import Probe
    from ..store import Store

    held: dict[str, int] = {}
    with Store(path) as store:
        for inp in recording.inputs + recording.follow_ups:
            fp = Probe.make(inp.text).fp
            idx = inp.indices or tuple(range(len(inp.draws)))
            for i, obs in zip(idx, inp.draws, strict=True):
                store.put((recording.agent, fp, extractor_id, i), obs)
            held[fp] = max(idx) + 1 if idx else 0
    return held


def keyless_json_hint(recording: Recording, extractor: Any) -> str | None:
    """A note when the default extractor took whole JSON answers as verdicts: answers that
    are JSON objects holding none of the keys ``run`` reads a verdict from
    (:data:`~agentverity_props.observation.VERDICT_KEYS`), naming the keys they do hold.

    >>> from agentverity_props.assess import Recording, RecordedInput
    >>> from agentverity_props.assess._recording import observed
    >>> from agentverity_props.observation import DEFAULT_EXTRACTOR
    >>> obs = observed('{"route": "refund"}', DEFAULT_EXTRACTOR)
    >>> rec = Recording(source="jsonl", agent="a", inputs=(RecordedInput("hi", (obs,)),),
    ...                 order="file")
    >>> keyless_json_hint(rec, DEFAULT_EXTRACTOR)  # doctest: +ELLIPSIS
    'the answers are JSON objects with no verdict, ... pass extractor=by_key(route) ...'
    """
    from ..observation import DEFAULT_EXTRACTOR, VERDICT_KEYS

    if extractor is not DEFAULT_EXTRACTOR:
        return None
    keys: dict[str, int] = {}
    whole = 0
    for item in recording.inputs:
        for obs in item.draws:
            raw = obs.raw
            if (isinstance(raw, dict) and not any(k in raw for k in VERDICT_KEYS)
                    and obs.verdict is not None and obs.verdict == obs.text.strip()):
                whole += 1
                for k in raw:
                    keys[str(k)] = keys.get(str(k), 0) + 1
    if not whole:
        return None
    seen = sorted(keys, key=lambda k: -keys[k])
    first = seen[0] if seen else "KEY"
    return (f"the answers are JSON objects with no {', '.join(VERDICT_KEYS[:-1])} or "
            f"{VERDICT_KEYS[-1]} key: {whole} whole answer(s) were taken as the verdict; pass "
            f"{setting('verdict_key', first)} (keys seen: {', '.join(seen[:8]) or 'none'}) "
            f"or {setting('verdict_regex')} to read the verdict from them")


def evidence_summary(plan: AssessPlan, result: RunResult) -> dict[str, Any]:
    """What was recorded and what the assessment could not do with it, for the report's
    ``ledger.evidence`` (inputs by fingerprint; the renderer names them by text when the
    report holds the inputs)."""
    from ..diagnose import PAIRS

    rec = plan.recording
    layer = result.config.layer
    out = rec.summary(layer)
    notes = list(plan.notes)
    failed = sum(i.failures for i in rec.inputs + rec.follow_ups)
    if failed:
        notes.append(f"{failed} recorded draw(s) failed (provider errors): the evidence is "
                     "incomplete (exit 2) whatever was decided; rerun those cases and assess "
                     "again")
    dep = result.dependence
    if rec.split(layer) and dep is not None and dep.status == "not run":
        notes.append(f"dependence check not run: it needs {2 * PAIRS} more recorded draws "
                     "of an input that gave more than one answer, beyond those the meter "
                     "paired; record more repeats to have it")
    ch = result.change
    if ch is not None and ch.status == "not run":
        notes.append("changed-agent check not run: it needs at least 8 later trials (3 "
                     "recorded draws of an input each) beyond the draws the meter used; "
                     "record more repeats to have it")
    out["notes"] = notes
    out["layer"] = layer
    return out
