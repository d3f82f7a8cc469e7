"""The hard agent-call budget: reserved one unit at a time, never exceeded."""

from __future__ import annotations

import threading

__all__ = ["Budget"]


class Budget:
    """A thread-safe counter of agent calls against an optional hard limit.

    Every live attempt (first tries and retries alike) takes one unit *before* the agent is
    called; a unit is never given back, so the number of agent invocations can never exceed
    ``limit`` even when many calls and retries race.
    """

    __slots__ = ("_lock", "_spent", "limit")

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._spent = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Reserve one call; False when the budget is spent."""
        with self._lock:
            if self.limit is not None and self._spent >= self.limit:
                return False
            self._spent += 1
            return True

    @property
    def remaining(self) -> int | None:
        """Calls left (None = unlimited)."""
        if self.limit is None:
            return None
        return max(0, self.limit - self._spent)

    def can_afford(self, n: int) -> bool:
        """True if ``n`` more live calls fit."""
        return self.limit is None or self.limit - self._spent >= n
