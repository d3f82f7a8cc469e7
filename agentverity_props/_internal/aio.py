"""Running a coroutine from sync code, whatever the caller's thread is doing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

from .settings import carry

T = TypeVar("T")


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code.

    ``asyncio.run`` when no loop runs in this thread; otherwise (Jupyter, an async test) in
    a fresh thread with its own loop, so it never deadlocks the caller's loop.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(coro)).value
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentverity-run") as pool:
        return pool.submit(asyncio.run, carry(_as_coroutine(coro))).result().value


class _Result(Generic[T]):
    """The coroutine's result, boxed so that the finished task's ``repr`` stays short.

    ``asyncio.run`` installs a SIGINT handler holding its main task, and on the way out
    reads and restores the handler; CPython (3.11) then formats the handler's ``repr`` —
    the task's, result included — into an error it discards. A 100,000-input run's result
    took seconds to ``repr``, several times over, after its work was done (after a SIGTERM
    most of the time to exit)."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<result>"


async def _as_coroutine(aw: Awaitable[T]) -> _Result[T]:
    return _Result(await aw)
