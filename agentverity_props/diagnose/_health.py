"""Health checks: tests that test less than the user thinks (after Hypothesis's ``HealthCheck``).

Blindness
    Estimand: ``pi_max``, the largest share of one verdict when an input is picked uniformly
    from the probe set and drawn once (``pi_v = mean_i P(draw of input i = v)``). The probe set
    is *blind* when ``pi_max >= threshold`` (0.9 by default): relations then pass vacuously,
    because the probes never make the agent change its mind.

    Two bounds, each at ``alpha / 2``, and the first that decides is reported:

    A. *Mixture sample.* The first draw of every meter trial (inputs chosen uniformly at random
       with replacement) is an i.i.d. draw from the mixture, so for each observed verdict an
       anytime-valid confidence sequence (beta-binomial mixture, see
       :class:`~agentverity_props.decide.BetaCS`) bounds ``pi_v``; Bonferroni over the K
       observed verdicts. Best for large probe sets.
    B. *Census.* ``pi_v`` is the mean of the per-input probabilities ``p_iv`` over a finite
       probe set, so simultaneous per-input confidence sequences (at ``alpha / (2 N K)``)
       bound it by averaging; an input never drawn contributes [0, 1]. Best for small probe
       sets, where every input is drawn many times.

    ``blind`` when a lower bound for some verdict reaches the threshold, ``ok`` when every
    verdict's upper bound is below it, else ``undecided``. No extra agent call is made unless
    both are undecided (then ``run`` tops the sample up with single draws on random inputs).
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import Any, Literal

from ..decide import census_share_bounds, census_shares, max_share_at_least, mixture_share_bounds
from ..errors import InvalidArgument

BlindStatus = Literal["blind", "ok", "undecided", "suppressed"]


class HealthCheck(enum.Enum):
    """Checks that flag a suite which tests less than it seems; suppress by name."""

    blind_probe_set = "blind_probe_set"
    """One verdict dominates the probe set (relations would pass vacuously)."""

    unexercised_relation = "unexercised_relation"
    """A relation's transform left every input unchanged."""

    unstable_verdict = "unstable_verdict"
    """The meter could not call the verdict deterministic or stochastic."""

    @classmethod
    def all(cls) -> list[HealthCheck]:
        return list(cls)

    @classmethod
    def parse(cls, names: Any) -> frozenset[HealthCheck]:
        out = set()
        for n in names or ():
            if isinstance(n, HealthCheck):
                out.add(n)
                continue
            try:
                out.add(cls(str(n)))
            except ValueError:
                raise InvalidArgument(
                    f"unknown health check {n!r}; use one of "
                    + ", ".join(h.value for h in cls)) from None
        return frozenset(out)


@dataclass(frozen=True)
class BlindnessResult:
    status: BlindStatus
    threshold: float
    alpha: float
    modal_verdict: str | None
    share: float | None
    ci_low: float | None
    ci_high: float | None
    sample: int
    distribution: dict[str, int]
    method: str = "mixture"

    @property
    def estimand(self) -> str:
        return ("pi_max = largest share of one verdict over uniformly drawn inputs "
                "(one draw each)")

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "estimand": self.estimand, "threshold": self.threshold,
                "alpha": self.alpha, "modal_verdict": self.modal_verdict, "share": self.share,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "sample": self.sample,
                "method": self.method, "distribution": dict(self.distribution)}


def blindness_from_keys(keys: list[str], *, threshold: float = 0.9, alpha: float = 0.05,
                        suppressed: bool = False,
                        per_input: list[list[str]] | None = None) -> BlindnessResult:
    """Blindness from an i.i.d. mixture sample ``keys`` and, optionally, ``per_input`` draws."""
    if per_input is not None:
        a = _mixture(keys, threshold, alpha / 2, suppressed)
        b = _census(per_input, threshold, alpha / 2, suppressed)
        if a.status in ("blind", "ok") and b.status in ("blind", "ok") and a.status != b.status:
            return _replace_status(a, "undecided")
        if a.status in ("blind", "ok", "suppressed"):
            return a
        if b.status in ("blind", "ok"):
            return b
        return a
    return _mixture(keys, threshold, alpha, suppressed)


def _replace_status(r: BlindnessResult, status: BlindStatus) -> BlindnessResult:
    from dataclasses import replace
    return replace(r, status=status)


def _status(bounds: dict[str, tuple[float, float]], threshold: float,
            suppressed: bool) -> BlindStatus:
    if suppressed:
        return "suppressed"
    call = max_share_at_least(bounds, threshold)
    return "undecided" if call is None else "blind" if call else "ok"


def _census(per_input: list[list[str]], threshold: float, alpha: float,
            suppressed: bool) -> BlindnessResult:
    """Bound B (module doc): :func:`~agentverity_props.decide.census_share_bounds`."""
    counts = [Counter(ks) for ks in per_input]
    bounds = census_share_bounds(counts, alpha=alpha)
    if not bounds:
        return BlindnessResult("undecided", threshold, alpha, None, None, None, None, 0, {})
    share = census_shares(counts)
    modal = max(share, key=lambda v: share[v])
    lo, hi = bounds[modal]
    labels = Counter(k for ks in per_input for k in ks)
    return BlindnessResult(_status(bounds, threshold, suppressed), threshold, alpha, modal,
                           share[modal], lo, hi, sum(len(ks) for ks in per_input),
                           dict(labels), method="census")


def _mixture(keys: list[str], threshold: float, alpha: float,
             suppressed: bool) -> BlindnessResult:
    """Bound A (module doc): :func:`~agentverity_props.decide.mixture_share_bounds`."""
    if not (0.5 < threshold < 1.0):
        raise InvalidArgument(f"blindness threshold={threshold!r} must be in (0.5, 1)")
    dist = Counter(keys)
    n = len(keys)
    if n == 0:
        return BlindnessResult("suppressed" if suppressed else "undecided", threshold, alpha,
                               None, None, None, None, 0, {})
    bounds = mixture_share_bounds(dist, alpha=alpha)
    modal, count = dist.most_common(1)[0]
    lo, hi = bounds[modal]
    return BlindnessResult(_status(bounds, threshold, suppressed), threshold, alpha, modal,
                           count / n, lo, hi, n, dict(dist))
