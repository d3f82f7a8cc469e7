"""The rules. See ``docs/statistics.md`` for the derivations and the simulation tests."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import InvalidArgument

if TYPE_CHECKING:  # numpy/scipy load on first use: `import agentverity_props` stays light
    import numpy as np


@dataclass(frozen=True)
class Decision:
    """A rule's answer.

    Attributes:
        call: the rule-specific outcome label ("high"/"low", "first"/"second", "pass"/"fail").
        e_value: the e-value that crossed ``1/alpha`` (its reciprocal bounds the error rate).
        n: outcomes consumed.
        alpha: the error rate the call is guaranteed at.
        detail: rule-specific counts, JSON-ready.
    """

    call: str
    e_value: float
    n: int
    alpha: float
    detail: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class SequentialRule(Protocol):
    """One outcome at a time in; a :class:`Decision` out once the evidence suffices."""

    estimand: str
    alpha: float
    n: int

    def update(self, outcome: Any) -> Decision | None: ...

    def state(self) -> dict[str, Any]: ...


def _check_alpha(alpha: float, name: str = "alpha") -> None:
    if not (0.0 < alpha < 1.0):
        raise InvalidArgument(f"{name}={alpha!r} must be strictly between 0 and 1 (e.g. 0.05)")


class BernoulliSPRT:
    """Wald's SPRT for a Bernoulli rate, with Ville-valid thresholds.

    Estimand: the success probability ``theta`` of i.i.d. Bernoulli outcomes.
    Calls ``"high"`` (``theta > p0``) when the likelihood ratio of ``p1`` to ``p0`` reaches
    ``1/alpha``, and ``"low"`` (``theta < p1``) when it falls to ``beta``.

    Guarantees, for every stopping rule and any number of looks (Ville's inequality applied to
    the likelihood ratio, a supermartingale under the tested side; monotone likelihood ratio
    extends it to the whole side):

    - ``P(call "high") <= alpha`` whenever ``theta <= p0``;
    - ``P(call "low") <= beta`` whenever ``theta >= p1``.

    Between ``p0`` and ``p1`` (the indifference zone) either call may be made.

    >>> rule = BernoulliSPRT(0.025, 0.10)
    >>> [rule.update(False) for _ in range(37)][-1] is None
    True
    >>> rule.update(False).call
    'low'
    """

    def __init__(self, p0: float, p1: float, *, alpha: float = 0.05,
                 beta: float | None = None) -> None:
        _check_alpha(alpha)
        beta = alpha if beta is None else beta
        _check_alpha(beta, "beta")
        if not (0.0 <= p0 < p1 <= 1.0):
            raise InvalidArgument(f"BernoulliSPRT needs 0 <= p0 < p1 <= 1, got p0={p0}, p1={p1}")
        self.p0, self.p1, self.alpha, self.beta = p0, p1, alpha, beta
        self.estimand = f"Bernoulli rate theta: theta <= {p0:g} vs theta >= {p1:g}"
        self._llr1 = _log_ratio(p1, p0)
        self._llr0 = _log_ratio(1.0 - p1, 1.0 - p0)
        self._upper = math.log(1.0 / alpha)
        self._lower = -math.log(1.0 / beta)
        self.n = 0
        self.successes = 0
        self.llr = 0.0
        self.decision: Decision | None = None

    def update(self, outcome: bool) -> Decision | None:
        if self.decision is not None:
            return self.decision
        self.n += 1
        if outcome:
            self.successes += 1
            self.llr += self._llr1
        else:
            self.llr += self._llr0
        if self.llr >= self._upper:
            self.decision = Decision("high", _exp(self.llr), self.n, self.alpha, self.state())
        elif self.llr <= self._lower:
            self.decision = Decision("low", _exp(-self.llr), self.n, self.beta, self.state())
        return self.decision

    def state(self) -> dict[str, Any]:
        return {"rule": "sprt", "p0": self.p0, "p1": self.p1, "n": self.n,
                "successes": self.successes, "llr": self.llr, "alpha": self.alpha,
                "beta": self.beta}


def _log_ratio(a: float, b: float) -> float:
    if a == 0.0:
        return -math.inf
    if b == 0.0:
        return math.inf
    return math.log(a / b)


def _exp(x: float) -> float:
    return math.inf if x > 700 else math.exp(x)


def sprt_expected_n(p0: float, p1: float, theta: float, *, alpha: float = 0.05,
                    beta: float | None = None, max_n: int = 20000) -> float:
    """Exact expected sample size of :class:`BernoulliSPRT` at true rate ``theta``.

    Computed by propagating the distribution of the success count over time (no Wald
    approximation). Used by benchmarks as the efficiency reference.
    """
    import numpy as np

    rule = BernoulliSPRT(p0, p1, alpha=alpha, beta=beta)
    a, b = rule._llr1, rule._llr0
    upper, lower = rule._upper, rule._lower
    # state: number of successes k after n steps, still undecided
    probs = np.array([1.0])
    expected = 0.0
    for n in range(1, max_n + 1):
        nxt = np.zeros(len(probs) + 1)
        nxt[:-1] += probs * (1.0 - theta)
        nxt[1:] += probs * theta
        k = np.arange(len(nxt))
        llr = k * a + (n - k) * b if math.isfinite(a) and math.isfinite(b) else _llr_vec(k, n, a, b)
        stopped = (llr >= upper) | (llr <= lower)
        expected += n * nxt[stopped].sum()
        nxt[stopped] = 0.0
        probs = nxt
        if probs.sum() < 1e-12:
            return expected
    return expected + max_n * probs.sum()


def _llr_vec(k: np.ndarray, n: int, a: float, b: float) -> np.ndarray:
    import numpy as np

    with np.errstate(invalid="ignore"):
        out = np.where(k > 0, k * a, 0.0) + np.where(n - k > 0, (n - k) * b, 0.0)
    return np.nan_to_num(out, nan=0.0, posinf=np.inf, neginf=-np.inf)


class BetaCS:
    """Anytime-valid confidence sequence for a Bernoulli rate (beta-binomial mixture).

    ``C_n = {theta : M_n(theta) < 1/alpha}`` with
    ``M_n(theta) = B(a+s, b+n-s) / (B(a, b) theta^s (1-theta)^(n-s))``: the mixture likelihood
    ratio is a nonnegative martingale under ``theta``, so by Ville's inequality
    ``P(exists n: theta not in C_n) <= alpha``. The reported interval is the running
    intersection (also valid).
    """

    def __init__(self, alpha: float = 0.05, *, a: float = 0.5, b: float = 0.5) -> None:
        _check_alpha(alpha)
        self.alpha, self.a, self.b = alpha, a, b
        self.estimand = "Bernoulli rate theta (two-sided confidence sequence)"
        self.n = 0
        self.successes = 0
        self._lo, self._hi = 0.0, 1.0

    def update(self, outcome: bool) -> None:
        self.n += 1
        self.successes += int(bool(outcome))
        lo, hi = beta_cs_interval(self.successes, self.n, self.alpha, self.a, self.b)
        self._lo, self._hi = max(self._lo, lo), min(self._hi, hi)
        if self._lo > self._hi:  # numerical edge: keep a point, never an empty set
            self._lo = self._hi = (self._lo + self._hi) / 2

    def interval(self) -> tuple[float, float]:
        return self._lo, self._hi

    def state(self) -> dict[str, Any]:
        return {"rule": "beta-cs", "n": self.n, "successes": self.successes,
                "ci_low": self._lo, "ci_high": self._hi, "alpha": self.alpha}


def beta_cs_interval(s: int, n: int, alpha: float, a: float = 0.5,
                     b: float = 0.5) -> tuple[float, float]:
    """The (non-intersected) beta-binomial mixture confidence set at one time ``n``."""
    if n == 0:
        return 0.0, 1.0
    from scipy import optimize, special

    log_thresh = math.log(1.0 / alpha)
    log_mix = special.betaln(a + s, b + n - s) - special.betaln(a, b)

    def g(theta: float) -> float:  # log M_n(theta) - log(1/alpha); < 0 inside the set
        ll = 0.0
        if s:
            ll += s * math.log(theta)
        if n - s:
            ll += (n - s) * math.log1p(-theta)
        return log_mix - ll - log_thresh

    mle = s / n
    centre = min(max(mle, 1e-12), 1 - 1e-12)
    if g(centre) >= 0:  # cannot happen for sensible alpha; fall back to the whole line
        return 0.0, 1.0
    lo = 0.0 if s == 0 or g(1e-15) < 0 else optimize.brentq(g, 1e-15, centre, xtol=1e-10)
    hi = 1.0 if s == n or g(1 - 1e-15) < 0 else optimize.brentq(g, centre, 1 - 1e-15,
                                                                  xtol=1e-10)
    return float(lo), float(hi)


def pass_rate_rule(threshold: float, *, alpha: float = 0.05,
                   margin: float = 0.05) -> _PassRate:
    """Decide whether a pass rate is at least ``threshold``.

    A :class:`BernoulliSPRT` on the *failure* rate with ``p0 = 1 - threshold - margin`` (pass)
    and ``p1 = 1 - threshold + margin`` (fail), clipped to [0, 1]. ``update(passed)`` returns
    ``Decision(call="pass" | "fail")``. Error: a task whose true pass rate is at most
    ``threshold - margin`` is called "pass" with probability at most ``alpha``, and one at
    least ``threshold + margin`` is called "fail" with probability at most ``alpha``.
    """
    if not (0.0 < threshold <= 1.0):
        raise InvalidArgument(f"threshold={threshold!r} must be in (0, 1]")
    if not (0.0 < margin < 0.5):
        raise InvalidArgument(f"margin={margin!r} must be in (0, 0.5)")
    return _PassRate(threshold, alpha, margin)


class _PassRate:
    def __init__(self, threshold: float, alpha: float, margin: float) -> None:
        f0 = max(0.0, 1.0 - threshold - margin)
        f1 = min(1.0, 1.0 - threshold + margin)
        self._sprt = BernoulliSPRT(f0, f1, alpha=alpha)
        self.threshold = threshold
        self.alpha = alpha
        self.estimand = (f"pass rate: >= {1 - f0:g} (pass) vs <= {1 - f1:g} (fail)")

    @property
    def n(self) -> int:
        return self._sprt.n

    def update(self, outcome: bool) -> Decision | None:
        d = self._sprt.update(not outcome)
        if d is None:
            return None
        return Decision("pass" if d.call == "low" else "fail", d.e_value, d.n, d.alpha,
                        self.state())

    def state(self) -> dict[str, Any]:
        st = self._sprt.state()
        return {"rule": "pass-rate", "threshold": self.threshold, "n": st["n"],
                "failures": st["successes"], "alpha": self.alpha}
