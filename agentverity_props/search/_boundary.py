"""Boundary location: the adjacent pair of texts between two inputs where the verdict flips.

Given ``a`` and ``b`` with different verdicts, walk the edit path from ``a`` to ``b``
(:mod:`._edit_path`: word-level units, numbers as numeric paths) and bisect to the one edit
that crosses: first over the units, then over the crossing number's values (to adjacent
values, or until the pair is within ``resolution`` of its value, 1% by default), then word by
word inside a multi-word unit. The cost is logarithmic in the number of units and in the
numeric range.

**Each step** decides on which side a midpoint text lies with a lead-of-``k`` test on "the
draw equals ``a``'s verdict": draw until the draws agreeing with ``a``'s verdict lead the
others by ``k`` (the ``lo`` side) or trail by ``k`` (``hi``). This is Wald's SPRT of
``p >= 1 - step_noise`` against ``p <= step_noise`` (``p``: the chance a draw of the text
agrees with ``a``'s verdict); with ``r = step_noise / (1 - step_noise)`` it goes to the wrong
side with probability at most ``r**k / (1 + r**k)`` (gambler's ruin), and ``k`` is the
smallest lead that makes this at most ``step_alpha``. A text on which the agent is noisier
than ``step_noise`` has no wrong side to go to for bisection; one whose lead reaches neither
side within ``max_step_draws`` draws is reported: the boundary is stochastic there. Draws
already in the evidence pool count.

**The final pair** ``(lo, hi)`` is then decided exactly as ``enlarge``'s boundary pairs are:
an invariance candidate ``lo -> hi`` through :class:`~agentverity_props.relations.RelationDecider`
(fresh rounds only, so the bisection's selection of the pair does not bias it). The pair is
``located`` only when the violation is confirmed beyond the agent's own noise, ``lo``'s modal
verdict is ``a``'s and ``hi``'s is not, each settled by the text's own draws. When the adjacent
pair agrees (a step may have erred), the bisection is run once more with a lead one larger,
reusing every draw. When it is still not confirmed (a *graded* boundary: the verdict shifts
over a range, as a sampled model's often does), wider pairs of the same bisection are tried,
each about four times wider, up to the whole crossing unit; the narrowest one confirmed is
reported with ``graded=True``. Confirmation ``i`` (from 1) is made at ``alpha / 2**i``, so a
false ``located`` has probability at most ``alpha`` over every confirmation tried.
``no-crossing`` (``b`` on ``a``'s side) is decided by the same walk continued to a lead of
``k + 2``: wrong with probability at most ``r**(k+2) / (1 + r**(k+2))`` when ``b``'s draws
disagree with ``a``'s verdict at least ``1 - step_noise`` of the time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal.outcome import CandidateStatus
from .._internal.unset import UNSET
from ..decide import modal
from ..engine import Configurable
from ..errors import BadInput, DrawStopped, InvalidArgument
from ._edit_path import EditPath, EditUnit

if TYPE_CHECKING:
    from ..engine import Engine, EngineConfig, EvidencePool

__all__ = ["BOUNDARY_STATUSES", "DEFAULT_BUDGET", "BoundaryConfig", "BoundaryLocation",
           "alocate", "edit_path", "lead_needed", "locate_boundary"]

#: locate_boundary's call budget when none is given
DEFAULT_BUDGET = 120
#: how unlikely a located pair's named verdicts may be noise majorities (each text's own draws,
#: ``relations._procedure.own_settled``)
SETTLED_BETA = 0.05
#: the statuses a location ends in
BOUNDARY_STATUSES = ("located", "undecided", "no-crossing", "incomplete")


def lead_needed(step_noise: float, step_alpha: float) -> int:
    """The lead ``k`` of the per-step test: the smallest with ``r**k / (1 + r**k) <=
    step_alpha``, ``r = step_noise / (1 - step_noise)``.

    >>> lead_needed(0.1, 0.02), lead_needed(0.1, 0.01), lead_needed(0.01, 0.02)
    (2, 3, 1)
    """
    r = step_noise / (1.0 - step_noise)
    k = 1
    while r ** k / (1.0 + r ** k) > step_alpha:
        k += 1
    return k


def _default_engine() -> EngineConfig:
    from ..engine import EngineConfig
    return EngineConfig(budget=DEFAULT_BUDGET)


@dataclass(frozen=True, kw_only=True)
class BoundaryConfig(Configurable):
    """Everything :func:`locate_boundary` can be told (apart from the agent and the texts).

    ``alpha``: the error rate of a reported ``located`` pair; ``resolution``: a numeric
    crossing is bisected until ``|hi - lo|`` is at most this share of the smaller value (or
    the values are adjacent); ``step_noise`` / ``step_alpha``: the noise the per-step test is
    sized for and its wrong-side rate at that noise (the lead ``k`` follows from both);
    ``max_step_draws``: draws one step may add before its midpoint is called stochastic;
    ``max_confirm_draws``: draws one confirmation of a pair may make (40: a true flip at 5%
    noise is confirmed in about ten);
    ``layer``: what a verdict is. ``engine`` (default ``EngineConfig(budget=120)``) says how
    the agent is called; its ``budget`` is required.

    >>> BoundaryConfig(resolution=0.005).resolution
    0.005
    >>> BoundaryConfig(step_noise=0.6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentverity_props.errors.InvalidArgument: locate_boundary: step_noise=0.6 must be in ...
    """

    alpha: float = 0.05
    resolution: float = 0.01
    step_noise: float = 0.1
    step_alpha: float = 0.02
    max_step_draws: int = 15
    max_confirm_draws: int = 40
    layer: str = "verdict"
    engine: EngineConfig = field(default_factory=_default_engine)

    def __post_init__(self) -> None:
        from ..engine import EngineConfig
        from ..observation import LAYERS

        where = "locate_boundary"
        if not isinstance(self.engine, EngineConfig):
            raise InvalidArgument(f"{where}: engine must be an EngineConfig, got "
                                  f"{type(self.engine).__name__}; pass engine=EngineConfig(...)")
        if self.engine.budget is None:
            raise InvalidArgument(f"{where} needs a call budget; pass budget={DEFAULT_BUDGET}")
        _check_alpha(self.alpha, where)
        _check_resolution(self.resolution, where)
        if not _real(self.step_noise) or not 0.0 < self.step_noise < 0.5:
            raise InvalidArgument(f"{where}: step_noise={self.step_noise!r} must be in "
                                  "(0, 0.5); e.g. 0.1")
        if not _real(self.step_alpha) or not 0.0 < self.step_alpha < 0.5:
            raise InvalidArgument(f"{where}: step_alpha={self.step_alpha!r} must be in "
                                  "(0, 0.5); e.g. 0.02")
        for name, eg in (("max_step_draws", 15), ("max_confirm_draws", 40)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise InvalidArgument(f"{where}: {name}={v!r} must be an int >= 1; e.g. {eg}")
        if self.layer not in LAYERS:
            raise InvalidArgument(f"{where}: layer={self.layer!r}; use one of "
                                  f"{', '.join(LAYERS)}")

    @property
    def lead(self) -> int:
        """The per-step test's lead ``k`` (:func:`lead_needed`)."""
        return lead_needed(self.step_noise, self.step_alpha)


def _real(x: object) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x)


