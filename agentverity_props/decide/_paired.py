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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._rules import Decision, _check_alpha, _exp, beta_cs_interval

if TYPE_CHECKING:  # numpy/scipy load on first use: `import agentverity_props` stays light
    import numpy as np

__all__ = ["PairedSignTest", "PooledSign", "difference_interval", "runs_needed",
           "sign_log_e"]


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
