"""Token totals of a run's live calls, per phase, and what they cost.

The numbers are the adapter's own (``Observation.usage``): the toolkit never estimates a
token count. A call whose adapter reports nothing adds nothing, and the report says how many
calls reported (``calls_reporting`` of ``calls``); a run where none did says "not reported by
the adapter", never 0. Replayed draws are free: their recorded usage is not this run's.
Failed attempts report no usage (a provider may still have billed a timed-out call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._internal.tokens import NOT_REPORTED
from ..observation import Usage
from ._price import Price

__all__ = ["NOT_REPORTED", "UsageTally", "ledger_part", "tokens_report"]

#: what a report says when no live call reported usage
@dataclass
class UsageTally:
    """Sums of the usage of successful live calls (one phase)."""

    calls: int = 0          # successful live calls
    reporting: int = 0      # of which reported any token count
    split: int = 0          # of which reported input and output tokens both
    input: int = 0
    output: int = 0
    total: int = 0
    cost_calls: int = 0     # calls whose adapter reported a cost
    adapter_cost: float = 0.0

    def add(self, usage: Usage | None) -> None:
        self.calls += 1
        if usage is None:
            return
        tin, tout, tot = usage.input_tokens, usage.output_tokens, usage.total_tokens
        if tin is not None or tout is not None or tot is not None:
            self.reporting += 1
            self.input += tin or 0
            self.output += tout or 0
            self.total += tot if tot is not None else (tin or 0) + (tout or 0)
            if tin is not None and tout is not None:
                self.split += 1
        if usage.cost_usd is not None:
            self.cost_calls += 1
            self.adapter_cost += usage.cost_usd

    def merge(self, other: UsageTally) -> None:
        for name in ("calls", "reporting", "split", "input", "output", "total", "cost_calls",
                     "adapter_cost"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def copy(self) -> UsageTally:
        out = UsageTally()
        out.merge(self)
        return out

    def part(self, price: Price | None) -> dict[str, Any]:
        """This tally as a report part (the totals, or one phase)."""
        rep = self.reporting
        cost = None
        if price is not None and rep and self.split == rep:
            cost = price.cost(self.input, self.output)
        return {
            "calls": self.calls, "calls_reporting": rep,
            "input": self.input if rep and self.split == rep else None,
            "output": self.output if rep and self.split == rep else None,
            "total": self.total if rep else None,
            "cost": cost,
        }


def tokens_report(phases: dict[str | None, UsageTally], price: Price | None) -> dict[str, Any]:
    """The ``tokens`` part of a report: totals, per phase (named phases only), the price
    and the cost, and a note saying what the numbers cover."""
    total = UsageTally()
    for t in phases.values():
        total.merge(t)
    out = total.part(price)
    named = {k: v.part(price) for k, v in phases.items() if k is not None and v.calls}
    if named and None in phases and phases[None].calls:
        named["other"] = phases[None].part(price)
    out["phases"] = named
    out["reported"] = total.reporting > 0
    out["adapter_cost"] = total.adapter_cost if total.cost_calls else None
    out["price"] = None if price is None else price.to_dict()
    notes = []
    if not total.reporting:
        notes.append(NOT_REPORTED if total.calls else "no live call")
    else:
        if total.reporting < total.calls:
            notes.append(f"{total.calls - total.reporting} of {total.calls} live calls "
                         "reported no tokens: the totals are a lower bound")
        if total.split < total.reporting:
            notes.append("the adapter reported total tokens only"
                         + (" for some calls" if total.split else "")
                         + ": no input/output split" + (", no cost" if price else ""))
    out["note"] = "; ".join(notes)
    return out


def ledger_part(ledger: dict[str, Any]) -> dict[str, Any]:
    """A ledger dict as reports write it: without ``tokens`` (written at the top level)."""
    return {k: v for k, v in ledger.items() if k != "tokens"}
