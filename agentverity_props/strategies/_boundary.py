"""Boundary location: the adjacent pair of inputs, between two of different verdicts, that
crosses.

Given ``a`` (verdict A) and ``b`` (another verdict), the word-level **edit path** from ``a``
to ``b`` (:func:`edit_path`: the differing token runs of a word alignment, in order) is
bisected to the two neighbouring texts whose verdicts differ; if the crossing unit replaces
one number by another, its **numeric path** is bisected too (geometric steps while the two
values are more than a factor 2 apart, then arithmetic, to ``resolution`` of the value or to
adjacent integers). The report names the crossing edit in the probes' words::

    cost 1,990 → 2,010 flips approve → manager

**Each step** asks on which side a midpoint text lies: its draws are a walk, +1 for A and -1
for any other verdict, stopped when it leads by ``k`` either way. If the midpoint's verdict is
A (or not A) with probability at least ``1 - eta`` per call, the walk ends on the wrong side
with probability at most ``(eta / (1 - eta)) ** k`` (gambler's ruin; anytime, whatever the
number of draws), which :class:`BoundaryConfig` sets from ``eta`` (the per-call noise the
steps assume, 0.15) and ``step_error`` (0.01: ``k = 3``). A midpoint whose walk has not
decided after ``step_draws`` draws is where the verdict is itself stochastic: the location
stops there and says so (``undecided``).

**The reported pair** is then decided like every boundary pair of ``enlarge``: a relation
candidate "the edit leaves the verdict unchanged" (:mod:`agentverity_props.relations`), at
``alpha``. A ``located`` boundary is wrong (the two verdicts do not differ beyond the agent's
noise) with probability at most ``alpha``, whatever the steps did; a step that erred costs
tightness (the pair is not the first crossing on the path), never the claim. A path can cross
more than once (A → B → A): bisection finds one crossing, not all of them.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal.outcome import CandidateStatus
from .._internal.unset import UNSET
from ..errors import DrawStopped, InvalidArgument
from ._grammar import Token, format_like, parse_number, tokens

if TYPE_CHECKING:
    from ..engine import Engine, EngineConfig, EvidencePool

__all__ = ["BoundaryConfig", "BoundaryLocation", "EditUnit", "alocate", "edit_path",
           "locate_boundary"]

DEFAULT_BUDGET = 120


def _default_engine() -> EngineConfig:
    from ..engine import EngineConfig
    return EngineConfig(budget=DEFAULT_BUDGET, max_workers=1)


@dataclass(frozen=True, kw_only=True)
class BoundaryConfig:
    """Everything :func:`locate_boundary` can be told (apart from the two inputs).

    ``alpha``: the error rate of a ``located`` claim; ``resolution``: how close a numeric
    crossing is bisected, relative to the value (0.01: within 1%); ``eta``: the per-call noise
    each step assumes; ``step_error``: each step's error at that noise; ``step_draws``: the
    most draws of one midpoint; ``layer``: what a verdict is; ``engine``: how the agent is
    called (default ``EngineConfig(budget=120, max_workers=1)``).

    >>> BoundaryConfig().steps_lead
    3
    """

    alpha: float = 0.05
    resolution: float = 0.01
    eta: float = 0.15
    step_error: float = 0.01
    step_draws: int = 12
    layer: str = "verdict"
    seed: int = 0
    engine: EngineConfig = field(default_factory=_default_engine)

    def __post_init__(self) -> None:
        from ..engine import EngineConfig
        from ..observation import LAYERS

        if not isinstance(self.engine, EngineConfig):
            raise InvalidArgument("BoundaryConfig: engine must be an EngineConfig, got "
                                  f"{type(self.engine).__name__}")
        if self.engine.budget is None:
            raise InvalidArgument("BoundaryConfig: locating a boundary needs a call budget; "
                                  f"pass engine=EngineConfig(budget={DEFAULT_BUDGET})")
        if not 0.0 < self.alpha < 0.5:
            raise InvalidArgument(f"locate_boundary: alpha={self.alpha!r} must be in (0, 0.5)")
        if not 0.0 < self.resolution < 0.5:
            raise InvalidArgument(f"locate_boundary: resolution={self.resolution!r} must be in "
                                  "(0, 0.5), e.g. 0.01 for within 1%")
        if not 0.0 < self.eta < 0.45:
            raise InvalidArgument(f"locate_boundary: eta={self.eta!r} must be in (0, 0.45)")
        if not 0.0 < self.step_error < 0.5:
            raise InvalidArgument(f"locate_boundary: step_error={self.step_error!r} must be in "
                                  "(0, 0.5)")
        if not isinstance(self.step_draws, int) or self.step_draws < self.steps_lead:
            raise InvalidArgument(f"locate_boundary: step_draws={self.step_draws!r} must be an "
                                  f"int of at least {self.steps_lead}")
        if self.layer not in LAYERS:
            raise InvalidArgument(f"locate_boundary: layer={self.layer!r}; use one of "
                                  + ", ".join(LAYERS))

    @property
    def steps_lead(self) -> int:
        """The lead ``k`` a step's walk needs: ``(eta / (1 - eta)) ** k <= step_error``."""
        return max(1, math.ceil(math.log(self.step_error) / math.log(self.eta / (1 - self.eta))))


