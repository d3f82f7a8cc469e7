"""Which failures are retried, and how long to wait before the next attempt."""

from __future__ import annotations

import asyncio
import random

from ..errors import AgentCallError

__all__ = ["Backoff", "classify"]

_MAX_MESSAGE = 500


class Backoff:
    """Exponential backoff with full jitter, from the engine's own seeded generator.

    The wait before retry ``n`` (1-based) is uniform on ``[0, min(max_s, base_s * 2**(n-1))]``
    ("full jitter": concurrent callers spread out instead of retrying in lock-step). A
    server's ``Retry-After`` hint is a floor: the wait is never shorter than it, and
    ``max_s`` caps only the exponential part, because retrying before the server asked is
    pointless.
    """

    __slots__ = ("base_s", "max_s", "rng")

    def __init__(self, base_s: float, max_s: float, seed: int) -> None:
        self.base_s = base_s
        self.max_s = max_s
        self.rng = random.Random(seed)

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 = first retry)."""
        cap = min(self.max_s, self.base_s * (2.0 ** min(retry - 1, 60)))
        wait = self.rng.uniform(0.0, cap) if cap > 0 else 0.0
        if retry_after_s is not None and retry_after_s > wait:
            wait = float(retry_after_s)
        return wait


# asyncio.TimeoutError is the builtin only from Python 3.11 on
_TIMEOUTS = (TimeoutError, asyncio.TimeoutError)


def classify(exc: BaseException, timeout_s: float | None, *, sync: bool = False,
             prompt: str | None = None) -> tuple[str, str, bool, float | None]:
    """``(kind, message, retryable, retry_after_s)`` for a failed attempt.

    ``AgentCallError`` says for itself; a timeout is retryable (kind ``"timeout"``); any other
    exception is a non-retryable ``"error"`` whose message names the exception type. An
    agent that echoes the ``prompt`` in its error message does not get it into reports: it
    reads ``<prompt>`` there (reports keep no prompt unless the user opts in).
    """
    def clean(message: str) -> str:
        if prompt and len(prompt) >= 4:
            message = message.replace(prompt, "<prompt>")
        return _cut(message)

    if isinstance(exc, AgentCallError):
        return exc.kind, clean(str(exc)), exc.retryable, exc.retry_after_s
    if isinstance(exc, _TIMEOUTS):
        text = str(exc)
        if not text:
            text = f"no answer within {timeout_s:g} s" if timeout_s is not None else "timed out"
            if sync:
                text += " (the call goes on in its worker thread until the agent returns)"
        return "timeout", clean(text), True, None
    return "error", clean(f"{type(exc).__name__}: {exc}"), False, None


def _cut(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"
