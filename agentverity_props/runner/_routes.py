"""Per-route claims: the meter and the relations broken down by verdict label, and the
verdicts a probe set must produce (``--require-verdicts``).

A pooled meter certifies the mean pair disagreement over the probe set, not each verdict
(route) separately: a router stable on its ``faq`` inputs and noisy on its few ``refund``
inputs can be ``verdict-deterministic`` pooled. The breakdown groups the inputs by their
*route*: the majority verdict of every draw of the input in this run (ties to the label
first in sort order). Per route it gives

* the meter's pairs of those inputs, their disagreements and an exact (Clopper-Pearson)
  ``1 - alpha`` interval. Each meter trial draws an input uniformly, so given the routes
  the trials landing on one route are i.i.d. Bernoulli(theta_route); but the routes are read
  from the same draws and several routes are shown at once: the intervals are
  **descriptive**, outside the run's family-wise alpha, and no decision rests on them;
* for each relation, the route's inputs exercised, raw flips (the screen, noise included),
  inputs confirmed violating (these *are* family-wise decisions of the relation test) and
  the mean suspicion (how unlike their sources the follow-ups looked; descriptive).

A required verdict (``--require-verdicts a,b,c``) that no draw of any input produced is a
finding of ``run`` and a refusal of ``snapshot`` (rule ``required-verdicts``): a probe set
that never reaches a route cannot say anything about it. This is a fact about the draws
made, not an estimate: no error rate is attached.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._internal.settings import setting
from ..decide import modal
from ..errors import BadInput

if TYPE_CHECKING:
    from ..diagnose import MeterResult
    from ..engine import EvidencePool, Probe
    from ..relations import RelationResult


@dataclass(frozen=True)
class RouteMeter:
    """The meter's pairs of one route's inputs."""

    label: str
    inputs: int
    pairs: int
    disagreements: int
    ci_low: float
    ci_high: float

    @property
    def estimate(self) -> float | None:
        return self.disagreements / self.pairs if self.pairs else None

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "inputs": self.inputs, "pairs": self.pairs,
                "disagreements": self.disagreements, "estimate": self.estimate,
                "ci_low": self.ci_low, "ci_high": self.ci_high}


@dataclass(frozen=True)
class Routes:
    """The per-route breakdown of a run (see the module doc)."""

    layer: str
    confidence: float
    meter: tuple[RouteMeter, ...]
    relations: dict[str, list[dict[str, Any]]]
    produced: dict[str, int]
    required: tuple[str, ...] = ()
    unrouted: int = 0
    by_input: dict[str, str] = field(default_factory=dict, repr=False)
    #: required verdicts that no draw produced
    missing: tuple[str, ...] = ()

    def finding(self) -> str | None:
        """The run's finding for the missing required verdicts (None when none is missing)."""
        if not self.missing:
            return None
        return (f"required verdict(s) never produced: {', '.join(map(repr, self.missing))} "
                f"(no draw of any of the {len(self.by_input) + self.unrouted} inputs gave "
                f"them; {setting('require_verdicts', '')}): add inputs that reach them")

    def to_dict(self) -> dict[str, Any]:
        return {"by": "majority verdict of each input's draws in this run",
                "layer": self.layer, "interval": "clopper-pearson",
                "confidence": self.confidence,
                "error_rate": "descriptive: outside the run's family-wise alpha",
                "meter": [r.to_dict() for r in self.meter], "relations": self.relations,
                "produced": dict(self.produced), "required": list(self.required),
                "missing": list(self.missing), "unrouted": self.unrouted,
                "by_input": dict(self.by_input)}


def route_of(counts: Counter[str]) -> str | None:
    """The majority verdict, by the one rule every decision uses
    (:func:`~agentverity_props.decide.modal`: ties to the label seen first); None without a
    draw.

    >>> route_of(Counter({"b": 2, "a": 2, "c": 1}))
    'b'
    """
    return modal(counts.elements())


