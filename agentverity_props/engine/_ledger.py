"""The ledger: the run's agent-call budget, what its calls cost and how they went.

The ledger is the one owner of the hard call budget: :meth:`Ledger.reserve` takes a unit and
counts the call in one step, so the calls counted and the budget spent can never disagree.
"""

from __future__ import annotations

import math
import threading
from typing import Any

from ..observation import Observation
from ._price import Price
from ._tokens import UsageTally, tokens_report

__all__ = ["Ledger"]

_SAMPLES_PER_KIND = 20


class Ledger:
    """Thread-safe owner of the engine's call budget and tally of its live calls.

    Counts describe *this run's* live calls: a replayed draw only adds to ``replayed``
    (its recorded latency, tokens and failure are not this run's cost).

    Attributes:
        calls: live attempts made (first tries and retries; each spent one budget unit,
            taken by :meth:`reserve` *before* the agent is called and never given back, so
            the agent is never invoked more than ``budget`` times even when calls race).
        replayed: draws served from the store, free.
        retries: attempts that were retries of a retryable failure.
        failures: draws that ended in failure after their last attempt.
        failure_kinds: failures by kind (``"timeout"``, ``"error"``, ``"rate_limit"``...).
        failure_samples: up to 20 messages per kind.
        timeouts: attempts that ran out of time (retried or not).
        budget: the hard call budget (None = unlimited).
        latencies: ``latency_s`` of every successful live draw.
        input_tokens, output_tokens, total_tokens, cost_usd: summed from ``Observation.usage``
            when the agent reports them (None while nothing was reported).
        interrupted: a stop was requested (SIGINT/SIGTERM or ``Engine.request_stop``).
        stop_cause: why the engine stopped on its own (a persistently failing agent), or None.
        phase: the phase the calls made now belong to (set by the command: ``"meter"``,
            ``"relations"``...); the token totals are kept per phase. None: no phase.
        price: the user's :class:`~agentverity_props.engine.Price`, turning tokens into money.
    """

    def __init__(self, budget: int | None = None) -> None:
        self._lock = threading.Lock()
        self.budget = budget
        self.calls = 0
        self.replayed = 0
        self.retries = 0
        self.failures = 0
        self.failure_kinds: dict[str, int] = {}
        self.failure_samples: dict[str, list[str]] = {}
        self.timeouts = 0
        self.latencies: list[float] = []
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.total_tokens: int | None = None
        self.cost_usd: float | None = None
        self.interrupted = False
        self.stop_cause: str | None = None
        self.phase: str | None = None
        self.price: Price | None = None
        self._usage: dict[str | None, UsageTally] = {}

    # -- updates (called by the engine) ---------------------------------------------------

    def reserve(self, *, retry: bool = False) -> bool:
        """Take one unit of the budget for a live attempt and count it; False (nothing
        taken, nothing counted) when the budget is spent."""
        with self._lock:
            if self.budget is not None and self.calls >= self.budget:
                return False
            self.calls += 1
            if retry:
                self.retries += 1
            return True

    def can_afford(self, n: int) -> bool:
        """True if ``n`` more live calls fit in the budget."""
        with self._lock:
            return self.budget is None or self.budget - self.calls >= n

    def note_replay(self) -> None:
        with self._lock:
            self.replayed += 1

    def note_timeout(self) -> None:
        with self._lock:
            self.timeouts += 1

    def note_failure(self, kind: str, message: str) -> None:
        with self._lock:
            self.failures += 1
            self.failure_kinds[kind] = self.failure_kinds.get(kind, 0) + 1
            samples = self.failure_samples.setdefault(kind, [])
            if len(samples) < _SAMPLES_PER_KIND:
                samples.append(message)

    def note_success(self, obs: Observation) -> None:
        usage = obs.usage
        with self._lock:
            self.latencies.append(obs.latency_s)
            tally = self._usage.get(self.phase)
            if tally is None:
                tally = self._usage[self.phase] = UsageTally()
            tally.add(usage)
            if usage is not None:
                if usage.input_tokens is not None:
                    self.input_tokens = (self.input_tokens or 0) + usage.input_tokens
                if usage.output_tokens is not None:
                    self.output_tokens = (self.output_tokens or 0) + usage.output_tokens
                if usage.total_tokens is not None:
                    self.total_tokens = (self.total_tokens or 0) + usage.total_tokens
                elif usage.input_tokens is not None or usage.output_tokens is not None:
                    self.total_tokens = ((self.total_tokens or 0) + (usage.input_tokens or 0)
                                         + (usage.output_tokens or 0))
                if usage.cost_usd is not None:
                    self.cost_usd = (self.cost_usd or 0.0) + usage.cost_usd

    # -- reading ----------------------------------------------------------------------------

    @property
    def budget_remaining(self) -> int | None:
        """Live calls left in the budget (None = unlimited)."""
        if self.budget is None:
            return None
        return max(0, self.budget - self.calls)

    def percentile(self, p: float) -> float | None:
        """The ``p``-th percentile (0-100, linear interpolation) of successful latencies.

        >>> led = Ledger()
        >>> led.latencies.extend([1.0, 2.0, 3.0, 4.0])
        >>> led.percentile(50)
        2.5
        """
        if not 0 <= p <= 100:
            from ..errors import InvalidArgument
            raise InvalidArgument(f"percentile p must be within 0..100, got {p!r}")
        with self._lock:
            data = sorted(self.latencies)
        if not data:
            return None
        pos = (len(data) - 1) * p / 100.0
        lo = math.floor(pos)
        hi = min(lo + 1, len(data) - 1)
        return data[lo] + (data[hi] - data[lo]) * (pos - lo)

    def tokens(self) -> dict[str, Any]:
        """The tokens of this run's live calls, in total and per phase, and their cost at
        :attr:`price` (:func:`~agentverity_props.engine.tokens_report`)."""
        with self._lock:
            phases = {k: v.copy() for k, v in self._usage.items()}
        return tokens_report(phases, self.price)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        p50 = self.percentile(50)
        p95 = self.percentile(95)
        tokens = self.tokens()
        with self._lock:
            return {
                "calls": self.calls,
                "replayed": self.replayed,
                "retries": self.retries,
                "failures": self.failures,
                "failure_kinds": dict(self.failure_kinds),
                "failure_samples": {k: list(v) for k, v in self.failure_samples.items()},
                "timeouts": self.timeouts,
                "latency_p50_s": p50,
                "latency_p95_s": p95,
                "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens,
                "total_tokens": self.total_tokens,
                "cost_usd": self.cost_usd,
                "budget": self.budget,
                "budget_remaining": self.budget_remaining,
                "interrupted": self.interrupted, "stop_cause": self.stop_cause,
                "tokens": tokens,
            }

    def __repr__(self) -> str:
        return (f"Ledger(calls={self.calls}, replayed={self.replayed}, retries={self.retries}, "
                f"failures={self.failures}, budget={self.budget})")
