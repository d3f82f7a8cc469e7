"""LangGraph graphs holding a conversation: one ``thread_id`` across the turns.

:meth:`LangGraphAdapter.conversation() <agentverity_props.adapters.LangGraphAdapter>` returns
a *conversational* agent in the sense of :mod:`agentverity_props.conversation` (``open()`` a
session, ``await session.send(message)`` per user turn, ``fork()``, ``close()``), built on the
graph's own memory: every turn runs on the conversation's ``thread_id`` and continues from the
checkpoint the previous turn of *this* session ended on (``checkpoint_id``). So:

* a failed turn leaves nothing behind — the retry starts again from the last good checkpoint
  (whatever the failed run wrote is a dead branch of the thread);
* ``fork()`` is free: the copy shares the thread and continues from the same checkpoint, on a
  branch of its own;
* a graph compiled without a checkpointer gets an ``InMemorySaver`` (a copy of the graph; the
  original is untouched), and the thread is deleted when the last session on it closes.

A turn's Observation holds that turn only: the messages the turn added (the answer text, its
tool calls with status, the usage of its model calls), and the final state's other keys as
``raw``, exactly as a single call of :func:`~agentverity_props.adapters.from_langgraph`.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Mapping
from typing import Any

from ..errors import AgentCallError
from ..observation import Observation

__all__ = ["LangGraphConversation"]


class _Thread:
    """One conversation's thread, shared by a session and its forks."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.thread_id = f"agentverity-conv-{uuid.uuid4().hex}"
        self.users = 1

    def release(self) -> None:
        self.users -= 1
        if self.users:
            return
        saver = getattr(self.graph, "checkpointer", None)
        delete = getattr(saver, "delete_thread", None)
        if delete is not None:
            # a saver that cannot delete keeps a thread nobody will use again
            with contextlib.suppress(Exception):
                delete(self.thread_id)


class _Session:
    def __init__(self, owner: LangGraphConversation, thread: _Thread | None = None,
                 checkpoint_id: str | None = None, seen: frozenset[str] = frozenset(),
                 n_messages: int = 0) -> None:
        self._owner = owner
        self._thread = thread
        self._checkpoint_id = checkpoint_id
        self._seen = seen          # ids of the messages of the conversation so far
        self._n_messages = n_messages
        self._closed = False

    async def send(self, message: str) -> Observation:
        if self._closed:
            raise AgentCallError("this conversation was closed", kind="error")
        adapter = self._owner.adapter
        if self._thread is None:
            self._thread = _Thread(self._owner.graph())
        thread = self._thread
        configurable: dict[str, Any] = {"thread_id": thread.thread_id}
        if self._checkpoint_id is not None:
            configurable["checkpoint_id"] = self._checkpoint_id
        t0 = time.perf_counter()
        state, checkpoint_id, counter = await _run_turn(
            adapter, thread.graph, adapter._input(message), configurable)
        messages = list(state.get(adapter.messages_key) or ())
        ids = [getattr(m, "id", None) for m in messages]
        if all(ids) and self._seen:
            since = next((i for i, mid in enumerate(ids) if mid not in self._seen), len(ids))
        else:
            since = self._n_messages
        obs = adapter.observe(state, latency=time.perf_counter() - t0, since=since)
        if counter.seen:
            from dataclasses import replace
            obs = replace(obs, usage=counter.usage())
        # the conversation moves on only once the turn succeeded
        self._checkpoint_id = checkpoint_id
        self._seen = frozenset(str(i) for i in ids if i)
        self._n_messages = len(messages)
        return obs

    def fork(self) -> _Session:
        if self._thread is not None:
            self._thread.users += 1
        return _Session(self._owner, self._thread, self._checkpoint_id, self._seen,
                        self._n_messages)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._thread.release()


class LangGraphConversation:
    """Conversations with a LangGraph graph, one ``thread_id`` each (see module docstring)."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.identity = adapter.identity
        self._shared: Any = None  # the reused graph, with a checkpointer

    def open(self) -> _Session:
        return _Session(self)

    def graph(self) -> Any:
        """The graph for a new conversation: the factory's, or the reused one; with memory."""
        if self.adapter._factory:
            return _with_memory(self.adapter._graph())
        if self._shared is None:
            self._shared = _with_memory(self.adapter._graph())
        return self._shared

    def __repr__(self) -> str:
        return f"{self.adapter!r}.conversation()"


def _with_memory(graph: Any) -> Any:
    if getattr(graph, "checkpointer", None) not in (None, False):
        return graph
    from langgraph.checkpoint.memory import InMemorySaver
    return graph.copy(update={"checkpointer": InMemorySaver()})


async def _run_turn(adapter: Any, graph: Any, payload: Any,
                    configurable: dict[str, Any]) -> tuple[Mapping[str, Any], str | None, Any]:
    """Run one turn; its final state, the checkpoint it ended on, and its usage counter."""
    # the adapter's helpers, not its module: _langgraph imports this module lazily
    counter = adapter._new_counter()
    config = adapter._config(configurable, counter)
    state: Any = None
    checkpoint_id: str | None = None
    interrupted = False
    try:
        async for mode, chunk in graph.astream(
                payload, config, stream_mode=["values", "checkpoints", "updates"],
                **adapter.invoke_kwargs):
            if mode == "values":
                state = chunk
            elif mode == "checkpoints":
                checkpoint_id = (chunk.get("config") or {}).get("configurable", {}).get(
                    "checkpoint_id", checkpoint_id)
            elif mode == "updates" and isinstance(chunk, Mapping) and "__interrupt__" in chunk:
                interrupted = True
    except Exception as exc:
        raise adapter._failure(exc) from exc
    adapter._check_state(state, interrupted=interrupted)
    return state, checkpoint_id, counter
