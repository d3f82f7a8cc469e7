"""What a test that decides relation candidates spent and found: the one record type behind
``@agent_property`` records and conversation-test records (plain data)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._internal.outcome import CandidateStatus

__all__ = ["CandidateRecord"]


@dataclass(kw_only=True)
class CandidateRecord:
    """The counters every candidate-deciding test keeps; ``property`` and ``conversation``
    records add what is their own (the counterexample's shape, the turns).

    ``first`` is the first confirmed counterexample (anything with ``calls_at_confirmation``);
    the calls after it went to shrinking.
    """

    test: str
    agent: str
    alpha: float
    alpha_candidate: float
    max_candidates: int
    calls: int = 0
    replayed: int = 0
    candidates: int = 0
    confirmations: int = 0
    raw_violations: int = 0
    confirmed: int = 0
    undecided: int = 0
    budget_exhausted: bool = False
    first: Any = None
    warnings: list[str] = field(default_factory=list)
    seed: Any = None
    status: str = "running"

    @property
    def shrink_calls(self) -> int:
        """Calls spent after the first confirmed counterexample (shrinking it)."""
        return 0 if self.first is None else self.calls - self.first.calls_at_confirmation

    def take_confirmation(self) -> bool:
        """One more candidate tested beyond its screen, within the test's quota
        (``max_candidates``): counted and True, or False once the quota is spent."""
        if self.confirmations >= self.max_candidates:
            return False
        self.confirmations += 1
        return True

    def tally(self, out: Any, *, out_of_budget: Callable[[], bool]) -> None:
        """Count one decided candidate (``out``, a ``RelationOutcome``): its raw violations,
        a confirmation, or an undecided one, which marks the budget exhausted when
        ``out_of_budget()`` says another round of calls no longer fits."""
        self.raw_violations += out.raw
        if out.status == CandidateStatus.CONFIRMED:
            self.confirmed += 1
        if out.status in (CandidateStatus.INCOMPLETE, CandidateStatus.UNDECIDED):
            self.undecided += 1
            if out_of_budget():
                self.budget_exhausted = True

    def counters(self) -> dict[str, Any]:
        """The shared part of the record's JSON (``to_dict`` adds the kind's own keys)."""
        return {"test": self.test, "agent": self.agent, "status": self.status,
                "alpha": self.alpha, "alpha_candidate": self.alpha_candidate,
                "max_candidates": self.max_candidates, "calls": self.calls,
                "replayed": self.replayed, "shrink_calls": self.shrink_calls,
                "candidates": self.candidates, "confirmations": self.confirmations,
                "raw_violations": self.raw_violations, "confirmed": self.confirmed,
                "undecided": self.undecided, "budget_exhausted": self.budget_exhausted,
                "warnings": list(self.warnings)}