def _check_alpha(alpha: object, where: str) -> None:
    if not _real(alpha) or not 0.0 < alpha < 0.5:  # type: ignore[operator]
        raise InvalidArgument(f"{where}: alpha={alpha!r} must be in (0, 0.5); e.g. 0.05")


def _check_resolution(resolution: object, where: str) -> None:
    if not _real(resolution) or not 0.0 <= resolution < 1.0:  # type: ignore[operator]
        raise InvalidArgument(f"{where}: resolution={resolution!r} must be in [0, 1); "
                              "0.01 stops within 1% of the value, 0 at adjacent values")


@dataclass(frozen=True)
class BoundaryLocation:
    """Where the verdict flips between two inputs (see the module docstring).

    ``status``: ``located`` (the pair ``low``/``high`` confirmed beyond the agent's noise),
    ``undecided`` (a midpoint or every pair tried stayed a coin flip), ``no-crossing`` (both
    ends drew ``a``'s verdict) or ``incomplete`` (budget, failed calls); ``reason`` says why
    when it is not ``located`` (or that the boundary is graded). ``edit`` is the crossing edit
    as data: ``kind`` (number / replace / insert / delete), ``before``, ``after``,
    ``context`` (the word just before it) and ``position`` (its token index in ``low``);
    empty when nothing was located. ``graded`` says the adjacent pair was not confirmed and
    ``low``/``high`` is the narrowest wider pair that was (the verdict changes gradually
    between them). ``steps`` counts the bisection steps (``step_log`` records each: stage,
    path position, side, draws made for it) and ``step_error`` is a step's wrong-side bound
    at the final lead; ``decision`` is the final confirmation's evidence. The texts
    ``low``/``high`` are kept verbatim: they are the product (edits between the caller's own
    inputs).
    """

    status: str
    low: str = ""
    high: str = ""
    low_verdict: str | None = None
    high_verdict: str | None = None
    edit: dict[str, Any] = field(default_factory=dict)
    steps: int = 0
    calls: int = 0
    reason: str = ""
    decision: dict[str, Any] | None = None
    step_error: float = 0.0
    a_verdict: str | None = None
    b_verdict: str | None = None
    units: int = 0
    step_log: tuple[dict[str, Any], ...] = ()
    attempts: int = 0
    lead: int = 0
    resolution: float = 0.01
    alpha: float = 0.05
    stochastic: dict[str, Any] | None = None
    graded: bool = False
    #: the tokens of the location's own calls (:func:`locate_boundary`; None inside a
    #: larger command, whose report counts them)
    tokens: dict[str, Any] | None = None

    @property
    def located(self) -> bool:
        return self.status == "located"

    def describe(self) -> str:
        """The finding in the user's words: ``cost 1,990 → 2,010 flips approve → manager``."""
        from .._internal.shown import visible

        def q(s: object) -> str:
            return visible(str(s))

        flips = f"flips {q(self.low_verdict)} → {q(self.high_verdict)}"
        if self.status == "located" and self.edit:
            e = self.edit
            ctx = f"{q(e['context'])} " if e.get("context") else ""
            after = f' after "{q(e["context"])}"' if e.get("context") else ""
            if e["kind"] == "number":
                return f"{ctx}{q(e['before'])} → {q(e['after'])} {flips}"
            if e["kind"] == "insert":
                return f'inserting "{q(e["after"])}"{after} {flips}'
            if e["kind"] == "delete":
                return f'deleting "{q(e["before"])}"{after} {flips}'
            return f'"{q(e["before"])}" → "{q(e["after"])}" {flips}'
        if self.status == "no-crossing":
            return (f"no crossing: both inputs draw {q(self.a_verdict)} "
                    f"({self.calls} calls)")
        return f"{self.status}: {q(self.reason)} ({self.calls} calls)"

    def to_dict(self) -> dict[str, Any]:
        """The location as JSON data (the keys of enlarge's ``boundaries`` entries); the pair's
        texts are kept verbatim. :meth:`details` adds how it was reached."""
        return {"status": self.status, "low": self.low, "high": self.high,
                "low_verdict": self.low_verdict, "high_verdict": self.high_verdict,
                "edit": dict(self.edit), "description": self.describe(), "steps": self.steps,
                "calls": self.calls, "reason": self.reason, "decision": self.decision,
                "step_error": self.step_error}

    def document(self) -> dict[str, Any]:
        """The ``boundary`` command's JSON result: its schema name, :meth:`to_dict` and
        :meth:`details` (``BoundaryDocument``)."""
        from ..results import BoundaryDocument
        return {"schema": BoundaryDocument.SCHEMA, **self.to_dict(), **self.details()}

    def details(self) -> dict[str, Any]:
        """How the location was reached: the ends' verdicts, the path's units, every step,
        the confirmations, the final lead, a stochastic midpoint, whether it is graded."""
        return {"a_verdict": self.a_verdict, "b_verdict": self.b_verdict, "units": self.units,
                "step_log": [dict(x) for x in self.step_log], "attempts": self.attempts,
                "lead": self.lead, "resolution": self.resolution, "alpha": self.alpha,
                "stochastic": self.stochastic, "graded": self.graded,
                "tokens": self.tokens}


