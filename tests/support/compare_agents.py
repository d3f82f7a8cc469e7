"""Identical agents for ``compare``: ``tests/stats/test_compare_stats.py`` and
``benchmarks/compare_null.py`` count how often a winner is named between them."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

__all__ = ["KINDS", "identical_pair"]

KINDS = ("instant", "sleeping", "serial", "async-serial")


def identical_pair(kind: str, seed: int) -> tuple[Any, Any]:
    """Two agents that behave identically, each with its own seeded ``random.Random``.

    A call fails (raises) with probability 0.03, else it answers "4" (the right answer) with
    probability 0.7. ``kind`` sets how they spend time: ``instant``; ``sleeping`` (0.2-2
    ms); ``serial`` (both behind one ``threading.Lock`` around a 0.5 ms sleep, one shared
    serial backend); ``async-serial`` (async, one ``asyncio.Lock`` around a 0.5 ms sleep).
    """
    shared = threading.Lock()
    alock: dict[str, asyncio.Lock] = {}

    def make(rng: random.Random) -> Any:
        def answer() -> str:
            if rng.random() < 0.03:
                raise RuntimeError("flaky backend")
            return "4" if rng.random() < 0.7 else "5"

        if kind == "async-serial":
            async def acall(prompt: str) -> str:
                lock = alock.setdefault("lock", asyncio.Lock())
                async with lock:
                    await asyncio.sleep(0.0005)
                return answer()
            return acall

        def call(prompt: str) -> str:
            if kind == "sleeping":
                time.sleep(rng.uniform(0.0002, 0.002))
            elif kind == "serial":
                with shared:
                    time.sleep(0.0005)
            return answer()
        return call

    return make(random.Random(2 * seed)), make(random.Random(2 * seed + 1))
