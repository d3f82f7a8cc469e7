"""Running the async engine from synchronous code that is called many times.

A Hypothesis test body (``@agent_property``) or a search loop (``enlarge``) is synchronous
and called hundreds of times; the engine's per-input locks belong to one event loop. So one
loop runs in a daemon thread for the whole session and each decision is submitted to it,
instead of ``asyncio.run`` per call (which would rebuild the engine's loop-bound state).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._internal.settings import carry

if TYPE_CHECKING:
    from ._config import EngineConfig
    from ._engine import Engine

T = TypeVar("T")


class LoopThread:
    """One event loop in a daemon thread: engines (and their locks) live in one loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True,
                                        name="agentverity-props-loop")
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        # the caller's edge goes with it: a message formed in the loop names settings in the
        # caller's terms (_internal/settings.py)
        return asyncio.run_coroutine_threadsafe(carry(coro), self.loop).result()

    def close(self) -> None:
        # as asyncio.run does: pending async generators are closed in their loop (an HTTP
        # adapter's connection pool lives in one and closes its sockets there)
        if self._thread.is_alive() and not self.loop.is_closed():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.loop.shutdown_asyncgens(),
                                                 self.loop).result(timeout=5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()


def run_session(agents: Sequence[Any], config: EngineConfig,
                fn: Callable[[list[Engine]], Awaitable[T]], *,
                on_stop: Callable[[str], None] | None = None) -> T:
    """``fn(engines)`` with one engine per agent, SIGINT/SIGTERM turned into a clean stop
    (finished calls kept, the evidence marked incomplete), every engine closed after: what
    every command that calls agents does around its work. ``on_stop`` hears why an engine
    stopped on its own (an agent failing persistently), once per cause."""
    from .._internal.aio import run_sync
    from ._engine import Engine

    async def go() -> T:
        engines = [Engine(a, config) for a in agents]
        try:
            with contextlib.ExitStack() as stack:
                for e in engines:
                    stack.enter_context(e.install_signal_handlers())
                return await fn(engines)
        finally:
            for e in engines:
                await e.aclose()
            if on_stop is not None:
                for cause in dict.fromkeys(e.stop_cause for e in engines if e.stop_cause):
                    on_stop(cause)

    return run_sync(go())