class _Stop(Exception):
    """Ends the location early with a status (incomplete / undecided)."""

    def __init__(self, status: str, note: str, stochastic: dict[str, Any] | None = None):
        super().__init__(note)
        self.status, self.note, self.stochastic = status, note, stochastic


class _Locator:
    """One location's state: the engine, the pool, the allowance and the steps so far."""

    def __init__(self, engine: Engine, pool: EvidencePool, *, layer: str, max_calls: int | None,
                 conf: BoundaryConfig, progress: Callable[[int], None] | None) -> None:
        self.engine, self.pool, self.layer, self.conf = engine, pool, layer, conf
        self.start = engine.ledger.calls
        self.max_calls = max_calls
        self.progress = progress
        self.steps: list[dict[str, Any]] = []
        self.a_verdict: str | None = None

    # -- draws ------------------------------------------------------------------------------

    @property
    def used(self) -> int:
        return self.engine.ledger.calls - self.start

    def affordable(self, n: int) -> bool:
        if self.max_calls is not None and self.used + n > self.max_calls:
            return False
        return self.engine.can_afford(n) and not self.engine.stopping

    def left(self) -> int:
        left = self.engine.remaining
        if self.max_calls is not None:
            mine = self.max_calls - self.used
            left = mine if left is None else min(left, mine)
        return 10 ** 9 if left is None else max(0, left)

    def keys(self, text: str) -> list[str]:
        from ..engine import Probe
        return [k for k in self.pool.get(Probe.make(text).fp).keys(self.layer) if k is not None]

    def modal(self, text: str) -> str | None:
        from ..engine import Probe
        from ..relations import reference
        return reference(self.pool, Probe.make(text).fp, self.layer)

    async def draw(self, text: str, n: int) -> None:
        """``n`` more draws of ``text`` (concurrently), into the pool."""
        from ..engine import Probe
        if not self.affordable(n):
            raise _Stop("incomplete", "the call budget ran out before the boundary was located")
        probe = Probe.make(text)
        indices = self.engine.allocate(probe, n)

        async def one(i: int) -> bool:
            try:
                obs = await self.engine.draw(probe, i)
            except DrawStopped:
                return False
            self.pool.add(probe.fp, i, obs)
            return obs.key(self.layer) is not None

        ok = await asyncio.gather(*(one(i) for i in indices))
        if self.progress is not None:
            self.progress(n)
        if not all(ok):
            cause = self.engine.stop_cause or _failure(self.pool, probe.fp, self.layer)
            raise _Stop("incomplete", f"an agent call failed or gave no verdict ({cause})")

    # -- the per-step test ------------------------------------------------------------------

    async def verdict_of(self, text: str, lead: int, stage: str) -> str:
        """``a``'s verdict: draw until one label leads every other by ``lead``."""
        new = 0
        while True:
            counts = Counter(self.keys(text))
            top = counts.most_common(2)
            margin = (top[0][1] - (top[1][1] if len(top) > 1 else 0)) if top else 0
            if top and margin >= lead:
                self.steps.append({"stage": stage, "position": 0, "side": "lo",
                                   "draws": new})
                return top[0][0]
            if new >= self.conf.max_step_draws:
                raise _Stop("undecided", f"the verdict of the first input is a coin flip "
                            f"({dict(counts)})", {"text": text, "counts": dict(counts)})
            n = min(lead - margin, self.conf.max_step_draws - new)
            await self.draw(text, n)
            new += n

    async def side(self, text: str, lead: int, stage: str, position: Any) -> str:
        """``"lo"`` (the text draws ``a``'s verdict) or ``"hi"``, by a lead of ``lead``."""
        assert self.a_verdict is not None
        new = 0
        while True:
            keys = self.keys(text)
            agree = sum(k == self.a_verdict for k in keys)
            diff = agree - (len(keys) - agree)
            if abs(diff) >= lead:
                side = "lo" if diff > 0 else "hi"
                self.steps.append({"stage": stage, "position": position, "side": side,
                                   "draws": new})
                return side
            if new >= self.conf.max_step_draws:
                self.steps.append({"stage": stage, "position": position,
                                   "side": "stochastic", "draws": new})
                raise _Stop("undecided", f"the boundary is stochastic at {stage} position "
                            f"{position}: {agree} of {len(keys)} draws gave "
                            f"{self.a_verdict!r}",
                            {"text": text, "agree": agree, "draws": len(keys),
                             "stage": stage, "position": position})
            n = min(lead - abs(diff), self.conf.max_step_draws - new)
            await self.draw(text, n)
            new += n

    # -- bisection --------------------------------------------------------------------------

    async def bisect(self, path: EditPath, lead: int) -> list[tuple[str, str, dict[str, Any]]]:
        """The nested pairs (lo, hi, crossing edit) inside the crossing unit, widest (the
        whole unit) first, the adjacent pair last, at lead ``lead``."""
        lo, hi = 0, len(path)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if await self.side(path.text(mid), lead, "units", mid) == "lo":
                lo = mid
            else:
                hi = mid
        k = lo
        unit = path.units[k]
        lo_text, hi_text = path.text(k), path.text(k + 1)
        chain: list[tuple[str, str, dict[str, Any]]] = []
        if unit.kind == "number":
            vlo, vhi = unit.lo_scaled, unit.hi_scaled
            while True:
                edit: dict[str, Any] = {"kind": "number", "before": _shown(unit, vlo),
                                        "after": _shown(unit, vhi)}
                chain.append((lo_text, hi_text, self._placed(path, k, 0, edit)))
                if abs(vhi - vlo) <= 1 or self._resolved(unit, vlo, vhi):
                    break
                mid = midpoint(vlo, vhi)
                text = path.number_text(k, mid)
                if await self.side(text, lead, "number", _shown(unit, mid)) == "lo":
                    vlo, lo_text = mid, text
                else:
                    vhi, hi_text = mid, text
        else:
            jlo, jhi = 0, unit.width
            while True:
                chain.append((lo_text, hi_text,
                              self._placed(path, k, jlo, _word_edit(unit, jlo, jhi))))
                if jhi - jlo <= 1:
                    break
                mid = (jlo + jhi) // 2
                text = path.partial_text(k, mid)
                if await self.side(text, lead, "words", f"{k}.{mid}") == "lo":
                    jlo, lo_text = mid, text
                else:
                    jhi, hi_text = mid, text
        return chain

    @staticmethod
    def _placed(path: EditPath, k: int, j: int, edit: dict[str, Any]) -> dict[str, Any]:
        """``edit`` with its context (the word just before it) and token position."""
        prefix = path.prefix_tokens(k) + list(path.units[k].partial(j)[:j])
        words = [t.text for t in prefix if any(c.isalnum() for c in t.text)]
        return {**edit, "context": words[-1] if words else "",
                "position": sum(1 for t in prefix if t.text)}

    def _resolved(self, unit: EditUnit, vlo: int, vhi: int) -> bool:
        res = self.conf.resolution
        return res > 0 and abs(vhi - vlo) <= res * min(abs(vlo), abs(vhi))

    # -- final confirmation -----------------------------------------------------------------

    async def confirm(self, lo: str, hi: str, alpha: float, *, futility: bool = False
                      ) -> tuple[str, dict[str, Any]]:
        from ..engine import Probe
        from ..relations import Candidate, Relation, RelationDecider, RelationOutcome
        from ..relations import reference as modal

        left = self.left()
        if left < 2:
            raise _Stop("incomplete", "the call budget ran out before the final pair was "
                        "confirmed")
        rel = Relation("boundary", "invariant", _constant(hi), layer=self.layer)
        sp, fp = Probe.make(lo), Probe.make(hi)
        out = RelationOutcome(fp=sp.fp, follow_up_fp=fp.fp)
        decider = RelationDecider(self.engine, self.pool, alpha_candidate=alpha,
                                  max_draws=min(self.conf.max_confirm_draws, left),
                                  futility=futility,
                                  progress=self.progress)
        await decider.decide([Candidate(rel, sp, fp, out)])
        decision = {**dict(out.decision or {}), "alpha": alpha, "status": str(out.status),
                    "note": out.note}
        if out.status == CandidateStatus.INCOMPLETE:
            raise _Stop("incomplete", out.note or "the final pair's draws were not made")
        if out.status == CandidateStatus.CONFIRMED:
            from ..relations import own_settled
            lo_ref = modal(self.pool, sp.fp, self.layer)
            hi_ref = modal(self.pool, fp.fp, self.layer)
            # the verdicts the report names must be each text's own, not a noisy majority
            # (on a graded boundary both texts of a pair can be near a coin flip)
            if lo_ref is not None and lo_ref == self.a_verdict and hi_ref is not None \
                    and hi_ref != self.a_verdict \
                    and own_settled(self.pool, sp.fp, self.layer, lo_ref, SETTLED_BETA) \
                    and own_settled(self.pool, fp.fp, self.layer, hi_ref, SETTLED_BETA):
                return "located", decision
            return "shifted", decision
        return ("pass" if out.status == CandidateStatus.PASS else "undecided"), decision


