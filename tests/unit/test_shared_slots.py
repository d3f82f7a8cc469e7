"""Call slots shared by the processes of a session: N processes hold at most N slots, a
killed holder frees its slot, no fcntl (or no usable folder) still limits each process, and
the engine takes a slot only around a live call (never for a replayed draw, never while it
pauses for a 429), keeping it while a timed-out sync call still runs."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentverity_props.adapters import from_callable
from agentverity_props.engine import (
    MAX_IN_FLIGHT_ENV,
    PAUSE_FILE_ENV,
    SLOT_DIR_ENV,
    Engine,
    EngineConfig,
    Probe,
    SharedPause,
    SharedSlots,
    _slots,
    run_sync,
)
from agentverity_props.errors import AgentCallError, Interrupted, InvalidArgument

ROOT = Path(__file__).resolve().parents[2]

HOLDER = """
import asyncio, json, sys, time
from agentverity_props.engine import SharedSlots
folder, size, rounds, hold = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
pool = SharedSlots(folder, size)
async def main():
    spans = []
    for _ in range(rounds):
        slot = await pool.acquire()
        t0 = time.monotonic()  # taken after the acquire and before the release: inside
        time.sleep(hold)
        spans.append((t0, time.monotonic()))
        slot.release()
    print(json.dumps(spans))
asyncio.run(main())
"""

KEEPER = """
import sys, time
from agentverity_props.engine import SharedSlots
pool = SharedSlots(sys.argv[1], int(sys.argv[2]))
held = [pool.try_acquire() for _ in range(int(sys.argv[2]))]
print("held" if all(held) else "missed", flush=True)
time.sleep(60)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans],
                    key=lambda e: (e[0], e[1]))
    now = most = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


def test_the_plugin_names_the_engines_variables() -> None:
    import agentverity_props_pytest as plugin

    assert (plugin.SLOT_DIR_ENV, plugin.MAX_IN_FLIGHT_ENV) == (SLOT_DIR_ENV, MAX_IN_FLIGHT_ENV)


def test_a_pool_hands_out_size_slots_and_takes_them_back(tmp_path: Path) -> None:
    pool = SharedSlots(tmp_path / "slots", 2)
    a, b = pool.try_acquire(), pool.try_acquire()
    assert a is not None
    assert b is not None
    assert {a.index, b.index} == {0, 1}
    assert pool.try_acquire() is None
    assert SharedSlots(tmp_path / "slots", 2).try_acquire() is None  # another view of it
    a.release()
    a.release()  # once only: a second release frees nothing more
    c = pool.try_acquire()
    assert c is not None
    assert c.index == a.index
    assert not a.held
    assert pool.try_acquire() is None
    b.release()
    c.release()
    with pytest.raises(InvalidArgument):
        SharedSlots(tmp_path, 0)


def test_processes_hold_at_most_size_slots_at_once(tmp_path: Path) -> None:
    size, procs, rounds, hold = 2, 4, 4, 0.06
    cmd = [sys.executable, "-c", HOLDER, str(tmp_path / "slots"), str(size), str(rounds),
           str(hold)]
    running = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=_env())
               for _ in range(procs)]
    spans: list[tuple[float, float]] = []
    for p in running:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0
        spans += [tuple(s) for s in json.loads(out)]
    assert len(spans) == procs * rounds
    # CLOCK_MONOTONIC is one clock for every process of the machine
    assert _most_at_once(spans) == size


def test_a_killed_holder_frees_its_slots(tmp_path: Path) -> None:
    folder = tmp_path / "slots"
    keeper = subprocess.Popen([sys.executable, "-c", KEEPER, str(folder), "2"],
                              stdout=subprocess.PIPE, text=True, env=_env())
    try:
        assert keeper.stdout is not None
        assert keeper.stdout.readline().strip() == "held"
        pool = SharedSlots(folder, 2)
        assert pool.try_acquire() is None
        keeper.send_signal(signal.SIGKILL)  # no clean-up runs: the OS drops its locks
        keeper.wait(timeout=10)
        slots = [pool.try_acquire(), pool.try_acquire()]
        assert all(slots)
        for s in slots:
            assert s is not None
            s.release()
    finally:
        if keeper.poll() is None:
            keeper.kill()
            keeper.wait()
        if keeper.stdout is not None:
            keeper.stdout.close()


