"""Metamorphic relations and the records of their decisions.

A :class:`Relation` maps a source input ``x`` to a follow-up ``y = transform(x)`` and says how
the follow-up's verdict must relate to the source's: equal (``invariant``), ordered
(``monotone``), or a stated expected value (``directional``). An input the transform leaves
unchanged is *skipped*, never a pass. How a (relation, source, follow-up) candidate is decided
is in :mod:`agentverity_props.relations._procedure` and
:mod:`agentverity_props.decide._candidate`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .._internal.outcome import CandidateStatus, RelationStatus
from .._internal.settings import setting
from ..errors import InvalidArgument
from ..observation import LAYERS

#: The note of a pair whose input no pooled epoch drew (under a profile without a screen the
#: epochs sample the inputs): it is ``undecided``, never ``clean``, and no edit was tried on it.
NOT_DRAWN = ("not drawn: without a screen the pooled effect is estimated from uniform samples "
             "of the inputs, and this one was in none")

RType = Literal["invariant", "monotone", "directional"]
RTYPES = ("invariant", "monotone", "directional")


@dataclass(frozen=True)
class Edit:
    """One kind of edit in a relation's family: a short name (``trailing``, ``question``)
    and its transform (``str -> str``, deterministic).

    >>> Edit("shout", str.upper).transform("no")
    'NO'
    """

    kind: str
    transform: Callable[[str], str]

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not self.kind.strip():
            raise InvalidArgument("an Edit's kind must be a non-empty string")
        if not callable(self.transform):
            raise InvalidArgument(f"Edit {self.kind!r}: transform must be callable str -> str")


@dataclass(frozen=True)
class Relation:
    """A metamorphic relation.

    Args:
        name: short identifier, used in reports and in the per-relation exception class.
        rtype: ``invariant`` (same verdict), ``monotone`` (follow-up at least as high in
            ``order``; with ``decreasing=True`` at most as high) or ``directional`` (follow-up
            equals ``expected``, a label or a function of the source verdict).
        transform: ``str -> str``; must be deterministic.
        check: optional ``(source_key, follow_up_key) -> bool`` overriding the rtype's rule.
        layer: ``verdict`` (default), ``text`` or ``tools``.
        edits: the family of edits the relation stands for (its name's claim: ``whitespace``
            is trailing and leading space, tabs, newlines, doubled and collapsed spaces).
            ``run`` gives every input the first kind and each other kind three inputs of its
            own, so that every kind is tried
            (:func:`~agentverity_props.relations.follow_ups`); ``transform`` is the first
            kind's (what ``apply`` does). Empty: the relation is its one ``transform``.
        pairs: follow-ups the user brings, per source text (every one is tested; the text
            kept byte for byte): see :func:`~agentverity_props.relations.pairs_relation`.
        check_baseline: score a re-draw of the *source* with ``check`` too, as monotone
            relations do with ``order`` (default: a re-draw is noise when it differs from the
            reference). Right for a reflexive ``check`` whose null is "the follow-up's verdicts
            are the source's, or moved the way the check allows": the noise then counts only
            the moves the check forbids, so a one-way check is as sensitive as a monotone
            relation (:func:`~agentverity_props.relations.obfuscation_relation`,
            :func:`~agentverity_props.relations.injection_relation`).

    Example:
        >>> shout = Relation("shout", "invariant", str.upper)
        >>> shout.holds("allow", "allow"), shout.holds("allow", "block")
        (True, False)
    """

    name: str
    rtype: RType
    transform: Callable[[str], str]
    check: Callable[[str, str], bool] | None = None
    layer: str = "verdict"
    order: Sequence[str] | None = None
    decreasing: bool = False
    expected: str | Callable[[str], str] | None = None
    description: str = ""
    check_baseline: bool = False
    edits: tuple[Edit, ...] = ()
    pairs: Mapping[str, Sequence[str]] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgument("Relation name must be a non-empty string")
        if self.rtype not in RTYPES:
            raise InvalidArgument(f"Relation {self.name!r}: rtype={self.rtype!r}; use one of "
                                  + ", ".join(RTYPES))
        if not callable(self.transform):
            raise InvalidArgument(f"Relation {self.name!r}: transform must be callable str -> str")
        if self.layer not in LAYERS:
            raise InvalidArgument(f"Relation {self.name!r}: layer={self.layer!r}; use one of "
                                  + ", ".join(LAYERS))
        if not isinstance(self.edits, tuple) or not all(isinstance(e, Edit)
                                                         for e in self.edits):
            raise InvalidArgument(f"Relation {self.name!r}: edits must be a tuple of Edit")
        if len({e.kind for e in self.edits}) != len(self.edits):
            raise InvalidArgument(f"Relation {self.name!r}: each edit kind must be named once")
        if self.check_baseline and self.check is None:
            raise InvalidArgument(f"relation {self.name!r}: check_baseline=True needs a check=")
        if self.check is None:
            if self.rtype == "monotone" and not self.order:
                raise InvalidArgument(f"monotone relation {self.name!r} needs order=[...] "
                                      "(verdicts from lowest to highest) or a check=")
            if self.rtype == "directional" and self.expected is None:
                raise InvalidArgument(f"directional relation {self.name!r} needs expected= "
                                      "(a label or a function of the source verdict) or a check=")

    def holds(self, source: str, follow_up: str) -> bool:
        """Whether the relation holds between one source and one follow-up value."""
        if self.check is not None:
            return bool(self.check(source, follow_up))
        if self.rtype == "invariant":
            return source == follow_up
        if self.rtype == "monotone":
            order = list(self.order or ())
            if source not in order or follow_up not in order:
                return source == follow_up
            si, fi = order.index(source), order.index(follow_up)
            return fi <= si if self.decreasing else fi >= si
        exp = self.expected(source) if callable(self.expected) else self.expected
        return follow_up == exp

    def baseline_violates(self, anchor: str, redraw: str) -> bool:
        """Whether a re-draw of the *source* counts as a noise-level violation of ``anchor``."""
        if self.check_baseline or (self.check is None
                                   and self.rtype in ("invariant", "monotone")):
            return not self.holds(anchor, redraw)
        return redraw != anchor

    def apply(self, text: str) -> str:
        out = self.transform(text)
        if not isinstance(out, str):
            raise InvalidArgument(f"relation {self.name!r}: transform returned "
                                  f"{type(out).__name__}, expected str")
        return out

    def decision_key(self) -> tuple[str, ...]:
        """Everything that defines this relation's decision on a (source, follow-up) pair.

        Two relations with the same key decide the same question, so a decision may be reused
        between them; anything that could change a verdict comparison is in it (the type, the
        layer, the order and its direction, the expected value, the check function).

        >>> a = Relation("m", "monotone", str.upper, order=("low", "high"))
        >>> b = Relation("m", "monotone", str.upper, order=("low", "high"), decreasing=True)
        >>> a.decision_key() == b.decision_key()
        False
        """
        key: tuple[str, ...] = (self.name, self.rtype, self.layer,
               "order=" + ("\x1f".join(self.order) if self.order is not None else "-"),
               f"decreasing={self.decreasing}", "expected=" + _callable_key(self.expected),
               "check=" + _callable_key(self.check))
        # appended only when set, so every other relation keeps the key it always had
        if self.check_baseline:
            key = (*key, "check_baseline=True")
        if self.edits:
            key = (*key, "edits=" + "\x1f".join(e.kind for e in self.edits))
        return key

    @property
    def kinds(self) -> tuple[str, ...]:
        """The names of the relation's edit kinds (empty: one transform)."""
        return tuple(e.kind for e in self.edits)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rtype": self.rtype, "layer": self.layer,
                "description": self.description}


