"""One provider quota across CI runners: call slots and the 429 pause in Redis.

The lock-file slots (:mod:`._slots`) and the pause file (:mod:`._pause`) span the processes
of one machine. A CI matrix of several runners against one provider quota needs the same
two things across machines; the Redis store already connects them, so with a ``redis://``
store they live under its key space (``avp:<namespace>:``), shared by every process of every
runner that names the same server and ``?namespace=``:

* ``quota:slots``: a sorted set of leases, one member per call in flight, scored by the
  time (the server's clock, milliseconds) the lease ends. Taking a slot is one atomic script:
  drop the leases that ended, then add ours if fewer than ``size`` remain. Like the lock files
  it never blocks (the caller polls, 2 ms to 50 ms, jittered) and is not first-come,
  first-served; processes giving different sizes keep at most the largest in flight.
* A lease lasts :data:`LEASE_S` seconds and a thread of the holding process renews every
  lease it holds each :data:`RENEW_S` seconds: a runner that dies (killed, crashed, its
  machine gone) stops renewing, and its slots are free again at most :data:`LEASE_S`
  seconds later. The lock files are freed at once by the operating system; a network has no
  such signal, so the lease time is the price of spanning machines. A holder cut off from
  Redis for longer than the lease loses its slots (a call it still runs is then not counted).
* ``quota:pause``: a key whose time to live is the pause. A 429 with ``Retry-After`` sets it
  unless a longer pause is already there (never shortened); every caller reads the time left
  (``PTTL``) before each call. The server's clock alone is used, so runners whose clocks
  disagree still pause together. Redis unreachable is no pause, never an error, as a missing
  pause file is.

The engine uses these instead of the lock files and the pause file when its store is a
``redis://`` URL (the pause always, the slots when a limit is set: ``max_calls_in_flight`` or
``AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT``).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import socket
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import Any

from .._internal.settings import setting
from ..errors import BadInput, InvalidArgument

__all__ = ["LEASE_S", "RENEW_S", "RedisPause", "RedisSlot", "RedisSlots"]

#: how long a slot's lease lasts without renewal: a dead runner's slots are free after this
LEASE_S = 10.0
#: how often a live process renews the leases it holds
RENEW_S = 2.0

_POLL_FIRST_S = 0.002
_POLL_MAX_S = 0.05
#: a Retry-After beyond this is not believed (one day), as for the pause file
_MAX_PAUSE_S = 86_400.0
def _fix() -> str:
    return f"start it, or check the host, port and password of the {setting('store', 'URL')}"

# KEYS: slots zset; ARGV: size, lease ms, token
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: slots zset; ARGV: lease ms, token...
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local kept = 0
for i = 2, #ARGV do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[i])
    kept = kept + 1
  end
end
if kept > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return kept
"""

# KEYS: pause key; ARGV: pause ms
_PAUSE = """
local left = redis.call('PTTL', KEYS[1])
if left < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
  return 1
end
return 0
"""


