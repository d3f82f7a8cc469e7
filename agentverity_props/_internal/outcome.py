"""Typed outcomes shared by every command: statuses as enums, one exit-code precedence.

Every command ends in one of three exit codes, decided the same way (README, "Exit codes"):
incomplete evidence (a failed call, an interrupt, a budget that ran out) outranks a finding,
which outranks an undecided result, which outranks a clean one.

>>> exit_code(incomplete=False, finding=True, undecided=True)
<Exit.FINDING: 1>
>>> exit_code(incomplete=True, finding=True)
<Exit.INCOMPLETE: 2>
"""

from __future__ import annotations

import enum

__all__ = ["CandidateStatus", "CaseStatus", "CheckStatus", "Exit", "InputCheckStatus",
           "RelationStatus", "StopReason", "TaskStatus", "exit_code"]


class _StrEnum(str, enum.Enum):
    """A string enum that prints, formats and serialises as its value (``enum.StrEnum`` is
    3.11+; this package supports 3.10)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    def __repr__(self) -> str:  # reads as the string it equals, in reports and REPLs
        return repr(str(self.value))


class Exit(enum.IntEnum):
    """Process exit codes of every command."""

    OK = 0
    FINDING = 1
    INCOMPLETE = 2  # also: undecided evidence, bad input


def exit_code(*, incomplete: bool, finding: bool, undecided: bool = False) -> Exit:
    """The one precedence: incomplete > finding > undecided > clean."""
    if incomplete:
        return Exit.INCOMPLETE
    if finding:
        return Exit.FINDING
    if undecided:
        return Exit.INCOMPLETE
    return Exit.OK


class RelationStatus(_StrEnum):
    """A relation's status over a run's inputs."""

    VIOLATED = "VIOLATED"
    HOLDS = "HOLDS"
    NOT_EXERCISED = "NOT EXERCISED"
    #: requested but never tested (no recorded follow-up, no recorded pair, left out by a
    #: stop): incomplete evidence, exit 2, never clean
    NOT_TESTED = "NOT TESTED"
    INCOMPLETE = "INCOMPLETE"
    UNDECIDED = "UNDECIDED"


class CandidateStatus(_StrEnum):
    """How one (relation, source, follow-up) candidate ended."""

    SKIPPED = "skipped"
    #: scored in the pooled rounds, no sign of a localised violation, not tested on its own
    CLEAN = "clean"
    PASS = "pass"
    CONFIRMED = "confirmed"
    UNDECIDED = "undecided"
    INCOMPLETE = "incomplete"
    PENDING = "pending"


class StopReason(_StrEnum):
    """Why a command stopped drawing before its rule decided (the evidence is incomplete);
    the cause of an agent that failed persistently is in the ledger's ``stop_cause``."""

    INTERRUPTED = "interrupted"
    BUDGET = "call budget exhausted"
    EVIDENCE = "recorded evidence exhausted"


class TaskStatus(_StrEnum):
    """A benchmark attempt (PASS / FAIL / ERROR) or task (also INCOMPLETE: stopped by a
    budget or interrupt; UNDECIDED: the sequential rule reached the run cap without a
    decision — exit code 2, as every undecided result)."""

    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"
    INCOMPLETE = "INCOMPLETE"
    UNDECIDED = "UNDECIDED"


class CaseStatus(_StrEnum):
    """A tool-call case, or one of its runs (runs are never inconclusive)."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    INCONCLUSIVE = "inconclusive"


class CheckStatus(_StrEnum):
    """A snapshot check as a whole."""

    CLEAN = "clean"
    DRIFT = "drift"
    CHANGED = "changed"  # the agent changed during the check itself (not drift)
    INADMISSIBLE = "inadmissible"
    INCOMPLETE = "incomplete"


class InputCheckStatus(_StrEnum):
    """One input of a snapshot check."""

    UNSCREENED = "unscreened"
    CLEAN = "clean"
    DRIFT = "drift"
    NOISE = "noise"
    UNCONFIRMED = "unconfirmed"
    INCOMPLETE = "incomplete"
