"""One account of a confirmed candidate: which e-process decided it, its e-value and the
threshold it crossed, in words every report and failure message shares.

A two-sided candidate (:class:`CandidateTest` with ``two_sided=True``) runs two violation
e-processes, each at half of ``alpha_candidate``: the forward one (the follow-up's draws
leave the source's modal verdict more often than the source's re-draws do) and the reverse
one (the source's re-draws leave the follow-up's modal verdict more often than the
follow-up's own draws do). Either one crossing ``2/alpha_candidate`` confirms the violation;
a one-sided candidate's forward e-process crosses ``1/alpha_candidate``. The account names
the one that crossed, so no report prints an e-value beside a threshold it did not cross.

>>> a = account({"alpha": 0.0001, "e_violation": 6680.0, "e_reverse": 52000.0,
...              "follow_up_violations": 16, "follow_up_draws": 17,
...              "source_violations": 3, "source_draws": 16})
>>> a.test, a.inequality()
('reverse', 'reverse e-value 5.2e+04 ≥ 2/alpha_candidate = 2e+04')
>>> a.holds()
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Account", "account"]


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class Account:
    """The e-process that decided a candidate.

    Attributes:
        test: ``"forward"`` or ``"reverse"`` (the two-sided candidate's other direction).
        e_value: that e-process's value at the decision.
        sides: 2 for a two-sided candidate (each direction at ``alpha_candidate / 2``), else 1.
        alpha: ``alpha_candidate`` (None when the decision records none).
        counts: ``(follow-up violations, follow-up draws, source violations, source draws)``
            against the source's modal verdict (None where not recorded).
        p_value: the decision's p-value, for one decided by a p-value (no e-value recorded).
    """

    test: Literal["forward", "reverse"]
    e_value: float | None
    sides: int
    alpha: float | None
    counts: tuple[int | None, int | None, int | None, int | None]
    p_value: float | None = None

    @property
    def threshold(self) -> float | None:
        """``sides / alpha_candidate``: what the deciding e-value had to reach."""
        return None if not self.alpha else self.sides / self.alpha

    def holds(self) -> bool:
        """Whether the e-value reached the threshold (as printed, to three digits)."""
        t = self.threshold
        if self.e_value is None:
            return self.p_value is None or self.alpha is None or float(
                f"{self.p_value:.2g}") <= float(f"{self.alpha:.2g}")
        return t is None or float(f"{self.e_value:.3g}") >= float(f"{t:.3g}")

    def inequality(self) -> str:
        """``e-value 4.4e+04 ≥ 2/alpha_candidate = 1.9e+04`` (the reverse one named)."""
        name = "reverse e-value" if self.test == "reverse" else "e-value"
        t = self.threshold
        if self.e_value is None:
            if self.p_value is None:
                return "e-value –"
            return f"p = {self.p_value:.2g} " + ("" if self.alpha is None else (
                f"{'≤' if self.holds() else '>'} {self.alpha:.2g}"))
        rel = "≥" if self.holds() else "<"
        return f"{name} {self.e_value:.3g}" + (
            "" if t is None else f" {rel} {self.sides}/alpha_candidate = {t:.3g}")

    def flips(self) -> bool:
        """Whether most follow-up draws leave the source's modal verdict (a flip, whichever
        e-process decided)."""
        fv, fn = self.counts[0], self.counts[1]
        return fv is not None and fn is not None and fn > 0 and 2 * fv > fn

    def counts_text(self) -> str:
        """``16/17 follow-up draws vs 3/16 source re-draws violate``."""
        fv, fn, sv, sn = self.counts
        return (f"{fv}/{fn} follow-up draws vs {sv}/{sn} source re-draws leave the source's "
                "modal verdict")

    def reading(self) -> str:
        """What the deciding test found, in words that match the counts."""
        if self.test == "forward":
            return "the follow-up's verdicts differ from the source's beyond the agent's noise"
        if self.flips():
            return ("the follow-up flips the verdict; the reverse test decided first (the "
                    "source's re-draws leave the follow-up's modal verdict more often than the "
                    "follow-up's own draws do)")
        return ("the follow-up is more decided than the source: the source's re-draws leave "
                "the follow-up's modal verdict more often than the follow-up's own draws do")

    def sentence(self) -> str:
        """The whole account: reading, counts, inequality."""
        return f"{self.reading()}: {self.counts_text()}; {self.inequality()}"


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None


def account(c: Mapping[str, Any]) -> Account:
    """The account of a candidate's decision dict (a run outcome's ``decision``, a
    counterexample's ``confirmation``)."""
    alpha = _num(c.get("alpha"))
    e_fwd = _num(c.get("e_violation"))
    e_rev = _num(c.get("e_reverse"))
    sides = 1 if e_rev is None else 2
    counts = (_int(c.get("follow_up_violations")), _int(c.get("follow_up_draws")),
              _int(c.get("source_violations")), _int(c.get("source_draws")))
    if e_fwd is None and e_rev is None:
        return Account("forward", None, 1, alpha, counts, _num(c.get("p_value")))
    e_fwd = e_fwd or 0.0
    if e_rev is not None:
        thr = None if not alpha else sides / alpha * (1.0 - 1e-9)
        fwd_crossed = thr is None or e_fwd >= thr
        rev_crossed = thr is not None and e_rev >= thr
        if (rev_crossed and not fwd_crossed) or (
                not rev_crossed and not fwd_crossed and e_rev > e_fwd):
            return Account("reverse", e_rev, sides, alpha, counts)
    return Account("forward", e_fwd, sides, alpha, counts)