def edit_path(a: str, b: str) -> list[str]:
    """The texts from ``a`` to ``b``, one edit unit at a time (``[a, ..., b]``).

    >>> edit_path("cost 1,990 in economy", "cost 2,500 in business")
    ['cost 1,990 in economy', 'cost 2,500 in economy', 'cost 2,500 in business']
    """
    path = EditPath.between(a, b)
    return [path.text(k) for k in range(len(path) + 1)]


def midpoint(lo: int, hi: int) -> int:
    """A value strictly between ``lo`` and ``hi`` (``|hi - lo| >= 2``) to bisect at: near the
    geometric middle when both are positive (a relative resolution then takes the fewest
    steps over a wide range), else the arithmetic one, rounded to the roundest number within
    a tenth of the interval (in log scale when geometric) of it, so that the steps and the
    pair read as the user would write them (3,000, 2,500 ...) at the cost of at most a few
    per cent more steps.

    >>> midpoint(1200, 4800), midpoint(100, 100000), midpoint(1987, 2043), midpoint(7, 9)
    (2500, 5000, 2020, 8)
    """
    a, b = min(lo, hi), max(lo, hi)
    if b - a < 2:
        raise InvalidArgument(f"midpoint: no integer strictly between {lo} and {hi}")
    if a > 0:
        centre = math.sqrt(a * b)
        f = (b / a) ** 0.1
        low, high = centre / f, centre * f
    else:
        centre = (a + b) / 2
        low, high = centre - (b - a) / 10, centre + (b - a) / 10
    low, high = max(low, a + 1), min(high, b - 1)
    step = 10 ** max(0, len(str(b - a)))
    while step >= 1:
        for s in (step * 5, step * 2, step):
            m = round(centre / s) * s
            cands = [x for x in (m - s, m, m + s) if low <= x <= high]
            if cands:
                return int(min(cands, key=lambda x: abs(x - centre)))
        step //= 10
    return int(min(max(round(centre), a + 1), b - 1))