class RedisSlot:
    """One leased slot; :meth:`release` gives it back (once; safe from any thread)."""

    __slots__ = ("_lock", "_pool", "index", "token")

    def __init__(self, pool: RedisSlots, token: str) -> None:
        self._pool: RedisSlots | None = pool
        self._lock = threading.Lock()
        self.token = token
        #: no numbered lock file behind a lease (the lock files' slots are 0 .. size-1)
        self.index = -1

    def release(self) -> None:
        """Give the slot back; later calls do nothing."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool._release(self.token)

    @property
    def held(self) -> bool:
        """True until :meth:`release` (a lease lost to a long network cut still reads True:
        the call in flight is this process's to finish)."""
        return self._pool is not None

    def __repr__(self) -> str:
        return f"RedisSlot(held={self.held})"


class RedisSlots:
    """At most ``size`` calls in flight across every process on one Redis key space.

    Args:
        client: a ``redis.Redis`` client (the store's).
        prefix: the key space's prefix (``avp:<namespace>:``).
        size: how many slots (an int >= 1).
        location: the server as printed in errors (never its password).
        lease_s: how long a lease lasts unrenewed (default :data:`LEASE_S`).
        renew_s: how often held leases are renewed (default :data:`RENEW_S`, below ``lease_s``).
        errors: the exception types of a failed Redis call.
    """

    def __init__(self, client: Any, prefix: str, size: int, *, location: str = "redis",
                 lease_s: float = LEASE_S, renew_s: float = RENEW_S,
                 errors: tuple[type[BaseException], ...] = (OSError,)) -> None:
        if size.__class__ is not int or size < 1:
            raise InvalidArgument(f"RedisSlots: size must be an int >= 1, got {size!r}")
        if not (0 < renew_s < lease_s) or not math.isfinite(lease_s):
            raise InvalidArgument(f"RedisSlots: need 0 < renew_s < lease_s, got renew_s="
                                  f"{renew_s!r}, lease_s={lease_s!r}")
        self.size = size
        self.location = location
        self.lease_s = float(lease_s)
        self.renew_s = float(renew_s)
        self._r = client
        self._key = prefix + "quota:slots"
        self._lease_ms = str(max(1, int(lease_s * 1000)))
        self._errors = errors
        self._take = client.register_script(_TAKE)
        self._renew = client.register_script(_RENEW)
        self._rng = random.Random()  # own generator: Hypothesis reseeds the global one
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._host = f"{socket.gethostname()}:{os.getpid()}"

    #: slots are shared across processes and machines
    shared = True

    def _call(self, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except self._errors as exc:
            raise BadInput(f"store {self.location} cannot be reached for the shared call "
                           f"slots ({type(exc).__name__}: {str(exc)[:120]})", _fix()) from None

    def try_acquire(self) -> RedisSlot | None:
        """A free slot now, else None (never blocks on a taken slot)."""
        token = f"{self._host}:{uuid.uuid4().hex}"
        if not self._call(lambda: self._take(keys=[self._key],
                                             args=[self.size, self._lease_ms, token])):
            return None
        with self._lock:
            self._held.add(token)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=_renew_loop, args=(weakref.ref(self),),
                                                name="agentverity-slot-lease", daemon=True)
                self._thread.start()
        return RedisSlot(self, token)

    async def acquire(self, stopping: Callable[[], bool] | None = None) -> RedisSlot | None:
        """Wait for a slot without blocking the event loop (each poll's round trip to Redis
        runs in a worker thread); None once ``stopping()`` is true while waiting."""
        delay = _POLL_FIRST_S
        while True:
            slot = await self._poll()
            if slot is not None:
                return slot
            if stopping is not None and stopping():
                return None
            await asyncio.sleep(delay * (0.5 + 0.5 * self._rng.random()))
            delay = min(delay * 2, _POLL_MAX_S)

    async def _poll(self) -> RedisSlot | None:
        """One :meth:`try_acquire` in a worker thread; a slot taken after the waiting draw
        was cancelled is given back, never left leased (and renewed) for nobody."""
        fut = asyncio.ensure_future(asyncio.to_thread(self.try_acquire))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            fut.add_done_callback(_give_back)
            raise

    def in_flight(self) -> int:
        """Leases not yet ended, every process's (a diagnostic; the server's clock)."""
        def count() -> int:
            t = self._r.time()
            now = t[0] * 1000 + t[1] // 1000
            return int(self._r.zcount(self._key, f"({now}", "+inf"))
        return int(self._call(count))

    def _release(self, token: str) -> None:
        with self._lock:
            self._held.discard(token)
        # unreachable: the lease ends on its own within lease_s
        with contextlib.suppress(*self._errors):
            self._r.zrem(self._key, token)

    def _renew_held(self) -> bool:
        """Renew every held lease; False once none is held (the thread then ends)."""
        with self._lock:
            tokens = list(self._held)
            if not tokens:
                self._thread = None
                return False
        # retried at the next tick (the lease covers a short cut); a background thread
        # never raises, whatever the client does once its store is closed
        with contextlib.suppress(Exception):
            self._renew(keys=[self._key], args=[self._lease_ms, *tokens])
        return True

    def __repr__(self) -> str:
        return f"RedisSlots({self.location!r}, {self.size})"


def _give_back(fut: asyncio.Future[RedisSlot | None]) -> None:
    if not fut.cancelled() and fut.exception() is None:
        slot = fut.result()
        if slot is not None:
            slot.release()


def _renew_loop(ref: weakref.ReferenceType[RedisSlots]) -> None:
    while True:
        pool = ref()
        if pool is None:
            return
        wake, every = pool._wake, pool.renew_s
        if not pool._renew_held():
            return
        del pool  # weak between ticks: a dropped pool ends the thread
        wake.wait(every)


class RedisPause:
    """The shared 429 pause on a Redis key space: same interface as
    :class:`~agentverity_props.engine.SharedPause` (``remaining``, ``extend``)."""

    def __init__(self, client: Any, prefix: str,
                 errors: tuple[type[BaseException], ...] = (OSError,)) -> None:
        self._r = client
        self._key = prefix + "quota:pause"
        self._errors = errors
        self._script = client.register_script(_PAUSE)

    def remaining(self, now: float | None = None) -> float:
        """Seconds left of the shared pause (0.0 when none, or Redis unreachable)."""
        try:
            left = int(self._r.pttl(self._key))
        except self._errors:
            return 0.0
        return left / 1000.0 if left > 0 else 0.0

    def extend(self, seconds: float) -> None:
        """Every process pauses at least ``seconds`` from now (a longer pause is kept)."""
        if not seconds > 0:
            return
        ms = max(1, math.ceil(min(float(seconds), _MAX_PAUSE_S) * 1000))
        try:
            self._script(keys=[self._key], args=[ms])
        except self._errors:  # no shared pause: this process still pauses on its own
            return

    def __repr__(self) -> str:
        return f"RedisPause({self._key!r})"
