"""Probe-set enlargement: when one verdict dominates, search for inputs that change it.

A blind probe set makes every relation pass vacuously. ``enlarge`` spends a call budget to
find (1) inputs that draw a *minority* verdict and (2) *boundary pairs* ``(x, x')``: two
inputs one edit apart on which the verdict differs beyond the agent's noise. It writes the
original inputs plus enough minority inputs that the modal verdict's share falls below the
blindness threshold (with a margin).

**Default: from your probes** (no pack, no model). A grammar learned from the probe set
(:class:`~agentverity_props.strategies.ProbeGrammar`: numbers, alternations, insertions,
clauses, lexicon classes) proposes edits of the probes; a Thompson-sampling search over
edit kinds and slots (:mod:`._probe_search`) draws each candidate once and confirms a
minority verdict by a sequential test of fresh draws (:mod:`._verify`, the alpha spent over
every candidate tested). Every added input keeps at least half its parent probe's words and
records its parent and edits. Then, for minority finds, the edit path from the parent is
bisected to the adjacent pair that crosses (:mod:`._boundary`), every step decided against
the agent's noise and the final pair confirmed as a relation candidate at ``alpha``: "cost
1,990 → 2,010 flips approve → manager". A ``generator`` (a callable ``text -> list of
variations``, e.g. an LLM you already have) adds its variations as one more arm.

**With a strategy** (a pack name or path, or any ``SearchStrategy[str]``): the earlier search
over the pack: Hypothesis targeting, Thompson sampling over the pack's regions and mutations
of finds, then mild edits (case, typo, a deleted word, ...) of each minority input that flip
it back, each decided by the same procedure as ``run`` and ``@agent_property``
(:mod:`agentverity_props.relations`) at ``alpha`` family-wise.

Every kept input's verdict was confirmed by its sequential test, at ``alpha / 2`` over every
candidate tested in the search; the starting and enlarged sets' shares, and whether the run is
done, come from the blindness test ``run`` uses (docs/statistics.md §5). Raw generated texts
are the product here, so the result keeps them (they come from the strategy or from edits of
the user's own inputs).
"""

from __future__ import annotations

import asyncio
import os
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal.inputs import clean_inputs
from .._internal.settings import setting
from .._internal.unset import UNSET
from ..decide import modal as modal_of
from ..engine import Configurable
from ..errors import BadInput, DrawStopped, InvalidArgument
from ..results import EnlargeDocument
from ._verify import BoundaryPair

if TYPE_CHECKING:
    from ..engine import Engine, EngineConfig, Probe

SCHEMA = EnlargeDocument.SCHEMA

#: fewer probes than this give the grammar no frames to compare (without a lexicon or a
#: generator, enlarge refuses with advice instead of adding noise)
MIN_PROBES = 3
#: at most this many boundaries are located (one per search arm), each at ``alpha / 3``
MAX_LOCATED = 3
#: the most calls one boundary location may spend: while none is located, and after (a
#: further boundary is worth less than the finds the calls would confirm)
LOCATE_CALLS = (120, 60)


#: the stop reason of an enlargement that reached its goal
DONE = "decided not blind at the target share"

#: the most single draws of uniformly picked inputs spent deciding the blindness of an
#: enlarged set of one size (its mixture sample, as ``run`` tops it up)
BLINDNESS_TOP_UP = 60

#: enlarge's call budget when none is given
DEFAULT_BUDGET = 600


def _default_engine() -> EngineConfig:
    from ..engine import EngineConfig
    return EngineConfig(budget=DEFAULT_BUDGET)