# -- the edit path ---------------------------------------------------------------------------

@dataclass(frozen=True)
class EditUnit:
    """One differing token run of the alignment: ``a[a_start:a_end]`` becomes ``after``."""

    kind: str  # "replace" | "insert" | "delete" | "number"
    a_start: int
    a_end: int
    before: str
    after: str
    context: str  # the word just before it in ``a``
    position: int  # token index in ``a``
    next_word: str = ""  # the word just after it in ``a``

    @property
    def numeric(self) -> bool:
        return self.kind == "number"


def _units(a: str, b: str) -> tuple[list[EditUnit], list[tuple[str, str]]]:
    """The units of the path and the gaps around them: ``gaps[i]`` is the text after unit
    ``i - 1`` (``gaps[0]`` before the first) as ``(in a, in b)``."""
    ta, tb = tokens(a), tokens(b)
    sm = difflib.SequenceMatcher(None, [t.text.casefold() for t in ta],
                                 [t.text.casefold() for t in tb], autojunk=False)
    units: list[EditUnit] = []
    bounds: list[tuple[int, int, int, int]] = []  # char spans in a and b of each unit
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        a0, a1 = _span(ta, i1, i2, a)
        b0, b1 = _span(tb, j1, j2, b)
        before, after = a[a0:a1], b[b0:b1]
        kind: str = op
        if (op == "replace" and i2 - i1 == 1 and j2 - j1 == 1 and ta[i1].is_number
                and tb[j1].is_number):
            kind = "number"
        ctx = next((t.text for t in reversed(ta[:i1]) if t.is_word), "")
        nxt = next((t.text for t in ta[i2:] if t.is_word), "")
        units.append(EditUnit(kind, a0, a1, before, after, ctx, i1, nxt))
        bounds.append((a0, a1, b0, b1))
    gaps: list[tuple[str, str]] = []
    pa = pb = 0
    for a0, a1, b0, b1 in bounds:
        gaps.append((a[pa:a0], b[pb:b0]))
        pa, pb = a1, b1
    gaps.append((a[pa:], b[pb:]))
    return units, gaps


def _span(toks: Sequence[Token], i: int, j: int, text: str) -> tuple[int, int]:
    """Characters of tokens ``i..j``; an empty run sits right after token ``i - 1``."""
    if j > i:
        return toks[i].start, toks[j - 1].end
    if i < len(toks):
        return toks[i].start, toks[i].start
    return len(text), len(text)


