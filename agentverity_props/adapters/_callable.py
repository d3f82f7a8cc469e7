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

    def __init__(self, fn: Callable[[str], Any], *, identity: str | None = None,
                 nonce_param: str | None = None) -> None:
        if not callable(fn):
            raise InvalidArgument(
                f"from_callable expects a callable taking the prompt, got {type(fn).__name__}")
        if nonce_param is not None:
            _check_nonce_param(fn, nonce_param)
        self.nonce_param = nonce_param
        self._fn = fn
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__)
        self.identity = identity or "callable:" + qualname(fn)

    def _call(self, prompt: str) -> Any:
        if self.nonce_param is None:
            return self._fn(prompt)
        from ._nonce import fresh_nonce
        return self._fn(prompt, **{self.nonce_param: fresh_nonce()})

    def invoke(self, prompt: str) -> Observation:
        t0 = time.perf_counter()
        out = self._call(prompt)
        if inspect.isawaitable(out):  # a sync-looking callable that returned a coroutine
            out = asyncio.run(_await(out))
        return _finish(out, t0)

    async def ainvoke(self, prompt: str) -> Observation:
        t0 = time.perf_counter()
        out = self._call(prompt)
        if inspect.isawaitable(out):
            out = await out
        return _finish(out, t0)

    def __repr__(self) -> str:
        return f"from_callable({self.identity.removeprefix('callable:')})"


def _check_nonce_param(fn: Callable[..., Any], name: str) -> None:
    """``fn`` must accept ``name`` as a keyword (eagerly: at wrapping time, not first call)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise InvalidArgument(f"from_callable: nonce_param must be a keyword name such as "
                              f"'seed', got {name!r}")
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return  # a builtin without a signature: the first call says it
    p = params.get(name)
    ok = (p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)) or any(
        q.kind == q.VAR_KEYWORD for q in params.values())
    if not ok:
        raise InvalidArgument(f"from_callable: nonce_param={name!r}, but the callable takes "
                              f"no keyword {name!r}; add it (def agent(prompt, *, {name}): "
                              "...) and pass it on to the model or cache key")


async def _await(aw: Any) -> Any:
    return await aw


def _finish(out: Any, t0: float) -> Observation:
    obs = coerce_output(out)
    if obs.latency_s:
        return obs
    from dataclasses import replace
    return replace(obs, latency_s=time.perf_counter() - t0)



def from_callable(fn: Callable[..., Any], *, identity: str | None = None,
                  nonce_param: str | None = None) -> CallableAdapter:
    """Wrap a sync or async callable ``fn(prompt)`` returning ``str | dict | Observation``.

    Args:
        fn: the agent.
        identity: stable agent name for record/replay keys (the callable's name by default).
        nonce_param: a keyword ``fn`` accepts; every call passes a fresh cache-busting
            nonce (an integer) in it, for ``fn`` to hand to its model's ``seed`` or its
            cache key, so a response cache never answers a repeat from a stored answer
            (docs/statistics.md §2b, "A way out").

    Example:
        >>> gate = from_callable(lambda p: "block" if "attack" in p else "allow")
        >>> gate.invoke("hello").text
        'allow'
    """
    return CallableAdapter(fn, identity=identity, nonce_param=nonce_param)