def _word_edit(unit: EditUnit, jlo: int, jhi: int) -> dict[str, Any]:
    """The edit of positions ``jlo:jhi`` of a word unit, as data."""
    a = unit.a_tokens[jlo:jhi]
    b = unit.b_tokens[jlo:jhi]
    before, after = "".join(map(str, a)).strip(), "".join(map(str, b)).strip()
    if before == after:  # the tokens differ in their spacing only
        before, after = "".join(map(str, a)), "".join(map(str, b))
    return {"kind": "replace" if before and after else "insert" if after else "delete",
            "before": before, "after": after}


def _shown(unit: EditUnit, scaled: int) -> str:
    if scaled == unit.lo_scaled:
        return unit.a_tokens[0].text
    if scaled == unit.hi_scaled:
        return unit.b_tokens[0].text
    return unit.number_token(scaled).text


def _constant(text: str) -> Callable[[str], str]:
    def transform(_: str) -> str:
        return text
    return transform


def _failure(pool: EvidencePool, fp: str, layer: str) -> str:
    for obs in pool.get(fp).draws.values():
        if obs.error is not None:
            return f"{obs.error.kind}: {obs.error.message}"
        if obs.key(layer) is None:
            return obs.no_decision.reason if obs.no_decision is not None else "no verdict"
    return "draw not made"


