"""Plain Python callables as agents."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

from .._internal.introspect import qualname
from ..errors import InvalidArgument
from ..observation import Observation, coerce_output


class CallableAdapter:
    """Adapter over ``fn(prompt) -> str | dict | Observation`` (sync or ``async def``)."""

    def __init__(self, fn: Callable[[str], Any], *, identity: str | None = None) -> None:
        if not callable(fn):
            raise InvalidArgument(
                f"from_callable expects a callable taking the prompt, got {type(fn).__name__}")
        self._fn = fn
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__)
        self.identity = identity or "callable:" + qualname(fn)

    def invoke(self, prompt: str) -> Observation:
        t0 = time.perf_counter()
        out = self._fn(prompt)
        if inspect.isawaitable(out):  # a sync-looking callable that returned a coroutine
            out = asyncio.run(_await(out))
        return _finish(out, t0)

    async def ainvoke(self, prompt: str) -> Observation:
        t0 = time.perf_counter()
        out = self._fn(prompt)
        if inspect.isawaitable(out):
            out = await out
        return _finish(out, t0)

    def __repr__(self) -> str:
        return f"from_callable({self.identity.removeprefix('callable:')})"


async def _await(aw: Any) -> Any:
    return await aw


def _finish(out: Any, t0: float) -> Observation:
    obs = coerce_output(out)
    if obs.latency_s:
        return obs
    from dataclasses import replace
    return replace(obs, latency_s=time.perf_counter() - t0)



def from_callable(fn: Callable[[str], Any], *, identity: str | None = None) -> CallableAdapter:
    """Wrap a sync or async callable ``fn(prompt)`` returning ``str | dict | Observation``.

    Example:
        >>> gate = from_callable(lambda p: "block" if "attack" in p else "allow")
        >>> gate.invoke("hello").text
        'allow'
    """
    return CallableAdapter(fn, identity=identity)
