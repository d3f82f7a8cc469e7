"""Per-attempt timeouts with one timer per event loop.

``asyncio.timeout`` schedules and cancels a timer handle for every call; with thousands of
short calls that dominates the engine's own cost. Every attempt of one engine has the same
timeout, so deadlines come in the order attempts start: an insertion-ordered dict of the
attempts in flight has the earliest deadline first, and a single timer armed at that
deadline suffices. Starting or finishing an attempt is then a dict insert or delete.

Semantics match ``asyncio.timeout``: an expired attempt's task is cancelled, and the
``CancelledError`` becomes ``TimeoutError`` unless someone else also cancelled the task.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

__all__ = ["Deadlines", "Entry"]

if sys.version_info >= (3, 11):
    def _cancelling(task: asyncio.Task[Any]) -> int:
        return task.cancelling()

    def _uncancel(task: asyncio.Task[Any]) -> int:
        return task.uncancel()
else:  # Python 3.10 does not count cancellations: an expiry is always ours
    def _cancelling(task: asyncio.Task[Any]) -> int:
        return 0

    def _uncancel(task: asyncio.Task[Any]) -> int:
        return 0

# the loop may run a timer up to its clock resolution early; never time out early by more
_EARLY_S = 1e-3


class Entry:
    """One attempt in flight."""

    __slots__ = ("cancelling", "deadline", "expired", "task")

    def __init__(self, task: asyncio.Task[Any], deadline: float, cancelling: int) -> None:
        self.task = task
        self.deadline = deadline
        self.cancelling = cancelling
        self.expired = False


class Deadlines:
    """The attempts in flight on one loop, each with ``timeout_s`` to finish."""

    # No reference to the loop is kept (nor to the timer handle, which holds its loop): the
    # engine maps loops to their state weakly, and a value that pointed back at its key would
    # keep every closed loop alive.
    __slots__ = ("_armed", "_entries", "_timeout_s")

    def __init__(self, timeout_s: float) -> None:
        self._timeout_s = timeout_s
        self._entries: dict[Entry, None] = {}
        self._armed = False

    def start(self) -> Entry:
        """Register the current task's attempt; call :meth:`finish` when it ends."""
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - draw() always runs inside a task
            raise RuntimeError("the engine must be awaited inside an asyncio task")
        loop = asyncio.get_running_loop()
        entry = Entry(task, loop.time() + self._timeout_s, _cancelling(task))
        self._entries[entry] = None
        if not self._armed:
            self._armed = True
            loop.call_at(entry.deadline, self._fire)
        return entry

    def finish(self, entry: Entry) -> None:
        # the timer stays armed: when it fires it re-arms for the new earliest deadline
        self._entries.pop(entry, None)

    @staticmethod
    def settle(entry: Entry) -> bool:
        """After an expiry: True if the cancellation was ours alone (-> TimeoutError)."""
        return _uncancel(entry.task) <= entry.cancelling

    def _fire(self) -> None:
        self._armed = False
        entries = self._entries
        loop = asyncio.get_running_loop()
        now = loop.time() + _EARLY_S
        while entries:
            entry = next(iter(entries))
            if entry.deadline > now:
                self._armed = True
                loop.call_at(entry.deadline, self._fire)
                return
            del entries[entry]
            entry.expired = True
            entry.task.cancel()