def route_breakdown(probes: Sequence[Probe], pool: EvidencePool, meter: MeterResult,
                    relations: Iterable[RelationResult], *, layer: str, alpha: float,
                    required: Sequence[str] = ()) -> Routes:
    """Group the run's evidence by each input's route (see the module doc)."""
    from ..decide import clopper_pearson

    by_input: dict[str, str] = {}
    produced: Counter[str] = Counter()
    unrouted = 0
    raw_seen: set[str] = set()
    for p in probes:
        counts = pool.get(p.fp).counts(layer)
        raw_seen.update(counts)
        if layer == "text":  # answers are never stored: a route is the answer's fingerprint
            counts = Counter({_answer_fp(k): v for k, v in counts.items()})
        produced.update(counts)
        label = route_of(counts)
        if label is None:
            unrouted += 1
        else:
            by_input[p.fp] = label
    sizes = Counter(by_input.values())
    pairs: Counter[str] = Counter()
    flips: Counter[str] = Counter()
    for e in meter.per_input:
        label = by_input.get(e.fp)
        if label is not None:
            pairs[label] += e.pairs
            flips[label] += e.flips
    rows = []
    for label in sorted(sizes, key=lambda k: (-sizes[k], k)):
        lo, hi = clopper_pearson(flips[label], pairs[label], alpha=alpha) if pairs[label] \
            else (0.0, 1.0)
        rows.append(RouteMeter(label, sizes[label], pairs[label], flips[label], lo, hi))
    rels: dict[str, list[dict[str, Any]]] = {}
    for r in relations:
        per: dict[str, dict[str, Any]] = {}
        sus: dict[str, list[float]] = {}
        # inputs, not (input, follow-up) pairs: an input of a family may carry several
        seen: dict[str, tuple[set[str], set[str], set[str]]] = {}
        for o in r.outcomes:
            label = by_input.get(o.fp)
            if label is None or o.status == "skipped":
                continue
            per.setdefault(label, {"label": label, "inputs": 0, "raw": 0,
                                   "confirmed": 0, "mean_suspicion": None})
            ins, raw, conf = seen.setdefault(label, (set(), set(), set()))
            ins.add(o.fp)
            if o.raw:
                raw.add(o.fp)
            if o.status == "confirmed":
                conf.add(o.fp)
            if o.suspicion is not None:
                sus.setdefault(label, []).append(float(o.suspicion))
        for label, (ins, raw, conf) in seen.items():
            per[label].update(inputs=len(ins), raw=len(raw), confirmed=len(conf))
        for label, xs in sus.items():
            per[label]["mean_suspicion"] = sum(xs) / len(xs)
        rels[r.relation.name] = [per[k] for k in sorted(per, key=lambda k: (-sizes[k], k))]
    return Routes(layer=layer, confidence=1 - alpha, meter=tuple(rows), relations=rels,
                  produced=dict(sorted(produced.items())), required=tuple(required),
                  unrouted=unrouted, by_input=by_input,
                  missing=tuple(v for v in required if v not in raw_seen))


def _answer_fp(key: str) -> str:
    from .._internal.fingerprint import fingerprint, salt_from_env
    return fingerprint(key, salt_from_env())


def parse_required_verdicts(spec: str | None) -> tuple[str, ...]:
    """``a,b,c`` or ``@FILE`` (one label a line, ``#`` comments) -> the labels, in order.

    >>> parse_required_verdicts("faq, refund,faq")
    ('faq', 'refund')
    """
    if spec is None:
        return ()
    text = spec.strip()
    if text.startswith("@"):
        path = Path(text[1:]).expanduser()
        try:
            raw = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"{setting('require_verdicts', text)}: cannot read {path} "
                           f"({type(exc).__name__})",
                           "give a UTF-8 file with one verdict label a line") from None
        items = [ln.split("#", 1)[0].strip() for ln in raw.splitlines()]
    else:
        items = [x.strip() for x in text.split(",")]
    labels = tuple(dict.fromkeys(x for x in items if x))
    if not labels:
        raise BadInput(f"{setting('require_verdicts', repr(spec))} names no verdict",
                       "give labels separated by commas (faq,refund) or @FILE")
    return labels
