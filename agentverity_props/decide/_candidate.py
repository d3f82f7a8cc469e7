"""The decision for one relation candidate, with both error rates controlled.

A *candidate* is (relation, source ``x``, follow-up ``y``). Every verdict is compared with a
*reference* label ``r``: the modal verdict of the source draws made so far (ties go to the
earliest label seen), so the reference is always fixed before the draws it scores. A draw
*violates* when the relation fails between ``r`` and the draw:

- ``v = P(a follow-up draw violates against r)``,
- ``u = P(a fresh source re-draw violates against r)`` — the agent's own noise.

**H0 (no violation):** ``v <= u`` — the follow-up violates no more often than a re-draw of the
source (for an invariant relation: ``y`` gets the same verdict distribution as ``x``; for a
monotone one: ``y``'s verdicts are stochastically at least as high). It holds for *every*
reference label, which is why the reference may move as source draws arrive.

**H1 (a violation worth finding):** ``v >= v1`` against the source's modal verdict, where
``v1 = 1 - miss`` is the stated alternative (see :class:`EvidenceLearner`): before any
violation is confirmed, a follow-up that violates at least as reliably as the agent answers
(``miss = 1.5 x`` the agent's estimated noise times its landing share: the chance that a
violating follow-up's own noise lands on the reference label); after one is confirmed, at
least as often as the confirmed violations did (``miss = 1.5 x`` their estimated miss rate,
shrunk toward the noise's, and never below ``NOISE_MARGIN x`` the noise's). ``miss`` never
goes below ``MISS_FLOOR`` (0.5%) nor above ``MISS_CEILING`` (30%).

Two e-processes run side by side, each a product of per-draw factors whose conditional
expectation is at most one under the hypothesis it tests (so each is a nonnegative
supermartingale, and Ville's inequality makes it valid under optional stopping, whatever the
order of draws, the reference moves, the bets, or the choice of which draws to make):

*Violation e-process* ``E_v`` (against H0), fed only by *rounds*: one fresh source re-draw and
one fresh follow-up draw, independent given the past. With outcome ``(f, s)`` (follow-up /
source violates) the factor is ``A`` for (1, 0), ``B`` for (0, 1) and ``c`` for (0, 0) and
(1, 1). Its expectation under ``(v, u)`` is bilinear, so its maximum over ``{v <= u}`` is on the
boundary; it is at most one exactly when ``B <= 1``, ``c <= 1`` and ``A + B + 2c <= 4``. The
bets are the growth-optimal ones for a plug-in estimate of the round outcome probabilities
(the alternative as a prior, then this candidate's own rounds): ``A = 4 p(1,0)``,
``B = 4 p(0,1)``, ``c = 2 p(concordant)``, projected onto the constraints. Violation confirmed
when ``E_v >= 1 / alpha_candidate``.

*Pass e-process* ``E_p`` (against H1), fed by every follow-up draw (screens included) made
once the reference is *settled* (see :meth:`CandidateTest.next_draws`; draws made before
feed only the violation e-process): factor
``C`` for a draw that does not violate and ``D`` for one that does, with
``miss * C + v1 * D <= 1`` (at most one whenever ``v >= v1``). The bets are the likelihood
ratio of a plug-in noise rate ``q`` against ``v1`` (``C = (1-q)/miss``, ``D = q/v1``), never
more than needed to reach the threshold. Candidate dismissed (passes) when
``E_p >= 1 / beta``.

So ``P(confirm | H0) <= alpha_candidate`` and ``P(dismiss | H1) <= beta`` for every candidate,
with no assumption on the agent beyond independent draws. Neither crossing within
``max_draws`` draws leaves the candidate *undecided* (never a pass, never a violation).

>>> t = CandidateTest(alpha=0.001, beta=0.01, alternative=Alternative(0.005, "prior"),
...                   noise=0.001)
>>> t.screen(False).call                # a quiet agent: one clean screen dismisses
'pass'
>>> t = CandidateTest(alpha=0.001, beta=0.01, alternative=Alternative(0.005, "prior"),
...                   noise=0.001)
>>> t.screen(True) is None              # a flip: rounds decide
True
>>> t.next_draws()
('source', 'follow_up')
>>> d = None
>>> while d is None:                     # rounds where only the follow-up violates
...     d = t.round(follow_up=True, source=False)
>>> d.call, t.rounds
('violation', 6)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import InvalidArgument
from ._rules import Decision

#: A two-sided candidate does not pass while its reverse e-process is at least this high
#: (evidence that the follow-up is more decided than the source: more rounds decide it).
REVERSE_HOLD = 3.0
#: The smallest miss rate an alternative may state: a violation that shows 99.5% of the time.
MISS_FLOOR = 0.005
#: The largest: a violation that shows at least 70% of the time.
MISS_CEILING = 0.3
#: Floor on every plug-in probability, so that one surprising draw never zeroes a process.
P_FLOOR = 0.02
#: Weight (in pseudo-observations) of the alternative/noise prior in the plug-in estimates.
PRIOR_WEIGHT = 2.0
#: A learned alternative never states a miss rate below this multiple of the noise's.
NOISE_MARGIN = 1.25
#: Draws one candidate may spend (source re-draws and follow-ups) before it is undecided.
MAX_DRAWS = 200
#: Draws before a candidate may be declared futile, and how far behind pace it must be.
FUTILITY_AFTER = 24
FUTILITY_SLACK = 2.0
#: Source re-draws pooled before the noise estimate is trusted (screens are rounds until then).
NOISE_WARMUP = 30


@dataclass(frozen=True)
class Alternative:
    """The stated alternative H1: a violating follow-up misses at most ``miss`` of the time."""

    miss: float
    learned_from: Literal["prior", "confirmed"]

    @property
    def v1(self) -> float:
        return 1.0 - self.miss

    def to_dict(self) -> dict[str, Any]:
        return {"v1": self.v1, "miss": self.miss, "learned_from": self.learned_from}


def round_bets(p_plus: float, p_minus: float, p_conc: float) -> tuple[float, float, float]:
    """Growth-optimal ``(A, B, c)`` for round-outcome probabilities, within the constraints.

    Maximises ``p+ log A + p- log B + pc log c`` subject to ``B <= 1``, ``c <= 1`` and
    ``A + B + 2c <= 4`` (the set on which the factor's expectation is at most one under every
    null ``v <= u``; see the module docstring).

    >>> round_bets(0.9, 0.05, 0.05)
    (3.6, 0.2, 0.1)
    >>> round_bets(0.2, 0.1, 0.7)   # mostly concordant: c capped at 1, sign-test odds
    (1.3333333333333333, 0.6666666666666666, 1.0)
    """
    tot = p_plus + p_minus + p_conc
    if tot <= 0:
        raise InvalidArgument("round_bets needs positive probabilities")
    pp, pm, pc = p_plus / tot, p_minus / tot, p_conc / tot
    options: list[tuple[float, float, float]] = []
    a, b, c = 4 * pp, 4 * pm, 2 * pc
    if b <= 1 and c <= 1:
        options.append((a, b, c))
    s = pp + pm  # c = 1 active: A + B = 2
    if s > 0:
        a2, b2 = 2 * pp / s, 2 * pm / s
        options.append((a2, b2, 1.0) if b2 <= 1 else (1.0, 1.0, 1.0))
    s = pp + pc  # B = 1 active: A + 2c = 3
    if s > 0:
        a3, c3 = 3 * pp / s, 1.5 * pc / s
        options.append((a3, 1.0, c3) if c3 <= 1 else (1.0, 1.0, 1.0))
    options.append((1.0, 1.0, 1.0))

    def growth(o: tuple[float, float, float]) -> float:
        return sum(p * math.log(x) for p, x in zip((pp, pm, pc), o, strict=True)
                   if p > 0 and x > 0) if all(x > 0 or p == 0 for p, x in
                                                 zip((pp, pm, pc), o, strict=True)) else -math.inf

    return max(options, key=growth)


class CandidateTest:
    """Both e-processes of one candidate, fed draw by draw (see the module docstring).

    Feed the screen (one follow-up draw against the reference), then whatever
    :meth:`next_draws` asks for: a *round* (``("source", "follow_up")``) or a single follow-up
    draw (``("follow_up",)``) while the follow-ups agree with the reference and the agent is
    quiet. :attr:`decision` is set once either process crosses its threshold, or when the
    draw allowance runs out (``"undecided"``).

    Args:
        alpha: the false-violation rate of this candidate (the family's share).
        beta: the false-pass rate against the alternative.
        alternative: H1, fixed for this candidate when it starts (predictable).
        noise: the pooled estimate of the agent's noise, used only to size bets.
        max_draws: draws (source and follow-up) before the candidate is undecided.
        futility: stop early as undecided when neither process keeps the pace it needs
            (``run`` uses it; a shrinking property does not, where a lost step costs more than
            the calls).
    """

    estimand = ("v - u: how much more often a follow-up draw violates the relation against "
                "the source's modal verdict than a fresh source re-draw does")

    def __init__(self, *, alpha: float, beta: float, alternative: Alternative,
                 noise: float, max_draws: int = MAX_DRAWS, futility: bool = False,
                 two_sided: bool = False) -> None:
        for name, val in (("alpha", alpha), ("beta", beta)):
            if not (0.0 < val < 1.0):
                raise InvalidArgument(f"CandidateTest: {name}={val!r} must be in (0, 1)")
        if max_draws < 1:
            raise InvalidArgument("CandidateTest: max_draws must be >= 1")
        self.alpha, self.beta, self.alt = alpha, beta, alternative
        #: an invariant relation is also tested the other way round (a follow-up made *more*
        #: decided than its source: the source's draws leave the follow-up's modal verdict
        #: more often than the follow-up's own do); alpha is then split between the two
        self.two_sided = two_sided
        self.alpha_side = alpha / 2 if two_sided else alpha
        self.e_reverse = 1.0
        self.rcounts = {"fs": 0, "f": 0, "s": 0, "none": 0}  # reverse round outcomes
        self.noise = min(max(noise, 0.0), 1.0)
        self.max_draws = max_draws
        self.futility = futility
        self.e_violation = 1.0
        self.e_pass = 1.0
        self.f_n = self.f_viol = 0         # every follow-up draw (screen included)
        self.s_n = self.s_viol = 0         # source re-draws (rounds only)
        self.counts = {"fs": 0, "f": 0, "s": 0, "none": 0}  # round outcomes
        self.rounds = 0
        self.screened = False
        self.last_follow_up_violates: bool | None = None
        self.decision: Decision | None = None
        self._trail: list[tuple[int, float, float]] = []  # (draws, log e_v, log e_p)

    # -- feeding ---------------------------------------------------------------------------

    @property
    def draws(self) -> int:
        return self.f_n + self.s_n

    def screen(self, follow_up_violates: bool, *, settled: bool = True) -> Decision | None:
        """The screen: the first follow-up draw against the reference."""
        return self.follow_up(follow_up_violates, settled=settled)

    def follow_up(self, violates: bool, *, settled: bool = True) -> Decision | None:
        """One follow-up draw on its own: feeds the pass process only (and only when the
        reference was settled before the draw; see :meth:`next_draws`)."""
        if self.decision is None:
            self._count_follow_up(violates, feed_pass=settled)
            self._after()
        return self.decision

    def round(self, *, follow_up: bool, source: bool, settled: bool = True,
              reverse: tuple[bool, bool] | None = None) -> Decision | None:
        """One round: a fresh follow-up and a fresh source re-draw, both scored against the
        reference fixed before they were drawn. ``reverse`` (two-sided candidates): whether
        the source draw and the follow-up draw are off the follow-up's modal verdict fixed
        before the round (the reverse e-process: the same bets with the roles swapped)."""
        if self.decision is None and reverse is not None and self.two_sided:
            s_off, f_off = reverse
            a, b, c = self._round_bets(self.rcounts)
            self.e_reverse *= a if s_off and not f_off else (
                b if f_off and not s_off else c)
            self.rcounts["fs" if s_off and f_off else "f" if s_off
                         else "s" if f_off else "none"] += 1
        if self.decision is None:
            a, b, c = self._round_bets()
            self.e_violation *= a if follow_up and not source else (
                b if source and not follow_up else c)
            self.counts["fs" if follow_up and source else "f" if follow_up
                        else "s" if source else "none"] += 1
            self.rounds += 1
            self.s_n += 1
            self.s_viol += source
            self._count_follow_up(follow_up, feed_pass=settled)
            self._after()
        return self.decision

    def next_draws(self, *, settled: bool = True) -> tuple[str, ...]:
        """What to draw next: a follow-up alone while the last one did not violate and the
        reference is *settled* (the pass e-process needs nothing else), else a round (the
        violation e-process needs a source re-draw beside the follow-up, and an unsettled
        reference needs more source draws). Follow-ups alone are drawn only while the pass
        evidence is ahead (``e_pass >= 1``): a candidate that looks like a violation gets
        rounds, which feed both processes.

        The reference is settled when the source draws back it by a lead large enough that
        a reference made of noise is unlikely (:meth:`EvidenceLearner.settling_lead`); until
        then follow-up draws do not feed the pass e-process, because a follow-up that agrees
        with a noise reference is no evidence of a pass."""
        if settled and self.last_follow_up_violates is False and self.e_pass >= 1.0 \
                and self.e_reverse <= 1.0:
            return ("follow_up",)
        return ("source", "follow_up")

    def give_up(self, reason: str) -> Decision:
        """End without a decision (budget, failure): the candidate is undecided."""
        if self.decision is None:
            self.decision = Decision("undecided", max(self.e_violation, self.e_pass),
                                     self.draws, self.alpha, {**self.state(), "why": reason})
        return self.decision

    # -- internals ---------------------------------------------------------------------------

    def _plug_in_noise(self) -> float:
        q = (self.f_viol + PRIOR_WEIGHT * self.noise) / (self.f_n + PRIOR_WEIGHT)
        return min(max(q, 0.001), 0.999)

    def _count_follow_up(self, violates: bool, *, feed_pass: bool) -> None:
        self.screened = True  # the first follow-up draw, alone or in a round, is the screen
        if feed_pass:
            self._feed_pass(violates)
        self.f_n += 1
        self.f_viol += violates
        self.last_follow_up_violates = violates

    def _feed_pass(self, violates: bool) -> None:
        miss, v1 = self.alt.miss, self.alt.v1
        q = self._plug_in_noise()
        if q >= v1:
            c_bet = d_bet = 1.0
        else:
            # never bet more than reaching 1/beta needs: what is left protects against a
            # violating draw (D = (1 - miss*C) / v1 keeps the factor's mean at most one)
            need = 1.0 / (self.beta * self.e_pass)
            c_bet = max(1.0, min((1.0 - q) / miss, need))
            d_bet = (1.0 - miss * c_bet) / v1
        self.e_pass *= d_bet if violates else c_bet

    def _round_bets(self, counts: dict[str, int] | None = None) -> tuple[float, float, float]:
        counts = self.counts if counts is None else counts
        v1, u1 = self.alt.v1, min(max(self.noise, 0.0), 0.5)
        prior = {"f": v1 * (1 - u1), "s": u1 * (1 - v1)}
        prior["conc"] = 1.0 - prior["f"] - prior["s"]
        n = sum(counts.values()) + PRIOR_WEIGHT
        pf = (counts["f"] + PRIOR_WEIGHT * prior["f"]) / n
        ps = (counts["s"] + PRIOR_WEIGHT * prior["s"]) / n
        pc = (counts["fs"] + counts["none"] + PRIOR_WEIGHT * prior["conc"]) / n
        pf, ps, pc = (max(p, P_FLOOR) for p in (pf, ps, pc))
        return round_bets(pf, ps, pc)

    def _after(self) -> None:
        eps = 1e-9
        if max(self.e_violation, self.e_reverse) >= (1.0 - eps) / self.alpha_side:
            self.decision = Decision("violation", max(self.e_violation, self.e_reverse),
                                     self.draws, self.alpha, self.state())
        elif self.e_pass >= (1.0 - eps) / self.beta and self.e_reverse < REVERSE_HOLD:
            self.decision = Decision("pass", self.e_pass, self.draws, self.beta, self.state())
        elif self.draws >= self.max_draws:
            self.decision = Decision("undecided", max(self.e_violation, self.e_pass),
                                     self.draws, self.alpha,
                                     {**self.state(), "why": f"{self.max_draws} draws"})
        elif self._futile():
            self.decision = Decision("undecided", max(self.e_violation, self.e_pass),
                                     self.draws, self.alpha,
                                     {**self.state(), "why": "futile: at the pace so far neither "
                                      f"e-process would cross within {self.max_draws} draws"})

    def _futile(self) -> bool:
        """Whether neither process, at its pace so far, would reach its threshold within the
        draws left (checked from ``FUTILITY_AFTER`` draws on). The pace is the better of the
        average since the start and over the last ``FUTILITY_AFTER`` draws: a candidate whose
        reference settled late (a 65/35 input first seen on its minority verdict) lost wealth
        before it and gains fast after. Stopping early only ever turns a candidate undecided,
        so it costs no error rate, only calls saved."""
        n = self.draws
        self._trail.append((n, math.log(max(self.e_violation, 1e-300)),
                            math.log(max(self.e_pass, 1e-300))))
        if not self.futility or n < FUTILITY_AFTER:
            return False
        left = self.max_draws - n
        past = next((t for t in self._trail if t[0] >= n - FUTILITY_AFTER), self._trail[0])

        def needed(log_e: float, log_then: float, threshold: float) -> float:
            recent = (log_e - log_then) / max(1, n - past[0])
            pace = max(log_e / n, recent)
            return math.inf if pace <= 0 else (math.log(threshold) - log_e) / pace

        _, lv, lp = self._trail[-1]
        return min(needed(lv, past[1], 1.0 / self.alpha),
                   needed(lp, past[2], 1.0 / self.beta)) > FUTILITY_SLACK * left

    def state(self) -> dict[str, Any]:
        return {"test": "two e-processes: violation (H0: v <= u) and pass (H1: v >= v1)",
                "alpha": self.alpha, "beta": self.beta, "alternative": self.alt.to_dict(),
                "e_violation": self.e_violation, "e_pass": self.e_pass,
                "follow_up_violations": self.f_viol, "follow_up_draws": self.f_n,
                "source_violations": self.s_viol, "source_draws": self.s_n,
                "e_reverse": self.e_reverse if self.two_sided else None,
                "rounds": self.rounds,
                "p_value": min(1.0, (2.0 if self.two_sided else 1.0)
                               / max(self.e_violation, self.e_reverse, 1e-300))}


class EvidenceLearner:
    """What one test run has learned about the agent, shared by its candidates.

    Only ever *past* outcomes are used, and only to size bets and to state the alternative of
    candidates that start later, so every candidate's guarantees hold as stated.

    * noise: source re-draws that violate against their reference, pooled (prior mean
      ``prior_noise``, weight one draw); until ``NOISE_WARMUP`` of them were seen, every
      screen is a round, so the estimate never rests on selected draws;
    * the *noise miss*: the noise times the largest share of the off-reference draws that
      landed on one label (a violating follow-up misses when its own noise lands on the
      reference label);
    * the alternative: before any violation is confirmed, ``miss = margin x`` (1.5) the noise
      miss; after, ``margin x`` the pooled miss rate of the confirmed violations' follow-up
      draws (shrunk toward the noise miss by two pseudo-draws), but never below
      ``NOISE_MARGIN x`` (1.25) the noise miss; clipped to [``MISS_FLOOR``,
      ``MISS_CEILING``].

    >>> learner = EvidenceLearner(prior_noise=0.0)
    >>> learner.alternative().learned_from
    'prior'
    """

    def __init__(self, *, prior_noise: float = 0.05, margin: float = 1.5) -> None:
        if not (0.0 <= prior_noise < 1.0):
            raise InvalidArgument(f"prior_noise={prior_noise!r} must be in [0, 1)")
        if margin < 1.0:
            raise InvalidArgument(f"margin={margin!r} must be >= 1")
        self.prior_noise, self.margin = prior_noise, margin
        self.noise_k = 0.0
        self.noise_n = 0.0
        self.conf_miss = 0
        self.conf_n = 0
        self.off_labels: dict[str, int] = {}

    def landing_share(self) -> float:
        """Of the source re-draws off their reference, the largest share that went to one
        label: how concentrated the agent's noise is (1 for a binary verdict)."""
        n = sum(self.off_labels.values())
        if n < 5 or len(self.off_labels) < 2:
            return 1.0
        return max(self.off_labels.values()) / n

    def noise(self) -> float:
        return (self.noise_k + self.prior_noise) / (self.noise_n + 1.0)

    def local_noise(self, off: int, draws: int) -> float:
        """The noise of one input: its own draws (``off`` of ``draws`` away from its modal
        verdict), shrunk toward the pooled noise by one pseudo-draw. Agents are rarely
        equally noisy on every input; this keeps quiet inputs cheap."""
        return (off + self.noise()) / (draws + 1.0)

    def alternative(self, noise: float | None = None) -> Alternative:
        """H1 for a candidate starting now (``noise``: its input's, default the pooled)."""
        noise = self.noise() if noise is None else noise
        # a violating follow-up misses when its own noise lands on the reference label
        noise_miss = noise * self.landing_share()
        if self.conf_n:
            # the confirmed violations' miss rate, shrunk toward the noise's (two
            # pseudo-draws), and never below what the noise alone implies: confirmations are
            # selected for follow-ups that violated, so their miss rate is biased low
            rate = (self.conf_miss + PRIOR_WEIGHT * noise_miss) / (self.conf_n + PRIOR_WEIGHT)
            miss = max(self.margin * rate, NOISE_MARGIN * noise_miss)
            src: Literal["prior", "confirmed"] = "confirmed"
        else:
            miss, src = self.margin * noise_miss, "prior"
        return Alternative(min(max(miss, MISS_FLOOR), MISS_CEILING), src)

    def settling_lead(self, beta: float, noise: float | None = None) -> int:
        """How far the reference must lead the other source verdicts before follow-ups count
        as pass evidence: the smallest ``n`` with ``p^n <= beta``, where ``p`` is the chance
        that one draw lands on one given noise label (the noise times its landing share),
        but at most 6; 1 on a quiet agent, where a single source draw is the modal verdict
        but with probability at most ``beta``. The cap weakens the bound: where ``p^6 >
        beta`` (``p`` above about 0.61 at ``beta = 0.05``) a 6-draw lead is a wrong reference
        with probability up to ``p^6``, not ``beta``; such an agent is close to a coin flip
        on its noise labels, where a reference settles slowly at any lead."""
        p = (self.noise() if noise is None else noise) * self.landing_share()
        if p <= beta:
            return 1
        return min(6, math.ceil(math.log(beta) / math.log(p)))  # at most a 6-draw lead

    def observe_off_label(self, label: str) -> None:
        """A source re-draw that landed off its reference, on ``label``."""
        self.off_labels[label] = self.off_labels.get(label, 0) + 1

    def observe_noise(self, violations: int, draws: int) -> None:
        """Draws known to measure the agent's noise (source re-draws against a reference)."""
        self.noise_k += violations
        self.noise_n += draws

    @property
    def warmed_up(self) -> bool:
        """Whether enough source re-draws were seen to trust the noise estimate (until then,
        screens are rounds, so every candidate contributes one)."""
        return self.noise_n >= NOISE_WARMUP

    def observe(self, test: CandidateTest) -> None:
        """A finished candidate: its source re-draws measure noise (they are never selected
        on their own outcome, unlike the follow-ups of a dismissed candidate); a confirmed
        one's follow-ups teach the alternative."""
        self.observe_noise(test.s_viol, test.s_n)
        call = test.decision.call if test.decision else None
        if call == "violation":
            self.conf_miss += test.f_n - test.f_viol
            self.conf_n += test.f_n