@dataclass(frozen=True)
class _Path:
    a: str
    b: str
    units: tuple[EditUnit, ...]
    gaps: tuple[tuple[str, str], ...]

    def text(self, k: int, override: tuple[int, str] | None = None) -> str:
        """``a`` with the first ``k`` units applied (``override``: unit ``i`` written as
        given, and applied); ``text(0) == a`` and ``text(len(units)) == b``. The text
        between two units is written as in ``b`` once both units around it are applied."""
        n = len(self.units)
        applied = [i < k or (override is not None and override[0] == i) for i in range(n)]
        out: list[str] = []
        for j in range(n + 1):
            left = j == 0 or applied[j - 1]
            right = j == n or applied[j]
            out.append(self.gaps[j][1] if left and right else self.gaps[j][0])
            if j < n:
                u = self.units[j]
                if override is not None and override[0] == j:
                    out.append(override[1])
                else:
                    out.append(u.after if applied[j] else u.before)
        return "".join(out)


def edit_path(a: str, b: str) -> list[str]:
    """Every text on the word-level edit path from ``a`` to ``b`` (numbers not interpolated).

    >>> edit_path("cost $450 in economy", "cost $2,400 in business")
    ['cost $450 in economy', 'cost $2,400 in economy', 'cost $2,400 in business']
    """
    units, gaps = _units(a, b)
    path = _Path(a, b, tuple(units), tuple(gaps))
    return [path.text(k) for k in range(len(units) + 1)]


# -- the result ------------------------------------------------------------------------------

#: words too plain to name a number by ("a 29.9 → 30.2": "29.9 kg → 30.2 kg" instead)
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "of", "for", "to", "in", "on", "at", "by", "and", "or", "is", "are",
    "was", "with", "from", "each", "per", "my", "our", "your", "his", "her", "their", "its",
    "this", "that"))

@dataclass(frozen=True)
class BoundaryLocation:
    """Where the verdict changes between two inputs (see the module doc)."""

    status: str  # "located" | "undecided" | "no-crossing" | "incomplete"
    low: str
    high: str
    low_verdict: str | None
    high_verdict: str | None
    edit: dict[str, Any]
    steps: int
    calls: int
    reason: str = ""
    decision: dict[str, Any] | None = None
    step_error: float = 0.0

    def describe(self) -> str:
        """The crossing edit in the inputs' words: ``cost 1,990 → 2,010 flips approve →
        manager``."""
        e = self.edit
        if not e:
            return self.reason or self.status
        word = f" (the crossing word: {e['word']!r})" if e.get("word") else ""
        if e.get("kind") == "insert":
            what = f"inserting {e['after'].strip()!r}{word}"
        elif e.get("kind") == "delete":
            what = f"deleting {e['before'].strip()!r}{word}"
        elif e.get("kind") == "number":
            ctx, nxt = e.get("context") or "", e.get("next") or ""
            if len(ctx) >= 3 and ctx.casefold() not in _FUNCTION_WORDS:
                what = f"{ctx} {e['before']} → {e['after']}"
            elif nxt:
                what = f"{e['before']} {nxt} → {e['after']} {nxt}"
            else:
                what = f"{e['before']} → {e['after']}"
        else:
            what = f"{e['before'].strip()!r} → {e['after'].strip()!r}{word}"
        flips = (f" flips {self.low_verdict} → {self.high_verdict}"
                 if self.status == "located" else f" ({self.status})")
        return what + flips

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "low": self.low, "high": self.high,
                "low_verdict": self.low_verdict, "high_verdict": self.high_verdict,
                "edit": dict(self.edit), "description": self.describe(), "steps": self.steps,
                "calls": self.calls, "reason": self.reason, "decision": self.decision,
                "step_error": self.step_error}


# -- the search ------------------------------------------------------------------------------

class _Budget(Exception):
    """The location's own call cap (or the engine's) was reached."""


