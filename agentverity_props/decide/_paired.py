"""The paired sign e-process on discordant pairs, and the interval and planning built on it.

Items are paired outcomes (run ``i`` of task ``t`` by the first arm against run ``i`` of task
``t`` by the second). An item is *discordant* when exactly one side wins it; only
discordant items carry evidence. Estimand: ``q = P(first arm wins | discordant)``.

E-value (:func:`sign_log_e`): ``E = B(1+W, 1+L) / B(1, 1) * 2^(W+L)`` for ``W`` items won by
the first arm and ``L`` by the second: the uniform mixture over ``q`` of the likelihood
ratio against ``q = 1/2``. One-sided, the same mixture restricted to ``q >= 1/2`` (a
half-uniform prior), a supermartingale under every ``q <= 1/2``. A call is made when
``E >= 1/alpha``.

The one e-process is read on two schedules:

- :class:`PairedSignTest`, after every discordant item. Valid when the items are i.i.d. (one
  task): ``E`` is a nonnegative martingale under ``q = 1/2`` and Ville's inequality bounds
  the false-call rate by ``alpha`` over any number of looks.
- :class:`PooledSign`, at round boundaries, pooled over tasks. A *round* holds one item of
  every task; with ``pi_t`` the discordance rate and ``q_t`` the win share on task ``t``, the
  expected factor of a round is ``prod_t (1 + pi_t (2u - 1)(2 q_t - 1)) <= exp((2u - 1)
  sum_t (p_At - p_Bt)) = 1`` when the mean pass rates are equal (``1 + x <= e^x``). So the
  pooled ``E``, read at round boundaries, is a supermartingale under "equal mean pass rate
  over the tasks" even when individual tasks favour different arms.

Interval for the difference ``Delta = mean_t (p_At - p_Bt) = pi (2 q - 1)``
(:func:`difference_interval`): beta-binomial mixture confidence sequences for ``pi`` (over
all items) and ``q`` (over discordant items), each at ``alpha / 2`` and read at round
boundaries (the same round argument covers the discordance-weighted means); the extreme
corners of the rectangle bound ``Delta``. Valid under continuous monitoring, conservative.

Equivalence (:class:`PooledEquivalence`): two one-sided tests of ``H+: Delta >= margin`` and
``H-: Delta <= -margin`` on the item outcomes ``x`` in {-1, 0, +1} (``Delta`` is their mean
over the tasks of a round). Each is a betting e-process read at round boundaries: a round
multiplies ``E+`` by ``prod_t (1 + lam (margin - x_t))`` with ``lam`` in ``[0, c/(1 -
margin)]`` fixed from the rounds before (a predictable plug-in, ``lam = (margin - mean) /
((margin - mean)^2 + var)`` of the past items, with one prior pseudo-item of variance
``margin``).
Its expected factor is ``prod_t (1 + lam (margin - Delta_t)) <= exp(lam sum_t (margin -
Delta_t)) <= 1`` under ``H+`` (``1 + x <= e^x``, every factor >= 0), so ``E+`` is a
supermartingale and ``P(E+ ever >= 1/alpha) <= alpha`` by Ville (``E-`` mirrors it). The
pair is *equivalent within the margin* once both have reached ``1/alpha`` (each latched when
it first does): wrongly so only if the true hypothesis among ``H+``/``H-`` was rejected,
probability <= alpha (two one-sided tests, each at alpha). Identical deterministic agents
(every item concordant) grow each by ``1 + c margin / (1 - margin)`` per item: ``ln(1/alpha)
/ ln(1 + c margin / (1 - margin))`` items, 44 at alpha 0.0125 and margin 0.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgument
from ._rules import Decision, _check_alpha, _exp, beta_cs_interval

if TYPE_CHECKING:  # numpy/scipy load on first use: `import agentverity_props` stays light
    import numpy as np

__all__ = ["PairedSignTest", "PooledEquivalence", "PooledSign", "difference_interval",
           "runs_needed", "sign_log_e", "sign_reachable"]


def sign_log_e(w: Any, l: Any, *, one_sided: bool = False) -> Any:  # noqa: E741 - W/L
    """``log E`` of the mixture sign test for ``w`` wins and ``l`` losses (module doc).

    Two-sided by default; ``one_sided=True`` for the half-uniform mixture over ``q >= 1/2``.
    Vectorised over numpy arrays.

    >>> round(math.exp(sign_log_e(9, 0)), 6)
    51.2
    >>> round(math.exp(sign_log_e(2, 0)), 6)
    1.333333
    >>> round(math.exp(sign_log_e(9, 0, one_sided=True)), 6)
    102.3
    """
    import numpy as np
    from scipy import special

    w = np.asarray(w, dtype=float)
    l = np.asarray(l, dtype=float)  # noqa: E741
    out = special.betaln(1.0 + w, 1.0 + l) + (w + l) * math.log(2.0)
    if one_sided:
        # 2 * integral_{1/2}^{1} q^w (1-q)^l dq = 2 * B(w+1, l+1) * I_{1/2}(l+1, w+1)
        tail = special.betainc(l + 1.0, w + 1.0, 0.5)
        with np.errstate(divide="ignore"):
            out = np.where(tail > 0.0, out + math.log(2.0) + np.log(tail), -np.inf)
    return float(out) if out.ndim == 0 else out


def _sign_call(wins: int, losses: int, alpha: float, one_sided: bool = False) -> str | None:
    """``"first"`` / ``"second"`` once ``E >= 1/alpha`` (never against a one-sided test)."""
    if wins == losses or sign_log_e(wins, losses, one_sided=one_sided) < math.log(1.0 / alpha):
        return None
    call = "first" if wins > losses else "second"
    return None if one_sided and call == "second" else call


class PairedSignTest:
    """Anytime-valid sign test on discordant pairs, read after every pair.

    Feed ``+1`` when the first arm wins a discordant pair, ``-1`` when the second does and
    ``0`` for a concordant pair (ignored). Estimand: ``q``, the probability that a discordant
    pair favours the first arm; H0: ``q = 1/2`` (two-sided) or ``q <= 1/2`` (one-sided).
    A call is made when ``E >= 1/alpha`` (:func:`sign_log_e`); by Ville, the false-call rate
    is at most ``alpha`` under continuous monitoring of i.i.d. pairs.

    >>> t = PairedSignTest(alpha=0.05)
    >>> d = None
    >>> while d is None:
    ...     d = t.update(+1)
    >>> d.call, d.n
    ('first', 8)
    """

    def __init__(self, alpha: float = 0.05, *, one_sided: bool = False) -> None:
        _check_alpha(alpha)
        self.alpha = alpha
        self.one_sided = one_sided
        self.estimand = ("P(first arm wins | discordant pair) "
                         + ("<= 1/2 (one-sided)" if one_sided else "= 1/2"))
        self.n = 0
        self.wins = 0
        self.losses = 0
        self.decision: Decision | None = None

    def log_e(self) -> float:
        return float(sign_log_e(self.wins, self.losses, one_sided=self.one_sided))

    def update(self, outcome: int) -> Decision | None:
        if self.decision is not None:
            return self.decision
        if outcome == 0:
            return None
        self.n += 1
        if outcome > 0:
            self.wins += 1
        else:
            self.losses += 1
        call = _sign_call(self.wins, self.losses, self.alpha, self.one_sided)
        if call is not None:
            self.decision = Decision(call, _exp(self.log_e()), self.n, self.alpha,
                                     self.state())
        return self.decision

    def state(self) -> dict[str, Any]:
        return {"rule": "paired-sign", "one_sided": self.one_sided, "wins": self.wins,
                "losses": self.losses, "discordant": self.n, "e_value": _exp(self.log_e()),
                "alpha": self.alpha}


def difference_interval(n: int, discordant: int, wins: int,
                        alpha: float) -> tuple[float, float]:
    """Anytime-valid interval for ``Delta = pi (2q - 1)`` (module doc).

    >>> difference_interval(0, 0, 0, 0.05)
    (-1.0, 1.0)
    >>> lo, hi = difference_interval(200, 60, 55, 0.05)
    >>> 0.0 < lo < 50 / 200 < hi
    True
    """
    if n == 0:
        return -1.0, 1.0
    p_lo, p_hi = beta_cs_interval(discordant, n, alpha / 2)
    if discordant:
        q_lo, q_hi = beta_cs_interval(wins, discordant, alpha / 2)
    else:
        q_lo, q_hi = 0.0, 1.0
    corners = [p * (2 * q - 1) for p in (p_lo, p_hi) for q in (q_lo, q_hi)]
    return max(-1.0, min(corners)), min(1.0, max(corners))


@dataclass
class PooledSign:
    """The two-sided sign e-process pooled over tasks, updated a round at a time.

    Attributes:
        alpha: the error rate of this verdict (already split over comparisons by the caller).
        wins / losses / ties: items won by the first arm, by the second, and concordant items.
        decision: ``"first"`` or ``"second"`` once ``E >= 1/alpha`` at a round boundary;
            latched (the call was valid when made).

    >>> s = PooledSign(0.05)
    >>> for _ in range(8):
    ...     s.add(+1)
    ...     s.end_round()
    >>> s.decision, s.decided_at_round, round(s.decided_e, 1)
    ('first', 8, 28.4)
    """

    alpha: float
    wins: int = 0
    losses: int = 0
    ties: int = 0
    rounds: int = 0
    decision: str | None = None
    decided_at_round: int | None = None
    decided_e: float | None = None
    _lo: float = -1.0
    _hi: float = 1.0

    @property
    def items(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def discordant(self) -> int:
        return self.wins + self.losses

    def log_e(self) -> float:
        return float(sign_log_e(self.wins, self.losses))

    @property
    def e_value(self) -> float:
        return _exp(self.log_e())

    def add(self, outcome: int) -> None:
        """One item: +1 first arm wins, -1 second wins, 0 concordant. Calls wait for
        :meth:`end_round`."""
        if outcome > 0:
            self.wins += 1
        elif outcome < 0:
            self.losses += 1
        else:
            self.ties += 1

    def end_round(self) -> None:
        self.rounds += 1
        lo, hi = difference_interval(self.items, self.discordant, self.wins, self.alpha)
        self._lo, self._hi = max(self._lo, lo), min(self._hi, hi)
        if self._lo > self._hi:  # numerical edge: a point, never an empty interval
            self._lo = self._hi = (self._lo + self._hi) / 2
        if self.decision is None:
            self.decision = _sign_call(self.wins, self.losses, self.alpha)
            if self.decision is not None:
                self.decided_at_round = self.rounds
                self.decided_e = self.e_value

    @property
    def effect(self) -> float | None:
        """Observed ``Delta``: (items won by the first arm - by the second) / items."""
        return (self.wins - self.losses) / self.items if self.items else None

    def interval(self) -> tuple[float, float]:
        return self._lo, self._hi

    def state(self) -> dict[str, Any]:
        return {"wins": self.wins, "losses": self.losses, "ties": self.ties,
                "items": self.items, "discordant": self.discordant, "rounds": self.rounds,
                "e_value": self.e_value, "threshold": 1.0 / self.alpha, "alpha": self.alpha}


def sign_reachable(wins: int, losses: int, items_left: int, alpha: float) -> bool:
    """Whether some outcome of ``items_left`` more items makes the two-sided sign e-value
    reach ``1/alpha`` (exact: from any state one more item does not lower the e-value on at
    least one side, so the largest reachable value is at ``items_left`` more discordant
    items, split some way; every split is checked).

    >>> sign_reachable(0, 0, 8, 0.05), sign_reachable(0, 0, 7, 0.05)
    (True, False)
    """
    import numpy as np

    if items_left <= 0:
        return bool(sign_log_e(wins, losses) >= math.log(1.0 / alpha))
    k = np.arange(items_left + 1)
    best = np.max(sign_log_e(wins + k, losses + items_left - k))
    return bool(best >= math.log(1.0 / alpha))


#: the largest bet as a share of the largest the e-process allows (1/(1 - margin)): at the
#: cap one item won by the first arm costs E+ 95% of its value, never all of it
BET_CAP = 0.95


@dataclass
class PooledEquivalence:
    """Two one-sided betting tests of ``|Delta| >= margin``, pooled over tasks, read a round
    at a time (module doc). ``decision`` is ``"equivalent"`` once both have reached
    ``1/alpha`` (latched); ``alpha`` is this verdict's share of the family.

    >>> e = PooledEquivalence(alpha=0.0125, margin=0.1)
    >>> for _ in range(9):
    ...     e.end_round([0, 0, 0, 0, 0])
    >>> e.decision, e.decided_at_round
    ('equivalent', 9)
    """

    alpha: float
    margin: float
    log_e_upper: float = 0.0
    log_e_lower: float = 0.0
    rounds: int = 0
    decision: str | None = None
    decided_at_round: int | None = None
    upper_at: int | None = None
    lower_at: int | None = None
    _n: int = 0
    _sum: float = 0.0
    _sumsq: float = 0.0

    def __post_init__(self) -> None:
        _check_alpha(self.alpha)
        if not (0.0 < self.margin < 1.0):
            raise InvalidArgument(f"margin={self.margin!r} must be in (0, 1), a difference "
                                  "of pass rates (0.1 = ten percentage points)")

    def _bets(self) -> tuple[float, float]:
        """(lam+, lam-) from the items before this round (one prior pseudo-item: mean 0,
        variance ``margin``, so the first round already bets near the cap when nothing is
        known and the bet shrinks as soon as discordant items show variance)."""
        n = self._n + 1
        mean = self._sum / n
        var = max((self._sumsq + self.margin) / n - mean * mean, 1e-12)
        cap = BET_CAP / (1.0 - self.margin)
        up = (self.margin - mean) / ((self.margin - mean) ** 2 + var)
        lo = (self.margin + mean) / ((self.margin + mean) ** 2 + var)
        return min(max(up, 0.0), cap), min(max(lo, 0.0), cap)

    def end_round(self, outcomes: list[int]) -> None:
        """One complete round: the item outcomes (+1 first arm wins, -1 second, 0 tie)."""
        lam_u, lam_l = self._bets()
        m = self.margin
        for x in outcomes:
            self.log_e_upper += math.log1p(lam_u * (m - x))
            self.log_e_lower += math.log1p(lam_l * (m + x))
            self._n += 1
            self._sum += x
            self._sumsq += x * x
        self.rounds += 1
        thr = math.log(1.0 / self.alpha)
        if self.upper_at is None and self.log_e_upper >= thr:
            self.upper_at = self.rounds
        if self.lower_at is None and self.log_e_lower >= thr:
            self.lower_at = self.rounds
        if self.decision is None and self.upper_at is not None and self.lower_at is not None:
            self.decision = "equivalent"
            self.decided_at_round = self.rounds

    def reachable(self, items_left: int) -> bool:
        """Whether ``items_left`` more items could still make the call. An item can raise
        ``log E+`` by at most ``g1 = ln(1 + cap (1 + margin))`` (the second arm wins it) or
        ``g0 = ln(1 + cap margin)`` (a tie), never by a win of the first arm, and ``E-``
        mirrors it; the call is reachable only if some split of the items into ties and wins
        of each side lifts both to ``1/alpha``. Loose (it ignores what an item costs the
        other side), so a ``False`` is certain and a ``True`` may not be."""
        if self.decision is not None:
            return True
        thr = math.log(1.0 / self.alpha)
        cap = BET_CAP / (1.0 - self.margin)
        g1, g0 = math.log1p(cap * (1.0 + self.margin)), math.log1p(cap * self.margin)
        need_u = 0.0 if self.upper_at is not None else max(0.0, thr - self.log_e_upper)
        need_l = 0.0 if self.lower_at is not None else max(0.0, thr - self.log_e_lower)
        # items needed is piecewise linear in the ties: its least is at 0 or a breakpoint
        cands = {0, items_left}
        for need in (need_u, need_l):
            c = need / g0
            cands.update((math.floor(c), math.ceil(c)))
        for ties in (c for c in cands if 0 <= c <= items_left):
            a = max(0, math.ceil((need_u - ties * g0) / g1 - 1e-12))
            b = max(0, math.ceil((need_l - ties * g0) / g1 - 1e-12))
            if a + b + ties <= items_left:
                return True
        return False

    def state(self) -> dict[str, Any]:
        return {"verdict": "equivalent within the margin" if self.decision else
                "not shown", "margin": self.margin, "alpha": self.alpha,
                "threshold": 1.0 / self.alpha, "e_value_upper": _exp(self.log_e_upper),
                "e_value_lower": _exp(self.log_e_lower), "upper_at_round": self.upper_at,
                "lower_at_round": self.lower_at, "decided_at_round": self.decided_at_round,
                "hypotheses": f"H+: Delta >= {self.margin:g} and H-: Delta <= "
                              f"{-self.margin:g}, each rejected by a betting e-process at "
                              "alpha (two one-sided tests, read at round boundaries)"}


def _cross_prob_by_discordant(w0: int, l0: int, q: float, log_thr: float,
                              d_max: int) -> np.ndarray:
    """``P(E crosses log_thr within d more discordant items)`` for d = 0..d_max."""
    import numpy as np

    out = np.zeros(d_max + 1)
    if float(sign_log_e(w0, l0)) >= log_thr:
        out[:] = 1.0
        return out
    alive = np.array([1.0])  # P(j extra wins so far, not crossed), j = 0..d
    crossed = 0.0
    for d in range(1, d_max + 1):
        nxt = np.zeros(d + 1)
        nxt[:-1] += alive * (1 - q)
        nxt[1:] += alive * q
        j = np.arange(d + 1)
        hit = sign_log_e(w0 + j, l0 + d - j) >= log_thr
        crossed += float(nxt[hit].sum())
        nxt[hit] = 0.0
        alive = nxt
        out[d] = crossed
        if alive.sum() < 1e-9:
            out[d:] = crossed
            break
    return out


def runs_needed(wins: int, losses: int, items: int, *, alpha: float, items_per_round: int,
                power: float = 0.8, max_items: int = 200_000) -> dict[str, Any]:
    """Further rounds likely to make an undecided :class:`PooledSign` call.

    Assumes the observed discordance rate and win share persist (each shrunk by half a
    pseudo-count so zero counts do not mean certainty) and finds the fewest further items
    for which the e-value crosses ``1/alpha`` with probability ``power`` (exact: the number
    of discordant items is binomial, the walk of wins is computed, not simulated).

    Returns ``{"rounds": int | None, "items": int | None, "power": float, "note": str}``.

    >>> runs_needed(3, 3, 40, alpha=0.05, items_per_round=2)["rounds"] is None
    True
    """
    d = wins + losses
    if d == 0 or wins == losses:
        return {"rounds": None, "items": None, "power": power,
                "note": "no observed difference between the agents: the runs needed are "
                        "unbounded if they are equivalent"}
    pi = (d + 0.5) / (items + 1.0)
    q = (max(wins, losses) + 0.5) / (d + 1.0)
    w0, l0 = (wins, losses) if wins > losses else (losses, wins)
    log_thr = math.log(1.0 / alpha)
    d_cap = 4000
    cross = _cross_prob_by_discordant(w0, l0, q, log_thr, d_cap)
    if cross[-1] < power:
        return {"rounds": None, "items": None, "power": power,
                "note": f"more than {math.ceil(d_cap / pi / items_per_round)} further rounds: "
                        f"the observed effect is too small to decide soon"}

    import numpy as np
    from scipy import stats  # only an inconclusive result pays for scipy.stats

    def p_decide(m: int) -> float:
        k = np.arange(min(m, d_cap) + 1)
        return float((stats.binom.pmf(k, m, pi) * cross[k]).sum()
                     + stats.binom.sf(d_cap, m, pi) * cross[-1])

    lo, hi = 0, 1
    while p_decide(hi) < power:
        lo, hi = hi, hi * 2
        if hi > max_items:
            return {"rounds": None, "items": None, "power": power,
                    "note": f"more than {math.ceil(max_items / items_per_round)} further rounds"}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if p_decide(mid) >= power:
            hi = mid
        else:
            lo = mid
    return {"rounds": math.ceil(hi / items_per_round), "items": hi, "power": power,
            "note": f"if the observed discordance {pi:.3f} and win share {q:.3f} persist"}
