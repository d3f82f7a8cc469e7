"""What every framework adapter shares: a failed call's cause chain and description, the
mapping of a framework's exception to the toolkit's error classes, and the check of a user's
zero-argument factory.

The adapters classify a framework's exception into an :class:`~agentverity_props.errors.
AgentCallError` kind (``rate_limit``, ``timeout``, ``bad_output``, ...) with
:func:`map_error`. The framework-specific part (which class names mean what) is each adapter's
table of :class:`ErrorRule` rows; the chain walk, the rate-limit name hints, the order the rows
are tried in and the one-line description live here once.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .._internal.introspect import qualname
from ..errors import AgentCallError, InvalidArgument

__all__ = ["RATE_LIMIT_HINTS", "ErrorRule", "call_factory", "cause_chain", "check_factory",
           "describe",
           "first_rate_limited", "first_timeout", "guarded", "is_throttled", "is_timeout",
           "map_error", "named", "status_code"]

_T = TypeVar("_T")

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


def is_throttled(err: BaseException) -> bool:
    """True when a class of ``err``'s MRO has a rate-limit name (:data:`RATE_LIMIT_HINTS`)."""
    return first_rate_limited([err]) is not None


def is_timeout(err: BaseException) -> bool:
    """True for a :class:`TimeoutError` (``asyncio.TimeoutError`` included)."""
    return isinstance(err, TimeoutError)


def named(*names: str, module: str | None = None,
          exact: bool = False) -> Callable[[BaseException], bool]:
    """A test: some class of the error's MRO is called one of ``names`` (only the error's own
    class with ``exact``), from a module starting with ``module`` when given.

    Frameworks are matched by name so that none has to be imported.

    >>> class RateLimitError(Exception): ...
    >>> named("RateLimitError")(RateLimitError()), named("RateLimitError", module="openai")(
    ...     RateLimitError())
    (True, False)
    """
    wanted = frozenset(names)

    def test(err: BaseException) -> bool:
        classes = (type(err),) if exact else type(err).__mro__
        return any(c.__name__ in wanted and (module is None or c.__module__.startswith(module))
                   for c in classes)
    return test


def status_code(err: BaseException) -> Any:
    """The HTTP status an error carries (``status_code``), or None."""
    return getattr(err, "status_code", None)


@dataclass(frozen=True)
class ErrorRule:
    """One row of a framework's error table: an error that ``matches`` becomes an
    :class:`~agentverity_props.errors.AgentCallError` of ``kind``.

    Attributes:
        kind: the error's kind (``"rate_limit"``, ``"timeout"``, ``"bad_output"``, ...).
        matches: the test of one error of the cause chain.
        retryable: whether the engine may retry the call.
        hint: text appended to the message (how to fix it).
        shown: the message describes the first error that is not one of the framework's
            wrappers instead of the matched one.
        retry_after: the parser of a ``Retry-After`` header (``err.response.headers``)
            into ``retry_after_s`` (seconds, or None), when the framework's errors carry one.
        outer_only: test only the outermost exception, after every error of the chain was
            tried against the other rows (a kind the framework raises itself, not one a
            cause deep in the chain should decide).
    """

    kind: str
    matches: Callable[[BaseException], bool]
    retryable: bool = False
    hint: str = ""
    shown: bool = False
    retry_after: Callable[[str | None], float | None] | None = None
    outer_only: bool = False


def map_error(exc: BaseException, rules: Sequence[ErrorRule], *, limit: int | None = None,
              throttle_first: bool = False,
              wrappers: frozenset[str] = frozenset()) -> AgentCallError:
    """``exc`` (a failed framework call) as the toolkit's :class:`AgentCallError`.

    The order: with ``throttle_first``, a rate-limit name anywhere in the cause chain wins
    (``rate_limit``, retryable, describing the throttled error). Then each error of the chain,
    outermost first, is tried against the rows in order; the first match decides. Then the
    ``outer_only`` rows against ``exc`` itself. Otherwise the kind is ``"error"``, not
    retryable. Messages are :func:`describe` cut at ``limit``; ``wrappers`` are class names
    the framework wraps errors in, skipped by the message of a ``shown`` row and of the
    fallback.

    >>> rules = [ErrorRule("timeout", is_timeout, retryable=True)]
    >>> err = map_error(RuntimeError("x"), rules)
    >>> err.kind, err.retryable, str(err)
    ('error', False, 'RuntimeError: x')
    >>> map_error(TimeoutError("slow"), rules).kind
    'timeout'
    """
    chain = cause_chain(exc)
    shown = next((e for e in chain if type(e).__name__ not in wrappers), exc)
    if throttle_first and (throttled := first_rate_limited(chain)) is not None:
        return AgentCallError(describe(throttled, limit=limit), kind="rate_limit",
                              retryable=True)
    inner = [r for r in rules if not r.outer_only]
    outer = [r for r in rules if r.outer_only]
    for err in chain:
        for rule in inner:
            if rule.matches(err):
                return _error(rule, err, shown, limit)
    for rule in outer:
        if rule.matches(exc):
            return _error(rule, exc, shown, limit)
    return AgentCallError(describe(shown, limit=limit), kind="error")


def _error(rule: ErrorRule, err: BaseException, shown: BaseException,
           limit: int | None) -> AgentCallError:
    retry_after = None
    if rule.retry_after is not None:
        headers = getattr(getattr(err, "response", None), "headers", None)
        if headers is not None:
            retry_after = rule.retry_after(headers.get("retry-after"))
    message = describe(shown if rule.shown else err, limit=limit) + rule.hint
    return AgentCallError(message, kind=rule.kind, retryable=rule.retryable,
                          retry_after_s=retry_after)


def call_factory(factory: Callable[[], Any], what: str, *,
                 is_expected: Callable[[Any], bool] | None = None, expected: str = "",
                 fix: str | Callable[[Any], str] = "") -> Any:
    """What ``factory()`` (a user's zero-argument factory, called for one agent call) returns.

    Its exception, or (with ``is_expected``) an object of the wrong kind, fails that call
    with an :class:`~agentverity_props.errors.AgentCallError` (kind ``"error"``) naming the
    factory: ``"<what> <factory> raised <error>"`` or ``"<what> <factory> returned <type>,
    not <expected><fix>"`` (``fix`` may be a function of the returned object).

    >>> try:
    ...     call_factory(lambda: 3, "agent factory", is_expected=lambda a: isinstance(a, str),
    ...                  expected="a str", fix="; return a str")
    ... except AgentCallError as exc:
    ...     str(exc).split(" returned ")[1]
    'int, not a str; return a str'
    """
    try:
        made = factory()
    except Exception as exc:
        raise AgentCallError(f"{what} {qualname(factory)} raised {describe(exc)}",
                             kind="error") from exc
    if is_expected is not None and not is_expected(made):
        tail = fix(made) if callable(fix) else fix
        raise AgentCallError(f"{what} {qualname(factory)} returned {type(made).__name__}, "
                             f"not {expected}{tail}", kind="error")
    return made


async def guarded(start: Callable[[], Awaitable[_T]],
                  to_error: Callable[[BaseException], AgentCallError]) -> _T:
    """Await the framework call ``start()``; what it raises (also while starting: a wrong
    keyword) becomes ``to_error(exc)``, the adapter's classification, chained to it."""
    try:
        return await start()
    except Exception as exc:
        raise to_error(exc) from exc
