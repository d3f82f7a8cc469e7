"""A relation's pooled effect over a probe set, and the inputs that localise it.

The question a relation answers is how much its transform changes the agent's verdict beyond
the agent's own noise, over the probe set. ``run`` decides it with this module; an
``@agent_property`` test uses :class:`PooledEffects` over the examples it generated, after its
per-example decisions (docs/statistics.md, "Relation effects"):

**Scores.** A round on an input ``x`` takes ``S`` source draws (shared by every relation of
``x``) and, per relation, ``F`` follow-up draws (a shape chosen for price from the agent's
noise, the tolerance and the relations sharing the round: relations/_rounds.py; the first
epoch takes at least what the per-input screen needs), and scores the round from these
draws alone (:func:`exact_scores`, U-statistics):

* forward: ``Z = mean_ij V(s_i, f_j) - mean_{i != i'} V0(s_i, s_i')``, where ``V`` is "the
  relation fails between a source verdict and a follow-up" and ``V0`` the same for a source
  re-draw (for an invariant: ``[s_i != f_j] - [s_i != s_i']``). Its mean is the *excess
  disagreement*: how much more often a follow-up disagrees with a source draw than two
  source draws do;
* reverse (invariant relations only): ``Z' = mean_ij [s_i != f_j] - mean_{j < j'} [f_j !=
  f_j']``: how much more often a source draw disagrees with a follow-up than two follow-ups
  do. It sees a transform that makes the agent *more* decided (0.75 -> 1.00 ``block``:
  forward -0.125, reverse +0.25).

The draws of an input are independent given the input, so each score's conditional mean
given everything drawn before is the input's effect on that side, exactly. A HOLDS needs
both sides below the tolerance; forward plus reverse is ``||p - q||^2``, so the two are zero
together only when the two verdict distributions are equal.

**Epochs.** Rounds are made in epochs: the first visits every input once, later ones a uniform
sample with replacement of ``LATER_EPOCH`` inputs (at least one per ``WORKERS_PER_INPUT``
workers, so a wide worker pool is not left idle), so the cost of the pooled test does not
grow with the probe set, each bet (one an epoch) learns from every earlier score, and a
decided relation stops within an input or two of its decision. Under a profile without a
screen (``quick``) the first epoch is a uniform sample too (``sampled``), of
``max(MIN_EPOCH, ceil(min(inputs, SWEEP_MAX) / 4))`` inputs (the inputs the tests one by one
then choose among): the pooled effect is a mean over the probe set, and a uniform sample
estimates it without visiting every input, so quick's cost does not grow with the probe set
at all; a pair whose input no epoch drew ends ``undecided`` ("not drawn"), never
``clean``. The scores of one
epoch are independent given the past, which is what
:class:`~agentverity_props.decide.EffectTest` needs. A relation stops
when its effect is decided; the others go on.

**Order in ``run``.** First every (relation, input) pair is screened (:mod:`._screen`: a
violation of the stated size on it is cleared with probability at most ``beta``), then every
flagged input is tested on its own (:func:`localise`, the betting e-processes of
:class:`~agentverity_props.decide.LocalTest`, family-wise over the inputs admitted: a
confirmed input is a counterexample), then the epochs run (:meth:`PooledEffects.run`),
scoring the draws those made before drawing more (:meth:`PooledEffects._take`). A relation a
confirmed input already made VIOLATED runs one epoch only, for its printed effect.

**On a recording** (``assess`` of a file: the engine's ``finite_evidence``) no epoch runs:
every draw the recording holds is read and each relation is decided once on all of them
(:meth:`PooledEffects._fixed_sample`, :class:`~agentverity_props.decide.FixedEffect`); an
invariant relation's inputs are then tested one by one on the same draws
(:meth:`PooledEffects._fixed_local`) in place of :func:`localise`.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._internal.outcome import CandidateStatus
from ..decide import MIN_DRAWS as FIXED_MIN_DRAWS
from ..decide import (
    EffectTest,
    LocalTest,
    binomial_quantile,
    bonferroni,
    fisher_tail,
    modal,
    relation_alpha_split,
)
from ._draws import MAX_SCORES, EffectJob, draw_all, two_sided
from ._model import NOT_DRAWN, Relation, RelationResult
from ._procedure import Candidate, reference
from ._rounds import round_sizes, score_variance

if TYPE_CHECKING:
    from ..decide import Kernel
    from ..engine import Engine, EvidencePool, Probe
    from ..observation import Observation

#: A first epoch that samples the inputs (``quick``) draws a quarter of ``min(inputs,
#: SWEEP_MAX)`` of them, at least ``MIN_EPOCH``; every later epoch draws ``LATER_EPOCH``
#: (uniformly, with replacement). Later epochs are small because each shares one bet
#: (docs/benchmarks.md, "Pooled rounds and epochs": ``benchmarks/pooled_rounds.py``).
SWEEP_MAX = 64
MIN_EPOCH = 8
LATER_EPOCH = 2
#: A later epoch draws at least one input per this many workers, so that a wide worker pool
#: is not left idle between epochs (an epoch's draws are made together, the next epoch's
#: after them): with 32 workers and a latency-bound agent, epochs of 2 inputs made a
#: standard run about a fifth slower in wall time (docs/benchmarks.md, "relation-effects").
WORKERS_PER_INPUT = 4


def first_sample(inputs: int) -> int:
    """The inputs a first epoch that samples them draws (``quick``).

    >>> first_sample(30), first_sample(300)
    (8, 16)
    """
    return max(MIN_EPOCH, math.ceil(min(inputs, SWEEP_MAX) / 4))


#: The smallest suspicion (a share of verdicts) that admits an input of a relation VIOLATED
#: by its pooled test (not screened) to its own test.
ADMIT_SUSPICION = 0.25
#: An input of a relation no screen ran on (profile ``quick``) and not VIOLATED is tested on
#: its own only when its draws differ beyond chance (:func:`beyond_chance`, one-sided Fisher
#: exact tests at this level): on a noisy agent a share of 0.25 is reached by chance on most
#: inputs, and testing the most suspicious of them on every run bought no guarantee.
QUICK_ADMIT_LEVEL = 0.05
#: A relation whose pooled effect is already VIOLATED needs counterexamples, not a verdict:
#: at most this many of its inputs are tested one by one.
VIOLATED_ADMITTED = 3


def forward_score(rel: Relation, past: Sequence[str], follow_up: str, source: str) -> float:
    """``mean_j V(s_j, f) - mean_j V0(s_j, s)`` over the earlier source draws ``past``.

    >>> r = Relation("shout", "invariant", str.upper)
    >>> forward_score(r, ["allow", "allow", "block"], "block", "allow")
    0.3333333333333333
    """
    n = len(past)
    v = sum(not rel.holds(a, follow_up) for a in past)
    v0 = sum(rel.baseline_violates(a, source) for a in past)
    return (v - v0) / n


def exact_scores(rel: Relation, sources: Sequence[str], follow_ups: Sequence[str]
                 ) -> tuple[float, float | None]:
    """The pooled round's scores from its own fresh draws: ``m >= 2`` source draws ``s_i``
    and ``k >= 1`` follow-up draws ``f_j`` (U-statistics, so each score's conditional mean
    given every earlier draw is the input's effect exactly, whatever those draws were):

    * forward ``mean_ij V(s_i, f_j) - mean_{i != i'} V0(s_i, s_i')``: the excess
      disagreement ``P(s != f) - P(s != s')`` for an invariant;
    * reverse (``k >= 2``) ``mean_ij [f_j != s_i] - mean_{j < j'} [f_j != f_j']``:
      ``P(s != f) - P(f != f')``, positive when the follow-up is more decided than the source.

    >>> r = Relation("shout", "invariant", str.upper)
    >>> exact_scores(r, ["allow", "block"], ["allow", "allow"])
    (-0.5, 0.5)
    """
    m, k = len(sources), len(follow_ups)
    v = sum(not rel.holds(a, f) for a in sources for f in follow_ups) / (m * k)
    v0 = sum(rel.baseline_violates(a, b) for i, a in enumerate(sources)
             for n, b in enumerate(sources) if i != n) / (m * (m - 1))
    rev = None
    if k >= 2:
        d = sum(a != f for a in sources for f in follow_ups) / (m * k)
        pairs = [(follow_ups[i], follow_ups[n]) for i in range(k) for n in range(i + 1, k)]
        rev = d - sum(a != b for a, b in pairs) / len(pairs)
    return v - v0, rev


def reverse_score(past_follow_ups: Sequence[str], follow_up: str, source: str) -> float:
    """``mean_j [f_j != s] - mean_j [f_j != f]`` over the earlier follow-up draws."""
    n = len(past_follow_ups)
    return (sum(b != source for b in past_follow_ups)
            - sum(b != follow_up for b in past_follow_ups)) / n


def suspicion(rel: Relation, sources: Sequence[str], follow_ups: Sequence[str]) -> float:
    """How unlike its source an input's follow-up looks, in shares of verdicts: the excess
    of follow-up draws violating against the source's modal verdict over source draws off
    it, and (invariants) the largest difference in one label's share.

    >>> r = Relation("shout", "invariant", str.upper)
    >>> suspicion(r, ["block", "allow", "block"], ["allow"])
    0.6666666666666667
    """
    if not sources or not follow_ups:
        return 0.0
    counts = Counter(sources)
    ref = reference_of(sources)
    f_v = sum(not rel.holds(ref, f) for f in follow_ups) / len(follow_ups)
    s_v = sum(rel.baseline_violates(ref, s) for s in sources) / len(sources)
    out = f_v - s_v
    if two_sided(rel):
        fc = Counter(follow_ups)
        for k in set(counts) | set(fc):
            out = max(out, abs(fc[k] / len(follow_ups) - counts[k] / len(sources)))
    return out


class PooledEffects:
    """Decides every relation's pooled effect over one probe set (module docstring).

    Args:
        engine / pool: where draws come from and go.
        jobs: one :class:`EffectJob` per exercised relation.
        inputs: the probe set (every source of a job is one of them).
        seed: the epochs' order and samples (reproducible).
        progress: called with the draws of each epoch.
    """

    def __init__(self, engine: Engine, pool: EvidencePool, jobs: Sequence[EffectJob],
                 inputs: Sequence[Probe], *, seed: int = 0,
                 progress: Callable[[int], None] | None = None,
                 max_scores: int = MAX_SCORES, first_follow_ups: int = 0,
                 noise: float | None = None, adapt_noise: bool = False,
                 sampled: bool = False, scorable_from: dict[str, int] | None = None) -> None:
        self.engine, self.pool, self.jobs = engine, pool, list(jobs)
        #: the agent's pair disagreement the rounds are shaped for (relations/_rounds.py:
        #: the source draws a round takes, shared by an input's relations, and the
        #: follow-ups per candidate): the meter's, then (``adapt_noise``) re-read after
        #: every epoch from the source draws the epochs scored
        self.noise = noise
        self.adapt_noise = adapt_noise
        #: the scored source draws' disagreement so far: (sum over inputs, inputs)
        self._dis = (0.0, 0)
        #: follow-up draws per candidate in the first epoch (at least the sides): ``run``
        #: asks for what the per-input screen needs on a quiet input, so that a quiet probe
        #: set is screened by its first epoch
        self.first_follow_ups = first_follow_ups
        #: every epoch, the first too, is a uniform sample of the inputs (``run`` under a
        #: profile without a screen): the pooled effect's cost does not grow with the probe
        #: set, and an input no epoch drew is not drawn at all
        self.sampled = sampled
        self.inputs = [p for p in inputs if any(p.fp in j.by_input for j in self.jobs)]
        #: the inputs of the live relations, for the live set they were read for
        self._live_inputs: tuple[tuple[int, ...], list[Probe]] = ((), [])
        self.rng = random.Random(f"pooled:{seed}")
        self.progress = progress
        self.max_scores = max_scores
        self.epochs = 0
        #: draws wanted that the recording does not hold (``assess``)
        self.exhausted: set[tuple[str, int]] = set()
        #: per probe, the first draw index the test may score, as given (``run``: the draws
        #: after the meter's, so the health checks' draws, which chose nothing this test
        #: reads, are scored too; a probe not named: every draw); None: the draws made before
        #: :meth:`prepare` are never scored
        self.scorable_from = scorable_from
        #: per probe: the first draw index this test scores (set by :meth:`prepare`), and
        #: the indices scored
        self.floor: dict[str, int] = {}
        self.used: dict[str, set[int]] = {}
        self.prepared = False
        #: on a recording: the jobs (by id) whose inputs are tested one by one on every
        #: recorded draw, each with its share of the local alpha (``run`` sets it)
        self.fixed_local: dict[int, float] = {}

    async def prepare(self) -> None:
        """Before any epoch (and before the per-input screen, which ``run`` makes first):
        note the draws the epochs may not score (the meter's, whose values chose the bets'
        priors and the first rounds' shape; without ``scorable_from``, every draw made so
        far), anchor every input, begin each pair's screen."""
        if self.prepared:
            return
        self.prepared = True
        for x in self.inputs:
            for p in [x] + [c.follow_up for j in self.jobs for c in j.by_input.get(x.fp, ())]:
                self.floor[p.fp] = (max(self.pool.get(p.fp).draws, default=-1) + 1
                                    if self.scorable_from is None
                                    else self.scorable_from.get(p.fp, 0))
        await self._anchor()
        from ._screen import begin
        for j in self.jobs:
            # the per-input screen's references are read now, so that every later draw is
            # one of its terms (relations/_screen.py)
            begin(j, self.pool)

    def _take(self, probe: Probe, n: int) -> tuple[list[int], list[int]]:
        """``n`` draw indices of ``probe`` this test has not scored: draws already made in
        the relation phase first (the screen's, the local tests', in index order), then new
        ones. Returns (all indices, the new ones to draw). A made draw's value is
        independent of everything this test has seen and of which indices it takes (its
        bets, stopping and samples never read the other procedures' draws), so each score
        keeps its conditional mean."""
        used = self.used.setdefault(probe.fp, set())
        floor = self.floor.get(probe.fp, 0)
        have = [i for i in sorted(self.pool.get(probe.fp).draws)
                if i >= floor and i not in used][:n]
        new = self.engine.allocate(probe, n - len(have)) if n > len(have) else []
        used.update(have)
        used.update(new)
        return have + new, new

    async def run(self, *, max_epochs: int | None = None) -> None:
        """Epochs until every job is decided (or ``max_epochs`` more have run)."""
        await self.prepare()
        if self.engine.finite_evidence:
            await self._fixed_sample()
            return
        start = self.epochs
        while max_epochs is None or self.epochs - start < max_epochs:
            live = [j for j in self.jobs if j.live and j.test.scores() < self.max_scores]
            if not live or self.engine.stopping:
                break
            if not await self._epoch(live):
                break
        for j in self.jobs:
            if j.test.status == "undecided" and not j.note:
                j.note = (f"undecided after {j.test.scores()} scores" if not j.incomplete
                          else j.note)

    async def _anchor(self) -> None:
        """One source draw for every input that has none (the first epoch scores against it)."""
        need = [p for p in self.inputs if not self._keys(p.fp, self._layers(p))]
        if not need or self.engine.stopping or not self.engine.can_afford(len(need)):
            # the first epoch then finds what it still needs unaffordable and says so: no
            # call spent on a source it could not score (nor 100,000 draws queued to fail)
            return
        await self._draw_all([(p, self.engine.allocate(p, 1)[0]) for p in need])

    def _layers(self, probe: Probe) -> set[str]:
        return {j.result.relation.layer for j in self.jobs if probe.fp in j.by_input}

    def _keys(self, fp: str, layers: set[str]) -> bool:
        ev = self.pool.get(fp)
        return all(any(k is not None for k in ev.keys(layer)) for layer in layers)

    def _epoch_inputs(self, live: Sequence[EffectJob]) -> list[Probe]:
        if self.epochs == 0 and not self.sampled:
            order = list(self.inputs)
            self.rng.shuffle(order)
            return order
        # a uniform sample with replacement: the first of a quarter of a sweep (the tests
        # one by one choose among its inputs), the later ones of LATER_EPOCH inputs, so that
        # every bet learns from the scores before it and a decided relation stops within an
        # input or two of its decision. Drawn among the inputs of the live relations: an
        # input a live relation has is then still drawn uniformly among that relation's
        # inputs (its scores keep their conditional mean), and no epoch is spent on inputs
        # that give no live relation a score
        key = tuple(sorted(id(j) for j in live))
        if self._live_inputs[0] != key:  # recomputed only when a relation is decided
            self._live_inputs = (key, [x for x in self.inputs
                                       if any(x.fp in j.by_input for j in live)])
        inputs = self._live_inputs[1]
        if not inputs:
            return []
        n = (first_sample(len(self.inputs)) if self.epochs == 0 else max(
            LATER_EPOCH, math.ceil(self.engine.config.max_workers / WORKERS_PER_INPUT)))
        return [inputs[self.rng.randrange(len(inputs))] for _ in range(n)]

    async def _epoch(self, live: list[EffectJob]) -> bool:
        """One epoch for the live jobs; False when it could not be made (budget, stop).

        Each round of an input takes the source draws (shared by its relations) and, per
        relation, the follow-up draws of the shape ``round_sizes`` prices for the agent's
        noise so far (relations/_rounds.py; the first epoch: at least ``first_follow_ups``
        follow-ups), scored by :func:`exact_scores` of these draws alone."""
        inputs = self._epoch_inputs(live)
        tol = min(j.test.tolerance for j in live)
        beta = min(j.test.beta for j in live)
        sides = max(j.test.sides for j in live)
        plan: list[tuple[Probe, int]] = []
        rounds: list[tuple[Probe, list[int], list[tuple[EffectJob, Candidate, list[int]]]]] = []
        for x in inputs:
            cands = [(j, c) for j in live for c in j.by_input.get(x.fp, ())]
            if not cands:
                continue
            # the first epoch of tools relations alone on an input whose draws called no
            # tool: its follow-ups show whether a transform makes the agent call one, and
            # the source's draws so far say it calls none (no new source draw, no score)
            toolless = self.epochs == 0 and all(
                j.result.relation.layer == "tools" and not _any_tool(self.pool, x.fp)
                for j, _ in cands)
            n_src, n_fu = round_sizes(self.noise, len({id(j) for j, _ in cands}),
                                      tolerance=tol, sides=sides, beta=beta)
            s_idx, new = ([], []) if toolless else self._take(x, n_src)
            plan += [(x, i) for i in new]
            fus = []
            for j, c in cands:
                # an input's follow-ups of one relation are averaged into one score: each
                # takes its share of the round's follow-ups (at least 2, for the reverse side)
                siblings = len(j.by_input.get(x.fp, ())) or 1
                k = max(2, math.ceil(n_fu / siblings))
                if self.epochs == 0:
                    # a tools relation on an agent whose source draws called no tool: one
                    # follow-up shows whether the transform makes it call one
                    k = (1 if j.result.relation.layer == "tools" and not _any_tool(
                        self.pool, x.fp) else max(k, self.first_follow_ups))
                f_idx, new = self._take(c.follow_up, k)
                plan += [(c.follow_up, i) for i in new]
                fus.append((j, c, f_idx))
            rounds.append((x, s_idx, fus))
        if not rounds:
            return False
        if not self.engine.can_afford(len(plan)):
            for j in live:
                j.incomplete = True
                j.note = (f"the call budget ran out before epoch {self.epochs + 1} "
                          f"({len(plan)} draws) could be made")
            return False
        # the source draws before the epoch: only for the first follow-up's raw verdict
        frozen: dict[tuple[str, str], list[str]] = {}
        for x, _, fus in rounds:
            for j, _c, _ in fus:
                layer = j.result.relation.layer
                frozen.setdefault((x.fp, layer), _usable(self.pool, x.fp, layer))
        got = await self._draw_all(plan, shuffle=True) if plan else {}
        fresh = set(got)
        for x, s_idx, fus in rounds:
            for p, idx in [(x, s_idx)] + [(c.follow_up, f) for _, c, f in fus]:
                have = self.pool.get(p.fp).draws
                for i in idx:
                    if (p.fp, i) not in got and i in have:
                        got[(p.fp, i)] = have[i]
        self.epochs += 1
        if self.progress is not None:
            self.progress(len(plan))
        batch: dict[int, list[list[float]]] = {id(j): [[] for _ in range(j.test.sides)]
                                               for j in live}
        for x, s_idx, fus in rounds:
            s_obs = [got.get((x.fp, i)) for i in s_idx]
            # an input's follow-ups of one relation (kinds of a family, pairs brought) share
            # its source draws: their scores are averaged into one term per input and round,
            # so each bet of the pooled test is on one conditionally centred term
            mine: dict[int, list[list[float]]] = {}
            for j, c, f_idx in fus:
                rel = j.result.relation
                f_obs = [got.get((c.follow_up.fp, i)) for i in f_idx]
                # the draws made for this round (a draw the screen or a local test made
                # was counted there)
                c.outcome.draws += sum((p.fp, i) in fresh for p, idx in
                                       ((x, s_idx), (c.follow_up, f_idx)) for i in idx)
                s_keys = [None if o is None else o.key(rel.layer) for o in s_obs]
                f_keys = [None if o is None else o.key(rel.layer) for o in f_obs]
                if None in s_keys or None in f_keys:
                    if not j.incomplete:
                        j.incomplete = True
                        side, obs, keys = (("source", s_obs, s_keys) if None in s_keys
                                           else ("follow-up", f_obs, f_keys))
                        idx = s_idx if side == "source" else f_idx
                        probe = x if side == "source" else c.follow_up
                        pos = next(n for n, k in enumerate(keys) if k is None)
                        j.note = _missing(obs[pos], side,
                                          ran_out=(probe.fp, idx[pos]) in self.exhausted)
                    continue
                sk = [k for k in s_keys if k is not None]
                fk = [k for k in f_keys if k is not None]
                past = frozen[(x.fp, rel.layer)]
                if c.outcome.follow_up is None:
                    c.outcome.follow_up = fk[0]
                    # the source's reference: its draws before this round, else this
                    # round's own (an input the meter never drew still flips or not)
                    ref_draws = past or sk
                    c.outcome.raw = bool(ref_draws) and not rel.holds(
                        reference_of(ref_draws), fk[0])
                if not sk:  # a toolless first look (above): nothing to score
                    continue
                fwd, rev = exact_scores(rel, sk, fk)
                acc = mine.setdefault(id(j), [[] for _ in range(j.test.sides)])
                acc[0].append(fwd)
                if j.test.sides == 2 and rev is not None:
                    acc[1].append(rev)
            for jid, acc in mine.items():
                for k, vals in enumerate(acc):
                    if vals:
                        batch[jid][k].append(sum(vals) / len(vals))
        if self.adapt_noise:
            self._adapt(rounds, got)
        for j in live:
            if not j.incomplete and isinstance(j.test, EffectTest):
                j.test.feed(batch[id(j)])
                if j.test.status != "undecided" and j.decided_at is None:
                    led = self.engine.ledger
                    j.decided_at = led.calls + led.replayed
            if not j.unexercised:
                j.unexercised = layer_never_varied(j, self.pool)
        return True

    def _adapt(self, rounds: Sequence[Any], got: dict[tuple[str, int], Observation]) -> None:
        """After an epoch: the noise the later rounds are shaped for, from the source draws
        the epochs scored (the mean disagreement of two source draws of one input, over the
        inputs of every epoch so far, the meter's figure weighing as ``NOISE_PRIOR_INPUTS``
        inputs): a prediction from draws already scored, so every later score stays exact
        (a round's shape never reads a draw it takes)."""
        dis: list[float] = []
        for x, s_idx, _ in rounds:
            obs = [got.get((x.fp, i)) for i in s_idx]
            keys = [k for k in (o.key("verdict") for o in obs if o is not None)
                    if k is not None]
            pairs = [(a, b) for n, a in enumerate(keys) for b in keys[n + 1:]]
            if pairs:
                dis.append(sum(a != b for a, b in pairs) / len(pairs))
        if dis:
            tot, n = self._dis[0] + sum(dis), self._dis[1] + len(dis)
            self._dis = (tot, n)
            if self.noise is not None:
                tot, n = tot + NOISE_PRIOR_INPUTS * self.noise, n + NOISE_PRIOR_INPUTS
            self.noise = tot / n

    async def _fixed_sample(self) -> None:
        """A recording's pooled decision (``assess`` of a file): every draw it holds is read
        (free: nothing is called), then each relation is decided once on all of them by
        :class:`~agentverity_props.decide.FixedEffect`, at the same alpha and beta as the
        sequential test. A sequential test would leave most of a recording unread: its bets
        are capped, so it needs many small scores where a recording has a few dozen draws
        an input (docs/statistics.md §3, "On a recording")."""
        from ..decide import FixedEffect

        probes: dict[str, Probe] = {}
        for x in self.inputs:
            probes[x.fp] = x
            for j in self.jobs:
                for c in j.by_input.get(x.fp, ()):
                    probes[c.follow_up.fp] = c.follow_up
        plan = [(p, i) for p in probes.values()
                for i in self.engine.allocate(p, max(0, self.engine.evidence_left(p) or 0))]
        fresh = Counter(p.fp for p, _ in plan)
        if plan:
            await self._draw_all(plan)
        self.epochs = 1
        if self.progress is not None:
            self.progress(len(plan))
        led = self.engine.ledger
        for j in self.jobs:
            if not j.unexercised:
                j.unexercised = layer_never_varied(j, self.pool)
            if j.unexercised:
                continue
            rel = j.result.relation
            layer = rel.layer
            fx = FixedEffect(tolerance=j.test.tolerance, alpha=j.test.alpha,
                             beta=j.test.beta, sides=j.test.sides,
                             violation=j.test.violation)
            sources, follow_ups, missing = [], [], 0
            for c in j.candidates:
                sk = list(self.pool.get(c.source.fp).keys(layer))
                fk = list(self.pool.get(c.follow_up.fp).keys(layer))
                missing += sum(k is None for k in sk + fk)
                src = [k for k in sk if k is not None]
                fus = [k for k in fk if k is not None]
                sources.append(src)
                follow_ups.append(fus)
                # the draws read for this decision (the screen's and the local tests' were
                # counted there)
                c.outcome.draws += fresh[c.source.fp] + fresh[c.follow_up.fp]
                if fus and c.outcome.follow_up is None:
                    c.outcome.follow_up = fus[0]
                    c.outcome.raw = bool(src) and not rel.holds(reference_of(src), fus[0])
            j.test = fx
            if missing:
                fx.batches = 1
                j.incomplete = True
                j.note = (f"{missing} recorded draw(s) of this relation's inputs gave no "
                          f"{layer}: no pooled decision is made from the rest (a failed or "
                          "unreadable answer is missing evidence, never a verdict)")
                continue
            fx.add(sources, follow_ups)
            fx.decide(*_kernels(rel, fx.sides))
            if id(j) in self.fixed_local:
                self._fixed_local(j, sources, follow_ups, self.fixed_local[id(j)])
            j.decided_at = led.calls + led.replayed
            j.note = (f"fixed sample: every recorded draw ({fx.draws} draws of {fx.scores()} "
                      "input pair(s)), decided once")
            if fx.left_out:
                j.note += (f"; {fx.left_out} pair(s) with fewer than {FIXED_MIN_DRAWS} draws "
                           "of the input or of its follow-up left out")
            if fx.status == "undecided":
                # the whole recording is read: an undecided effect needs more recorded draws
                j.incomplete = True
                j.note += ("; undecided: the recording ran out (record more repeats of each "
                           "input and its follow-ups)")
            if fx.status == "undecided" and not fx.scores():
                j.note = (f"the recording holds too few draws: no (input, follow-up) pair has "
                          f"{FIXED_MIN_DRAWS} or more of each; record more repeats of each "
                          "input and its follow-ups")

    def _fixed_local(self, job: EffectJob, sources: list[list[str]],
                     follow_ups: list[list[str]], alpha: float) -> None:
        """A recording's inputs tested one by one on every recorded draw (an invariant
        relation): the exact split test of :func:`~agentverity_props.decide.exact_split_p`
        per input with at least ``FIXED_MIN_DRAWS`` draws a side, Holm's step-down over them
        at ``alpha`` (the relation's share of the local alpha); a rejected input is a
        confirmed counterexample, as a confirmed local test is in ``run``."""
        from ..decide import exact_split_p, holm

        rel = job.result.relation
        tested = [(c, s, f) for c, s, f in zip(job.candidates, sources, follow_ups,
                                               strict=True)
                  if len(s) >= FIXED_MIN_DRAWS and len(f) >= FIXED_MIN_DRAWS]
        ps = [exact_split_p(s, f, seed=c.source.fp) for c, s, f in tested]
        for (c, s, f), p, hit in zip(tested, ps, holm(ps, alpha), strict=True):
            ref = reference_of(s)
            out = c.outcome
            if out.follow_up is None and f:
                out.raw = not rel.holds(ref, f[0])  # the pair's first follow-up draw
            out.source, out.follow_up = ref, reference_of(f)
            out.decision = {
                "test": ("fixed sample: exact split test of the input's recorded draws "
                         "(H0: source and follow-up share one verdict distribution), Holm "
                         "over the relation's inputs; e_violation is 1/p"),
                "call": "confirmed" if hit else "pass",
                "alpha": bonferroni(alpha, len(tested)), "e_violation": 1.0 / max(p, 1e-300),
                "p_value": p, "rounds": 0,
                "follow_up_violations": sum(not rel.holds(ref, x) for x in f),
                "follow_up_draws": len(f),
                "source_violations": sum(rel.baseline_violates(ref, x) for x in s),
                "source_draws": len(s)}
            if hit:
                out.status = CandidateStatus.CONFIRMED
                out.note = (f"confirmed on every recorded draw: exact split test p = {p:.2g} "
                            f"(Holm over {len(tested)} input(s) at alpha {alpha:.2g})")

    async def _draw_all(self, plan: Sequence[tuple[Probe, int]], *, shuffle: bool = False
                        ) -> dict[tuple[str, int], Observation]:
        return await draw_all(self.engine, self.pool, plan,
                              rng=self.rng if shuffle else None, exhausted=self.exhausted)


def _kernels(rel: Relation, sides: int) -> tuple[list[Kernel], list[Kernel]]:
    """The fixed-sample test's kernels per side, as the exact scores define them: forward
    "the relation fails" between a source and a follow-up, and between two sources;
    reverse (invariants) plain disagreement."""
    def fails(a: Any, b: Any) -> bool:
        return not rel.holds(a, b)

    def baseline(a: Any, b: Any) -> bool:
        return bool(rel.baseline_violates(a, b))

    def differ(a: Any, b: Any) -> bool:
        return bool(a != b)

    cross: list[Kernel] = [fails]
    base: list[Kernel] = [baseline]
    if sides == 2:
        cross.append(differ)
        base.append(differ)
    return cross, base


def _any_tool(pool: EvidencePool, fp: str) -> bool:
    return any(k for k in pool.get(fp).keys("tools") if k)


def layer_never_varied(job: EffectJob, pool: EvidencePool) -> str:
    """Why a relation is not exercised although its transform changed inputs: a ``tools``
    relation on an agent that called no tool in any draw (checked after its first epoch)."""
    rel = job.result.relation
    if rel.layer != "tools":
        return ""
    for c in job.candidates:
        for fp in (c.source.fp, c.follow_up.fp):
            if any(k for k in pool.get(fp).keys("tools") if k):
                return ""
    return "the agent called no tool in any draw: a tools relation has nothing to compare"


def reference_of(keys: Sequence[str]) -> str:
    """The modal verdict of non-empty ``keys`` (:func:`~agentverity_props.decide.modal`)."""
    ref = modal(keys)
    assert ref is not None, "reference_of needs at least one key"
    return ref


def _usable(pool: EvidencePool, fp: str, layer: str) -> list[str]:
    return [k for k in pool.get(fp).keys(layer) if k is not None]


def _missing(obs: Observation | None, what: str, *, ran_out: bool = False) -> str:
    if obs is None and ran_out:
        return f"the recording ran out: it holds no further {what} draw"
    if obs is None:
        return f"a {what} draw was not made (budget, interrupt or failure)"
    if obs.error is not None:
        return f"a {what} draw failed: {obs.error.kind}"
    reason = obs.no_decision.reason if obs.no_decision else "?"
    return f"a {what} draw had no verdict ({reason})"


def end_pending(jobs: Sequence[EffectJob], *, sampled: bool) -> None:
    """The end of a relation decision: every candidate still pending was scored in the
    pooled rounds with no sign of a localised violation (``clean``), except, when the epochs
    ``sampled`` the inputs, one whose input no epoch drew (``undecided``, ``NOT_DRAWN``)."""
    for j in jobs:
        for c in j.candidates:
            if c.outcome.status != CandidateStatus.PENDING:
                continue
            if sampled and c.outcome.follow_up is None:
                c.outcome.status = CandidateStatus.UNDECIDED
                c.outcome.note = NOT_DRAWN
            else:
                c.outcome.status = CandidateStatus.CLEAN


def beyond_chance(rel: Relation, sources: Sequence[str], follow_ups: Sequence[str], *,
                  level: float = QUICK_ADMIT_LEVEL) -> bool:
    """Whether an input's follow-up draws violate against the source's modal verdict more
    often than its source draws do, beyond chance (a one-sided Fisher exact test at
    ``level``); for an invariant relation also the reverse (the source draws off the
    follow-ups' modal verdict more often than the follow-ups are). A selection rule only:
    the input's own test is valid whatever chose it.

    >>> r = Relation("shout", "invariant", str.upper)
    >>> beyond_chance(r, ["allow"] * 5, ["block"] * 3)
    True
    >>> beyond_chance(r, ["allow", "allow", "block", "allow"], ["allow", "block", "allow"])
    False
    """
    if not sources or not follow_ups:
        return False
    ref = reference_of(sources)
    f_v = sum(not rel.holds(ref, f) for f in follow_ups)
    s_v = sum(rel.baseline_violates(ref, x) for x in sources)
    if fisher_tail(s_v, len(sources), f_v, len(follow_ups)) <= level:
        return True
    if not two_sided(rel):
        return False
    ref_f = reference_of(follow_ups)
    s_off = sum(x != ref_f for x in sources)
    f_off = sum(f != ref_f for f in follow_ups)
    return fisher_tail(f_off, len(follow_ups), s_off, len(sources)) <= level


def admitted(jobs: Sequence[EffectJob], pool: EvidencePool, *, most: int | None = None
             ) -> list[tuple[float, Candidate]]:
    """The candidates to test one by one, most suspicious first: every input the per-input
    screen flagged (relations/_screen.py); of a relation VIOLATED by its pooled test (it
    needs counterexamples, not a verdict) at most the ``VIOLATED_ADMITTED`` most suspicious
    of them (of all its inputs, by suspicion, if it was not screened); of a relation neither
    screened nor VIOLATED, the inputs whose draws differ beyond chance
    (:func:`beyond_chance`); ``most``: at most that many of each relation otherwise."""
    scored = []
    for j in jobs:
        layer = j.result.relation.layer
        mine = []
        for c in j.candidates:
            s = suspicion(j.result.relation, _usable(pool, c.source.fp, layer),
                          _usable(pool, c.follow_up.fp, layer))
            c.outcome.suspicion = s
            if j.screen is not None:
                if j.screen.get(id(c)) == "flagged":
                    mine.append((s, c))
            elif j.test.status == "violated":
                if s >= ADMIT_SUSPICION:
                    mine.append((s, c))
            elif s >= ADMIT_SUSPICION and beyond_chance(
                    j.result.relation, _usable(pool, c.source.fp, layer),
                    _usable(pool, c.follow_up.fp, layer)):
                mine.append((s, c))
        if j.test.status == "violated":
            mine = sorted(mine, key=lambda t: -t[0])[:VIOLATED_ADMITTED]
        elif most is not None and j.screen is None:
            # no screen ran (profile quick): only the most suspicious of each relation of
            # those whose draws differ beyond chance
            mine = sorted(mine, key=lambda t: -t[0])[:most]
        scored += mine
    scored.sort(key=lambda t: -t[0])
    return scored


async def localise(engine: Engine, pool: EvidencePool, jobs: Sequence[EffectJob], *,
                   alpha: float, max_rounds: int = 60, seed: int = 0,
                   progress: Callable[[int], None] | None = None,
                   most: int | None = None, confirm_all: bool = False,
                   sampled: bool = False) -> int:
    """Test the admitted candidates one by one (:func:`admitted`), each at ``alpha / m``
    where ``m`` is how many were admitted (a :class:`LocalTest` on the same scores as the
    pooled test, against every earlier draw of the input and of its follow-up); the rest end
    ``clean``. ``m`` is known before any local draw and each test is valid given the draws
    that chose it, so the family-wise error is at most ``alpha`` whatever ``m`` turns out to
    be. Rounds of every admitted candidate run together, one fresh source draw per input
    shared by its candidates. Every input of a relation admitted by suspicion is first
    brought to ``LOCAL_MIN_SOURCES`` source draws, unless the pooled epochs ``sampled`` the
    inputs: then only the drawn ones are judged, and a candidate never drawn stays pending
    (a later epoch may draw it). Returns the family size."""
    # suspicion admits the inputs of a relation without a screen, or of one VIOLATED by its
    # pooled test: their sources need enough draws first; a screen's flags need none
    from ._screen import _toolless
    by_suspicion = [j for j in jobs if (j.screen is None and not _toolless(j, pool))
                    or j.test.status == "violated"]
    if by_suspicion and not sampled:
        await _top_up_sources(engine, pool, by_suspicion, seed)
    chosen = [c for _, c in admitted(jobs, pool, most=most)]
    m = max(1, len(chosen))
    picked = {id(c) for c in chosen}
    for j in jobs:
        for c in j.candidates:
            if id(c) not in picked and c.outcome.status == CandidateStatus.PENDING and not (
                    sampled and c.outcome.follow_up is None):
                c.outcome.status = CandidateStatus.CLEAN
                c.outcome.source = reference(pool, c.source.fp, j.result.relation.layer)
    tests = {id(c): LocalTest(bonferroni(alpha, m), 2 if two_sided(c.relation) else 1)
             for c in chosen}

    async def run_rounds(live: list[Candidate]) -> None:
        rng = random.Random(f"local:{seed}")
        exhausted: set[tuple[str, int]] = set()
        rounds = 0
        while live and not engine.stopping:
            rounds += 1
            plan: list[tuple[Probe, int]] = []
            s_idx: dict[str, int] = {}
            f_idx: dict[int, int] = {}
            for c in live:
                if c.source.fp not in s_idx:
                    s_idx[c.source.fp] = engine.allocate(c.source, 1)[0]
                    plan.append((c.source, s_idx[c.source.fp]))
                f_idx[id(c)] = engine.allocate(c.follow_up, 1)[0]
                plan.append((c.follow_up, f_idx[id(c)]))
            if not engine.can_afford(len(plan)):
                for c in live:
                    _end(c, CandidateStatus.INCOMPLETE, "draws not made (budget or interrupt)",
                         tests[id(c)], pool, rounds - 1)
                return
            frozen = {}
            for c in live:
                layer = c.relation.layer
                frozen[(c.source.fp, layer)] = _usable(pool, c.source.fp, layer)
                frozen[(c.follow_up.fp, layer)] = _usable(pool, c.follow_up.fp, layer)
            got = await draw_all(engine, pool, plan, rng=rng, exhausted=exhausted)
            if progress is not None:
                progress(len(plan))
            still = []
            for c in live:
                rel, t, layer = c.relation, tests[id(c)], c.relation.layer
                s_obs = got.get((c.source.fp, s_idx[c.source.fp]))
                f_obs = got.get((c.follow_up.fp, f_idx[id(c)]))
                c.outcome.draws += (s_obs is not None) + (f_obs is not None)
                s_key = None if s_obs is None else s_obs.key(layer)
                f_key = None if f_obs is None else f_obs.key(layer)
                if s_key is None or f_key is None:
                    _end(c, CandidateStatus.INCOMPLETE,
                         _missing(s_obs if s_key is None else f_obs,
                                  "source" if s_key is None else "follow-up",
                                  ran_out=((c.source.fp, s_idx[c.source.fp]) if s_key is None
                                           else (c.follow_up.fp, f_idx[id(c)]))
                                  in exhausted), t, pool, rounds)
                    continue
                past, past_f = frozen[(c.source.fp, layer)], frozen[(c.follow_up.fp, layer)]
                if past:
                    t.feed(0, forward_score(rel, past, f_key, s_key))
                if t.sides == 2 and past_f:
                    t.feed(1, reverse_score(past_f, f_key, s_key))
                if t.confirmed:
                    _end(c, CandidateStatus.CONFIRMED, "", t, pool, rounds)
                elif rounds >= max_rounds:
                    _end(c, CandidateStatus.UNDECIDED, f"not confirmed within {max_rounds} rounds",
                         t, pool, rounds)
                elif t.futile(rounds, max_rounds):
                    _end(c, CandidateStatus.UNDECIDED, "futile: at its pace so far the test would "
                         f"not confirm within {max_rounds} rounds", t, pool, rounds)
                else:
                    still.append(c)
            live = still
        for c in live:
            _end(c, CandidateStatus.INCOMPLETE, "draws not made (interrupt)", tests[id(c)],
                 pool, rounds)

    # the most suspicious FIRST_LOCAL of each relation first; a relation's other admitted
    # inputs only if none of those confirmed (a relation with one counterexample is
    # VIOLATED: testing fewer than m inputs at alpha / m each keeps the family's error)
    by_rel: dict[int, list[Candidate]] = {}
    for c in chosen:
        by_rel.setdefault(id(c.relation), []).append(c)
    first = len(chosen) if confirm_all else FIRST_LOCAL  # every one, when asked
    await run_rounds([c for cs in by_rel.values() for c in cs[:first]])
    rest: list[Candidate] = []
    for cs in by_rel.values():
        if any(c.outcome.status == CandidateStatus.CONFIRMED for c in cs[:first]):
            for c in cs[first:]:
                _end(c, CandidateStatus.UNDECIDED, "not tested on its own: another input "
                     "of the relation is a confirmed counterexample", tests[id(c)], pool, 0)
        else:
            rest += cs[first:]
    if rest and not engine.stopping:
        await run_rounds(rest)
    return m


async def _top_up_sources(engine: Engine, pool: EvidencePool, jobs: Sequence[EffectJob],
                          seed: int) -> None:
    """Bring every input to ``LOCAL_MIN_SOURCES`` usable source draws (shared by all its
    relations) before suspicion is judged: an input whose verdict is split 65/35 shows only
    its minority verdict on all of ``k`` draws with probability 0.35^k, and a bug that always
    gives the minority verdict is then invisible to it (4% at k = 3)."""
    seen: dict[str, Probe] = {}
    for j in jobs:
        for c in j.candidates:
            seen.setdefault(c.source.fp, c.source)
    plan: list[tuple[Probe, int]] = []
    for fp, probe in seen.items():
        layers = {j.result.relation.layer for j in jobs if fp in j.by_input}
        have = min(len(_usable(pool, fp, layer)) for layer in layers)
        for i in engine.allocate(probe, max(0, LOCAL_MIN_SOURCES - have)):
            plan.append((probe, i))
    if plan and engine.can_afford(len(plan)):
        await draw_all(engine, pool, plan)


#: Admitted inputs of one relation tested first (the others only if none of them confirms).
FIRST_LOCAL = 3
#: Source draws every input has before its suspicion is judged (see ``_top_up_sources``).
LOCAL_MIN_SOURCES = 3


def _end(c: Candidate, status: CandidateStatus, note: str, t: LocalTest, pool: EvidencePool,
         rounds: int) -> None:
    out, rel = c.outcome, c.relation
    layer = rel.layer
    src, fus = _usable(pool, c.source.fp, layer), _usable(pool, c.follow_up.fp, layer)
    ref = reference_of(src) if src else None
    out.status, out.note = status, note
    out.source = ref
    if fus:
        if out.follow_up is None and ref is not None:
            # no screen or epoch scored this pair before: its raw flip is its first
            # follow-up draw against the source's reference, as theirs is
            out.raw = not rel.holds(ref, fus[0])
        out.follow_up = reference_of(fus)
    out.decision = {
        "test": "betting e-process on the input's own scores (H0: mean score <= 0)",
        "call": str(status), "alpha": t.alpha, "e_violation": t.e_value, "rounds": rounds,
        "p_value": min(1.0, 1.0 / t.e_value) if t.e_value > 0 else 1.0,
        "side_means": [t.sum[i] / t.n[i] if t.n[i] else None for i in range(t.sides)],
        "follow_up_violations": sum(not rel.holds(ref, f) for f in fus) if ref else 0,
        "follow_up_draws": len(fus),
        "source_violations": sum(rel.baseline_violates(ref, x) for x in src) if ref else 0,
        "source_draws": len(src)}


#: Weight, in inputs, of the meter's pair disagreement in the noise the rounds are shaped for.
NOISE_PRIOR_INPUTS = 10


def prior_variance(pair_disagreement: float | None, sources: int = 2,
                   follow_ups: int = 2) -> float:
    """The exact scores' variance to assume before any epoch: the larger side's variance of
    a score of this shape when the relation holds, for a binary verdict of the meter's pair
    disagreement (relations/_rounds.py ``score_variance``), a little above it; unknown: the
    largest plausible, 0.25.

    >>> prior_variance(None), round(prior_variance(0.255), 3), round(prior_variance(0.255, 6, 3), 3)
    (0.25, 0.146, 0.059)
    """
    if pair_disagreement is None:
        return 0.25
    return min(0.25, score_variance(pair_disagreement, sources, follow_ups) + 0.002)


def effect_jobs(groups: Sequence[tuple[RelationResult, list[Candidate]]], *, tolerance: float,
                alpha: float, holds_error: float, pair_disagreement: float | None,
                verdict_prior_only: bool = True, family: int | None = None,
                violation: float | None = None) -> list[EffectJob]:
    """One pooled job per relation with candidates, as ``run`` and ``@agent_property`` both
    decide them: each relation's :class:`~agentverity_props.decide.EffectTest` at its share
    of ``alpha`` (:func:`~agentverity_props.decide.relation_alpha_split` over the relations
    kept, then over the relation's sides), ``holds_error`` (the rate of a wrong HOLDS) per
    relation, and a prior variance from
    the agent's pair disagreement (``verdict_prior_only``: only for a verdict-layer relation,
    the layer that disagreement was measured on); candidates grouped by input. ``family``:
    the relations ``alpha`` is split over (default: those with candidates). ``violation``:
    the effect a VIOLATED shows exceeded (None: the tolerance)."""
    kept = [(res, cands) for res, cands in groups if cands]
    alpha_each = relation_alpha_split(alpha, len(kept) if family is None else family)["pooled"]
    jobs = []
    for res, cands in kept:
        rel = res.relation
        pair = pair_disagreement if rel.layer == "verdict" or not verdict_prior_only else None
        test = EffectTest(tolerance=tolerance, alpha=alpha_each, beta=holds_error,
                          sides=2 if two_sided(rel) else 1,
                          prior_var=prior_variance(pair, *round_sizes(
                              pair_disagreement, len(kept), tolerance=tolerance,
                              beta=holds_error)),
                          violation=violation)
        job = EffectJob(res, cands, test)
        for c in cands:
            job.by_input.setdefault(c.source.fp, []).append(c)
        jobs.append(job)
    return jobs


def summarise(job: EffectJob) -> dict[str, Any]:
    """The pooled effect of one relation, as stored in reports."""
    from ._screen import sensitivity

    st = job.test.state()
    st.update({"note": job.note, "incomplete": job.incomplete, "epochs": job.test.batches,
               "per_input": sensitivity(job, job.screen_beta),
               "decided_at_call": job.decided_at, "prevalence": prevalence(job)})
    return st


#: The confidence of the prevalence's upper bound (the screen's misses, counted binomially).
PREVALENCE_LEVEL = 0.95


def prevalence(job: EffectJob) -> dict[str, Any] | None:
    """How many of a relation's inputs violate it: the share of its exercised inputs with a
    follow-up violating on a share at least the screen's size beyond the input's own noise,
    read from the per-input screen and the local tests (None when no input was screened,
    or none was confirmed: a relation that HOLDS reads its per-input statement instead).

    * ``lower``: the confirmed inputs' share; every confirmation is made at the local tests'
      family-wise alpha, so it is a lower bound with at least that confidence.
    * ``upper``: every input the screen did not clear, plus the violating inputs it may have
      cleared: each is cleared with probability at most the screen's beta, so their count
      is at most the ``PREVALENCE_LEVEL`` quantile of Binomial(cleared, beta).
    * ``estimate``: the confirmed inputs, plus the flagged inputs left untested counted at
      the share of the tested flagged inputs that were confirmed, over the inputs."""
    if job.screen is None:
        return None
    inputs: dict[str, list[Any]] = {}
    for c in job.candidates:
        inputs.setdefault(c.source.fp, []).append(c)
    n = len(inputs)
    confirmed = cleared = untested = tested = 0
    for cands in inputs.values():
        if any(c.outcome.status == CandidateStatus.CONFIRMED for c in cands):
            confirmed += 1
        elif all(job.screen.get(id(c)) == "cleared" for c in cands):
            cleared += 1
        elif any(c.outcome.note.startswith("not tested on its own") for c in cands):
            untested += 1
        if any(job.screen.get(id(c)) == "flagged" and not c.outcome.note.startswith(
                "not tested on its own") for c in cands):
            tested += 1
    if not n or not confirmed:
        return None
    missed = binomial_quantile(PREVALENCE_LEVEL, cleared, job.screen_beta)
    rate = confirmed / max(tested, confirmed)
    return {"estimand": ("share of the exercised inputs with a follow-up violating on a share "
                         f">= {job.screen_size:g} of its draws beyond the input's own noise"),
            "inputs": n, "confirmed": confirmed, "flagged_untested": untested,
            "cleared": cleared, "estimate": min(1.0, (confirmed + untested * rate) / n),
            "lower": confirmed / n, "upper": min(1.0, (n - cleared + missed) / n),
            "upper_level": PREVALENCE_LEVEL}