@dataclass
class _Walker:
    eng: Engine
    pool: EvidencePool
    layer: str
    conf: BoundaryConfig
    max_calls: int | None
    progress: Callable[[int], None] | None
    calls0: int = 0
    steps: int = 0

    def spent(self) -> int:
        return self.eng.ledger.calls - self.calls0

    async def draw(self, text: str) -> str | None:
        from ..engine import Probe
        if (self.max_calls is not None and self.spent() >= self.max_calls) \
                or not self.eng.can_afford(1) or self.eng.stopping:
            raise _Budget
        probe = Probe.make(text)
        index = self.eng.allocate(probe, 1)[0]
        try:
            obs = await self.eng.draw(probe, index)
        except DrawStopped:
            raise _Budget from None
        self.pool.add(probe.fp, index, obs)
        if self.progress is not None:
            self.progress(1)
        return obs.key(self.layer)

    def known(self, text: str) -> list[str]:
        from ..engine import Probe
        fp = Probe.make(text).fp
        if fp not in self.pool:
            return []
        counts = self.pool.get(fp).counts(self.layer)
        return [k for k, n in counts.items() for _ in range(n) if k is not None]

    async def side(self, text: str, a_verdict: str) -> bool | None:
        """True: ``text`` is on ``a``'s side; False: not; None: undecided at the cap."""
        self.steps += 1
        k = self.conf.steps_lead
        lead = 0
        seen = 0
        for old in self.known(text):
            lead += 1 if old == a_verdict else -1
            seen += 1
            if abs(lead) >= k:
                return lead > 0
        while seen < self.conf.step_draws:
            v = await self.draw(text)
            seen += 1
            if v is None:
                continue
            lead += 1 if v == a_verdict else -1
            if abs(lead) >= k:
                return lead > 0
        return None

    async def verdict(self, text: str) -> str | None:
        """The majority verdict of a few draws (for an end whose verdict is not given)."""
        got = self.known(text)
        while len(got) < 3:
            v = await self.draw(text)
            if v is not None:
                got.append(v)
        return max(set(got), key=got.count)


class _Numbers:
    """The numbers between two values of a number unit, written like them."""

    def __init__(self, before: str, after: str, resolution: float) -> None:
        self.before, self.after = before, after
        self.x, self.y = parse_number(before), parse_number(after)
        self.integer = "." not in before and "." not in after
        self.style = after if "," in after or "." in after else before
        self.commas = "," in before or "," in after
        self.resolution = resolution

    def text(self, v: float) -> str:
        if v == self.x:
            return self.before
        if v == self.y:
            return self.after
        return format_like(v, self.style, commas=self.commas)

    def texts_of(self, path: _Path, k: int, x: float, y: float) -> tuple[str, str]:
        lo = path.text(k) if x == self.x else path.text(k, (k, self.text(x)))
        return lo, path.text(k, (k, self.text(y)))

    def adjacent(self, lo: float, hi: float) -> bool:
        if self.integer and abs(hi - lo) <= 1:
            return True
        return abs(hi - lo) <= self.resolution * max(abs(lo), abs(hi), 1e-12)

    def mid(self, lo: float, hi: float) -> float | None:
        """A value between ``lo`` and ``hi`` (None: none at this precision)."""
        if lo > 0 and hi > 0 and max(lo, hi) / min(lo, hi) > 2:
            m = math.sqrt(lo * hi)  # geometric while far apart: a factor 100 in ~3 steps
        else:
            m = (lo + hi) / 2
        m = parse_number(format_like(float(round(m)) if self.integer else m, self.style,
                                     commas=self.commas))
        return None if m in (lo, hi) else m