@pytest.mark.parametrize("broken", ["no fcntl", "folder is a file"])
def test_without_fcntl_or_a_usable_folder_the_limit_holds_per_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    folder = tmp_path / "slots"
    if broken == "no fcntl":
        monkeypatch.setattr(_slots, "_fcntl", None)
    else:
        folder.write_text("not a folder")
    pool = SharedSlots(folder, 2)
    assert pool.shared is (broken != "no fcntl")
    a, b = pool.try_acquire(), SharedSlots(folder, 2).try_acquire()
    assert a is not None
    assert b is not None
    assert a.index == b.index == -1
    assert pool.try_acquire() is None  # no error, and still at most 2 in this process
    a.release()
    a.release()
    c = pool.try_acquire()
    assert c is not None
    assert pool.try_acquire() is None
    b.release()
    c.release()
    assert _slots._LOCAL[str(folder.absolute())] == 0


def test_bad_variables_are_one_line_errors(tmp_path: Path) -> None:
    assert _slots.shared_slots_from_env({}) is None
    assert _slots.shared_slots_from_env({MAX_IN_FLIGHT_ENV: " "}) is None
    for bad in ("0", "-1", "four", "2.5"):
        with pytest.raises(InvalidArgument, match=f"{MAX_IN_FLIGHT_ENV}=.* must be an integer"):
            _slots.shared_slots_from_env({MAX_IN_FLIGHT_ENV: bad, SLOT_DIR_ENV: str(tmp_path)})
    with pytest.raises(InvalidArgument, match=f"set {SLOT_DIR_ENV} to one folder"):
        _slots.shared_slots_from_env({MAX_IN_FLIGHT_ENV: "3"})
    pool = _slots.shared_slots_from_env({MAX_IN_FLIGHT_ENV: " 3 ", SLOT_DIR_ENV: str(tmp_path)})
    assert pool is not None
    assert (pool.size, pool.folder) == (3, tmp_path)


class _Meter:
    """A provider that records how many calls it is working on at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.now = self.most = self.calls = 0
        self.lock = threading.Lock()

    def _enter(self) -> None:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.most = max(self.most, self.now)

    def _leave(self) -> None:
        with self.lock:
            self.now -= 1

    def sync(self, prompt: str) -> str:
        self._enter()
        try:
            time.sleep(self.seconds)
        finally:
            self._leave()
        return "ok"

    async def coro(self, prompt: str) -> str:
        self._enter()
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self._leave()
        return "ok"


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("limit", [3, None])
def test_engines_of_a_process_share_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              kind: str, limit: int | None) -> None:
    if limit is not None:
        monkeypatch.setenv(MAX_IN_FLIGHT_ENV, str(limit))
        monkeypatch.setenv(SLOT_DIR_ENV, str(tmp_path / "slots"))
    meter = _Meter(0.03)
    agent = meter.sync if kind == "sync" else meter.coro
    cfg = EngineConfig(max_workers=4)

    async def go() -> None:
        async with Engine(agent, cfg) as one, Engine(agent, cfg) as two:
            await asyncio.gather(*(eng.draw(Probe.make(f"p{i}"))
                                   for eng in (one, two) for i in range(8)))

    run_sync(go())
    assert meter.calls == 16
    if limit is None:
        assert meter.most > 3  # two engines, four workers each: the limit is what bounds it
    else:
        assert meter.most == limit


def test_a_replayed_draw_takes_no_slot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "draws.db"
    agent = from_callable(lambda p: "ok", identity="replayed")
    with Engine(agent, EngineConfig(store_path=store, store_mode="record")) as eng:
        run_sync(eng.draws(Probe.make("x"), 3))
    monkeypatch.setenv(MAX_IN_FLIGHT_ENV, "1")
    monkeypatch.setenv(SLOT_DIR_ENV, str(tmp_path / "slots"))
    taken = SharedSlots(tmp_path / "slots", 1).try_acquire()  # the only slot, held elsewhere
    assert taken is not None

    async def go() -> list[str | None]:
        async with Engine(agent, EngineConfig(store_path=store, store_mode="replay")) as eng:
            obs = await asyncio.wait_for(eng.draws(Probe.make("x"), 3), 5)
            assert eng.ledger.calls == 0
            return [o.text for o in obs]

    try:
        assert run_sync(go()) == ["ok"] * 3
    finally:
        taken.release()


def test_a_stop_wakes_a_draw_waiting_for_a_slot(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Needs wall-clock time (how soon a stop wakes the waiting draw), with a margin."""
    monkeypatch.setenv(MAX_IN_FLIGHT_ENV, "1")
    monkeypatch.setenv(SLOT_DIR_ENV, str(tmp_path / "slots"))
    taken = SharedSlots(tmp_path / "slots", 1).try_acquire()
    assert taken is not None
    called: list[str] = []

    async def go() -> float:
        async with Engine(called.append, EngineConfig()) as eng:
            waiting = asyncio.ensure_future(eng.draw(Probe.make("x")))
            await asyncio.sleep(0.2)
            assert not waiting.done()  # queued behind the slot another process holds
            t0 = time.monotonic()
            eng.request_stop()
            with pytest.raises(Interrupted):
                await waiting
            return time.monotonic() - t0

    try:
        # wall-clock time, with a margin for a loaded machine: the slot is never released,
        # so without the wake the draw would wait forever
        assert run_sync(go()) < 2.0
    finally:
        taken.release()
    assert called == []