async def alocate(engine: Engine, pool: EvidencePool, a: str, b: str, *, layer: str = "verdict",
                  alpha: float = 0.05, a_verdict: str | None = None,
                  b_verdict: str | None = None, max_calls: int | None = None,
                  resolution: float = 0.01, progress: Callable[[int], None] | None = None,
                  config: BoundaryConfig | None = None) -> BoundaryLocation:
    """Locate the crossing edit between ``a`` and ``b`` through an existing engine and pool.

    The internal entry point (``enlarge`` calls it with its own engine and evidence): draws of
    ``a``, ``b`` or any path text already in ``pool`` count as evidence, and every draw made
    is added to it. ``a_verdict`` / ``b_verdict``, when known, are taken as given (no draw).
    ``max_calls`` caps the live calls this location spends (besides the engine's budget);
    ``progress(n)`` is called as draws complete. ``config`` gives the per-step settings
    (``step_noise``, ``step_alpha``, ``max_step_draws``, ``max_confirm_draws``); its
    ``alpha``, ``layer`` and
    ``resolution`` are replaced by the keywords.
    """
    from ..decide import spending_alpha

    if not isinstance(a, str) or not isinstance(b, str):
        raise InvalidArgument("locate_boundary: a and b must be strings")
    if not a.strip() or not b.strip():
        raise BadInput("locate_boundary: an input is empty", "give two non-empty texts")
    if a == b:
        raise BadInput("locate_boundary: the two inputs are the same text",
                       "give two different inputs (one of each verdict)")
    _check_alpha(alpha, "locate_boundary")
    _check_resolution(resolution, "locate_boundary")
    if max_calls is not None and (not isinstance(max_calls, int) or max_calls < 0):
        raise InvalidArgument(f"locate_boundary: max_calls={max_calls!r} must be an int >= 0")
    base = config if config is not None else BoundaryConfig()
    import dataclasses
    conf = dataclasses.replace(base, alpha=alpha, layer=layer, resolution=resolution,
                               engine=base.engine)
    loc = _Locator(engine, pool, layer=layer, max_calls=max_calls, conf=conf,
                   progress=progress)
    path = EditPath.between(a, b)
    lead = conf.lead
    attempts = 0
    common: dict[str, Any] = {"units": len(path), "resolution": resolution, "alpha": alpha}

    def done(status: str, **kw: Any) -> BoundaryLocation:
        kw.setdefault("low", a)
        kw.setdefault("high", b)
        r = conf.step_noise / (1.0 - conf.step_noise)
        return BoundaryLocation(status, a_verdict=loc.a_verdict, b_verdict=b_verdict,
                                step_log=tuple(loc.steps), steps=len(loc.steps),
                                step_error=r ** lead / (1.0 + r ** lead), calls=loc.used,
                                attempts=attempts, lead=lead, **common, **kw)

    try:
        loc.a_verdict = a_verdict if a_verdict is not None else \
            await loc.verdict_of(a, lead, "first input")
        if b_verdict is None:
            # "no crossing" ends the search: it is checked again at a lead two larger (the
            # same walk continued, so the cost is paid only when the answer is "lo")
            if await loc.side(b, lead, "second input", len(path)) == "lo" and \
                    await loc.side(b, lead + 2, "second input", len(path)) == "lo":
                return done("no-crossing", reason="both inputs draw the same verdict")
            b_verdict = modal(k for k in loc.keys(b) if k != loc.a_verdict)
        elif b_verdict == loc.a_verdict:
            return done("no-crossing", reason="both inputs have the same verdict")
        bisections = 0
        while True:
            bisections += 1
            chain = await loc.bisect(path, lead)
            # the adjacent pair first; if it is not confirmed, wider pairs of the same
            # bisection (each about four times wider), up to the whole crossing unit
            levels = list(range(len(chain) - 1, -1, -2))
            if levels[-1] != 0:
                levels.append(0)
            first: dict[str, Any] | None = None
            for n_level, level in enumerate(levels):
                lo, hi, edit = chain[level]
                attempts += 1
                # a wider pair that is not confirmed at the pace it needs gives way to the next
                # one (futility); the adjacent pair gets every draw allowed
                outcome, decision = await loc.confirm(lo, hi, spending_alpha(alpha, attempts),
                                                      futility=n_level > 0)
                pair = {"low": lo, "high": hi, "low_verdict": loc.modal(lo),
                        "high_verdict": loc.modal(hi), "decision": decision}
                if outcome == "located":
                    if n_level == 0:
                        return done("located", edit=edit, **pair)
                    assert first is not None
                    return done("located", edit=edit, graded=True, reason=(
                        "a graded boundary: the adjacent pair "
                        f"{first['edit']['before']!r} → {first['edit']['after']!r} was not "
                        f"confirmed ({first['outcome']}); this is the narrowest pair of the "
                        "bisection confirmed beyond the agent's noise: the verdict changes "
                        "gradually between its two texts"), **pair)
                if first is None:
                    first = {**pair, "edit": edit, "outcome": outcome}
                if outcome == "pass" and bisections == 1:
                    break  # the adjacent pair agrees: a step may have erred; re-bisect
            else:
                assert first is not None
                first.pop("edit")
                outcome = first.pop("outcome")
                return done("undecided", reason=(
                    "no pair of the bisection was confirmed beyond the agent's noise (the "
                    f"adjacent pair: {outcome}): the verdict does not change reliably along "
                    "this path"), **first)
            # again, with steps one draw stricter, reusing every draw
            lead += 1
            if loc.left() < 2 * lead + 4:
                raise _Stop("incomplete", "the adjacent pair draws the same verdict (a step "
                            "may have erred) and the budget left cannot re-bisect")
    except _Stop as stop:
        return done(stop.status, reason=stop.note, stochastic=stop.stochastic)