def _phrase_steps(unit: EditUnit) -> list[str] | None:
    """A phrase unit's words applied one at a time (``[before, ..., after]``); None when the
    unit is a single word."""
    phrase = unit.before if unit.kind == "delete" else unit.after
    toks = tokens(phrase)
    if len([t for t in toks if t.is_word or t.is_number]) < 2:
        return None
    if unit.kind == "delete":  # the first k words deleted
        return [unit.before, *(unit.before[t.start:] for t in toks[1:]), unit.after]
    return [unit.before, *(unit.after[:t.end] for t in toks[:-1]), unit.after]


async def alocate(engine: Engine, pool: EvidencePool, a: str, b: str, *, layer: str = "verdict",
                  alpha: float = 0.05, a_verdict: str | None = None,
                  b_verdict: str | None = None, max_calls: int | None = None,
                  resolution: float = 0.01, config: BoundaryConfig | None = None,
                  progress: Callable[[int], None] | None = None) -> BoundaryLocation:
    """Locate the crossing between ``a`` and ``b`` through ``engine`` (see the module doc);
    draws already in ``pool`` count as evidence, and every new draw is added to it."""
    from ..decide import EvidenceLearner
    from ..engine import Probe
    from ..relations import Candidate, Relation, RelationDecider, RelationOutcome

    conf = config or BoundaryConfig(layer=layer, alpha=alpha, resolution=resolution)
    w = _Walker(engine, pool, layer, conf, max_calls, progress, calls0=engine.ledger.calls)
    units, gaps = _units(a, b)
    path = _Path(a, b, tuple(units), tuple(gaps))
    lo_text, hi_text = a, b
    va, vb = a_verdict, b_verdict

    def result(status: str, reason: str = "", edit: dict[str, Any] | None = None,
               decision: dict[str, Any] | None = None) -> BoundaryLocation:
        return BoundaryLocation(status, lo_text, hi_text, va, vb, edit or {}, w.steps,
                                w.spent(), reason, decision, conf.step_error)

    if not units:
        return result("no-crossing", "the two inputs are the same text")
    try:
        if va is None:
            va = await w.verdict(a)
        if vb is None:
            vb = await w.verdict(b)
        if va == vb:
            return result("no-crossing", f"both inputs get '{va}'")
        assert va is not None
        lo, hi = 0, len(units)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            s = await w.side(path.text(mid), va)
            if s is None:
                lo_text, hi_text = path.text(lo), path.text(hi)
                return result("undecided", f"the verdict is stochastic at {path.text(mid)!r}")
            lo, hi = (mid, hi) if s else (lo, mid)
        unit = units[lo]
        lo_text, hi_text = path.text(lo), path.text(hi)
        edit = {"kind": unit.kind, "before": unit.before, "after": unit.after,
                "context": unit.context, "next": unit.next_word, "position": unit.position}
        # inside the crossing unit: a number's values, or a phrase's words one at a time
        if unit.numeric:
            nums = _Numbers(unit.before, unit.after, conf.resolution)
            x, y = nums.x, nums.y
            while not nums.adjacent(x, y):
                m = nums.mid(x, y)
                if m is None:
                    break
                s = await w.side(path.text(lo, (lo, nums.text(m))), va)
                if s is None:
                    lo_text, hi_text = nums.texts_of(path, lo, x, y)
                    edit.update(before=nums.text(x), after=nums.text(y))
                    return result("undecided", f"the verdict is stochastic at {nums.text(m)}",
                                  edit)
                x, y = (m, y) if s else (x, m)
            lo_text, hi_text = nums.texts_of(path, lo, x, y)
            edit.update(before=nums.text(x), after=nums.text(y))
        elif (words := _phrase_steps(unit)) is not None:
            i, j = 0, len(words) - 1
            while j - i > 1:
                m = (i + j) // 2
                s = await w.side(path.text(lo, (lo, words[m])), va)
                if s is None:
                    break  # stochastic inside the phrase: the whole unit is the crossing
                i, j = (m, j) if s else (i, m)
            if j - i == 1:
                lo_text = path.text(lo, (lo, words[i])) if i else path.text(lo)
                hi_text = path.text(lo, (lo, words[j])) if j < len(words) - 1 else \
                    path.text(hi)
                edit["word"] = (words[j][len(words[i]):].strip() if unit.kind != "delete"
                                else words[i][:len(words[i]) - len(words[j])].strip())
        # the adjacent pair, decided like every boundary pair: beyond the agent's noise
        rel = Relation(f"boundary:{edit['kind']}", "invariant", lambda _t: hi_text,
                       layer=layer)
        sp, fp = Probe.make(lo_text), Probe.make(hi_text)
        out = RelationOutcome(fp=sp.fp, follow_up_fp=fp.fp)
        left = None if max_calls is None else max(2, max_calls - w.spent())
        # the alternative is sized for noise up to the steps' own assumption (a prior of
        # eta / 2 per call): a noisy pair is not passed for missing a near-certain violation
        decider = RelationDecider(engine, pool, alpha_candidate=conf.alpha, max_draws=left,
                                  learner=EvidenceLearner(prior_noise=conf.eta / 2),
                                  progress=progress)
        await decider.decide([Candidate(rel, sp, fp, out)])
        decision = dict(out.decision or {})
        if out.status == CandidateStatus.CONFIRMED:
            hv = pool.get(fp.fp).counts(layer).most_common(1)
            vb = hv[0][0] if hv and hv[0][0] is not None else vb
            return result("located", "", edit, decision)
        if out.status == CandidateStatus.INCOMPLETE:
            return result("incomplete", "the budget ended before the adjacent pair was "
                          "decided", edit, decision)
        return result("undecided", "the adjacent pair was not confirmed to differ beyond the "
                      "agent's noise", edit, decision)
    except _Budget:
        return result("incomplete", "the budget ended during the bisection")


