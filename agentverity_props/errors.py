"""Every exception agentverity-props raises, under one root.

The CLI turns any :class:`AgentVerityError` that reaches it into one line on stderr and exit
code 2 (findings such as :class:`PropertyViolation` are reported, not raised, by the CLI).
Messages follow one shape: what is wrong, then how to fix it.
"""

from __future__ import annotations

import re
import threading

__all__ = [
    "AgentCallError",
    "AgentHealthWarning",
    "AgentVerityError",
    "BadInput",
    "BudgetExhausted",
    "DrawStopped",
    "EvidenceExhausted",
    "Inconclusive",
    "Interrupted",
    "InvalidArgument",
    "PropertyViolation",
    "ReplayMiss",
]


class AgentVerityError(Exception):
    """Root of every error this package raises."""


class InvalidArgument(AgentVerityError, TypeError):
    """A function or decorator was called with arguments that can never work.

    Raised eagerly, at construction or decoration time, never deep inside a run.
    """


class BadInput(AgentVerityError, ValueError):
    """A file, agent reference or command-line value is unusable.

    ``str(err)`` is one line naming the problem and the fix; the CLI prints it and exits 2.
    """

    def __init__(self, problem: str, fix: str | None = None) -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem} — {fix}" if fix else problem)


class DrawStopped(AgentVerityError):
    """A draw was not made or did not complete: the call failed, the budget is spent, or a
    stop was requested. Every caller that makes draws handles these the same way (the
    evidence is incomplete, never a verdict), so they share this base."""


class AgentCallError(DrawStopped):
    """One agent call failed.

    Adapters raise it with ``retryable=True`` for transient failures (rate limits, 5xx,
    timeouts); the engine retries only those. ``retry_after_s`` carries a server's
    ``Retry-After`` hint.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str = "error",
        retryable: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        self.kind = kind
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        super().__init__(message)


class BudgetExhausted(DrawStopped):
    """The hard agent-call budget is spent; no further call is made."""


class EvidenceExhausted(DrawStopped):
    """``assess`` asked for a draw the recording does not hold: no call is ever made for it,
    and the decision that wanted it is incomplete (or undecided), never guessed."""

    kind = "evidence_exhausted"


class ReplayMiss(AgentVerityError):
    """Replay mode found no recorded draw for a call: it never falls back to a live call."""


class Interrupted(DrawStopped):
    """SIGINT/SIGTERM stopped scheduling; finished calls are kept, the evidence is incomplete."""


class Inconclusive(AgentVerityError):
    """The evidence could not decide within the budget (neither pass nor confirmed failure)."""


class AgentHealthWarning(UserWarning):
    """A health finding of a passing agent test: it may test less than it seems (a blind
    probe set, an unstable verdict, dependent draws).

    Issued with :func:`warnings.warn`, so it can be filtered like any warning, or made an
    error: ``pytest -W error::agentverity_props.errors.AgentHealthWarning`` (or ``filterwarnings``).
    """


class PropertyViolation(AgentVerityError, AssertionError):
    """A metamorphic relation is violated beyond the agent's own noise.

    Each relation gets its own subclass (see :func:`violation_class`) so that Hypothesis,
    which tells bugs apart by exception type and raising line, keeps distinct relations as
    distinct failures.
    """

    relation: str = ""


_violation_classes: dict[str, type[PropertyViolation]] = {}
_lock = threading.Lock()


def violation_class(relation: str) -> type[PropertyViolation]:
    """The (cached) exception class for violations of ``relation``.

    >>> violation_class("case") is violation_class("case")
    True
    >>> violation_class("case").__name__
    'CaseViolation'
    """
    with _lock:
        cls = _violation_classes.get(relation)
        if cls is None:
            words = re.findall(r"[A-Za-z0-9]+", relation) or ["Relation"]
            name = "".join(w[:1].upper() + w[1:] for w in words) + "Violation"
            cls = type(name, (PropertyViolation,), {"relation": relation, "__module__": __name__})
            _violation_classes[relation] = cls
        return cls
