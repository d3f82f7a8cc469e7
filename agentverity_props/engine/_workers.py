"""Worker threads for sync agents, lighter than ``loop.run_in_executor``.

``run_in_executor`` goes through a ``concurrent.futures.Future``, its condition variable and
a chained asyncio future; on a 2-core machine that is ~25 µs of the ~80 µs a thread round
trip costs. Here a worker hands its result straight to the loop with
``call_soon_threadsafe``. Each job also knows whether it is queued, running or done, so the
engine can drop a job that timed out before it started (the agent is never called) or
keep a worker slot taken until a timed-out job that did start returns.

Threads are daemons: a sync agent that never returns cannot keep the process alive after
the run ends (its result would be discarded anyway).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Job", "Workers"]

_QUEUED, _RUNNING, _DONE, _DROPPED = 0, 1, 2, 3


class Job:
    """One sync call handed to a worker."""

    __slots__ = ("arg", "fn", "fut", "loop", "on_done", "state")

    def __init__(self, loop: asyncio.AbstractEventLoop, fut: asyncio.Future[Any],
                 fn: Callable[[Any], Any], arg: Any) -> None:
        self.loop = loop
        self.fut = fut
        self.fn = fn
        self.arg = arg
        self.state = _QUEUED
        self.on_done: Callable[[], None] | None = None

    @property
    def finished(self) -> bool:
        """True once the call returned or was dropped before it started."""
        return self.state >= _DONE


class Workers:
    """Up to ``n`` daemon threads running sync calls for asyncio callers."""

    def __init__(self, n: int, *, name: str = "agentverity-call") -> None:
        self._n = n
        self._name = name
        self._queue: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, fn: Callable[[Any], Any], arg: Any) -> Job:
        """Queue ``fn(arg)``; await ``job.fut`` (on the running loop) for its result."""
        loop = asyncio.get_running_loop()
        job = Job(loop, loop.create_future(), fn, arg)
        with self._lock:
            if self._closed:
                raise RuntimeError("the engine's worker threads are shut down")
            if self._idle:
                self._idle -= 1
            elif len(self._threads) < self._n:
                t = threading.Thread(target=self._work, name=f"{self._name}-{len(self._threads)}",
                                     daemon=True)
                self._threads.append(t)
                t.start()
            # else: every worker is busy; the job waits in the queue
        self._queue.put(job)
        return job

    def abandon(self, job: Job, on_done: Callable[[], None]) -> bool:
        """The caller stops waiting for ``job`` (timeout or cancellation).

        A job still queued is dropped, so the agent is never called: returns False. A job
        already running cannot be stopped: ``on_done`` will run (in the worker thread) when
        it returns, and this returns True. A finished job: False.
        """
        with self._lock:
            if job.state == _QUEUED:
                job.state = _DROPPED
                return False
            if job.state == _RUNNING:
                job.on_done = on_done
                return True
            return False

    def shutdown(self) -> None:
        """Stop the workers once their current job ends; does not wait for them."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            n = len(self._threads)
        for _ in range(n):
            self._queue.put(None)

    def _work(self) -> None:
        get = self._queue.get
        lock = self._lock
        while True:
            job = get()
            if job is None:
                return
            with lock:
                if job.state == _DROPPED:
                    self._idle += 1
                    continue
                job.state = _RUNNING
            ok = True
            try:
                result: Any = job.fn(job.arg)
            except BaseException as exc:  # delivered to the awaiting task, never lost
                ok, result = False, exc
            with lock:
                job.state = _DONE
                on_done, job.on_done = job.on_done, None
                self._idle += 1
            # RuntimeError: the loop is closed, nobody waits for this result any more
            with contextlib.suppress(RuntimeError):
                job.loop.call_soon_threadsafe(_deliver, job.fut, ok, result)
            if on_done is not None:
                on_done()
            del job, result  # drop references while idle


def _deliver(fut: asyncio.Future[Any], ok: bool, result: Any) -> None:
    if fut.done():  # the waiter was cancelled or timed out
        return
    if ok:
        fut.set_result(result)
    elif isinstance(result, StopIteration):  # a future refuses StopIteration
        fut.set_exception(RuntimeError(f"agent raised StopIteration: {result}"))
    else:
        fut.set_exception(result)
