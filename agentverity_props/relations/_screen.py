"""Every exercised input's own evidence: the per-input screen, the first step of a relation
in ``run``.

The pooled effect bounds a mean over the probe set; one input in three hundred whose
follow-up flips half the time moves that mean by less than 0.002, far below any tolerance.
So before the pooled epochs every (relation, input) pair is *screened*: it gets draws until
a violation of a stated *size* on it is ruled out at error ``beta`` (the pair is *cleared*),
or it looks violated (*flagged*: it is then tested on its own,
:func:`~agentverity_props.relations._pooled.localise`, at a family-wise ``alpha``), or the
draws run out.

**The size.** With ``a`` the input's modal verdict, a violation of size ``s`` is a follow-up
that violates the relation against ``a`` on a share of its draws at least ``s`` above the
share of the input's own re-draws that do: ``P(f viol. a) - P(x viol. a) >= s``. The default
``s = 0.5`` is "the follow-up flips the verdict half the time beyond the agent's noise" (on a
quiet input: a coin flip). For a two-sided (invariant) relation the reverse too, with ``b``
the follow-up's modal verdict: ``P(x != b) - P(f != b) >= s`` (a follow-up made more decided).

**Clearing.** Per side a betting e-process against that violation, ``W = prod (1 + lambda_i
(s - D_i))``, where each term ``D_i`` has mean at least ``s`` under the violation:

* a *paired* term ``D = [f viol. a] - [x viol. a]`` (one follow-up and one source draw made
  after ``a`` was read), or
* a *one-sample* term ``D = [f viol. a]`` (its mean is at least ``s`` plus the source's own
  rate): used when the source draws read before the screen all agree, so no source draw is
  spent on a quiet input.

The reference ``a`` is the modal verdict of the first three source draws (or of all made
before the relation phase); every follow-up draw is a term, paired in order with a source
draw (one whose reading chose the reference leans the term toward the violation, so clearing
stays within its error), or one-sample while every source draw agrees (at most
``ONE_SAMPLE_MAX``). Terms are appended and never rewritten. Each bet ``lambda_i`` is a
plug-in Kelly fraction from the earlier terms, capped so that a factor is never negative
(:class:`~agentverity_props.decide.Clearing`), so under the violation ``W`` is a nonnegative
supermartingale and ``P(W ever >= 1/beta) <= beta`` (Ville): a violation of the size is
cleared with probability at most ``beta``. On a quiet input ``W`` doubles with each agreeing
draw: 5 follow-ups clear at ``beta = 0.05``, the fewest any test needs against a coin flip
(``0.5^5 < 0.05``). The guarantee reads the modal verdicts from the draws: on an input whose
verdict is split near 50/50, the modal verdict the draws show may be the wrong one, and the
guarantee is then approximate.

**Flags** (no ``alpha`` is spent: a false flag costs the calls of a local test that ends
futile): evidence against the relation holding on the input (an e-process on the paired terms
of fresh draws reaching ``FLAG_EVIDENCE``); a side's wealth below ``FLAG_WEALTH``; on a side
whose other draws all agree, disagreeing draws unlikely at the agent's noise (``HIT_LEVEL``);
and, for a pair that cannot clear, weaker evidence (``WEAK_EVIDENCE``, a losing side, or a
one-sided Fisher test at ``STUCK_LEVEL``). A pair that cannot clear within
``SCREEN_MAX_DRAWS`` follow-ups (``SCREEN_MAX_SOURCES`` source draws, which the input's
relations share) or is futile is *not screened (noise)*; one whose draws failed
``MAX_FAILED`` times, *not screened (failures)*; pairs the budget or an interrupt left short,
*not screened (budget / interrupt)*; the report names them.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._internal.outcome import CandidateStatus
from ..decide import Clearing, against_holding, fisher_tail, modal, pair_disagreement
from ._draws import draw_all, two_sided

if TYPE_CHECKING:
    from ..engine import Engine, EvidencePool, Probe
    from ._draws import EffectJob
    from ._model import Relation
    from ._procedure import Candidate

#: The stated size: the follow-up's violation rate beyond the input's own noise.
SCREEN_SIZE = 0.5
#: Most follow-up draws a pair is given (and source draws an input is given) by the screen.
SCREEN_MAX_DRAWS = 24
#: Most source draws an input is given by the screen (shared by the input's relations).
SCREEN_MAX_SOURCES = 48
WEAK_EVIDENCE = 4.0
#: Evidence against the relation holding on the input that flags a pair.
FLAG_EVIDENCE = 20.0
#: A side that cannot clear (futile or capped) is flagged when its log wealth is this low,
#: or the evidence against the relation holding reaches ``WEAK_EVIDENCE``.
LOSING = 0.0
#: A one-sample side flags when its disagreeing draws are this unlikely at the noise seen.
HIT_LEVEL = 0.01
#: Weight, in draws, of the agent's noise in an input's noise (that flag only).
NOISE_WEIGHT = 4.0
#: A pair that cannot clear is flagged when its follow-up disagrees more often than its
#: source at this level (one-sided Fisher exact test).
STUCK_LEVEL = 0.05
#: One-sample terms a side may take before it pairs every term (with a fresh other draw).
ONE_SAMPLE_MAX = 7
#: Source draws the reverse side of a pair needs at least before it clears.
REVERSE_MIN_TERMS = 7
#: Failed draws (an error, or no verdict) of a pair's source or follow-up that end its screen.
MAX_FAILED = 3
#: Draws a reference verdict is read from at least (they are not terms of its side).
REF_DRAWS = 3


def clearance_cost(flip: float, beta: float, *, runs: int = 400, seed: int = 0,
                   size: float = SCREEN_SIZE) -> dict[str, int | None]:
    """What clearing one pair of a binary verdict costs at a per-draw flip rate ``flip``
    (source and follow-up alike: the relation holds), by simulation of the forward process
    (paired terms on a noisy input, one-sample on a quiet one): the median and 90th
    percentile of its terms (follow-up draws; a paired term also takes one source draw,
    shared by the input's relations), and the share of pairs the cap leaves not screened.

    >>> clearance_cost(0.0, 0.05)["median"]
    5
    """
    import random

    rng = random.Random(f"clearance:{seed}:{flip}:{size}")
    pd = 2 * flip * (1 - flip)
    need: list[int] = []
    capped = 0
    for _ in range(runs):
        terms: list[float] = []
        proc = Clearing(size, prior_term_variance(pd))
        while len(terms) < SCREEN_MAX_DRAWS:
            y = float(rng.random() < flip)
            terms.append(y if flip == 0 else y - float(rng.random() < flip))
            if proc.run(terms).cleared(beta):
                break
        if proc.cleared(beta):
            need.append(len(terms))
        else:
            capped += 1
    need.sort()
    return {"median": need[len(need) // 2] if need else None,
            "p90": need[min(len(need) - 1, int(0.9 * len(need)))] if need else None,
            "not_screened_share_pct": round(100 * capped / runs)}


@dataclass
class Side:
    """One side's terms, appended as draws arrive and never rewritten: the *primary*
    stream (follow-ups for the forward side, sources for the reverse) paired in order with
    the *other* stream, or one-sample while the other stream's draws all agree with the
    reference (at most ``ONE_SAMPLE_MAX`` such terms: then only paired ones)."""

    terms: list[float] = field(default_factory=list)
    #: per term, the prior variance in effect when its draws were asked for
    priors: list[float] = field(default_factory=list)
    fresh: list[float] = field(default_factory=list)   # paired terms of fresh draws only
    nxt: int = 0          # next primary draw to consume
    other: int = 0        # next other-stream draw to pair with
    one_sample: int = 0
    proc: Clearing | None = None

    def extend(self, primary: Sequence[float], other: Sequence[float], quiet: bool,
               n_ref: int, prior: float) -> bool:
        """Consume what has arrived; True when the side waits for an other-stream draw.
        ``primary`` / ``other`` are the violation indicators against the side's reference;
        the first ``n_ref`` other-stream draws are the ones the reference was read from;
        ``prior`` the prior variance in effect when the new draws were asked for."""
        while self.nxt < len(primary):
            if self.other < len(other):
                d = primary[self.nxt] - other[self.other]
                self.terms.append(d)
                self.priors.append(prior)
                if self.other >= n_ref:
                    self.fresh.append(d)
                self.other += 1
            elif quiet and self.one_sample < ONE_SAMPLE_MAX:
                self.terms.append(primary[self.nxt])
                self.priors.append(prior)
                self.one_sample += 1
            else:
                return True
            self.nxt += 1
        return False


@dataclass
class PairScreen:
    """The screen of one (relation, input) pair: its references and its two sides (module
    docstring). Begun before any epoch of the relation, so that every later draw is a term."""

    cand: Candidate
    two: bool
    ref_s: str | None = None   # the source's modal verdict, read at the start
    n_s0: int = 0              # source draws it was read from
    ref_f: str | None = None   # the follow-up's modal verdict: of its first draws
    n_f0: int = 0
    state: str = "more"        # more / cleared / flagged / noise / budget / interrupt
    fwd: Clearing | None = None
    rev: Clearing | None = None
    fside: Side = field(default_factory=Side)
    rside: Side = field(default_factory=Side)
    #: the violation ruled out (the profile's ``screen_size``)
    size: float = SCREEN_SIZE
    #: the prior variance in effect when the pair last asked for draws (None: not yet): the
    #: terms those draws make are bet on with it, never with one read later
    asked: float | None = None

    def evaluate(self, pool: EvidencePool, beta: float, prior_var: float, noise: float = 0.0
                 ) -> tuple[bool, bool]:
        """Update ``state`` from the draws so far; return (wants a source draw, wants a
        follow-up draw) for the next round."""
        rel, layer = self.cand.relation, self.cand.relation.layer
        src = _usable(pool, self.cand.source.fp, layer)
        fus = _usable(pool, self.cand.follow_up.fp, layer)
        made_s = len(pool.get(self.cand.source.fp).draws)
        made_f = len(pool.get(self.cand.follow_up.fp).draws)
        if made_s - len(src) >= MAX_FAILED or made_f - len(fus) >= MAX_FAILED:
            # draws that failed or had no verdict are no evidence: the pair is not screened
            self.state = "failures"
            return False, False
        if self.ref_s is None:
            if len(src) < self.n_s0:
                return True, False
            self.ref_s = _modal(src[:self.n_s0])
        if self.two and self.ref_f is None:
            if len(fus) < REF_DRAWS:
                return False, True
            self.ref_f, self.n_f0 = _modal(fus[:REF_DRAWS]), REF_DRAWS
        ref_s = self.ref_s
        # forward: each follow-up draw against the source's reference, paired in order with
        # a source draw (one whose reading chose the reference agrees with it more often
        # than a fresh one, so its term leans toward the violation: clearing stays within
        # its error; the evidence against the relation holding takes fresh draws only)
        y = [float(not rel.holds(ref_s, f)) for f in fus]
        x = [float(rel.baseline_violates(ref_s, v)) for v in src]
        quiet_s = not any(x)
        # the draws that arrived since the last round were asked for under the prior then
        # in effect (before the pair's first round: the prior of its first evaluation)
        drawn_under = prior_var if self.asked is None else self.asked
        self.asked = prior_var
        need_src = self.fside.extend(y, x, quiet_s, self.n_s0, drawn_under)
        self.fwd = Clearing(self.size, prior_var).run(self.fside.terms, self.fside.priors)
        evidence = against_holding(self.fside.fresh)
        done_f = self.fwd.cleared(beta)
        want_s = want_f = False
        if not done_f:
            want_s, want_f = need_src, not need_src
        done_r, need_fu = True, False
        quiet_f = True
        if self.two:
            ref_f = self.ref_f
            xr = [float(v != ref_f) for v in src]
            yr = [float(f != ref_f) for f in fus]
            quiet_f = not any(yr)
            need_fu = self.rside.extend(xr, yr, quiet_f, self.n_f0, drawn_under)
            self.rev = Clearing(self.size, prior_var).run(self.rside.terms, self.rside.priors)
            evidence = max(evidence, against_holding(self.rside.fresh))
            # both sides clear: each guards the other against a modal verdict misread from
            # few draws; and at least REVERSE_MIN_TERMS source draws, so that a minority
            # verdict the transform removes shows at least once (65/35: 1 - 0.65^7 = 95%)
            done_r = self.rev.cleared(beta) and len(src) >= REVERSE_MIN_TERMS
            if not done_r:
                want_f = want_f or need_fu
                want_s = want_s or not need_fu
        # a side that waits for source draws (shared by the input's relations) may take up
        # to SCREEN_MAX_SOURCES of them; one that waits for follow-ups, SCREEN_MAX_DRAWS
        cap_f = SCREEN_MAX_SOURCES if need_src else SCREEN_MAX_DRAWS
        cap_r = SCREEN_MAX_DRAWS if need_fu else SCREEN_MAX_SOURCES
        futile = (not done_f and self.fwd.futile(beta, cap_f)) or (
            self.rev is not None and not done_r and self.rev.futile(beta, cap_r))
        capped = (want_f and len(fus) >= SCREEN_MAX_DRAWS) or (
            want_s and len(src) - self.n_s0 >= SCREEN_MAX_SOURCES)
        # on a side whose other draws all agree so far, every disagreeing draw is a hit
        hit_f = quiet_s and _unlikely(int(sum(y)), len(fus), src, ref_s, rel, noise)
        hit_r = self.two and quiet_f and _unlikely(
            int(sum(float(v != self.ref_f) for v in src)), len(src), fus, self.ref_f, None,
            noise)
        # a pair that cannot clear is flagged on weaker evidence: its e-process against the
        # relation holding, or a one-sided two-sample test of its disagreement rates
        stuck = (futile or capped) and (
            evidence >= math.log(WEAK_EVIDENCE)
            or _more_often(int(sum(y)), len(fus), int(sum(x)), len(src))
            or (self.two and _more_often(
                sum(v != self.ref_f for v in src), len(src),
                sum(f != self.ref_f for f in fus), len(fus))))
        if (not (done_f and done_r) and (evidence >= math.log(FLAG_EVIDENCE) or stuck)) or (
                not done_f and (hit_f
                                or ((futile or capped) and self.fwd.log_w <= LOSING))) or (
                self.rev is not None and not done_r
                and (hit_r or ((futile or capped) and self.rev.log_w <= LOSING))):
            # evidence for a violation: against the relation holding on the input (paired
            # terms), the clearing wealth fallen low, or disagreeing draws unlikely at the
            # noise seen (on a quiet agent, a single one)
            self.state = "flagged"
            self.why = ("evidence" if evidence >= math.log(FLAG_EVIDENCE) else "stuck" if stuck
                        else "hit_f" if hit_f else "hit_r" if hit_r else "losing")
        elif done_f and done_r:
            self.state = "cleared"
        elif futile or capped:
            self.state = "noise"
        else:
            return want_s, want_f
        return False, False


def _unlikely(hits: int, draws: int, others: Sequence[str], ref: str | None,
              rel: Relation | None, noise: float) -> bool:
    """Whether ``hits`` disagreeing draws of ``draws`` are unlikely (``<= HIT_LEVEL``) at
    the noise of the other side's draws (all agreeing so far) shrunk toward the agent's
    per-draw noise with the weight of ``NOISE_WEIGHT`` draws, and never below the agent's:
    on a quiet agent a single disagreeing draw is."""
    if not hits or ref is None:
        return False
    off = sum((rel.baseline_violates(ref, x) if rel is not None else x != ref)
              for x in others)
    r = max(noise, (off + NOISE_WEIGHT * noise) / (len(others) + NOISE_WEIGHT))
    if r <= 0.0:
        return True
    tail = sum(math.comb(draws, i) * r ** i * (1 - r) ** (draws - i)
               for i in range(hits, draws + 1))
    return tail <= HIT_LEVEL


def _more_often(k1: int, n1: int, k2: int, n2: int) -> bool:
    """Whether ``k1`` of ``n1`` is more often than ``k2`` of ``n2`` beyond chance (a
    one-sided Fisher exact test at ``STUCK_LEVEL``)."""
    if not n1 or not n2 or k1 * n2 <= k2 * n1:
        return False
    return fisher_tail(k2, n2, k1, n1) <= STUCK_LEVEL


def flip_of(pair_disagreement: float | None) -> float:
    """The per-draw flip rate of a binary verdict with this pair disagreement (``2r(1-r)``)."""
    if not pair_disagreement:
        return 0.0
    return (1.0 - math.sqrt(max(0.0, 1.0 - 2.0 * min(pair_disagreement, 0.5)))) / 2.0


def _usable(pool: EvidencePool, fp: str, layer: str) -> list[str]:
    return [k for k in pool.get(fp).keys(layer) if k is not None]


def _modal(keys: Sequence[str]) -> str:
    ref = modal(keys)
    assert ref is not None, "a reference needs at least one draw"
    return ref


def prior_term_variance(pair_disagreement: float | None) -> float:
    """The variance of a paired term to assume before any term: about the pair disagreement
    (``Var([f != a] - [x != a]) = 2 r (1 - r)`` for a binary verdict of noise ``r``); a
    little above zero on a quiet agent so that the first bets are near the cap."""
    if pair_disagreement is None:
        return 0.25
    return min(0.5, max(0.02, pair_disagreement))


def agent_noise(pool: EvidencePool, probes: Iterable[Probe], meter: float | None, *,
                weight: int = 10) -> float | None:
    """The agent's pair disagreement: the mean, over the inputs with two or more verdict
    draws, of the share of their pairs of draws that disagree, with the meter's figure
    counted as ``weight`` inputs (None: no evidence at all)."""
    tot, n = 0.0, 0
    for p in probes:
        keys = _usable(pool, p.fp, "verdict")
        if len(keys) < 2:
            continue
        tot += pair_disagreement(keys)
        n += 1
    if meter is not None:
        tot, n = tot + weight * meter, n + weight
    return tot / n if n else None


def begin(job: EffectJob, pool: EvidencePool) -> None:
    """Begin the screen of every pair of a job: read the source references now."""
    two = two_sided(job.result.relation)
    for c in job.candidates:
        # the forward reference: the modal verdict of the source draws made so far, or of
        # the first REF_DRAWS of them if fewer (every later source draw is independent of it)
        n = len(_usable(pool, c.source.fp, c.relation.layer))
        job.pairs[id(c)] = PairScreen(c, two, n_s0=max(n, REF_DRAWS), size=job.screen_size)


async def screen(engine: Engine, pool: EvidencePool, jobs: Sequence[EffectJob], *,
                 beta: float, pair_disagreement: float | None, seed: int = 0,
                 progress: Callable[[int], None] | None = None) -> None:
    """Screen every pair of every job not VIOLATED (module docstring): rounds of one draw
    per source and per follow-up that a pair still needs. Sets each job's ``screen``
    (candidate id -> cleared / flagged / noise / budget / interrupt)."""
    todo = [j for j in jobs if j.test.status != "violated" and not _toolless(j, pool)
            and j.screen is None]  # not screened already (the deterministic path)
    pairs: list[tuple[EffectJob, PairScreen, Candidate]] = []
    for j in todo:
        j.screen = {}
        if not j.pairs:
            begin(j, pool)
        for c in j.candidates:
            if c.outcome.status == CandidateStatus.PENDING:
                pairs.append((j, j.pairs[id(c)], c))
    rng = random.Random(f"screen:{seed}")
    sources = {c.source.fp: c.source for _, _, c in pairs}
    while True:
        src_more: dict[str, Probe] = {}
        fu_more: dict[str, Probe] = {}
        # the agent's noise, re-read each round from every input's source draws so far
        # (the meter's figure, from few pairs, weighs as much as ten inputs)
        pd = agent_noise(pool, sources.values(), pair_disagreement)
        for _, ps, c in pairs:
            if ps.state != "more":
                continue
            verdict = c.relation.layer == "verdict"
            prior = prior_term_variance(pd if verdict else None)
            noise = flip_of(pd) if verdict else 0.05
            want_s, want_f = ps.evaluate(pool, beta, prior, noise)
            if want_s:
                src_more[c.source.fp] = c.source
            if want_f:
                fu_more[c.follow_up.fp] = c.follow_up
        plan: list[tuple[Probe, int]] = []
        index: dict[str, int] = {}
        for p in list(src_more.values()) + list(fu_more.values()):
            index[p.fp] = engine.allocate(p, 1)[0]
            plan.append((p, index[p.fp]))
        if not plan:
            break
        if engine.stopping or not engine.can_afford(len(plan)):
            for p, i in plan:
                engine.release(p, [i])
            break
        got = await draw_all(engine, pool, plan, rng=rng)
        if progress is not None:
            progress(len(plan))
        for _, ps, c in pairs:
            if ps.state == "more":
                c.outcome.draws += sum((fp, index[fp]) in got for fp in
                                       (c.source.fp, c.follow_up.fp) if fp in index)
        if not got:
            break
    for j, ps, c in pairs:
        st = ps.state if ps.state != "more" else ("interrupt" if engine.stopping else "budget")
        assert j.screen is not None
        j.screen[id(c)] = st


def _toolless(job: EffectJob, pool: EvidencePool) -> bool:
    """A tools relation on an agent whose source draws called no tool: nothing to screen
    (its first epoch shows whether a transform makes the agent call one)."""
    if job.result.relation.layer != "tools":
        return False
    return not any(k for c in job.candidates for k in pool.get(c.source.fp).keys("tools"))


def sensitivity(job: EffectJob, beta: float) -> dict[str, object] | None:
    """What the screen guarantees for one relation's inputs, as stored in reports."""
    if job.screen is None:
        return None
    counts = Counter(job.screen.values())
    missing = [(c.source.fp, job.screen[id(c)]) for c in job.candidates
               if job.screen.get(id(c)) in ("noise", "budget", "interrupt", "failures")]
    out: dict[str, object] = {
        "size": job.screen_size, "power": 1.0 - beta, "screen_beta": beta,
        "inputs": len({c.source.fp for c in job.candidates}), "pairs": len(job.candidates),
        "screened": counts["cleared"] + counts["flagged"],
        "cleared": counts["cleared"], "flagged": counts["flagged"],
        "not_screened": len(missing),
        "not_screened_reasons": dict(Counter(why for _, why in missing)),
        "not_screened_inputs": [fp for fp, _ in missing[:20]]}
    if job.screen_path:
        # the deterministic path: a deterministic flip (size 1) missed with probability 2r
        bound = float(job.screen_path["flip_bound"])
        out.update(size=1.0, power=max(0.0, 1.0 - 2.0 * bound),
                   screen_beta=min(1.0, 2.0 * bound), path="deterministic",
                   flip_bound=bound, audited_pairs=job.screen_path["audited_pairs"],
                   spaced_audit=bool(job.screen_path.get("spaced")))
    return out


#: Share of a one-draw screen's pairs whose source and follow-up are drawn once more (at
#: least ``AUDIT_MIN``): the audit of the meter's certificate of a deterministic verdict.
AUDIT_SHARE = 0.07
AUDIT_MIN = 8


async def screen_once(engine: Engine, pool: EvidencePool, jobs: Sequence[EffectJob], *,
                      flip_bound: float, seed: int = 0,
                      progress: Callable[[int], None] | None = None,
                      spacing: int = 0) -> bool:
    """The deterministic path of the screen: one follow-up draw a pair, read against the
    source's reference verdict (the modal verdict of its draws so far; one draw if none).

    It is taken only when the meter certified a deterministic verdict (a draw differs from
    its input's verdict with probability at most ``flip_bound``, read from the meter's
    upper bound) and no dependence between draws was found. A pair whose follow-up's
    verdict differs from its source's on every draw (a deterministic flip) is then cleared
    only if its follow-up draw or its source's reference misleads: probability at most
    ``2 * flip_bound``. A follow-up that flips only part of the time is flagged with
    probability at least its flip share (the standard screen's guarantee is not given).

    The audit: after every pair's draw, a random ``AUDIT_SHARE`` of the pairs (at least
    ``AUDIT_MIN``) get one more source and one more follow-up draw, made after all the first
    draws (so a response cache that answers repeats of a prompt within a few calls does not
    answer them). With ``spacing``, the audited pairs are chosen among those whose first
    draws started at least ``spacing`` calls before the audit (by start order; the first
    draws are made in an order shuffled here), so every audited re-draw is a spaced repeat:
    a response cache whose entries live fewer calls answers it afresh, and the audit is
    then also the spaced check of dependent draws that a 'deterministic' call needs
    (``screen_path["spaced"]``). Any audited draw that differs from its probe's first draw means the
    certificate does not hold: nothing is decided here and False is returned (the caller
    runs the standard screen, which reads every draw made here as a term). True: each
    job's ``screen`` is set (cleared / flagged / failures)."""
    todo = [j for j in jobs if j.test.status != "violated" and not _toolless(j, pool)
            and j.result.relation.layer == "verdict"]  # what the meter certified
    pairs = [(j, c) for j in todo for c in j.candidates
             if c.outcome.status == CandidateStatus.PENDING]
    if not pairs:
        return True
    rng = random.Random(f"screen-once:{seed}")

    def need(probes: Iterable[Probe], have: int) -> list[tuple[Probe, int]]:
        plan, seen = [], set()
        for p in probes:
            if p.fp in seen:
                continue
            seen.add(p.fp)
            for i in engine.allocate(p, max(0, have - len(_usable(pool, p.fp, "verdict")))):
                plan.append((p, i))
        return plan

    first = need([c.source for _, c in pairs], 1) + need([c.follow_up for _, c in pairs], 1)
    rng.shuffle(first)  # the start order (draw_all starts them in the order given)
    if first:
        if engine.stopping or not engine.can_afford(len(first)):
            for p, i in first:
                engine.release(p, [i])
            return False
        await draw_all(engine, pool, first)
        if progress is not None:
            progress(len(first))
    k = min(len(pairs), max(AUDIT_MIN, math.ceil(AUDIT_SHARE * len(pairs))))
    # calls started after each probe's first draw here (a probe drawn before: all of them)
    after = {p.fp: len(first) - 1 - n for n, (p, _) in enumerate(first)}
    far = [(j, c) for j, c in pairs
           if min(after.get(c.source.fp, len(first)), after.get(c.follow_up.fp, len(first)))
           >= spacing]
    spaced = spacing > 0 and len(far) >= k
    audited = rng.sample(far if spaced else pairs, k)
    audit: list[tuple[Probe, int]] = []
    firsts: dict[str, list[str]] = {}
    for _, c in audited:
        for p in (c.source, c.follow_up):
            if p.fp in firsts:
                continue
            firsts[p.fp] = _usable(pool, p.fp, c.relation.layer)
            audit += [(p, i) for i in engine.allocate(p, 1)]
    if engine.stopping or not engine.can_afford(len(audit)):
        for p, i in audit:
            engine.release(p, [i])
        return False
    got = await draw_all(engine, pool, audit, rng=rng)
    if progress is not None:
        progress(len(audit))
    for (fp, _), obs in got.items():
        key = obs.key("verdict") if obs is not None else None
        if key is None or any(k != key for k in firsts.get(fp, [])):
            return False
    for j in todo:
        j.screen = {}
        j.screen_path = {"path": "deterministic", "flip_bound": flip_bound,
                         "audited_pairs": k, "audit_draws": len(audit),
                         "spaced": spaced, "spacing": spacing if spaced else 0}
    for j, c in pairs:
        layer = c.relation.layer
        src, fus = _usable(pool, c.source.fp, layer), _usable(pool, c.follow_up.fp, layer)
        assert j.screen is not None
        if not src or not fus:
            j.screen[id(c)] = "failures"
            continue
        j.screen[id(c)] = "cleared" if c.relation.holds(_modal(src), fus[0]) else "flagged"
        c.outcome.draws += 2
    for j in todo:
        one_draw_upper(j, pool)
    return True


def one_draw_upper(job: EffectJob, pool: EvidencePool) -> None:
    """Feed the deterministic path's draws to the relation's pooled test as *upper scores*
    (:meth:`~agentverity_props.decide.EffectTest.feed_upper`), one per input and side, so
    that a relation whose every follow-up agreed is decided HOLDS without an epoch of its
    own when the probe set is large enough (about 30 inputs at tolerance 0.1).

    Forward: the share of the input's follow-ups whose first draw violates the relation
    against the source's verdict (the modal verdict of its draws, all made independently of
    the follow-ups'): its mean is the follow-ups' violation rate, at least the effect (the
    effect subtracts the source's own rate). Reverse (a two-sided relation): the share whose
    first draw differs from the source's latest draw; with ``b`` the follow-up's modal
    verdict its mean is at least ``P(f0 = b) P(x != b) >= P(x != b) - P(f != b)``, the
    reverse effect. Every score lies in ``[0, 1]``; the pooled test's violation side never
    reads them."""
    test = job.test
    if not hasattr(test, "feed_upper") or job.screen is None:
        return
    rel = job.result.relation
    fwd: list[float] = []
    rev: list[float] = []
    for cands in job.by_input.values():
        f_terms: list[float] = []
        r_terms: list[float] = []
        for c in cands:
            if c.outcome.status != CandidateStatus.PENDING or job.screen.get(id(c)) not in (
                    "cleared", "flagged"):
                continue
            src = _usable(pool, c.source.fp, rel.layer)
            fus = _usable(pool, c.follow_up.fp, rel.layer)
            f_terms.append(float(not rel.holds(_modal(src), fus[0])))
            r_terms.append(float(src[-1] != fus[0]))
        if f_terms:
            fwd.append(sum(f_terms) / len(f_terms))
            rev.append(sum(r_terms) / len(r_terms))
    if not fwd:
        return
    test.feed_upper([fwd, rev] if test.sides == 2 else [fwd])