def test_the_slot_is_free_during_a_429_pause(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_IN_FLIGHT_ENV, "1")
    monkeypatch.setenv(SLOT_DIR_ENV, str(tmp_path / "slots"))
    pool = SharedSlots(tmp_path / "slots", 1)
    state = {"limited": False}

    def provider(prompt: str) -> str:
        if not state["limited"]:
            state["limited"] = True
            raise AgentCallError("HTTP 429", kind="rate_limit", retryable=True,
                                 retry_after_s=0.4)
        return "ok"

    async def go() -> tuple[bool, bool]:
        cfg = EngineConfig(max_workers=2, retries=2, backoff_base_s=0.0)
        async with Engine(provider, cfg) as eng:
            task = asyncio.ensure_future(eng.draw(Probe.make("x")))
            while not state["limited"]:
                await asyncio.sleep(0.005)
            # a draw that starts during the pause: it waits, with its engine's worker slot
            # taken (no call slips in) but not the session's
            later = asyncio.ensure_future(eng.draw(Probe.make("y")))
            await asyncio.sleep(0.1)
            slot = pool.try_acquire()
            free = slot is not None
            if slot is not None:
                slot.release()
            obs = await asyncio.gather(task, later)
            return free, all(o.error is None for o in obs)

    assert run_sync(go()) == (True, True)


def test_a_timed_out_sync_call_keeps_its_slot_until_it_returns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_IN_FLIGHT_ENV, "1")
    monkeypatch.setenv(SLOT_DIR_ENV, str(tmp_path / "slots"))
    meter = _Meter(0.4)
    cfg = EngineConfig(timeout_s=0.05, retries=0, error_policy="record")

    async def go() -> None:
        async with Engine(meter.sync, cfg) as slow, Engine(meter.sync,
                                                           EngineConfig()) as other:
            first = await slow.draw(Probe.make("slow"))
            assert first.error is not None
            assert first.error.kind == "timeout"
            other_call = await other.draw(Probe.make("next"))  # waits for the slow call
            assert other_call.error is None

    run_sync(go())
    assert meter.calls == 2
    assert meter.most == 1  # the provider never saw the second call beside the first


def test_an_offline_engine_takes_no_slot_and_waits_for_no_pause(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MAX_IN_FLIGHT_ENV, "1")
    monkeypatch.setenv(SLOT_DIR_ENV, str(tmp_path / "slots"))
    monkeypatch.setenv(PAUSE_FILE_ENV, str(tmp_path / "pause.json"))
    SharedPause(tmp_path / "pause.json").extend(60)  # another process got a 429
    taken = SharedSlots(tmp_path / "slots", 1).try_acquire()
    assert taken is not None

    async def go(offline: bool) -> str | None:
        async with Engine(lambda p: "ok", EngineConfig(), offline=offline) as eng:
            return (await asyncio.wait_for(eng.draw(Probe.make("x")), 0.3)).text

    try:
        assert run_sync(go(True)) == "ok"  # a simulation is no provider call
        with pytest.raises(TimeoutError):
            run_sync(go(False))
    finally:
        taken.release()
    with pytest.raises(InvalidArgument, match="offline must be True or False"):
        Engine(lambda p: "ok", offline="yes")  # type: ignore[arg-type]
