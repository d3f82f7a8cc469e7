"""The engine: the only code in agentverity-props that calls an agent.

Every question the toolkit asks (meter, blindness, relations, snapshots, benchmarks...)
draws its evidence through :meth:`Engine.draw`, so concurrency, timeouts, retries, the hard
call budget, the ledger, record/replay and interrupts hold everywhere at once.

A draw is identified by ``(probe fingerprint, draw index)``. Callers reserve indices with
:meth:`Engine.allocate` in a deterministic order and may then run the draws concurrently:
the same indices come out on record and on replay, whatever order the calls finish in.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import replace
from time import monotonic, perf_counter
from typing import Any, NamedTuple, TypeVar

from .._internal.fingerprint import short
from .._internal.settings import setting
from .._internal.signals import stop_on_signals
from ..adapters import Adapter, as_adapter
from ..errors import AgentCallError, BudgetExhausted, Interrupted, InvalidArgument, ReplayMiss
from ..observation import CallFailure, Observation, coerce_output
from ..store import ReplayView, ScopedStore, StoreBackend, open_store
from ._config import EngineConfig
from ._deadline import Deadlines
from ._ledger import Ledger
from ._pause import shared_pause_from_env
from ._probe import Probe
from ._retry import Backoff, classify
from ._slots import SLOT_DIR_ENV, SharedSlots, Slot, shared_slots_from_env
from ._workers import Job, Workers

__all__ = ["Engine"]

Key = tuple[str, str, str, int]
T = TypeVar("T")


class _LoopState:
    """Primitives bound to one event loop (asyncio objects must not cross loops)."""

    __slots__ = ("deadlines", "locks", "loop", "sem", "stop")

    def __init__(self, max_workers: int, timeout_s: float | None,
                 loop: asyncio.AbstractEventLoop) -> None:
        self.sem = asyncio.Semaphore(max_workers)
        self.locks: dict[str, _ProbeLock] = {}
        self.deadlines = None if timeout_s is None else Deadlines(timeout_s)
        self.loop = weakref.ref(loop)  # weak: the state must not keep its loop alive
        #: set once a stop is requested: wakes every draw waiting for a worker slot at once
        self.stop = asyncio.Event()


class _ProbeLock:
    """Serialises repeats of one probe; dropped once nobody uses it, so memory stays flat."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class Engine:
    """Calls one agent: bounded concurrency, timeouts, retries, budget, ledger, store.

    Args:
        agent: an :class:`~agentverity_props.adapters.Adapter`, or a plain sync or async
            callable ``fn(prompt) -> str | dict | Observation``.
        config: the settings (default :class:`EngineConfig()`).
        sleep: the coroutine function used to wait between retries (default
            ``asyncio.sleep``); tests inject one to observe the requested delays.
        offline: the agent calls no provider (a simulation, as ``plan``'s synthetic
            agent): its calls neither wait for the session's shared 429 pause nor take the
            session's shared call slots.
        store_scope: the draws of this engine are its own in the store: read and written
            in the namespace ``runner|scope`` (:class:`~agentverity_props.store.ScopedStore`).
            Each ``@agent_property`` test passes its test id, so two tests of one session
            that draw the same prompt never claim each other's draw indices; replay still
            pools every namespace, this one's first.

    Attributes:
        agent: the adapter.
        config: the settings.
        ledger: what the calls cost and how they went.

    Example:
        >>> from agentverity_props.engine import run_sync
        >>> eng = Engine(lambda p: "block" if "attack" in p else "allow",
        ...              EngineConfig(budget=10))
        >>> obs = run_sync(eng.draw(Probe.make("an attack")))
        >>> obs.verdict, eng.ledger.calls, eng.remaining
        ('block', 1, 9)
        >>> eng.close()
    """

    def __init__(self, agent: Any, config: EngineConfig | None = None, *,
                 sleep: Callable[[float], Awaitable[Any]] | None = None,
                 offline: bool = False, store_scope: str | None = None) -> None:
        if config is None:
            config = EngineConfig()
        elif not isinstance(config, EngineConfig):
            raise InvalidArgument(f"config must be an EngineConfig, got {type(config).__name__}")
        if sleep is not None and not callable(sleep):
            raise InvalidArgument(f"sleep must be a coroutine function, got {type(sleep).__name__}")
        if offline.__class__ is not bool:
            raise InvalidArgument(f"offline must be True or False, got {offline!r}")
        self.agent: Adapter = as_adapter(agent)
        self.config = config
        self.ledger = Ledger(config.budget)
        self.ledger.price = config.price
        self._backoff = Backoff(config.backoff_base_s, config.backoff_max_s, config.seed)
        #: a rate limit with Retry-After pauses every call, not only the draw that got it
        self._paused_until = 0.0
        #: the same pause shared with the other processes of a session (pytest-xdist workers);
        #: not with an injected ``sleep``: a simulated clock must not pause real engines
        self._shared_pause: Any = (shared_pause_from_env() if sleep is None and not offline
                                   else None)
        #: at most N calls in flight across the processes of a session (None: no shared limit)
        self._slots: Any = None if offline else _call_slots(config.max_calls_in_flight)
        self._sleep = sleep if sleep is not None else asyncio.sleep
        self._identity = str(self.agent.identity)
        self._is_async = bool(self.agent.is_async)
        self._timeout_s = config.timeout_s
        self._retries = config.retries
        self._raise = config.error_policy == "raise"
        self._extract = config.extractor.apply
        self._extractor_id = config.extractor.config_id
        self._mode = str(config.store_mode)
        self._store: StoreBackend | None = None
        self._replay: ReplayView | None = None
        if self._mode != "off":
            assert config.store_path is not None  # validated by EngineConfig
            self._store = open_store(config.store_path, mode=self._mode,
                                     namespace=config.store_runner)
            if store_scope is not None:
                try:
                    self._store = ScopedStore(self._store, str(store_scope))
                except BaseException:
                    self._store.close()
                    raise
            if self._mode == "replay":  # every runner's draws, pooled
                self._replay = ReplayView(self._store)
            if not offline:
                self._share_quota(self._store, sleep is None)
        self._counters: dict[str, int] = {}
        self._counter_lock = threading.Lock()
        self._executor: Workers | None = None
        self._state_lock = threading.Lock()
        self._states: weakref.WeakKeyDictionary[Any, _LoopState] = weakref.WeakKeyDictionary()
        self._last: tuple[Any, _LoopState | None] = (None, None)
        self._stopping = False
        self._closed = False
        self._fail_fast = config.fail_fast
        self._usable = 0          # draws answered with a verdict so far
        self._unusable: list[str] = []  # why each draw failed, while none was usable
        #: why the engine stopped on its own (a persistently failing agent), else None
        self.stop_cause: str | None = None

    def _share_quota(self, store: StoreBackend, real_clock: bool) -> None:
        """With a ``redis://`` store, the call slots and the 429 pause are those of every
        process on its key space (``_redis_quota``), instead of this machine's files."""
        redis = _redis_store(store)
        if redis is None:
            return
        if real_clock:
            self._shared_pause = redis.shared_pause()
        size = self.config.max_calls_in_flight
        if size is None and self._slots is not None:
            size = self._slots.size  # AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT
        if size is not None:
            self._slots = redis.call_slots(size)

    # -- draw indices -----------------------------------------------------------------------

    #: True when the draws come from a finite recording (``assess`` of a file): the relation
    #: procedure then reads every recorded draw (:meth:`evidence_left`) and decides each
    #: relation's pooled effect once on all of them, instead of in epochs that sample inputs
    #: to save calls.
    finite_evidence = False

    def evidence_left(self, probe: Probe) -> int | None:
        """Draws of ``probe`` the evidence holds beyond those allocated (None: no limit, a
        live agent; negative: more were allocated than it holds)."""
        return None

    def release(self, probe: Probe, indices: Sequence[int]) -> None:
        """Give back indices just allocated and not drawn (the latest of ``probe``), so a
        finite recording's draws are not skipped."""
        if not indices:
            return
        with self._counter_lock:
            if self._counters.get(probe.fp, 0) == max(indices) + 1:
                self._counters[probe.fp] = min(indices)

    def allocate(self, probe: Probe, n: int = 1) -> list[int]:
        """Reserve the next ``n`` draw indices of ``probe`` (a per-probe counter from 0).

        Allocate in a deterministic order, then run the draws concurrently: record and
        replay then agree on which draw is which.
        """
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise InvalidArgument(f"allocate: n must be an int >= 0, got {n!r}")
        fp = probe.fp
        with self._counter_lock:
            start = self._counters.get(fp, 0)
            self._counters[fp] = start + n
        return list(range(start, start + n))

    # -- drawing ----------------------------------------------------------------------------

    async def draw(self, probe: Probe, index: int | None = None) -> Observation:
        """One observation of ``probe`` at draw ``index`` (None = the next fresh index).

        Pass indices from :meth:`allocate`. An explicit index beyond those allocated is
        honoured, and later fresh indices start after it.

        Reads the store first (modes ``replay`` and ``auto``), else calls the agent live,
        retrying retryable failures within the budget, and records the outcome (modes
        ``record`` and ``auto``). The observation carries the extracted verdict.

        Raises:
            Interrupted: a stop was requested before this draw started.
            BudgetExhausted: no budget is left for the first attempt.
            ReplayMiss: replay mode and this draw was never recorded.
            AgentCallError: the call failed and ``error_policy`` is ``"raise"``.
        """
        if self._stopping:
            raise _interrupted()
        if not isinstance(probe, Probe):
            raise InvalidArgument(f"draw expects a Probe, got {type(probe).__name__}; "
                                  "wrap the prompt with Probe.make(text)")
        if self._closed:
            raise InvalidArgument("this Engine is closed; build a new one")
        fp = probe.fp
        with self._counter_lock:
            if index is None:
                index = self._counters.get(fp, 0)
                self._counters[fp] = index + 1
            else:
                if index.__class__ is not int or index < 0:
                    raise InvalidArgument(f"draw index must be an int >= 0, got {index!r}; "
                                          "take indices from Engine.allocate()")
                if index >= self._counters.get(fp, 0):  # never hand it out as fresh later
                    self._counters[fp] = index + 1
        store = self._store
        if store is None:
            return await self._live(probe, None)
        key: Key = (self._identity, probe.fp, self._extractor_id, index)
        if self._mode != "record":
            found = store.get(key) if self._replay is None else self._replay.get(key)
            if found is not None and (found.error is None or self._mode == "replay"):
                self.ledger.note_replay()
                if found.error is not None and self._raise:
                    err = found.error
                    raise AgentCallError(err.message, kind=err.kind, retryable=err.retryable)
                return found
            if found is None and self._mode == "replay":
                raise ReplayMiss(
                    f"no recorded draw for probe {short(probe.fp)} index {index} of agent "
                    f"{self._identity} in {store.location} — record first with "
                    f"{setting('record')} or use {setting('auto')} (a recording made "
                    "before relations were families of edits holds other follow-ups: "
                    "re-record it)")
        return await self._live(probe, key)

    async def draws(self, probe: Probe, n: int) -> list[Observation]:
        """``n`` fresh draws of ``probe``, one after another."""
        return [await self.draw(probe, i) for i in self.allocate(probe, n)]

    async def _live(self, probe: Probe, key: Key | None) -> Observation:
        loop = asyncio.get_running_loop()
        last = self._last
        st = last[1] if last[0] is loop else self._state(loop)
        assert st is not None
        locks = st.locks
        fp = probe.fp
        entry = locks.get(fp)
        if entry is None:
            entry = locks[fp] = _ProbeLock()
        entry.users += 1
        try:
            async with entry.lock:
                obs, exc = await self._attempts(probe.text, st, loop)
                if key is not None:
                    obs = self._save(key, obs)
                    if obs.error is None:
                        exc = None
        finally:
            entry.users -= 1
            if not entry.users:
                del locks[fp]
        self._watch(obs)
        if exc is not None and self._raise:
            # error_policy "raise": the first failed call stops everything, with its cause
            if self.stop_cause is None:
                self.stop_cause = (f"the agent call failed ({obs.error.kind}: "
                                   f"{obs.error.message}) and the error policy is 'raise'"
                                   if obs.error is not None else "an agent call failed")
                self.ledger.stop_cause = self.stop_cause
            self._stopping = True
            self._wake_waiters()
            if isinstance(exc, AgentCallError):
                raise exc
            assert obs.error is not None
            raise AgentCallError(obs.error.message, kind=obs.error.kind,
                                 retryable=obs.error.retryable) from exc
        return obs

    async def _attempts(self, text: str, st: _LoopState,
                        loop: asyncio.AbstractEventLoop) -> tuple[Observation, Exception | None]:
        """Attempt the call until success, a final failure, or no budget left.

        Each attempt holds a worker slot while it waits out a pause and takes the session's
        slot (:meth:`_wait_for_call`), reserves one call of the budget, and calls the agent
        (:meth:`_call`); a retryable failure is retried, while retries remain, after its
        backoff (:meth:`_back_off`). The final failure is the observation returned, with the
        exception that caused it."""
        sem = st.sem
        attempt = 0
        kind = message = ""
        retryable = False
        retry_after: float | None = None
        exc: Exception | None = None
        covered = 0.0  # this draw has already waited until then (its own backoff)
        while True:
            if attempt == 0 and not self.ledger.can_afford(1):
                # spent already: fail now, not after queueing for a worker slot
                raise _budget_spent(self.ledger.budget)
            if not await self._acquire_slot(sem, st):
                raise _interrupted()
            turn = _Turn()
            try:
                turn.slot, covered = await self._wait_for_call(covered)
                if not self.ledger.reserve(retry=attempt > 0):
                    if attempt == 0:
                        raise _budget_spent(self.ledger.budget)
                    message += " (not retried: the call budget is spent)"
                    break
                attempt += 1
                got = await self._call(text, st, loop, turn)
                if isinstance(got, Observation):
                    return got, None
                kind, message, retryable, retry_after, exc = got
            finally:
                if turn.held:
                    if turn.slot is not None:
                        turn.slot.release()
                    sem.release()
            if not retryable or attempt > self._retries:
                break
            if self._stopping:
                raise _interrupted()
            covered = await self._back_off(attempt, retry_after)
        self.ledger.note_failure(kind, message)
        failure = CallFailure(kind, message, retryable, attempt)
        return Observation(error=failure), exc

    async def _wait_for_call(self, covered: float) -> tuple[Slot | None, float]:
        """With the worker slot held, wait until a call may start: any pause the service
        asked for (429 + Retry-After; checked with the slot held, so no call slips in between
        the 429 and the end of the pause) is slept first, then the session's slot is taken
        (only around the call: never held while pausing, so a pause that began while this
        draw waited for it is slept before taking it again). ``covered``: until when this
        draw has already waited. Returns the session's slot (None without a session) and the
        new ``covered``; raises :class:`Interrupted` once the engine is stopping."""
        slot: Slot | None = None
        while True:
            paused_until = self._pause_deadline()
            wait = paused_until - max(monotonic(), covered)
            if wait > 0:
                await self._sleep(wait)
                covered = paused_until
            if self._stopping:
                raise _interrupted()
            if self._slots is None:
                break
            slot = self._slots.try_acquire()
            if slot is not None:
                break
            slot = await self._slots.acquire(lambda: self._stopping)
            if slot is None:
                raise _interrupted()
            if self._pause_deadline() <= max(monotonic(), covered):
                break
            slot.release()  # a pause began while this draw waited: sleep it first
            slot = None
        return slot, covered

    async def _call(self, text: str, st: _LoopState, loop: asyncio.AbstractEventLoop,
                    turn: _Turn) -> Observation | _Failed:
        """One call of the agent, within the per-call deadline: its answer (coerced,
        extracted, its latency set, noted in the ledger), or the failure it raised, classified
        (:meth:`_failed`). A timed-out sync call hands its slots to its thread
        (``turn.held`` becomes False)."""
        job: Job | None = None
        t0 = perf_counter()
        try:
            if self._is_async:
                aw: Awaitable[Observation] = self.agent.ainvoke(text)
            else:
                job = self._pool().submit(self.agent.invoke, text)
                aw = job.fut
            try:
                obs = await _within_deadline(aw, st.deadlines)
            finally:
                # A thread cannot be stopped: a timed-out sync call keeps its slot until the
                # agent returns, so the agent never sees > max_workers calls.
                if job is not None and not job.finished and self._executor is not None \
                        and self._executor.abandon(job,
                                                   _release_from_thread(loop, st.sem, turn.slot)):
                    turn.held = False
            if obs.__class__ is not Observation:  # a third-party adapter's output
                obs = coerce_output(obs)
        except Exception as err:  # every failure becomes evidence
            return self._failed(err, sync=job is not None, text=text)
        latency = perf_counter() - t0
        obs = self._extract(obs)
        if not obs.latency_s:
            obs = replace(obs, latency_s=latency)
        self.ledger.note_success(obs)
        return obs

    def _failed(self, err: Exception, *, sync: bool, text: str) -> _Failed:
        """A failed call as evidence: its kind, message and whether it is retryable
        (:func:`classify`); a timeout is noted in the ledger, and a Retry-After pauses every
        caller of this engine (and of the session, when one is shared)."""
        kind, message, retryable, retry_after = classify(err, self._timeout_s, sync=sync,
                                                         prompt=text)
        if kind == "timeout":
            self.ledger.note_timeout()
        if retry_after is not None:
            self._paused_until = max(self._paused_until, monotonic() + retry_after)
            if self._shared_pause is not None:
                self._shared_pause.extend(retry_after)
        return _Failed(kind, message, retryable, retry_after, err)

    async def _back_off(self, attempt: int, retry_after: float | None) -> float:
        """Sleep before attempt ``attempt + 1``: the backoff's delay (the service's
        Retry-After when it gave one), or longer while a pause lasts. Returns until when this
        draw has waited."""
        now = monotonic()
        delay = max(self._backoff.delay(attempt, retry_after), self._pause_deadline() - now)
        await self._sleep(delay)
        return now + delay

    def _pause_deadline(self) -> float:
        """Until when (monotonic) every call waits: this engine's own 429 pause, or the
        session's shared one (another process got the 429)."""
        until = self._paused_until
        shared = self._shared_pause
        if shared is not None:
            left = shared.remaining()
            if left > 0:
                until = max(until, monotonic() + left)
        return until

    def _save(self, key: Key, obs: Observation) -> Observation:
        """Commit ``obs``; if another process stored this draw first, return its row."""
        store = self._store
        assert store is not None
        if store.put(key, obs, overwrite=self._mode == "record"):
            return obs
        stored = store.get(key)
        if stored is not None and stored.error is None:
            return stored
        return obs

    def _state(self, loop: asyncio.AbstractEventLoop) -> _LoopState:
        with self._state_lock:
            st = self._states.get(loop)
            if st is None:
                st = self._states[loop] = _LoopState(self.config.max_workers, self._timeout_s,
                                                      loop)
        self._last = (loop, st)  # one tuple: threads never see a loop with another's state
        return st

    def _pool(self) -> Workers:
        pool = self._executor
        if pool is None:
            with self._state_lock:
                if self._executor is None:
                    if self._closed:
                        raise InvalidArgument("this Engine is closed; build a new one")
                    self._executor = Workers(self.config.max_workers)
                pool = self._executor
        return pool

    # -- budget -----------------------------------------------------------------------------

    @property
    def remaining(self) -> int | None:
        """Live calls left in the budget (None = unlimited)."""
        return self.ledger.budget_remaining

    def can_afford(self, n: int) -> bool:
        """True if ``n`` more live calls fit in the budget (replayed draws are free)."""
        return self.ledger.can_afford(n)

    @property
    def live_only(self) -> bool:
        """True when every draw is a live call (no store to replay from): a caller planning
        many draws may then count them against :attr:`remaining` before making any."""
        return self._store is None or self._mode == "record"

    # -- interrupts -------------------------------------------------------------------------

    @property
    def stopping(self) -> bool:
        """True once a stop was requested: new draws raise ``Interrupted``."""
        return self._stopping

    async def _acquire_slot(self, sem: asyncio.Semaphore,
                            st: _LoopState | None = None) -> bool:
        """Take a worker slot; False once a stop is requested while waiting for one.

        A stop must wake draws queued behind slots that calls which never return still hold
        (a sync agent cannot be killed): waiting polls the stop flag every 0.1 s, and only
        when every slot is busy.
        """
        if not sem.locked():
            await sem.acquire()
            return True
        if self._stopping:
            return False
        if st is None:
            st = self._state(asyncio.get_running_loop())
        waiter = asyncio.ensure_future(sem.acquire())
        stop = asyncio.ensure_future(st.stop.wait())
        try:
            # no polling: thousands of queued draws would otherwise each wake ten times a
            # second and keep a large run busy (and deaf to signals) for nothing
            await asyncio.wait({waiter, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # this draw was cancelled: leave no waiter behind
            if waiter.done() and not waiter.cancelled():
                sem.release()
            else:
                waiter.cancel()
            raise
        finally:
            stop.cancel()
        if waiter.done() and not waiter.cancelled():
            if not self._stopping:
                return True
            sem.release()
            return False
        waiter.cancel()
        try:
            await waiter
        except asyncio.CancelledError:
            return False
        sem.release()  # acquired while being cancelled: give it back
        return False

    def _watch(self, obs: Observation) -> None:
        """Fail fast: stop when each of the first ``fail_fast`` answered draws was unusable."""
        if self._fail_fast is None or self._usable or self.stop_cause is not None:
            return
        if obs.error is None and obs.no_decision is None:
            self._usable += 1
            return
        why = (f"{obs.error.kind}: {obs.error.message}" if obs.error is not None
               else f"no verdict: {obs.no_decision.reason}" if obs.no_decision is not None
               else "no verdict")
        self._unusable.append(" ".join(why.split())[:300])
        if len(self._unusable) >= self._fail_fast:
            common = max(set(self._unusable), key=self._unusable.count)
            self.stop_cause = (f"the agent failed on each of its first {len(self._unusable)} "
                               f"calls ({common}); fix the agent or its verdict extraction "
                               "and rerun")
            self._stopping = True
            self._wake_waiters()
            self.ledger.stop_cause = self.stop_cause

    def request_stop(self) -> None:
        """Start no new call; calls in flight finish and are stored.

        Safe from a signal handler and from another thread: the draws waiting for a worker
        slot are woken through their loop's thread-safe queue.
        """
        self._stopping = True
        self.ledger.interrupted = True
        self._wake_waiters()

    def _wake_waiters(self) -> None:
        with self._state_lock:
            states = list(self._states.values())
        for st in states:
            loop = st.loop()
            if loop is not None:
                with contextlib.suppress(RuntimeError):  # that loop is already closed
                    loop.call_soon_threadsafe(st.stop.set)

    def install_signal_handlers(self) -> contextlib.AbstractContextManager[Engine]:
        """Within the block, SIGINT/SIGTERM call :meth:`request_stop`.

        A second SIGINT raises ``KeyboardInterrupt`` (the user insists). Outside the main
        thread, where Python allows no signal handlers, this does nothing. The previous
        handlers come back on exit.
        """
        return self._signal_handlers()

    @contextlib.contextmanager
    def _signal_handlers(self) -> Iterator[Engine]:
        with stop_on_signals(self.request_stop, lambda: self._stopping):
            yield self

    # -- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        """Close the store and the worker threads (idempotent).

        Threads still running a timed-out sync call are not waited for.
        """
        with self._state_lock:
            if self._closed:
                return
            self._closed = True
            pool, self._executor = self._executor, None
        if pool is not None:
            pool.shutdown()
        if self._store is not None:
            self._store.close()

    async def aclose(self) -> None:
        """Async spelling of :meth:`close`."""
        self.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (f"Engine({self._identity}, max_workers={self.config.max_workers}, "
                f"budget={self.config.budget}, store_mode={self._mode!r})")


def _redis_store(store: Any, depth: int = 0) -> Any:
    """The :class:`RedisStore` under ``store``'s wrappers (scoped, read-only; the first of a
    multiplexed store's that is one), else None."""
    from ..store import RedisStore
    if isinstance(store, RedisStore):
        return store
    if store is None or depth > 8:
        return None
    for inner in (getattr(store, "inner", None), *getattr(store, "stores", ())):
        found = _redis_store(inner, depth + 1)
        if found is not None:
            return found
    return None


def _call_slots(limit: int | None) -> SharedSlots | None:
    """The call slots before the store is known: the session's lock files
    (``AGENTVERITY_PROPS_SLOT_DIR``), sized by ``limit`` (``max_calls_in_flight``) or the
    session's ``AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT``; with a limit and no session folder,
    the engines of this process share it."""
    if limit is None:
        return shared_slots_from_env()
    folder = os.environ.get(SLOT_DIR_ENV)
    if folder:
        return SharedSlots(folder, limit)
    return SharedSlots(f"agentverity-props-process-{os.getpid()}", limit, per_process=True)


class _Turn:
    """The slots one attempt holds: the engine's worker slot (always) and the session's
    ``slot`` (None without one). ``held`` is False once a thread releases them instead (an
    abandoned sync call, released when the agent returns)."""

    __slots__ = ("held", "slot")

    def __init__(self) -> None:
        self.held = True
        self.slot: Slot | None = None


class _Failed(NamedTuple):
    """A failed call: its kind, message, whether it may be retried, the service's
    Retry-After (None: not given) and the exception raised."""

    kind: str
    message: str
    retryable: bool
    retry_after: float | None
    exc: Exception


async def _within_deadline(aw: Awaitable[Observation], deadlines: Deadlines | None
                           ) -> Observation:
    """The answer ``aw`` gives; past the per-call deadline a :class:`TimeoutError` (an
    answer that arrives as the deadline passes is kept)."""
    if deadlines is None:
        return await aw
    entry = deadlines.start()
    try:
        obs = await aw
    except asyncio.CancelledError:
        if entry.expired and deadlines.settle(entry):
            raise TimeoutError from None
        raise
    else:
        if entry.expired:  # it answered as the deadline passed: keep it
            deadlines.settle(entry)
    finally:
        deadlines.finish(entry)
    return obs


def _budget_spent(limit: int | None) -> BudgetExhausted:
    return BudgetExhausted(f"the agent-call budget of {limit} is spent — raise "
                           f"{setting('budget')}, or replay recorded draws with "
                           f"{setting('store')}")


def _interrupted() -> Interrupted:
    return Interrupted("run interrupted: no new agent call is started — finished calls are "
                       f"kept (and stored, with {setting('store')}); rerun to continue")


def _release_from_thread(loop: asyncio.AbstractEventLoop, sem: asyncio.Semaphore,
                         slot: Slot | None = None) -> Callable[[], None]:
    def done() -> None:
        if slot is not None:  # the session's slot: released from any thread
            slot.release()
        # RuntimeError: the loop is closed, and its semaphore went with it
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(sem.release)
    return done
