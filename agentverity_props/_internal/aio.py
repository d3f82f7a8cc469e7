"""Running a coroutine from sync code, whatever the caller's thread is doing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def run_sync(coro: Awaitable[T]) -> T:
    """Run a coroutine to completion from sync code.

    ``asyncio.run`` when no loop runs in this thread; otherwise (Jupyter, an async test) in
    a fresh thread with its own loop, so it never deadlocks the caller's loop.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_as_coroutine(coro))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentverity-run") as pool:
        return pool.submit(asyncio.run, _as_coroutine(coro)).result()


async def _as_coroutine(aw: Awaitable[T]) -> T:
    return await aw