def locate_boundary(agent: Any, a: str, b: str, *, config: BoundaryConfig | None = None,
                    alpha: float = UNSET, resolution: float = UNSET, layer: str = UNSET,
                    step_noise: float = UNSET, step_alpha: float = UNSET,
                    max_step_draws: int = UNSET, budget: int = UNSET,
                    engine: EngineConfig | None = UNSET,
                    progress: Callable[[str, int], None] | None = None,
                    **engine_kwargs: Any) -> BoundaryLocation:
    """Locate the edit between ``a`` and ``b`` that flips the agent's verdict.

    Args:
        agent: an adapter or a callable ``prompt -> verdict``.
        a, b: two inputs with different verdicts (``a``'s verdict is the ``lo`` side).
        config: every setting at once (:class:`BoundaryConfig`).
        alpha: the error rate of a reported ``located`` pair (default 0.05).
        resolution: a numeric crossing is located within this share of its value
            (default 0.01; 0 bisects to adjacent values).
        layer, step_noise, step_alpha, max_step_draws: see :class:`BoundaryConfig`.
        budget: agent calls to spend at most (default 120).
        engine: how to call the agent, replacing ``config.engine``.
        progress: called as ``progress("boundary", calls)`` as draws complete.
        **engine_kwargs: any other :class:`~agentverity_props.engine.EngineConfig` field.

    A keyword given explicitly overrides the same setting of ``config``.

    Example:
        >>> from agentverity_props import from_callable
        >>> gate = from_callable(lambda p: "manager" if int(p.split()[-1].replace(",", ""))
        ...                      > 2000 else "approve")
        >>> loc = locate_boundary(gate, "Hotel in Lyon, cost 1,200", "Hotel in Lyon, cost 4,800")
        >>> loc.status, loc.describe()
        ('located', 'cost 2,000 → 2,020 flips approve → manager')
    """
    from ..engine import Engine, EvidencePool, configured, run_sync

    conf = configured(BoundaryConfig, config,
                      {"alpha": alpha, "resolution": resolution, "layer": layer,
                       "step_noise": step_noise, "step_alpha": step_alpha,
                       "max_step_draws": max_step_draws, "budget": budget,
                       **({} if engine is UNSET else
                          {"engine": _default_engine() if engine is None else engine}),
                       **engine_kwargs}, where="locate_boundary")
    tick = None if progress is None else (lambda n: progress("boundary", n))

    async def main() -> BoundaryLocation:
        eng = Engine(agent, conf.engine)
        try:
            eng.ledger.phase = "boundary"
            loc = await alocate(eng, EvidencePool(), a, b, layer=conf.layer,
                                alpha=conf.alpha, resolution=conf.resolution,
                                progress=tick, config=conf)
            return dataclasses.replace(loc, tokens=eng.ledger.tokens())
        finally:
            await eng.aclose()

    return run_sync(main())
