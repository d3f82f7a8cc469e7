"""One provider quota across runners, against a real Redis server (see test_store_redis).

Two separate processes (real CLI runs, not one pytest session) on one Redis namespace with
``--max-calls-in-flight 3`` call a loopback HTTP server that counts the requests in flight:
never more than 3 at once (and, without the limit, the same two runs exceed 3, so the check
can fail). A process holding slots and killed with SIGKILL frees them within the lease time
(``LEASE_S``), while a live holder keeps them past it (its leases are renewed). A 429 with
``Retry-After`` seen by one runner pauses the other runner's calls.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import AgentCallError
from agentverity_props.store import LEASE_S, RedisStore

from .conftest import ROOT, cli_env, cli_many, record
from .test_store_redis import redis_server, url  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e

HOLD_S = 0.08  # how long the loopback provider works on a request

AGENT = '''
import json, os, urllib.request

PORT = int(os.environ["QUOTA_PORT"])

def agent(prompt):
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}/", data=prompt.encode(),
                                 method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())["verdict"]
'''

HOLDER = '''
import sys, time
from agentverity_props.store import RedisStore
store = RedisStore(sys.argv[1], runner="holder")
slots = store.call_slots(int(sys.argv[2]))
held = [slots.try_acquire() for _ in range(int(sys.argv[2]))]
print("held" if all(held) else "missed", flush=True)
time.sleep(600)
'''


class _Counter:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.most = self.total = 0


@pytest.fixture
def provider() -> Iterator[tuple[int, _Counter]]:
    """A loopback provider that counts the requests it is working on at once."""
    counter = _Counter()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with counter.lock:
                counter.now += 1
                counter.total += 1
                counter.most = max(counter.most, counter.now)
            time.sleep(HOLD_S)
            # answered: no longer held (counted before the reply leaves, so a client's next
            # request never overlaps this one in the count)
            with counter.lock:
                counter.now -= 1
            body = json.dumps({"verdict": "allow"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), counter
    finally:
        server.shutdown()
        server.server_close()


def _runs(tmp_path: Path, store: str, port: int, extra: list[str]) -> list[dict[str, Any]]:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("\n".join(f"question number {i}" for i in range(8)) + "\n")
    env = {"QUOTA_PORT": str(port)}
    jobs = {name: (["run", "--agent", f"{agent}:agent", "--inputs", str(inputs),
                    "--store", store, "--runner", name, "--record", "--budget", "40",
                    "--max-workers", "4", "--no-relations", "--format", "json",
                    "--no-progress", *extra], env)
            for name in ("runner-a", "runner-b")}
    done = cli_many(jobs, parallel=2, timeout=240)
    out = []
    for name, proc in done.items():
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode in (0, 1, 2), (name, proc.stderr)
        out.append(json.loads(proc.stdout))
    return out


def test_two_runners_never_have_more_than_the_limit_in_flight(
        tmp_path: Path, url: str, provider: tuple[int, _Counter]) -> None:  # noqa: F811
    port, counter = provider
    docs = _runs(tmp_path, url, port, ["--max-calls-in-flight", "3"])
    assert all(d["ledger"]["calls"] > 0 for d in docs)
    assert counter.total == sum(d["ledger"]["calls"] for d in docs)
    assert counter.most <= 3, counter.most
    assert counter.most == 3  # the limit was reached: the two runners did compete
    record("quota-redis", runners=2, limit=3, calls=counter.total, most_in_flight=counter.most)


def test_without_the_limit_the_same_runners_exceed_it(
        tmp_path: Path, url: str, provider: tuple[int, _Counter]) -> None:  # noqa: F811
    """The control: the counting server sees more than 3 at once when nothing limits them."""
    port, counter = provider
    _runs(tmp_path, url, port, [])
    assert counter.most > 3, counter.most
    record("quota-redis", runners=2, limit="none", calls=counter.total,
           most_in_flight=counter.most)


def test_a_killed_runner_frees_its_slots_within_the_lease(url: str) -> None:  # noqa: F811
    env = cli_env()
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, url, "3"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with RedisStore(url, runner="other") as store:
            slots = store.call_slots(3)
            assert slots.try_acquire() is None  # the holder has all three
            # a live holder renews its leases: still all taken well past the lease time
            time.sleep(LEASE_S + 2)
            assert slots.try_acquire() is None
            assert slots.in_flight() == 3
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=10)
            t0 = time.monotonic()
            got = None
            while got is None and time.monotonic() - t0 < LEASE_S + 5:
                got = slots.try_acquire()
                if got is None:
                    time.sleep(0.1)
            freed = time.monotonic() - t0
            assert got is not None, "the killed runner's slots were never freed"
            # within the stated time (plus a margin for a loaded machine)
            assert freed <= LEASE_S + 1.5, freed
            record("quota-redis", lease_s=LEASE_S, freed_after_s=round(freed, 2))
            more = [slots.try_acquire() for _ in range(3)]
            assert sum(s is not None for s in more) == 2  # all three are free again
            for s in [got, *more]:
                if s is not None:
                    s.release()
            assert slots.in_flight() == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(timeout=10)
        if holder.stdout is not None:
            holder.stdout.close()


def test_a_429_on_one_runner_pauses_the_others(url: str) -> None:  # noqa: F811
    """Two engines on one namespace, each with its own Redis connection (as two runners):
    the 429 of the first pauses the second; needs a real 1 s pause."""
    limited = {"done": False}

    def limited_provider(prompt: str) -> str:
        if not limited["done"]:
            limited["done"] = True
            raise AgentCallError("HTTP 429", kind="rate_limit", retryable=True,
                                 retry_after_s=1.0)
        return "ok"

    def cfg(runner: str) -> EngineConfig:
        return EngineConfig(max_workers=1, retries=2, backoff_base_s=0.0, store_path=url,
                            store_mode="record", store_runner=runner)

    async def go() -> float:
        import asyncio
        async with Engine(limited_provider, cfg("r1")) as first, \
                Engine(lambda p: "ok", cfg("r2")) as second:
            call = asyncio.ensure_future(first.draw(Probe.make("trigger")))
            while not limited["done"]:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # the 429 is recorded in Redis
            t0 = time.monotonic()
            await second.draw(Probe.make("other"))  # its own engine never got a 429
            waited = time.monotonic() - t0
            await call
            return waited

    waited = run_sync(go())
    assert 0.4 < waited < 2.5, waited
    record("quota-redis", retry_after_s=1.0, other_runner_waited_s=round(waited, 2))


def test_the_pause_is_never_shortened_and_an_unreachable_server_is_no_pause(
        url: str) -> None:  # noqa: F811
    with RedisStore(url, runner="a") as a, RedisStore(url, runner="b") as b:
        pa, pb = a.shared_pause(), b.shared_pause()
        assert pa.remaining() == 0.0
        pa.extend(60)
        pb.extend(1)  # a later, shorter Retry-After does not shorten it
        assert 59 < pb.remaining() <= 60
        pa.extend(0)
        pa.extend(float("nan"))
        assert 59 < pa.remaining() <= 60
    import redis

    from agentverity_props.store import RedisPause

    from .conftest import free_port
    dead = redis.Redis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=1,
                                socket_connect_timeout=1)
    gone = RedisPause(dead, "avp:t:", errors=(redis.RedisError, OSError))
    gone.extend(30)  # never an error: this process still pauses on its own
    assert gone.remaining() == 0.0


def test_a_cancelled_wait_for_a_slot_leaves_no_lease_behind(url: str) -> None:  # noqa: F811
    """Each poll's round trip runs in a thread: a slot it takes after its draw was
    cancelled is given back (else it would stay leased, and renewed, for nobody)."""
    import asyncio
    import contextlib

    with RedisStore(url, runner="a") as store:
        slots = store.call_slots(1)

        async def go() -> int:
            got = 0
            for _ in range(20):
                task = asyncio.ensure_future(slots.acquire())
                await asyncio.sleep(0)  # the poll starts in its thread
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    (await task).release()  # it got one before the cancel landed
                    got += 1
            await asyncio.sleep(0.5)  # the last polls' threads finish
            return got

        assert asyncio.run(go()) < 20  # most waits were cancelled mid-poll
        assert slots.in_flight() == 0
        assert slots.try_acquire() is not None
