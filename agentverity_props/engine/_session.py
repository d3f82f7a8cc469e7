"""Running the async engine from synchronous code that is called many times.

A Hypothesis test body (``@agent_property``) or a search loop (``enlarge``) is synchronous
and called hundreds of times; the engine's per-input locks belong to one event loop. So one
loop runs in a daemon thread for the whole session and each decision is submitted to it,
instead of ``asyncio.run`` per call (which would rebuild the engine's loop-bound state).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """One event loop in a daemon thread: engines (and their locks) live in one loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                        name="agentverity-props-loop")
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()