def locate_boundary(agent: Any, a: str, b: str, *, config: BoundaryConfig | None = None,
                    budget: int = UNSET, alpha: float = UNSET, resolution: float = UNSET,
                    layer: str = UNSET, seed: int = UNSET, engine: EngineConfig | None = UNSET,
                    a_verdict: str | None = None, b_verdict: str | None = None,
                    **engine_kwargs: Any) -> BoundaryLocation:
    """Locate where the verdict changes between inputs ``a`` and ``b`` (see the module doc).

    Args:
        agent: adapter or callable.
        a, b: two inputs the agent answers differently (``a_verdict`` / ``b_verdict`` when
            known: otherwise three draws of each decide their verdicts).
        config: every setting at once (:class:`BoundaryConfig`); keywords given explicitly
            override it, ``budget`` and other engine fields included.

    Example:
        >>> from agentverity_props import from_callable
        >>> gate = from_callable(lambda p: "manager" if float(p.split("$")[1].replace(",", ""))
        ...                      > 2000 else "approve")
        >>> loc = locate_boundary(gate, "Trip to Oslo, cost $450", "Trip to Oslo, cost $9,000")
        >>> loc.describe()
        'cost 1,992 → 2,012 flips approve → manager'
    """
    from ..engine import Engine, EvidencePool, LoopThread, configured

    conf = configured(BoundaryConfig, config,
                      {"alpha": alpha, "resolution": resolution, "layer": layer, "seed": seed,
                       "engine": _default_engine() if engine is None else engine,
                       "budget": budget, **engine_kwargs}, where="locate_boundary")
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, str) or not value.strip():
            raise InvalidArgument(f"locate_boundary: {name} must be a non-empty str, got "
                                  f"{value!r}")
    loop = LoopThread()
    eng = Engine(agent, conf.engine)
    try:
        return loop.run(alocate(eng, EvidencePool(), a, b, layer=conf.layer, alpha=conf.alpha,
                                a_verdict=a_verdict, b_verdict=b_verdict,
                                resolution=conf.resolution, config=conf))
    finally:
        loop.run(eng.aclose())
        loop.close()

