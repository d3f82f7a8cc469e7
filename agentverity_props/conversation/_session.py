"""The session protocol: open a conversation, send user turns, get one Observation per turn.

An agent that can hold a conversation is a :class:`Conversational`: ``open()`` returns a new
:class:`Session` (a fresh conversation), and ``await session.send(message)`` is one user turn
and its answer. Sessions that can copy themselves (``fork()``) let a longer conversation
continue a shorter one's draw instead of replaying it from the first turn.

Implementations here take plain Python: :func:`from_history` (a callable given the whole
message history each turn) and :func:`from_chat` (a factory returning a stateful chat object).
Strands agents are in :mod:`._strands`. :func:`conversational` turns whatever the user passed
into a :class:`Conversational`, or refuses it in one line.

Only the engine calls a session (through :class:`SessionAdapter`), so budget, ledger,
concurrency and timeouts apply to every turn.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from .._internal.introspect import qualname
from ..errors import AgentCallError, InvalidArgument
from ..observation import Observation, coerce_output

__all__ = ["ChatConversation", "Conversational", "HistoryConversation", "Session",
           "SessionAdapter", "conversational", "from_chat", "from_history"]

Message = Mapping[str, str]


@runtime_checkable
class Session(Protocol):
    """One open conversation."""

    async def send(self, message: str) -> Observation:
        """One user turn; the agent's answer to it (its tool calls of this turn only)."""
        ...

    def fork(self) -> Session | None:
        """An independent copy of the conversation so far, or None if it cannot be copied."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Conversational(Protocol):
    """An agent able to hold conversations.

    Attributes:
        identity: a stable name (part of the record/replay key).
    """

    identity: str

    def open(self) -> Session: ...


# ----------------------------------------------------------------------------- history


class _HistorySession:
    def __init__(self, owner: HistoryConversation, history: list[dict[str, str]] | None = None
                 ) -> None:
        self._owner = owner
        self.history: list[dict[str, str]] = history or []

    async def send(self, message: str) -> Observation:
        msgs = [*self.history, {"role": "user", "content": message}]
        fn = self._owner.fn
        if self._owner.is_async:
            out = await fn([dict(m) for m in msgs])
        else:
            out = await asyncio.to_thread(fn, [dict(m) for m in msgs])
            if inspect.isawaitable(out):
                out = await out
        obs = coerce_output(out)
        # the history grows only once the turn succeeded: a retried turn sees the same past
        self.history = [*msgs, {"role": "assistant", "content": obs.text}]
        return obs

    def fork(self) -> _HistorySession:
        return _HistorySession(self._owner, [dict(m) for m in self.history])

    def close(self) -> None:
        self.history = []


class HistoryConversation:
    """A callable given the message history (``[{"role", "content"}, ...]``, the new user turn
    last) and returning ``str | dict | Observation`` — sync or ``async def``."""

    def __init__(self, fn: Callable[[list[Message]], Any], *, identity: str | None = None
                 ) -> None:
        if not callable(fn):
            raise InvalidArgument(f"from_history expects a callable taking the message list, "
                                  f"got {type(fn).__name__}")
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__)
        self.identity = identity or "history:" + qualname(fn)

    def open(self) -> _HistorySession:
        return _HistorySession(self)

    def __repr__(self) -> str:
        return f"from_history({self.identity.removeprefix('history:')})"


def from_history(fn: Callable[[list[Message]], Any], *, identity: str | None = None
                 ) -> HistoryConversation:
    """A conversational agent from ``fn(messages) -> str | dict | Observation``.

    ``messages`` is the whole conversation as ``{"role": "user" | "assistant", "content": ...}``
    dicts, the new user turn last; the session keeps it between turns. A dict answer may carry
    ``verdict`` and ``tools`` (see :func:`~agentverity_props.observation.coerce_output`).

    Example:
        >>> conv = from_history(lambda msgs: f"turn {len(msgs) // 2 + 1}")
        >>> from agentverity_props._internal.aio import run_sync
        >>> s = conv.open()
        >>> run_sync(s.send("hi")).text, run_sync(s.send("again")).text
        ('turn 1', 'turn 2')
    """
    return HistoryConversation(fn, identity=identity)


# -------------------------------------------------------------------------------- chat


class _ChatSession:
    forkable = False  # a chat object's state cannot be copied

    def __init__(self, owner: ChatConversation) -> None:
        self._owner = owner
        self._chat: Any = None
        self._broken: str | None = None

    async def send(self, message: str) -> Observation:
        if self._broken is not None:
            raise AgentCallError(f"an earlier turn of this conversation failed ({self._broken});"
                                 " its chat object is in an unknown state", kind="error")
        try:
            if self._chat is None:
                self._chat = self._owner.factory()
            send = getattr(self._chat, "send", None) or self._chat
            if inspect.iscoroutinefunction(send) or inspect.iscoroutinefunction(
                    type(send).__call__):
                out = await send(message)
            else:
                out = await asyncio.to_thread(send, message)
                if inspect.isawaitable(out):
                    out = await out
        except BaseException as exc:
            # a chat object keeps its own state: after a failed turn nobody knows what it holds
            self._broken = type(exc).__name__
            raise
        return coerce_output(out)

    def fork(self) -> None:
        return None

    def close(self) -> None:
        close = getattr(self._chat, "close", None)
        self._chat = None
        if callable(close):
            close()


class ChatConversation:
    """A zero-argument factory returning a chat object: ``chat.send(message)`` (or
    ``chat(message)``), sync or async, returning ``str | dict | Observation``."""

    def __init__(self, factory: Callable[[], Any], *, identity: str | None = None) -> None:
        if not callable(factory):
            raise InvalidArgument(f"from_chat expects a zero-argument factory, got "
                                  f"{type(factory).__name__}")
        self.factory = factory
        self.identity = identity or "chat:" + qualname(factory)

    def open(self) -> _ChatSession:
        return _ChatSession(self)

    def __repr__(self) -> str:
        return f"from_chat({self.identity.removeprefix('chat:')})"


def from_chat(factory: Callable[[], Any], *, identity: str | None = None) -> ChatConversation:
    """A conversational agent from a factory of stateful chat objects (one per conversation).

    Each conversation calls ``factory()`` once, then ``chat.send(message)`` (or
    ``chat(message)``) per user turn. A failed turn ends that conversation (its state is
    unknown), so the engine's retries do not replay a half-applied turn.
    """
    return ChatConversation(factory, identity=identity)


# ------------------------------------------------------------------------ engine glue

_CURRENT: contextvars.ContextVar[Session | None] = contextvars.ContextVar(
    "agentverity_conversation_session", default=None)


class SessionAdapter:
    """The engine's view of a conversational agent: one ``ainvoke`` is one user turn of the
    session the calling task has set (:meth:`using`), so every turn is an engine draw."""

    is_async = True

    def __init__(self, agent: Conversational) -> None:
        self.conversational = agent
        self.identity = "conversation:" + agent.identity

    @staticmethod
    def using(session: Session) -> contextvars.Token[Session | None]:
        return _CURRENT.set(session)

    @staticmethod
    def release(token: contextvars.Token[Session | None]) -> None:
        _CURRENT.reset(token)

    def invoke(self, prompt: str) -> Observation:  # pragma: no cover - engine awaits ainvoke
        raise AgentCallError("a conversation turn must be awaited", kind="error")

    async def ainvoke(self, prompt: str) -> Observation:
        session = _CURRENT.get()
        if session is None:
            raise AgentCallError("no open conversation for this turn", kind="error")
        return await session.send(prompt)


# --------------------------------------------------------------------------- coercion


def conversational(agent: Any) -> Conversational:
    """Accept a :class:`Conversational` as is; an adapter with a ``conversation()`` method
    (``from_langgraph``) gives its own; a Strands adapter (or factory) becomes one
    conversation per fresh ``Agent``; anything else is refused with a one-line reason.

    Plain callables are refused on purpose: ``fn(prompt)`` and ``fn(messages)`` look the
    same, so say which with :func:`from_history` or :func:`from_chat`.
    """
    if isinstance(agent, Conversational) and not isinstance(agent, type):
        return agent
    kind = type(agent).__name__
    opener = getattr(agent, "conversation", None)
    if callable(opener) and hasattr(agent, "ainvoke"):
        # an adapter that can hold a conversation itself (from_langgraph: one thread per
        # conversation, kept across its turns)
        conv = opener()
        if isinstance(conv, Conversational):
            return conv
    if kind == "StrandsAdapter":
        from ._strands import from_strands_adapter
        return from_strands_adapter(agent)
    from ..adapters import CallableAdapter
    if isinstance(agent, CallableAdapter):
        raise InvalidArgument(
            f"{agent!r} sends one prompt per call and holds no conversation; wrap the agent "
            "with conversation.from_history(fn) (fn gets the message list) or "
            "conversation.from_chat(factory)")
    if kind == "HTTPAdapter":
        raise InvalidArgument(
            f"the HTTP adapter ({getattr(agent, 'identity', kind)}) sends one prompt per call "
            "and holds no conversation; use conversation.from_http_conversation(url, "
            "session_field=...) if the service keeps conversations by session id")
    if hasattr(agent, "identity") and hasattr(agent, "ainvoke"):
        raise InvalidArgument(
            f"{getattr(agent, 'identity', kind)} is a single-call adapter and cannot hold a "
            "conversation; use conversation.from_history, from_chat or from_strands_conversation")
    if callable(agent):
        raise InvalidArgument(
            f"a plain callable ({qualname(agent)}) may take a prompt or a history; say which: "
            "conversation.from_history(fn) (fn gets the message list) or "
            "conversation.from_chat(factory) (factory returns a chat object)")
    raise InvalidArgument(f"{kind} cannot hold a conversation; pass conversation.from_history("
                          "fn), from_chat(factory) or from_strands_conversation(factory)")



def messages_of(history: list[Mapping[str, str]]) -> list[str]:
    """The user turns of a history, in order."""
    return [m["content"] for m in history if m.get("role") == "user"]