#: Every status a candidate can end in (``pending`` only while it is being decided).
OUTCOME_STATUSES = tuple(s.value for s in CandidateStatus)


@dataclass(slots=True)  # one per (relation, input): 800,000 on a 100,000-input run
class RelationOutcome:
    """One (relation, input) candidate of a run: its status and the evidence behind it.

    ``raw`` says whether the screen (the first follow-up draw against the source's reference
    verdict) violated the relation: raw flips include the agent's own noise. ``decision`` is
    the sequential test's state when it stopped (e-values, draws, the alternative).
    """

    fp: str
    follow_up_fp: str
    status: CandidateStatus = CandidateStatus.PENDING
    raw: bool = False
    source: str | None = None
    follow_up: str | None = None
    decision: dict[str, Any] | None = None
    draws: int = 0
    note: str = ""
    suspicion: float | None = None
    #: the kind of edit that made the follow-up (a family's ``Edit.kind``, or ``pair N`` of
    #: pairs the user brought); None for a relation of one transform
    edit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"fp": self.fp, "follow_up_fp": self.follow_up_fp, "edit": self.edit,
                "status": self.status,
                "raw": self.raw, "source_value": self.source,
                "follow_up_value": self.follow_up, "decision": self.decision,
                "draws": self.draws, "note": self.note, "suspicion": self.suspicion}


