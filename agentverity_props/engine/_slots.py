"""Worker slots shared by every process of a session (pytest-xdist workers).

An engine bounds its own calls in flight (``max_workers``); N pytest-xdist workers are N
processes, each with its own engines, so a provider that counts concurrent requests sees
N x ``max_workers`` of them. A :class:`SharedSlots` pool bounds the calls in flight of every
process that names the same folder: the folder holds ``size`` lock files
(``slot-0.lock`` ...), and a call holds one of them under an exclusive ``fcntl.flock`` for as
long as the agent works on it.

* Taking a slot never blocks: each lock file is tried with ``LOCK_EX | LOCK_NB`` (from a
  random one on, so processes do not all queue on the first); when every one is taken the
  caller polls again after a short, jittered, growing pause (2 ms to 50 ms), so an event
  loop keeps running and a stop request is seen at once. Polling is not first-come,
  first-served: a waiter may be overtaken, never refused.
* Each taken slot is its own open file, closed on release: the lock belongs to that open
  file, so two engines of one process exclude each other like two processes do, and the
  operating system drops the lock of a process that dies (killed, crashed), so a slot is
  never left taken.
* Without ``fcntl`` (Windows), or when the folder cannot be used (removed, read-only), the
  limit holds per process instead: the calls of all engines of this process that name the
  folder, with no error. Processes that give different sizes for one folder share slots
  ``0 .. size-1``: together they keep at most the largest size in flight.

The pytest plugin sets :data:`SLOT_DIR_ENV` and :data:`MAX_IN_FLIGHT_ENV` for a session
run with ``--agentverity-max-calls-in-flight N``; any other program may set both, to share
one limit between its processes. The engine takes a shared slot only around a live agent
call: never for a replayed draw, never while it sleeps in a backoff or a 429 pause.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import InvalidArgument

__all__ = ["MAX_IN_FLIGHT_ENV", "SLOT_DIR_ENV", "SharedSlots", "Slot",
           "shared_slots_from_env"]

#: environment variable naming the folder of the shared slots (set by the pytest plugin)
SLOT_DIR_ENV = "AGENTVERITY_PROPS_SLOT_DIR"
#: environment variable giving how many calls may be in flight across the processes
MAX_IN_FLIGHT_ENV = "AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT"

_POLL_FIRST_S = 0.002
_POLL_MAX_S = 0.05

try:
    import fcntl as _fcntl
except ImportError:  # Windows: per-process slots
    _fcntl = None  # type: ignore[assignment]

#: the per-process fallback: slots taken in this process, per folder
_LOCAL: dict[str, int] = {}
_LOCAL_LOCK = threading.Lock()


class Slot:
    """One taken slot; :meth:`release` gives it back (once; safe from any thread)."""

    __slots__ = ("_fd", "_key", "_lock", "index")

    def __init__(self, index: int, fd: int | None, key: str) -> None:
        #: which lock file (-1: a per-process slot, no file)
        self.index = index
        self._fd = fd
        self._key = key
        self._lock = threading.Lock()

    def release(self) -> None:
        """Give the slot back; later calls do nothing."""
        with self._lock:
            fd, self._fd = self._fd, None
            key, self._key = self._key, ""
        if fd is not None:
            try:
                if _fcntl is not None:
                    _fcntl.flock(fd, _fcntl.LOCK_UN)
            except OSError:  # closing below releases it anyway
                pass
            finally:
                os.close(fd)
        elif key:
            with _LOCAL_LOCK:
                _LOCAL[key] -= 1

    @property
    def held(self) -> bool:
        """True until :meth:`release`."""
        return self._fd is not None or bool(self._key)

    def __repr__(self) -> str:
        return f"Slot({self.index}, held={self.held})"


class SharedSlots:
    """At most ``size`` calls in flight across every process naming ``folder``.

    Args:
        folder: the folder of the lock files (made on first use).
        size: how many slots (an int >= 1).
        per_process: no lock files: the limit holds across the engines of this process
            that name ``folder`` (what ``EngineConfig.max_calls_in_flight`` gives without a
            ``redis://`` store or the session's folder).

    Example:
        >>> import tempfile
        >>> pool = SharedSlots(tempfile.mkdtemp(), 1)
        >>> first = pool.try_acquire()
        >>> pool.try_acquire() is None  # the one slot is taken (by any process)
        True
        >>> first.release()
        >>> second = pool.try_acquire()
        >>> second is not None
        True
        >>> second.release()
    """

    __slots__ = ("_made", "_per_process", "_rng", "folder", "size")

    def __init__(self, folder: str | os.PathLike[str], size: int, *,
                 per_process: bool = False) -> None:
        if size.__class__ is not int or size < 1:
            raise InvalidArgument(f"SharedSlots: size must be an int >= 1, got {size!r}")
        self.folder = Path(folder)
        self.size = size
        self._made = False
        #: the limit holds across the engines of this process only (no lock files)
        self._per_process = bool(per_process)
        self._rng = random.Random()  # own generator: Hypothesis reseeds the global one

    @property
    def shared(self) -> bool:
        """True when slots are shared across processes (``fcntl`` exists)."""
        return _fcntl is not None and not self._per_process

    def try_acquire(self) -> Slot | None:
        """A free slot now, else None (never blocks)."""
        if _fcntl is None or self._per_process:
            return self._local()
        try:
            if not self._made:
                self.folder.mkdir(parents=True, exist_ok=True)
                self._made = True
            start = self._rng.randrange(self.size)
            for k in range(self.size):
                i = (start + k) % self.size
                # read-only is enough for flock, and lets processes of other users share it
                fd = os.open(self.folder / f"slot-{i}.lock", os.O_RDONLY | os.O_CREAT, 0o644)
                try:
                    _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                except BaseException:
                    os.close(fd)
                    raise
                return Slot(i, fd, "")
            return None
        except OSError:
            # the folder cannot be used: the limit holds per process, as without fcntl
            return self._local()

    async def acquire(self, stopping: Callable[[], bool] | None = None) -> Slot | None:
        """Wait for a slot without blocking the event loop; None once ``stopping()`` is
        true while waiting."""
        delay = _POLL_FIRST_S
        while True:
            slot = self.try_acquire()
            if slot is not None:
                return slot
            if stopping is not None and stopping():
                return None
            await asyncio.sleep(delay * (0.5 + 0.5 * self._rng.random()))
            delay = min(delay * 2, _POLL_MAX_S)

    def _local(self) -> Slot | None:
        key = str(self.folder.absolute())
        with _LOCAL_LOCK:
            taken = _LOCAL.get(key, 0)
            if taken >= self.size:
                return None
            _LOCAL[key] = taken + 1
        return Slot(-1, None, key)

    def __repr__(self) -> str:
        return f"SharedSlots({str(self.folder)!r}, {self.size})"


def shared_slots_from_env(environ: Any = None) -> SharedSlots | None:
    """The session's shared slots when :data:`MAX_IN_FLIGHT_ENV` is set, else None.

    Raises:
        InvalidArgument: the limit is not an int >= 1, or no folder is named.
    """
    env = os.environ if environ is None else environ
    raw = env.get(MAX_IN_FLIGHT_ENV)
    if raw is None or not raw.strip():
        return None
    try:
        size = int(raw.strip())
    except ValueError:
        size = 0
    if size < 1:
        raise InvalidArgument(f"{MAX_IN_FLIGHT_ENV}={raw!r} must be an integer >= 1 (calls in "
                              f"flight across processes), e.g. {MAX_IN_FLIGHT_ENV}=4; unset it "
                              "for no shared limit")
    folder = env.get(SLOT_DIR_ENV)
    if not folder:
        raise InvalidArgument(f"{MAX_IN_FLIGHT_ENV} is set but {SLOT_DIR_ENV} is not: set "
                              f"{SLOT_DIR_ENV} to one folder shared by the processes")
    return SharedSlots(folder, size)
