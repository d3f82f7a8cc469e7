"""What every framework adapter shares: a failed call's cause chain and description, and the
check of a user's zero-argument factory.

The adapters classify a framework's exception into an :class:`~agentverity_props.errors.
AgentCallError` kind (``rate_limit``, ``timeout``, ``bad_output``, ...). The framework-specific
part (which class names mean what) stays in each adapter; the chain walk, the rate-limit name
hints and the one-line description live here once.
"""

from __future__ import annotations

import inspect
from typing import Any

from .._internal.introspect import qualname
from ..errors import InvalidArgument

__all__ = ["RATE_LIMIT_HINTS", "cause_chain", "check_factory", "describe", "first_rate_limited",
           "first_timeout"]

#: lower-cased fragments of exception class names that mean "throttled by the provider"
RATE_LIMIT_HINTS = ("throttl", "ratelimit", "rate_limit", "toomanyrequests")


def cause_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its explicit causes (``__cause__``), outermost first, each once.

    Only explicit chaining is followed: an implicit ``__context__`` can be an unrelated error
    a framework handled internally.

    >>> try:
    ...     try:
    ...         raise TimeoutError("slow")
    ...     except TimeoutError as inner:
    ...         raise RuntimeError("wrapped") from inner
    ... except RuntimeError as outer:
    ...     [type(e).__name__ for e in cause_chain(outer)]
    ['RuntimeError', 'TimeoutError']
    """
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not seen for seen in chain):
        chain.append(cur)
        cur = cur.__cause__
    return chain


def describe(exc: BaseException, *, limit: int | None = None) -> str:
    """``"Type: message"`` on one line (whitespace collapsed), cut at ``limit`` characters.

    >>> describe(ValueError("bad\\n  value"))
    'ValueError: bad value'
    >>> describe(KeyError())
    'KeyError'
    >>> describe(ValueError("x" * 50), limit=20)
    'ValueError: xxxxxxx…'
    """
    text = " ".join(str(exc).split())
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"


def _class_names(err: BaseException) -> str:
    return " ".join(c.__name__.lower() for c in type(err).__mro__)


def first_rate_limited(chain: list[BaseException]) -> BaseException | None:
    """The first error of ``chain`` whose class name says it was throttled, if any."""
    return next((e for e in chain if any(h in _class_names(e) for h in RATE_LIMIT_HINTS)), None)


def first_timeout(chain: list[BaseException]) -> BaseException | None:
    """The first :class:`TimeoutError` of ``chain``, if any."""
    return next((e for e in chain if isinstance(e, TimeoutError)), None)


def check_factory(fn: Any, *, who: str, expects: str, fix: str) -> None:
    """Refuse ``fn`` unless it is callable without arguments, naming the fix.

    ``who`` starts the message (``"from_langgraph"``), ``expects`` says what it takes (``"a
    compiled graph or a zero-argument factory returning one"``), ``fix`` ends it (``"pass a
    zero-argument factory: lambda: builder.compile()"``). A callable without a signature
    (some builtins) is accepted.

    >>> try:
    ...     check_factory(lambda seed: 0, who="from_x", expects="a factory", fix="pass f()")
    ... except InvalidArgument as exc:
    ...     str(exc).split(" factory ")[1].split(" ", 1)[1]
    'requires arguments (seed); pass f()'
    """
    if not callable(fn):
        raise InvalidArgument(f"{who} expects {expects}, got {type(fn).__name__}; {fix}")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and some C callables have no signature
        return
    required = [p.name for p in sig.parameters.values()
                if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if required:
        raise InvalidArgument(f"{who} factory {qualname(fn)} requires arguments "
                              f"({', '.join(required)}); {fix}")
