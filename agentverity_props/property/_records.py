"""Results of ``@agent_property`` runs: minimal counterexamples and per-test records.

Plain data, read by the pytest plugin (terminal summary, failure sections, the JSON report)
and by the HTML renderer through :func:`counterexample_report`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..relations import CandidateRecord

COUNTEREXAMPLE_SCHEMA = "agentverity_props.counterexample/1"


@dataclass
class Counterexample:
    """A confirmed violation, as reported (raw inputs: the user's own test fails on them)."""

    test: str
    relation: str
    rtype: str
    source: str
    follow_up: str
    source_value: str | None
    follow_up_value: str | None
    confirmation: dict[str, Any]
    kwargs: dict[str, Any]
    calls_at_confirmation: int

    def example_literal(self) -> str:
        if not self.kwargs:
            return "@example(...)  # arguments not recoverable"
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        hint = ("  # from agentverity_props.strategies import Perturbation"
                if "Perturbation(" in args else "")
        return f"@example({args}){hint}"

    def to_dict(self) -> dict[str, Any]:
        return {"relation": self.relation, "rtype": self.rtype, "source": self.source,
                "follow_up": self.follow_up, "source_value": self.source_value,
                "follow_up_value": self.follow_up_value, "confirmation": self.confirmation,
                "example": self.example_literal(),
                "calls_at_confirmation": self.calls_at_confirmation}


@dataclass(kw_only=True)
class PropertyRecord(CandidateRecord):
    """What one ``@agent_property`` test run spent and found (read by the pytest plugin)."""

    first: Counterexample | None = None
    minimal: Counterexample | None = None
    #: per relation: the pooled effect over the examples generated (estimate, bounds, status)
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    store: str | None = None
    status: str = "passed"

    def alpha_split(self) -> str:
        """What ``alpha_candidate`` is, in words (failure messages print it)."""
        return (f"the test's alpha {self.alpha:g}, half of it for the examples tested one by "
                f"one (the other half for the pooled effect), split over the at most "
                f"{self.max_candidates} candidates the test may decide (max_examples + 200, or "
                "max_candidates=), so that all of them together are wrong with probability "
                f"<= {self.alpha:g}")

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.counters(),
            "minimal": self.minimal.to_dict() if self.minimal else None,
            "shrink_complete": not self.budget_exhausted,
            "first": self.first.to_dict() if self.first else None,
            "reproduce": self.reproduce(), "effects": dict(self.effects),
            "privacy": "the minimal and first inputs are kept verbatim: the user's own test "
                       "fails on them",
        }

    def reproduce(self) -> dict[str, Any]:
        ce = self.minimal
        return {
            "example": ce.example_literal() if ce else None,
            "seed": self.seed,
            "store": self.store,
            "hint": ("add the @example(...) line above @given to pin the case; rerun with "
                     "--agentverity-store PATH --agentverity-store-mode replay to re-use "
                     "the recorded draws") if ce else None,
        }


def counterexample_report(records: Sequence[PropertyRecord]) -> dict[str, Any]:
    """The versioned JSON document of property-test outcomes and minimal counterexamples."""
    return {"schema": COUNTEREXAMPLE_SCHEMA, "tests": [r.to_dict() for r in records]}


#: records of every @agent_property test run in this process (the pytest plugin reads them)
RECORDS: list[PropertyRecord] = []
_RECORDS_LOCK = threading.Lock()