@dataclass(frozen=True, kw_only=True)
class EnlargeConfig(Configurable):
    """Everything :func:`enlarge` can be told (apart from the inputs and the strategy).

    ``threshold`` is the blindness threshold, the target share ``threshold - margin``;
    ``alpha`` the family-wise error rate of the boundary pairs; ``seed`` seeds the search;
    ``layer`` what a verdict is. How the agent is called is the nested ``engine`` (default
    ``EngineConfig(budget=600)``): its ``budget`` is the calls to spend at most (required),
    its ``max_workers`` the width of each batch of the search.

    >>> from agentverity_props.engine import EngineConfig
    >>> EnlargeConfig(engine=EngineConfig(budget=60, fail_fast=1)).engine.fail_fast
    1
    >>> EnlargeConfig(engine=EngineConfig())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentverity_props.errors.InvalidArgument: EnlargeConfig: enlarge needs a call budget; ...
    """

    threshold: float = 0.9
    margin: float = 0.2
    seed: int = 0
    layer: str = "verdict"
    alpha: float = 0.05
    #: the relative resolution a numeric crossing is bisected to (0.01: within 1%)
    resolution: float = 0.01
    #: use the shipped lexicons (cities, names, tiers, ...) in the probe grammar
    default_lexicons: bool = True
    #: ``guided`` (default); the benchmark's baselines: ``recombine`` (parents and edits that
    #: recombine the probes' own values and clauses, drawn uniformly) and ``uniform`` (every
    #: edit of the grammar, drawn uniformly)
    search: str = "guided"
    engine: EngineConfig = field(default_factory=_default_engine)

    def __post_init__(self) -> None:
        from ..engine import EngineConfig
        from ..observation import LAYERS

        if not isinstance(self.engine, EngineConfig):
            raise InvalidArgument(f"EnlargeConfig: engine must be an EngineConfig, got "
                                  f"{type(self.engine).__name__}; pass engine=EngineConfig(...)")
        if self.engine.budget is None:
            raise InvalidArgument("EnlargeConfig: enlarge needs a call budget; pass "
                                  f"engine=EngineConfig(budget={DEFAULT_BUDGET}) (or budget=)")
        if not (0.0 < self.alpha < 0.5):
            raise InvalidArgument(f"enlarge: alpha={self.alpha!r} must be in (0, 0.5)")
        if not (0.5 < self.threshold < 1.0) or not (0.0 < self.margin < self.threshold - 0.5):
            raise InvalidArgument("enlarge: need 0.5 < threshold < 1 and "
                                  "0 < margin < threshold-0.5; e.g. threshold=0.9, margin=0.2")
        if self.layer not in LAYERS:
            raise InvalidArgument(f"enlarge: layer={self.layer!r}; use one of "
                                  f"{', '.join(LAYERS)}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool):
            raise InvalidArgument(f"enlarge: seed must be an int, got {self.seed!r}")
        if not (0.0 < self.resolution < 0.5):
            raise InvalidArgument(f"enlarge: resolution={self.resolution!r} must be in (0, 0.5),"
                                  " e.g. 0.01 to bisect a numeric crossing to within 1%")
        if self.search not in ("guided", "recombine", "uniform"):
            raise InvalidArgument(f"enlarge: search={self.search!r}; use 'guided', "
                                  "'recombine' or 'uniform'")


@dataclass
class EnlargeResult:
    original: list[str]
    added: list[str]
    verdicts: dict[str, str]
    threshold: float
    target_share: float
    boundary_pairs: list[BoundaryPair] = field(default_factory=list)
    calls: int = 0
    phase_calls: dict[str, int] = field(default_factory=dict)
    budget: int = 0
    modal_verdict: str | None = None
    stop_reason: str = ""
    ledger: dict[str, Any] = field(default_factory=dict)
    #: why no usable verdict was had, when none was (a failing agent, a wrong verdict key)
    cause: str | None = None
    #: what generated the added inputs: "probes" (the default), "pack:NAME", "strategy"
    source: str = "probes"
    #: added input -> its parent probe and the edits from it (from-probes search)
    origins: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: every boundary location tried (located or not), as ``BoundaryLocation.to_dict()``
    boundaries: list[dict[str, Any]] = field(default_factory=list)
    #: what the probe grammar learned (slots, classes), when it was used
    grammar: dict[str, Any] | None = None
    #: calls spent when the first minority input was confirmed (None: none was)
    calls_to_first_minority: int | None = None
    #: what to try when the search added too little
    advice: str | None = None
    #: added input -> its confirmation test's evidence (:meth:`._verify.FindTest.evidence`)
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the blindness test of the starting and of the enlarged set (as ``run`` reports it)
    blindness_before: dict[str, Any] | None = None
    blindness_after: dict[str, Any] | None = None
    #: the enlarged set was decided not blind with its share at or under the target
    reached: bool = False
    #: candidates whose first draw was a minority verdict and were tested
    tested: int = 0
    #: the alpha of each candidate's test, of the boundary pairs, of each blindness test
    alphas: dict[str, float] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """False when an agent call failed or no input got a usable verdict: the shares are
        then computed without them (or not at all)."""
        return (not self.ledger.get("failures") and not self.ledger.get("interrupted")
                and not self.ledger.get("stop_cause") and bool(self.verdicts))

    @property
    def inputs(self) -> list[str]:
        return self.original + self.added

    def share(self, texts: Sequence[str]) -> float:
        c = Counter(self.verdicts[t] for t in texts if t in self.verdicts)
        return max(c.values()) / sum(c.values()) if c else float("nan")

    @property
    def skew_before(self) -> float:
        """The starting set's modal share, as the blindness test estimates it (one draw per
        input before it is concluded)."""
        b = (self.blindness_before or {}).get("share")
        return float(b) if b is not None else self.share(self.original)

    @property
    def skew_after(self) -> float:
        """The enlarged set's modal share, as the blindness test estimates it."""
        b = (self.blindness_after or {}).get("share")
        return float(b) if b is not None else self.share(self.inputs)

    @property
    def success(self) -> bool:
        """The enlarged set was decided not blind (by the blindness test ``run`` uses) with
        its modal share at or under the target; never when the budget ran out first."""
        return self.reached

    @property
    def status(self) -> str:
        """The enlarged set's blindness: ``ok`` (decided not blind), ``blind`` or
        ``undecided``."""
        return str((self.blindness_after or {}).get("status") or "undecided")

    def to_dict(self) -> dict[str, Any]:
        from ..engine import ledger_part
        dist_before = Counter(self.verdicts[t] for t in self.original if t in self.verdicts)
        dist_after = Counter(self.verdicts[t] for t in self.inputs if t in self.verdicts)
        return {
            "schema": SCHEMA, "success": self.success, "complete": self.complete,
            "stop_reason": self.stop_reason,
            "threshold": self.threshold, "target_share": self.target_share,
            "modal_verdict": self.modal_verdict,
            "skew_before": self.skew_before, "skew_after": self.skew_after,
            "distribution_before": dict(dist_before), "distribution_after": dict(dist_after),
            "original": len(self.original), "added": list(self.added),
            "boundary_pairs": [p.to_dict() for p in self.boundary_pairs],
            "calls": self.calls, "phase_calls": dict(self.phase_calls), "budget": self.budget,
            "ledger": ledger_part(self.ledger), "tokens": self.ledger.get("tokens"),
            "cause": self.cause,
            "source": self.source,
            "origins": [{"text": t, **self.origins[t]} if "text" not in self.origins[t]
                        else dict(self.origins[t]) for t in self.added if t in self.origins],
            "boundaries": [dict(b) for b in self.boundaries],
            "grammar": self.grammar,
            "calls_to_first_minority": self.calls_to_first_minority,
            "advice": self.advice,
            "status": self.status,
            "blindness_before": self.blindness_before,
            "blindness_after": self.blindness_after,
            "evidence": [{"text": t, **self.evidence[t]} for t in self.added
                         if t in self.evidence],
            "tested": self.tested, "alphas": dict(self.alphas),
            "privacy": "added inputs, their parent probes and boundary pairs are kept "
                       "verbatim: they are the product (edits of your inputs, or drawn from "
                       "the strategy)",
        }


def enlarge(agent: Any, inputs: Sequence[str], *, strategy: Any = None,
            config: EnlargeConfig | None = None, budget: int = UNSET,
            threshold: float = UNSET, margin: float = UNSET, seed: int = UNSET,
            max_workers: int = UNSET, layer: str = UNSET, alpha: float = UNSET,
            engine: EngineConfig | None = UNSET,
            lexicon: Mapping[str, Sequence[str]] | None = None,
            generator: Callable[[str], Sequence[str]] | None = None,
            progress: Callable[[str, int], None] | None = None,
            **engine_kwargs: Any) -> EnlargeResult:
    """Enlarge a blind probe set (see module doc).

    Args:
        agent: adapter or callable.
        inputs: the current probe set.
        strategy: None (default: learn from ``inputs`` themselves, see the module doc), a
            pack name/path or a ``SearchStrategy[str]``.
        config: every setting at once (:class:`EnlargeConfig`; default ``EnlargeConfig()``).
        budget: agent calls to spend at most (default 600).
        threshold: the blindness threshold; the target share is ``threshold - margin``.
        margin: how far below the threshold to aim (0.2 by default: the anytime interval
            of a later ``run`` or ``snapshot`` is about 0.1 wide either side at a hundred
            sampled verdicts, and its upper bound must clear the threshold too).
        seed: seeds the search (the engine's own ``seed`` seeds the backoff jitter).
        alpha: family-wise error rate of the boundary pairs reported (each is a relation
            candidate decided beyond the agent's noise).
        engine: how to call the agent (timeouts, retries, store, ...), replacing
            ``config.engine``; ``budget`` and ``max_workers`` are applied over it (600 and 4
            when not given, as before ``config=`` existed). The baseline draws and each
            batch of the adaptive search run ``max_workers`` calls at a time.
        lexicon: your own value classes for the probe grammar (``{"city": [...]}``): where
            a probe holds one value of a class, the others are tried in its place.
        generator: a callable ``text -> variations of it``, or an agent adapter (e.g. an LLM
            you already have), asked for rewrites by :func:`variations_from`; its variations
            that keep half the probe's words are one more arm of the search. Its calls are
            not counted in ``budget`` (they are not calls of the agent under test).
        progress: called as ``progress(phase, calls)`` as draws complete (the CLI's bar).
        **engine_kwargs: any other :class:`~agentverity_props.engine.EngineConfig` field
            (``retries=0``, ``fail_fast=1``, ...), applied over the engine.

    A keyword given explicitly overrides the same setting of ``config``; one left out
    takes the config's value.

    Example:
        >>> from agentverity_props import from_callable
        >>> gate = from_callable(lambda p: "block" if "kill" in p.lower() else "allow")
        >>> probes = ["refund order 1 please", "refund order 2 now", "refund order 3 today"]
        >>> gate = from_callable(lambda p: "review" if "urgent" in p or "now" in p else "ok")
        >>> r = enlarge(gate, probes, budget=120, lexicon={"when": ["today", "urgent"]})
        >>> r.skew_before, r.skew_after < 0.9
        (0.6666666666666666, True)
    """
    from ..engine import Engine, EvidencePool, LoopThread

    conf = _settings(config, engine, budget=budget, threshold=threshold, margin=margin,
                     seed=seed, layer=layer, alpha=alpha, max_workers=max_workers,
                     engine_kwargs=engine_kwargs)
    cfg = conf.engine
    assert cfg.budget is not None  # EnlargeConfig requires one
    budget, seed, layer = cfg.budget, conf.seed, conf.layer
    threshold, margin, alpha = conf.threshold, conf.margin, conf.alpha
    texts = clean_inputs(inputs)
    if budget < 2 * len(texts) + 4:
        raise InvalidArgument(f"enlarge: {setting('budget', budget)} is too small for "
                              f"{len(texts)} inputs; give at least {2 * len(texts) + 4}")
    from_probes = strategy is None
    grammar = None
    if from_probes:
        grammar, generator = _probe_grammar(texts, lexicon, generator, conf)
        arms: dict[str, Any] = {}
    else:
        from ._pack_search import arms as pack_arms
        arms = pack_arms(strategy)
    loop = LoopThread()
    eng = Engine(agent, cfg)
    rng = random.Random(seed)
    res = EnlargeResult(original=texts, added=[], verdicts={}, threshold=threshold,
                        target_share=threshold - margin, budget=budget,
                        source="probes" if from_probes else
                        f"pack:{strategy}" if isinstance(strategy, (str, os.PathLike))
                        else "strategy")
    calls = _Calls(eng, loop, EvidencePool(), res, layer, progress, alpha=alpha,
                   width=cfg.max_workers)
    try:
        if not _baseline(calls, texts):
            return res
        modal = modal_of(res.verdicts.values())
        assert modal is not None  # the baseline drew every probe
        res.modal_verdict = modal
        if from_probes:
            assert grammar is not None  # built (and checked) before any call
            grammar.set_verdicts([res.verdicts.get(t) for t in texts])
            res.grammar = grammar.summary()
            _search_probes(res, grammar, modal=modal, rng=rng, calls=calls, conf=conf,
                           generator=generator)
            calls.conclude()
            return res
        minority_found: list[str] = []
        from ._pack_search import adaptive_phase, boundary_pairs_phase, targeted_phase
        targeted_phase(calls, arms, modal, minority_found, seed)
        muts = adaptive_phase(calls, arms, modal, minority_found, rng=rng, seed=seed,
                               width=cfg.max_workers)
        boundary_pairs_phase(calls, minority_found, muts, calls.alphas["boundaries"])
        res.stop_reason = (DONE if calls.done() else
                           "budget exhausted" if not eng.can_afford(2) else "search exhausted")
        calls.conclude()
        return res
    finally:
        res.calls = eng.ledger.calls
        res.ledger = eng.ledger.to_dict()
        loop.run(eng.aclose())
        loop.close()


def _settings(config: EnlargeConfig | None, engine: EngineConfig | None, *, budget: int,
              threshold: float, margin: float, seed: int, layer: str, alpha: float,
              max_workers: int, engine_kwargs: Mapping[str, Any]) -> EnlargeConfig:
    """:func:`enlarge`'s keywords over ``config``: one :class:`EnlargeConfig`."""
    from ..engine import configured

    if engine is not UNSET and engine is not None:
        # enlarge's engine= keyword never brought the budget and the width (its rule
        # before config= existed): they are enlarge's own keywords, with their defaults
        budget = DEFAULT_BUDGET if budget is UNSET else budget
        max_workers = 4 if max_workers is UNSET else max_workers
    return configured(EnlargeConfig, config,
                      {"threshold": threshold, "margin": margin, "seed": seed,
                       "layer": layer, "alpha": alpha,
                       "engine": _default_engine() if engine is None else engine,
                       "budget": budget, "max_workers": max_workers, **engine_kwargs},
                      where="enlarge")


def _probe_grammar(texts: list[str], lexicon: Mapping[str, Sequence[str]] | None,
                   generator: Any, conf: EnlargeConfig) -> tuple[Any, Any]:
    """The grammar learnt from ``texts`` (and the generator as a callable) for a search from
    the probes themselves; refuses, before any call, what it cannot learn from."""
    from ..adapters import Adapter
    from ..strategies import ProbeGrammar, check_lexicons

    lex = check_lexicons(lexicon, where="enlarge")
    if isinstance(generator, Adapter):  # an agent asked for rewrites of each probe
        from ..strategies import variations_from
        generator = variations_from(generator)
    if generator is not None and not callable(generator):
        raise InvalidArgument("enlarge: generator must be a callable text -> list of "
                              f"variations or an agent adapter, got "
                              f"{type(generator).__name__}")
    grammar = ProbeGrammar(texts, lexicon=lex, default_lexicons=conf.default_lexicons)
    if generator is None and (len(texts) < MIN_PROBES or not grammar.learnable):
        raise BadInput(f"enlarge: {len(texts)} input(s) with nothing that varies between "
                       "them are too few to learn a probe grammar from"
                       if len(texts) >= MIN_PROBES else
                       f"enlarge: {len(texts)} input(s) are too few to learn a probe "
                       "grammar from",
                       f"give at least {MIN_PROBES} inputs of your real traffic (more "
                       "varied ones teach more), a lexicon of the values that vary, a "
                       "generator, or a strategy pack")
    return grammar, generator


class _Calls:
    """One :func:`enlarge` run's agent calls: the engine on its loop, the evidence pool, the
    result being built and the progress callback, shared by the run's steps."""

    def __init__(self, eng: Engine, loop: Any, pool: Any, res: EnlargeResult, layer: str,
                 progress: Callable[[str, int], None] | None, *, alpha: float,
                 width: int) -> None:
        self.eng, self.loop, self.pool, self.res = eng, loop, pool, res
        self.layer = layer
        self.progress = progress
        self.phase = ["baseline"]  # the phase the progress callback is told (a cell)
        from ..decide import enlarge_alpha_split
        from ._verify import Verifier
        self.alphas = enlarge_alpha_split(alpha)
        res.alphas = dict(self.alphas)
        self.verifier = Verifier(self.verdicts, alpha=self.alphas["finds"], width=width,
                                 can_afford=eng.can_afford)
        self._blind: tuple[int, Any] | None = None
        #: single draws of uniformly picked inputs of the enlarged set of each size (the
        #: mixture sample of the blindness test, topped up as ``run`` tops it up)
        self._mixture: dict[int, list[str]] = {}
        self._rng = random.Random(f"{res.budget}:{alpha}:{width}")

    def tick(self, n: int) -> None:
        """``n`` more calls done, for the progress callback."""
        if self.progress is not None:
            self.progress(self.phase[0], n)

    async def _one(self, probe: Probe, index: int) -> str | None:
        try:
            obs = await self.eng.draw(probe, index)
        except DrawStopped:
            return None
        self.tick(1)
        self.pool.add(probe.fp, index, obs)
        return obs.key(self.layer)

    def verdicts(self, texts: Sequence[str]) -> list[str | None]:
        """One draw of each text, ``max_workers`` at a time (indices allocated in order)."""
        from ..engine import Probe

        eng = self.eng
        n = min(len(texts), max(0, eng.remaining if eng.remaining is not None else len(texts)))
        plan = [(Probe.make(t), 0) for t in texts[:n]]
        plan = [(pr, eng.allocate(pr, 1)[0]) for pr, _ in plan]

        async def all_of() -> list[str | None]:
            return list(await asyncio.gather(*(self._one(pr, i) for pr, i in plan)))

        got = self.loop.run(all_of()) if plan else []
        return got + [None] * (len(texts) - n)

    def verdict(self, text: str) -> str | None:
        """One draw of ``text``."""
        return self.verdicts([text])[0]

    def confirm(self, minority: Sequence[tuple[str, str]]) -> dict[str, Any]:
        """The candidates among ``minority`` (``(text, first verdict)``) whose verdict the
        sequential test confirms (:mod:`._verify`), each with its test."""
        got = self.verifier.confirm(minority)
        self.res.tested = len(self.verifier.tests)
        return got

    def add(self, text: str, test: Any) -> None:
        """Keep a confirmed find: its verdict and its evidence."""
        self.res.verdicts[text] = test.verdict
        self.res.added.append(text)
        self.res.evidence[text] = test.evidence()

    def draws(self, text: str) -> list[str]:
        """Every usable draw of ``text`` so far."""
        from ..engine import Probe
        return [k for k in self.pool.get(Probe.make(text).fp).keys(self.layer) if k is not None]

    def blindness(self, *, added: bool = True) -> Any:
        """The blindness test ``run`` uses, on the starting set or (``added``) the enlarged
        one (:func:`._verify.set_blindness`)."""
        from ._verify import set_blindness
        res = self.res
        return set_blindness(res.original, res.added if added else [], draws=self.draws,
                             first=res.verdicts.get, fresh=self.verifier.fresh,
                             threshold=res.threshold, alpha=self.alphas["blindness"],
                             extra=self._mixture.get(len(res.added), []) if added else [])

    def decide(self) -> Any:
        """The enlarged set's blindness, topped up (as ``run`` does) by single draws of
        uniformly picked inputs while it is undecided, up to :data:`BLINDNESS_TOP_UP`."""
        res, eng = self.res, self.eng
        texts = res.inputs
        keys = self._mixture.setdefault(len(res.added), [])
        while True:
            b = self.blindness()
            width = max(1, self.verifier.width)
            if b.status != "undecided" or len(keys) >= BLINDNESS_TOP_UP or eng.stopping \
                    or not eng.can_afford(width + 2):
                return b
            picks = [self._rng.choice(texts) for _ in range(width)]
            keys.extend(k for k in self.verdicts(picks) if k is not None)

    def done(self) -> bool:
        """True once the enlarged set is decided not blind with its modal share at or under
        the target (decided once per size of the set)."""
        res = self.res
        if not res.verdicts or res.share(res.inputs) > res.target_share:
            return False
        if self._blind is None or self._blind[0] != len(res.added):
            phase = self.phase[0]
            self.phase[0] = "blindness"
            self._blind = (len(res.added), self.decide())
            self.phase[0] = phase
        b = self._blind[1]
        return bool(b.status == "ok" and b.share is not None and b.share <= res.target_share)

    def conclude(self) -> None:
        """The starting and final sets' blindness, and whether the target was reached."""
        res = self.res
        if not res.verdicts:
            return
        from ._verify import blindness_dict
        res.blindness_before = blindness_dict(self.blindness(added=False), res.threshold)
        after = self.blindness()
        res.blindness_after = blindness_dict(after, res.threshold)
        res.reached = res.stop_reason == DONE and after.status == "ok" and \
            res.skew_after <= res.target_share
        res.tested = len(self.verifier.tests)


def _baseline(calls: _Calls, texts: list[str]) -> bool:
    """Step 0: the current verdict of every input (one draw each, concurrently). False,
    with the stop reason and its likely cause recorded, when no input gave a verdict."""
    eng, res = calls.eng, calls.res
    eng.ledger.phase = "baseline"  # tokens per phase, as phase_calls counts the calls
    for t, v in zip(texts, calls.verdicts(texts), strict=True):
        if v is not None:
            res.verdicts[t] = v
    res.phase_calls["baseline"] = eng.ledger.calls
    if res.verdicts:
        return True
    res.stop_reason = "no usable verdict for the original inputs"
    reasons = [o.no_decision.reason if o.no_decision is not None else
               f"{o.error.kind}: {o.error.message}" if o.error is not None else "?"
               for ev in calls.pool for o in ev.draws.values()]
    res.cause = eng.stop_cause or (max(set(reasons), key=reasons.count) if reasons else None)
    return False


def _search_probes(res: EnlargeResult, grammar: Any, *, modal: str, rng: random.Random,
                   calls: _Calls, conf: EnlargeConfig, generator: Any) -> None:
    """The from-probes search, then boundary location (see the module doc)."""
    from ._probe_search import ProbeSearch

    eng, pool, loop, verdicts = calls.eng, calls.pool, calls.loop, calls.verdicts
    done, phase, tick = calls.done, calls.phase, calls.tick

    parents = [t for t in res.original if res.verdicts.get(t) == modal] or list(res.original)
    search = ProbeSearch(grammar, parents, modal, rng, draw=verdicts,
                         can_afford=eng.can_afford, calls=lambda: eng.ledger.calls,
                         uniform=conf.search != "guided",
                         recombine_only=conf.search == "recombine", generator=generator,
                         confirm=calls.confirm)
    search.tried.update(res.verdicts)
    width = conf.engine.max_workers
    budget = res.budget
    # keep a reserve for locating boundaries once minority inputs are found
    reserve = min(150, budget // 3)

    def absorb() -> None:
        for f in search.finds[len(absorbed):]:
            absorbed.append(f)
            if f.text in res.verdicts or done():
                continue
            res.verdicts[f.text] = f.verdict
            res.added.append(f.text)
            res.origins[f.text] = f.provenance()
            if f.evidence is not None:
                res.evidence[f.text] = f.evidence
            if res.calls_to_first_minority is None:
                res.calls_to_first_minority = f.calls

    absorbed: list[Any] = []
    calls0 = eng.ledger.calls
    eng.ledger.phase = "probe_search"  # tokens per phase, as phase_calls counts the calls
    phase[0] = "search from your probes"

    def search_until(limit: int) -> bool:
        """Search while the target is not met and more than ``limit`` calls remain."""
        stale = True
        while not done() and not eng.stopping and (eng.remaining or 0) > limit \
                and eng.can_afford(2):
            if not search.step(width):
                return False
            stale = False
            absorb()
        return not stale

    more = search_until(reserve)
    res.phase_calls["probe_search"] = eng.ledger.calls - calls0

    # boundary location: the parent and a minority find, bisected to the adjacent pair
    calls1 = eng.ledger.calls
    eng.ledger.phase = "boundary_location"
    phase[0] = "boundary location"
    _locate_boundaries(res, search.finds, eng=eng, pool=pool, loop=loop, conf=conf, tick=tick,
                       alpha=calls.alphas["boundaries"])
    res.phase_calls["boundary_location"] = eng.ledger.calls - calls1

    # what is left of the budget goes back to the search
    calls2 = eng.ledger.calls
    eng.ledger.phase = "probe_search"
    if not done():
        phase[0] = "search from your probes"
        more = search_until(0) or more
    res.phase_calls["probe_search"] += eng.ledger.calls - calls2
    res.stop_reason = (DONE if done() else
                       "budget exhausted" if not eng.can_afford(2) else
                       "interrupted" if eng.stopping else "search exhausted")
    if not done() and not eng.stopping:
        res.advice = _probe_advice(res, search)


def _locate_boundaries(res: EnlargeResult, search_finds: Sequence[Any], *, eng: Engine,
                       pool: Any, loop: Any, conf: EnlargeConfig,
                       tick: Callable[[int], None], alpha: float) -> None:
    """Boundary location: for up to three finds, one per search arm (fewest edits first),
    the parent and the find bisected to the adjacent pair whose verdicts differ beyond the
    agent's noise (alpha shared by three); each attempt is recorded in ``res.boundaries``."""
    from ..decide import bonferroni
    from ._boundary import alocate

    tried_arms: set[str] = set()
    finds = [f for f in search_finds if f.text in res.verdicts]
    order = sorted(finds, key=lambda f: (f.edits[0].arm in tried_arms, len(f.edits)))
    located = 0
    for f in order:
        if located >= MAX_LOCATED or eng.stopping or not eng.can_afford(8):
            break
        arm = f.edits[0].arm if f.edits else "generator"
        if arm in tried_arms:
            continue
        tried_arms.add(arm)
        left = eng.remaining or 0
        share = left if located == 0 and not res.boundaries else left // 2
        loc = loop.run(alocate(eng, pool, f.parent, f.text, layer=conf.layer,
                               alpha=bonferroni(alpha, MAX_LOCATED),
                               a_verdict=res.verdicts.get(f.parent),
                               b_verdict=f.verdict,
                               max_calls=min(share, LOCATE_CALLS[located > 0]),
                               resolution=conf.resolution, progress=tick))
        d = loc.to_dict()
        d["parent"] = f.parent
        d["find"] = f.text
        res.boundaries.append(d)
        if loc.status == "located":
            located += 1
            res.boundary_pairs.append(BoundaryPair(
                loc.low, loc.high, {"name": loc.edit.get("kind", "edit"), **loc.edit,
                                    "describe": loc.describe()},
                loc.low_verdict, loc.high_verdict, dict(loc.decision or {})))


def _probe_advice(res: EnlargeResult, search: Any) -> str:
    """Advice when the search from the probes stopped before it was done, in terms of what
    it tried: the edit kinds, what changed the verdict, what was tested and not confirmed."""
    tried: Counter[str] = Counter()
    for arm, n in search.tries.items():
        tried[arm.split(":")[0]] += n
    kinds = ", ".join(f"{k} x{n}" for k, n in tried.most_common())
    found: Counter[str] = Counter(e.kind for f in search.finds if f.text in res.evidence
                                  for e in f.edits[:1])
    unconfirmed = res.tested - len(res.added)
    head = (f"{sum(tried.values())} edit(s) of your probes were tried ({kinds or 'none'}); "
            f"{res.tested} drew a minority verdict once and were tested, "
            f"{len(res.added)} confirmed")
    if res.added:
        by = ", ".join(f"{k} x{n}" for k, n in found.most_common())
        stop = ("the budget ran out" if res.stop_reason == "budget exhausted"
                else "the edits ran out")
        return (f"{head} (by {by}): the verdict does turn on words your probes hold, but "
                f"{stop} before the enlarged set was decided not blind at the target share "
                f"{res.target_share:.0%}. Give a larger budget ({setting('budget', 800)}) "
                "or a few probes of the minority verdict")
    if unconfirmed:
        more = (f"give a larger budget ({setting('budget', 800)}), or probes"
                if res.stop_reason == "budget exhausted" else "give probes")
        return (f"{head}: the minority verdicts seen did not repeat (the agent's noise, or "
                f"inputs near a boundary); {more} that hold the crossing words, or a lexicon "
                f"of them ({setting('lexicon')})")
    return (f"{head}: no edit of the words your probes hold changed the verdict; the "
            "boundary may lie in words your probes never use (a keyword list, restricted "
            f"names). Add them through a lexicon ({setting('lexicon')}), a probe or two "
            f"that holds them, a generator ({setting('generator', '')}), or try a strategy "
            f"pack ({setting('strategy', 'auto')})")
