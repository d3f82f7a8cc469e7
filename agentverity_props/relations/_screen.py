"""Every exercised input's own evidence: the per-input screen that follows the pooled test.

The pooled effect bounds a mean over the probe set; one input in three hundred whose
follow-up flips half the time moves that mean by less than 0.002, far below any tolerance.
So after the pooled rounds every (relation, input) pair of a relation that is not already
VIOLATED gets enough draws of its own that a violation of a stated *size* on it is *flagged*
with probability at least ``1 - beta_screen``; a flagged input is then tested on its own
(:func:`~agentverity_props.relations._pooled.localise`, family-wise ``alpha``).

**The size.** A follow-up that violates the relation (against the source's modal verdict) on
a share ``r + size (1 - r)`` of its draws, where ``r`` is the input's own noise (its source
re-draws off the modal verdict): ``size = 0.5`` is "flips the verdict half the time beyond
the agent's noise". For a two-sided (invariant) relation the reverse too: the source draws
off the follow-up's modal verdict at ``r_f + size (1 - r_f)`` (a follow-up made more decided).

**The flag.** ``c`` of ``k`` follow-up draws violate; the input is flagged when
``P(Binomial(k, r) >= c) <= SCREEN_FLAG`` (reverse: the same with the source draws against
the follow-up's noise). ``r`` is estimated from the input's draws, shrunk toward the probe
set's noise (the meter's pair disagreement) with the weight of ``NOISE_PRIOR_WEIGHT`` draws.
A flag costs no ``alpha``: it only chooses which inputs are tested; a false flag costs the
calls of a local test that stops futile.

**The spending.** An input gets follow-up (and source) draws until it is flagged or it has
the smallest ``k`` at which the flag has power ``1 - beta_screen`` against the size at its
estimated noise (:func:`follow_ups_needed`: 5 on a quiet input at ``beta = 0.05``, 19 at 15%
noise); draws the pooled rounds already made count. An input whose noise is so high that
``SCREEN_MAX_DRAWS`` draws are not enough, or whose draws the budget did not allow, is
*not screened*, and the relation's result names it with the reason. ``beta_screen`` is
``SCREEN_BETA_SHARE`` of the run's ``beta``; the rest is left for the local test that
follows, whose power the simulation tests check (tests/stats/test_relation_single_input.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from .._internal.outcome import CandidateStatus

if TYPE_CHECKING:
    from ..engine import Engine, EvidencePool, Probe
    from ._pooled import EffectJob
    from ._procedure import Candidate

#: The stated size: a follow-up violating on ``r + SIZE (1 - r)`` of its draws.
SCREEN_SIZE = 0.5
#: A flag's level under "the relation holds on this input" (a cost, never an error).
SCREEN_FLAG = 0.02
#: The share of ``beta`` the screen may miss the stated size with (the rest: the local test).
SCREEN_BETA_SHARE = 2 / 3
#: Most follow-up (or source) draws an input is given by the screen.
SCREEN_MAX_DRAWS = 24
#: Source draws every input of a two-sided relation has at least: the reverse flag sees a
#: source whose minority verdict the transform removes (a 65/35 input: 0.65^8 = 3% unseen).
SCREEN_MIN_SOURCES = 8
#: Weight, in draws, of the probe set's noise in an input's noise estimate.
NOISE_PRIOR_WEIGHT = 4.0


def tail(k: int, r: float, c: int) -> float:
    """``P(Binomial(k, r) >= c)``.

    >>> tail(5, 0.0, 1), round(tail(5, 0.5, 1), 5)
    (0.0, 0.96875)
    """
    if c <= 0:
        return 1.0
    if r <= 0.0:
        return 0.0
    return float(sum(math.comb(k, i) * r ** i * (1 - r) ** (k - i) for i in range(c, k + 1)))


def flag_count(k: int, r: float) -> int:
    """The fewest violating draws of ``k`` that flag an input of noise ``r``."""
    c = 1
    while c <= k and tail(k, r, c) > SCREEN_FLAG:
        c += 1
    return c


@lru_cache(maxsize=4096)
def _needed(r_milli: int, beta_milli: int, size_milli: int) -> int | None:
    r, beta, size = r_milli / 1000, beta_milli / 1e6, size_milli / 1000
    q1 = r + size * (1.0 - r)
    for k in range(1, SCREEN_MAX_DRAWS + 1):
        c = flag_count(k, r)
        if c <= k and tail(k, q1, c) >= 1.0 - beta:
            return k
    return None


def follow_ups_needed(r: float, beta: float, size: float = SCREEN_SIZE) -> int | None:
    """The fewest draws at which a violation of ``size`` on an input of noise ``r`` is
    flagged with probability ``>= 1 - beta`` (None: more than ``SCREEN_MAX_DRAWS``).

    >>> follow_ups_needed(0.0, 0.05 * SCREEN_BETA_SHARE), follow_ups_needed(0.15, 0.0333)
    (5, 19)
    """
    r = min(max(r, 0.0), 0.999)
    return _needed(math.ceil(r * 1000), max(1, int(beta * 1e6)), round(size * 1000))


def noise_prior(pair_disagreement: float | None) -> float:
    """The per-draw off-modal rate ``r`` of a binary verdict with this pair disagreement
    (``2 r (1 - r)``); 0 when unknown (an input's own draws then decide)."""
    if not pair_disagreement:
        return 0.0
    d = min(pair_disagreement, 0.5)
    return (1.0 - math.sqrt(1.0 - 2.0 * d)) / 2.0


def _modal(keys: Sequence[str]) -> str:
    counts = Counter(keys)
    best = max(counts.values())
    return next(k for k in keys if counts[k] == best)


def _usable(pool: EvidencePool, fp: str, layer: str) -> list[str]:
    return [k for k in pool.get(fp).keys(layer) if k is not None]


def judge(c: Candidate, two: bool, pool: EvidencePool, *, beta: float, prior: float
          ) -> tuple[str, int, int]:
    """One input's screen so far: ``("flagged", 0, 0)``, ``("screened", 0, 0)``,
    ``("noise", 0, 0)`` (the size cannot be reached within the cap) or ``("more", sources,
    follow_ups)`` with the draws it still needs."""
    rel, layer = c.relation, c.relation.layer
    src, fus = _usable(pool, c.source.fp, layer), _usable(pool, c.follow_up.fp, layer)
    if not src or not fus:
        return "more", int(not src), int(not fus)
    w = NOISE_PRIOR_WEIGHT
    ref = _modal(src)
    r_s = (sum(rel.baseline_violates(ref, s) for s in src) + w * prior) / (len(src) + w)
    if tail(len(fus), r_s, sum(not rel.holds(ref, f) for f in fus)) <= SCREEN_FLAG:
        return "flagged", 0, 0
    # a noise too high for the size within the cap is only known once the cap is reached
    # (a noise estimate from two draws says little): until then, more draws
    cap = SCREEN_MAX_DRAWS
    k_need = follow_ups_needed(r_s, beta) or cap + 1
    s_need = 1
    if two:
        fref = _modal(fus)
        r_f = (sum(f != fref for f in fus) + w * prior) / (len(fus) + w)
        if tail(len(src), r_f, sum(s != fref for s in src)) <= SCREEN_FLAG:
            return "flagged", 0, 0
        s_need = max(SCREEN_MIN_SOURCES, follow_ups_needed(r_f, beta) or cap + 1)
    more_s = max(0, min(s_need, cap) - len(src))
    more_f = max(0, min(k_need, cap) - len(fus))
    if more_s or more_f:
        return "more", more_s, more_f
    if k_need > cap or s_need > cap:
        return "noise", 0, 0
    return "screened", 0, 0


async def screen(engine: Engine, pool: EvidencePool, jobs: Sequence[EffectJob], *,
                 beta: float, pair_disagreement: float | None, seed: int = 0,
                 progress: Callable[[int], None] | None = None) -> None:
    """Screen every input of every job that is not VIOLATED (module docstring). Sets each
    job's ``screen`` (candidate id -> ``flagged`` / ``screened`` / ``noise`` / ``budget``)."""
    from ._pooled import PooledEffects, two_sided

    b = beta * SCREEN_BETA_SHARE
    todo = [j for j in jobs if j.test.status != "violated"]
    states: dict[int, dict[int, str]] = {}
    for j in todo:
        j.screen = states[id(j)] = {}
    helper = PooledEffects(engine, pool, [], [], seed=seed)
    while not engine.stopping:
        src_more: dict[str, tuple[Probe, int]] = {}
        fu_more: list[tuple[Candidate, int]] = []
        for j in todo:
            two = two_sided(j.result.relation)
            prior = pair_disagreement if j.result.relation.layer == "verdict" else None
            for c in j.candidates:
                if c.outcome.status != CandidateStatus.PENDING:
                    continue
                state, more_s, more_f = judge(c, two, pool, beta=b, prior=noise_prior(prior))
                mine = states[id(j)]
                if state != "more":
                    mine[id(c)] = state
                    continue
                mine.pop(id(c), None)
                if more_s:
                    have = src_more.get(c.source.fp, (c.source, 0))[1]
                    src_more[c.source.fp] = (c.source, max(have, more_s))
                if more_f:
                    fu_more.append((c, more_f))
        plan: list[tuple[Probe, int]] = []
        for p, n in list(src_more.values()) + [(c.follow_up, n) for c, n in fu_more]:
            plan += [(p, i) for i in engine.allocate(p, n)]
        if not plan:
            break
        if not engine.can_afford(len(plan)):
            break
        await helper._draw_all(plan, shuffle=True)
        if progress is not None:
            progress(len(plan))
        for c, n in fu_more:
            c.outcome.draws += n
    for j in todo:
        mine = states[id(j)]
        for c in j.candidates:
            if c.outcome.status == CandidateStatus.PENDING and id(c) not in mine:
                mine[id(c)] = "interrupt" if engine.stopping else "budget"


def sensitivity(job: EffectJob, beta: float) -> dict[str, object] | None:
    """What the screen guarantees for one relation's inputs, as stored in reports."""
    if job.screen is None:
        return None
    counts = Counter(job.screen.values())
    missing = [(c.source.fp, job.screen[id(c)]) for c in job.candidates
               if job.screen.get(id(c)) in ("noise", "budget", "interrupt")]
    return {"size": SCREEN_SIZE, "power": 1.0 - beta, "screen_beta": beta * SCREEN_BETA_SHARE,
            "inputs": len(job.candidates), "screened": counts["screened"] + counts["flagged"],
            "flagged": counts["flagged"], "not_screened": len(missing),
            "not_screened_reasons": dict(Counter(r for _, r in missing)),
            "not_screened_inputs": [fp for fp, _ in missing[:20]]}