@dataclass
class RelationResult:
    """A relation over a probe set: its pooled effect and its per-input candidates.

    ``effect`` is the pooled test's state (:func:`~agentverity_props.relations._pooled.summarise`):
    the estimate, its confidence bounds, the tolerance and the decision. ``status``:

    * ``NOT TESTED`` — requested but never tested (``not_tested`` says why: no follow-up
      recorded, no recorded pair, left out by a stop): incomplete evidence, never clean;
    * ``NOT EXERCISED`` — the transform left every input unchanged, or the relation's layer
      never varied (a ``tools`` relation on an agent that called no tool);
    * ``VIOLATED`` — an input is confirmed violating, or the effect is shown above the
      tolerance;
    * ``HOLDS`` — the effect's upper confidence bound is below the tolerance and no input is
      confirmed violating;
    * ``INCOMPLETE`` — draws the decision needed are missing (failures, budget, interrupt);
    * ``UNDECIDED`` — otherwise.
    """

    relation: Relation
    outcomes: list[RelationOutcome] = field(default_factory=list)
    effect: dict[str, Any] | None = None
    unexercised: str = ""
    not_tested: str = ""

    @property
    def draws(self) -> int:
        """Draws this relation made (pooled rounds and its own tests; a source draw shared
        by several relations is counted by each)."""
        return sum(o.draws for o in self.outcomes)

    @property
    def exercised(self) -> int:
        return sum(1 for o in self.outcomes if o.status != CandidateStatus.SKIPPED)

    @property
    def skipped(self) -> int:
        return sum(1 for o in self.outcomes if o.status == CandidateStatus.SKIPPED)

    @property
    def inputs_exercised(self) -> int:
        """Distinct inputs with at least one follow-up that differs from them (an input may
        carry several follow-ups: several kinds of a family, or pairs the user brought)."""
        return len({o.fp for o in self.outcomes if o.status != CandidateStatus.SKIPPED})

    @property
    def confirmed_inputs(self) -> int:
        """Distinct inputs with a follow-up confirmed violating."""
        return len({o.fp for o in self.outcomes if o.status == CandidateStatus.CONFIRMED})

    def edits_tried(self) -> dict[str, dict[str, int]]:
        """Per edit kind: the (input, follow-up) pairs it made and how many of them were
        confirmed violating (empty for a relation of one transform)."""
        out: dict[str, dict[str, int]] = {}
        for o in self.outcomes:
            if o.edit is None or o.status == CandidateStatus.SKIPPED or o.note == NOT_DRAWN:
                continue
            row = out.setdefault(o.edit, {"pairs": 0, "confirmed": 0})
            row["pairs"] += 1
            row["confirmed"] += o.status == CandidateStatus.CONFIRMED
        return out

    def edits_line(self) -> str:
        """The kinds tried, in words: ``trailing 5, tab 4 (2 confirmed), ...``."""
        return ", ".join(f"{k} {v['pairs']}" + (f" ({v['confirmed']} confirmed)"
                                                if v["confirmed"] else "")
                         for k, v in self.edits_tried().items())

    @property
    def raw_violations(self) -> int:
        return sum(1 for o in self.outcomes if o.raw)

    @property
    def calibrated_violations(self) -> int:
        return sum(1 for o in self.outcomes if o.status == CandidateStatus.CONFIRMED)

    @property
    def incomplete(self) -> int:
        """Candidates (and the pooled test, as one) whose evidence is missing."""
        return (sum(1 for o in self.outcomes if o.status == CandidateStatus.INCOMPLETE)
                + bool(self.effect and self.effect.get("incomplete")
                       and self.effect.get("status") == "undecided"))

    @property
    def undecided(self) -> int:
        """Candidates tested on their own that stayed undecided."""
        return sum(1 for o in self.outcomes
                   if o.status == CandidateStatus.UNDECIDED and o.note != NOT_DRAWN)

    @property
    def not_drawn(self) -> int:
        """Pairs whose input no pooled epoch drew (the epochs sampled the inputs)."""
        return sum(1 for o in self.outcomes if o.note == NOT_DRAWN)

    @property
    def effect_status(self) -> str | None:
        return None if self.effect is None else str(self.effect.get("status"))

    @property
    def status(self) -> RelationStatus:
        if self.not_tested:
            return RelationStatus.NOT_TESTED
        if self.exercised == 0 or self.unexercised:
            return RelationStatus.NOT_EXERCISED
        if self.calibrated_violations or self.effect_status == "violated":
            return RelationStatus.VIOLATED
        if self.effect_status == "holds":
            return RelationStatus.HOLDS
        if self.incomplete:
            return RelationStatus.INCOMPLETE
        return RelationStatus.UNDECIDED

    def suspects(self, n: int = 3) -> list[RelationOutcome]:
        """The inputs whose follow-ups looked most unlike their sources (confirmed first)."""
        ranked = [o for o in self.outcomes if o.status != CandidateStatus.SKIPPED
                  and (o.suspicion or 0) > 0]
        ranked.sort(key=lambda o: (o.status != CandidateStatus.CONFIRMED, -(o.suspicion or 0)))
        return ranked[:n]

    def statement(self) -> str:
        """What the status says, in words, with the hypothesis rejected and its error."""
        e = self.effect or {}
        tolerance, st = e.get("tolerance"), self.status
        # the effect a VIOLATED shows exceeded: the tolerance, or a profile's smaller one
        # (quick: holds at 0.2, finds an effect above 0.1)
        v = e.get("violation") or tolerance
        above = ("" if tolerance is None else f"the tolerance {tolerance:g}" if v == tolerance
                 else f"{v:g} (a HOLDS needs the tolerance {tolerance:g})")
        if st == RelationStatus.NOT_TESTED:
            return f"not tested: {self.not_tested}"
        if st == RelationStatus.NOT_EXERCISED:
            return self.unexercised or "the transform left every input unchanged"
        lo, hi, est = e.get("lower"), e.get("upper"), e.get("estimate")
        rng = (f"effect {est:+.3f}, bounds [{lo:+.3f}, {hi:+.3f}]"
               if est is not None and lo is not None and hi is not None else "no effect estimate")
        if st == RelationStatus.VIOLATED:
            if self.calibrated_violations:
                kinds = [k for k, v in self.edits_tried().items() if v["confirmed"]]
                by = f" by edit(s) {', '.join(kinds)}" if kinds else ""
                pairs = (f" ({self.calibrated_violations} follow-ups)"
                         if self.calibrated_violations != self.confirmed_inputs else "")
                untested = {o.fp for o in self.outcomes
                            if o.status == CandidateStatus.UNDECIDED
                            and o.note.startswith("not tested on its own")}
                more = (f"; {len(untested)} more input(s) flagged, not tested on their own "
                        f"({setting('confirm_all')} tests them)" if untested else "")
                prev = e.get("prevalence")
                share = (f"; prevalence {prev['estimate']:.0%} of {prev['inputs']} inputs "
                         f"(bounds [{prev['lower']:.0%}, {prev['upper']:.0%}]: confirmed, and "
                         "not cleared by the screen plus its possible misses at "
                         f"{prev['upper_level']:.0%})" if prev else "")
                return (f"{self.confirmed_inputs} input(s){pairs} confirmed violating{by} "
                        f"beyond the agent's noise (family-wise alpha){more}{share}; {rng}")
            return (f"{rng}: above {above} (rejects effect <= {v:g}, error <= "
                    f"{e.get('alpha', 0):.2g})")
        fixed = (f" (fixed sample: all {e['draws']} recorded draws, normal-approximation "
                 "bounds)" if e.get("test") and e.get("draws") is not None else "")
        if st == RelationStatus.HOLDS:
            small = "; an effect above 0 is shown, within the tolerance" if e.get(
                "shown_above_zero") else ""
            sides = " on both sides" if e.get("sides", 1) == 2 else ""
            return (f"{rng}: below the tolerance {tolerance:g}{sides} (rejects effect >= "
                    f"{tolerance:g}, error <= {e.get('beta', 0):.2g}){fixed}{small}. "
                    + self.per_input_statement())
        if fixed:
            # a recording read whole: no "yet", more evidence must be recorded
            shown = "above 0, but not shown above or below" if e.get(
                "shown_above_zero") else "neither below nor above"
            return (f"{rng}: {shown} the tolerance {tolerance:g} on every recorded draw{fixed}: "
                    "the recording ran out; record more repeats of each input and its "
                    "follow-ups")
        if e.get("shown_above_zero"):
            return (f"{rng}: above 0, not yet known whether above {v:g} or below the tolerance "
                    f"{tolerance:g}" if v != tolerance else
                    f"{rng}: above 0, not yet known whether above the tolerance {tolerance:g}")
        return f"{rng}: neither below nor above the tolerance {tolerance:g} yet" + (
            f" ({e.get('note')})" if e.get("note") else "")

    def per_input_statement(self) -> str:
        """The per-input half of a HOLDS: which inputs got the screen's guarantee."""
        pi = (self.effect or {}).get("per_input")
        if not pi:
            prof = (self.effect or {}).get("profile")
            refused = str((self.effect or {}).get("deterministic_path") or "")
            if prof and refused.startswith("refused"):
                return (f"Per input: not screened (profile {prof}: the deterministic path was "
                        f"{refused}; the pooled effect only, inputs whose draws differed "
                        "beyond chance tested one by one)")
            if prof:
                drawn = (f"; {self.exercised - self.not_drawn} of {self.exercised} pairs drawn, "
                         "the inputs sampled uniformly" if self.not_drawn else "")
                return (f"Per input: not screened (profile {prof}: the pooled effect only"
                        f"{drawn}; inputs whose draws differed beyond chance were tested one "
                        "by one)")
            return "Per input: not screened"
        size, power = pi["size"], pi["power"]
        cleared, flagged = pi.get("cleared", pi["screened"]), pi.get("flagged", 0)
        if pi.get("path") == "deterministic":
            return (f"Per input (deterministic path): {pi['screened']} of "
                    f"{pi.get('pairs', pi['inputs'])} (input, follow-up) pair(s) screened with "
                    f"one follow-up draw each ({cleared} cleared, {flagged} flagged and tested "
                    f"on their own; {pi.get('audited_pairs', 0)} audited by re-draws, all "
                    "agreeing): the meter certified a deterministic verdict (a draw differs "
                    f"from its input's verdict with probability <= {pi['flip_bound']:.2g}), so "
                    "a follow-up whose verdict differs from its source's on every draw would "
                    f"be found with probability >= {power:.2g}; one that flips only part of "
                    "the time, with about its flip share")
        pairs = pi.get("pairs", pi["inputs"])
        what = (f"{pi['screened']} of {pi['inputs']} input(s)" if pairs == pi["inputs"] else
                f"{pi['screened']} of {pairs} (input, follow-up) pair(s) over {pi['inputs']} "
                "input(s)")
        out = (f"Per input: {what} screened ({cleared} "
               f"cleared, {flagged} flagged and tested on their own): a follow-up violating "
               f"on a share {size:g} above the input's own noise would be found with "
               f"probability >= {power:.2g}")
        if pi["not_screened"]:
            why = ", ".join(f"{n} {r}" for r, n in sorted(pi["not_screened_reasons"].items()))
            out += f"; {pi['not_screened']} not screened ({why})"
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**self.relation.to_dict(), "status": self.status, "exercised": self.exercised,
                "skipped": self.skipped, "raw_violations": self.raw_violations,
                "calibrated_violations": self.calibrated_violations,
                "incomplete": self.incomplete, "undecided": self.undecided,
                "draws": self.draws, "effect": self.effect, "statement": self.statement(),
                "inputs_exercised": self.inputs_exercised,
                "edits": self.edits_tried() or None,
                "unexercised": self.unexercised, "not_tested": self.not_tested or None,
                "suspects": [o.fp for o in self.suspects()],
                "outcomes": [o.to_dict() for o in self.outcomes]}


def _callable_key(obj: object) -> str:
    """A stable description of a label or a function: what it is, not where it lives in
    memory (a lambda written in a test body is a new object on every call)."""
    if obj is None or isinstance(obj, str):
        return repr(obj)
    code = getattr(obj, "__code__", None)
    if code is None:
        return f"{type(obj).__module__}.{type(obj).__qualname__}:{obj!r}"
    cells = []
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            cells.append(repr(cell.cell_contents)[:200])
        except ValueError:  # an empty cell
            cells.append("<empty>")
    defaults = repr(getattr(obj, "__defaults__", None))[:200]
    return (f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', '?')}"
            f"@{code.co_filename}:{code.co_firstlineno}:{hash(code.co_code)}"
            f"|{defaults}|{'|'.join(cells)}")

