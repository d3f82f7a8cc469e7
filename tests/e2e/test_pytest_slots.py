"""``--agentverity-max-calls-in-flight``: the calls in flight of every xdist worker together
stay within the session's limit (a real HTTP server on loopback counts the requests it is
answering at once), and without the limit they do not."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

#: the inner pytest processes skip plugins these runs never use (each costs a second)
LEAN = ("-p", "no:randomly", "-p", "no:langsmith_plugin", "-p", "no:anyio")


class _Provider(BaseHTTPRequestHandler):
    """Answers each POST after a pause, counting the requests in flight; GET /arrive/W
    records that worker W is ready, GET / tells who arrived."""

    lock = threading.Lock()
    in_flight = most = calls = 0
    arrived: set[str] = set()  # noqa: RUF012 (reset by each test)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        cls = type(self)
        with cls.lock:
            cls.in_flight += 1
            cls.calls += 1
            cls.most = max(cls.most, cls.in_flight)
        try:
            time.sleep(0.25)
        finally:
            with cls.lock:
                cls.in_flight -= 1
        self._send({"text": "ok"})

    def do_GET(self) -> None:
        cls = type(self)
        with cls.lock:
            if self.path.startswith("/arrive/"):
                cls.arrived.add(self.path.rsplit("/", 1)[1])
            self._send({"arrived": sorted(cls.arrived)})

    def _send(self, doc: dict[str, Any]) -> None:
        data = json.dumps(doc).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


SUITE = '''
import asyncio, json, os, time, urllib.request
from agentverity_props.adapters import from_http
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync

URL = os.environ["AV_PROVIDER"]
ME = os.environ.get("PYTEST_XDIST_WORKER", "serial")

def _burst():
    with urllib.request.urlopen(URL + "arrive/" + ME):
        pass
    deadline = time.monotonic() + 120  # a hang limit: workers start slowly under load
    while True:  # both workers call at once
        with urllib.request.urlopen(URL) as resp:
            if len(json.loads(resp.read())["arrived"]) >= 2:
                break
        assert time.monotonic() < deadline, "the two tests must run on two workers"
        time.sleep(0.02)
    async def go():
        cfg = EngineConfig(max_workers=4)
        async with Engine(from_http(URL, identity="provider"), cfg) as eng:
            obs = await asyncio.gather(*(eng.draw(Probe.make(f"{ME} {i}")) for i in range(8)))
            assert all(o.error is None for o in obs), [o.error for o in obs]
    run_sync(go())

def test_one():
    _burst()

def test_two():
    _burst()
'''


@pytest.mark.parametrize("limit", [3, None])
def test_the_session_limit_bounds_every_worker_together(
        pytester: Any, monkeypatch: pytest.MonkeyPatch, limit: int | None) -> None:
    pytest.importorskip("xdist")
    pytest.importorskip("httpx")
    _Provider.in_flight = _Provider.most = _Provider.calls = 0
    _Provider.arrived = set()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("AV_PROVIDER", f"http://127.0.0.1:{server.server_port}/")
        pytester.makepyfile(test_burst=SUITE)
        if limit is not None:  # the ini twin reaches the workers like the option does
            pytester.makeini(f"[pytest]\nagentverity_max_calls_in_flight = {limit}\n")
        res = pytester.runpytest_subprocess(*LEAN, "-n", "2")
        res.assert_outcomes(passed=2)
    finally:
        server.shutdown()
        server.server_close()
    assert _Provider.calls == 16
    if limit is None:
        assert _Provider.most > 3, "without a session limit, each worker's four slots add up"
    else:
        assert 2 <= _Provider.most <= limit


def test_a_serial_session_shares_its_slots_and_cleans_up(pytester: Any) -> None:
    before = {k: os.environ.get(k) for k in ("AGENTVERITY_PROPS_SLOT_DIR",
                                            "AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT")}
    pytester.makepyfile(test_env='''
import os, pathlib
from agentverity_props.engine import MAX_IN_FLIGHT_ENV, SLOT_DIR_ENV, SharedSlots

def test_env():
    assert os.environ[MAX_IN_FLIGHT_ENV] == "2"
    folder = pathlib.Path(os.environ[SLOT_DIR_ENV])
    assert folder.is_dir()
    pool = SharedSlots(folder, 2)
    held = [pool.try_acquire(), pool.try_acquire()]
    assert all(held) and pool.try_acquire() is None
    for s in held:
        s.release()
    (pathlib.Path(os.environ["AV_OUT"]) / "dir.txt").write_text(str(folder))
''')
    os.environ["AV_OUT"] = str(pytester.path)
    try:
        res = pytester.runpytest("--agentverity-max-calls-in-flight", "2", *LEAN)
    finally:
        del os.environ["AV_OUT"]
    res.assert_outcomes(passed=1)
    folder = Path((pytester.path / "dir.txt").read_text())
    assert not folder.exists()  # the session's folder goes with the session
    assert {k: os.environ.get(k) for k in before} == before


@pytest.mark.parametrize("value", ["0", "-2"])
def test_a_bad_limit_is_one_usage_error_line(pytester: Any, value: str) -> None:
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    res = pytester.runpytest(f"--agentverity-max-calls-in-flight={value}", *LEAN)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    err = res.stderr.str()
    assert f"--agentverity-max-calls-in-flight={value} is refused" in err
    assert "max_calls_in_flight must be an int >= 1" in err
    assert "Traceback" not in err + res.stdout.str()
