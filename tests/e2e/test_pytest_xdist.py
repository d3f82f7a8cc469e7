"""The pytest plugin under pytest-xdist: ``-n 2`` and ``-n 4`` write the same reports and
print the same terminal section, once, as a serial run; the ledger fixture sees the runs of
every worker; a 429 with ``Retry-After`` on one worker pauses the other worker's calls
(a real HTTP server on loopback)."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

#: every inner pytest process (and xdist worker) skips the plugins these runs never use:
#: langsmith's alone costs each process about a second of imports
LEAN = ("-p", "no:randomly", "-p", "no:langsmith_plugin", "-p", "no:anyio")

SUITE = '''
import os, time
from hypothesis import given, settings, strategies as st
from agentverity_props import agent_property, from_callable
from agentverity_props.conversation import conversation_machine, from_history, never_before

gate = from_callable(lambda p: "block" if "ATTACK" in p else "allow", identity="gate")
PROMPTS = st.sampled_from(["hi", "an attack", "hello there", "attack now", "plain words"])
FAST = settings(derandomize=True, database=None, max_examples=5)

@agent_property(agent=gate, budget=600)
@FAST
@given(prompt=PROMPTS)
def test_case_a(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")

@agent_property(agent=gate, budget=600)
@FAST
@given(prompt=PROMPTS)
def test_case_b(check, prompt):
    check.invariant(prompt, "  " + prompt.upper(), name="shout")

@agent_property(agent=gate, budget=600)
@FAST
@given(prompt=PROMPTS)
def test_space(check, prompt):
    check.invariant(prompt, prompt + " ", name="space")

@agent_property(agent=gate, budget=600)
@FAST
@given(prompt=PROMPTS)
def test_question(check, prompt):
    check.invariant(prompt, prompt + "?", name="question")

def _support(messages):
    last = messages[-1]["content"]
    tools = ["issue_refund"] if "refund" in last else []
    return {"text": "ok", "verdict": "refund" if tools else "chat", "tools": tools}

Machine = conversation_machine(agent=from_history(_support),
    turns=st.sampled_from(["hi", "my order is 1002", "refund please"]),
    invariants=[never_before("issue_refund", required="lookup_order")], max_turns=3)
TestConversation = Machine.TestCase
TestConversation.settings = settings(derandomize=True, database=None, max_examples=4)

def test_ledger_sees_every_worker(agentverity_ledger):
    me = os.environ.get("PYTEST_XDIST_WORKER")
    if me is None:  # serial: every property test ran before this one
        recs = agentverity_ledger.records()
        assert len(recs) == 4 and agentverity_ledger.total_calls() == sum(r.calls for r in recs)
        assert [r.minimal.source for r in recs if r.minimal] == ["an attack", "an attack"]
        assert [len(c.minimal) for c in agentverity_ledger.conversation_records()] == [1]
        return
    deadline = time.monotonic() + 60
    while not any(r.worker != me for r in agentverity_ledger.runs()):
        assert time.monotonic() < deadline, "no run of another worker reached the ledger"
        time.sleep(0.1)
'''


def test_a_bad_ini_value_is_one_usage_error_line(pytester: Any) -> None:
    pytester.makeini("[pytest]\nagentverity_budget = lots\n")
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    res = pytester.runpytest_subprocess(*LEAN)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    err = res.stderr.str()
    assert "agentverity_budget = 'lots' is not a number" in err
    assert "Traceback" not in err + res.stdout.str()


def _section_lines(out: str, title: str) -> list[str]:
    lines = out.splitlines()
    heads = [i for i, line in enumerate(lines) if re.fullmatch(rf"=+ {title} =+", line)]
    assert len(heads) == 1, f"section {title!r} printed {len(heads)} times:\n{out[-3000:]}"
    body = []
    for line in lines[heads[0] + 1:]:
        if line.startswith("==="):
            break
        body.append(line)
    return body


def test_xdist_writes_the_serial_reports_and_one_terminal_section(pytester: Any) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(test_suite=SUITE)
    # the -n 4 run takes its report paths from the ini twins; the others' options win over them
    pytester.makeini(f"""
[pytest]
agentverity_report = {pytester.path / "prop-4.json"}
agentverity_conversation_report = {pytester.path / "conv-4.json"}
""")
    results = {}
    for n in (None, 2, 4):
        prop, conv = pytester.path / f"prop-{n}.json", pytester.path / f"conv-{n}.json"
        args = [*LEAN, "-n", str(n)] if n is not None else [*LEAN]
        if n != 4:
            args += [f"--agentverity-report={prop}", f"--agentverity-conversation-report={conv}"]
            assert not (pytester.path / "prop-4.json").exists()
        # a subprocess even when serial: an in-process run unloads the numpy it imported
        res = pytester.runpytest_subprocess(*args)
        out = res.stdout.str().replace(f"-{n}.json", "-N.json")
        res.assert_outcomes(passed=3, failed=3)
        if n is not None:
            assert f"created: {n}/{n} workers" in out, out[-2000:]
        results[n] = (json.loads(prop.read_text()), json.loads(conv.read_text()),
                      _section_lines(out, "agentverity-props"),
                      _section_lines(out, "agentverity-props conversations"))
    serial = results[None]
    tests = serial[0]["tests"]
    assert [t["test"].rsplit("::", 1)[-1] for t in tests] == [
        "test_case_a", "test_case_b", "test_question", "test_space"]
    assert [t["status"] for t in tests] == ["failed", "failed", "passed", "passed"]
    assert all(t["minimal"] for t in tests[:2])
    assert all(t["calls"] > 0 for t in tests)
    conv = serial[1]["tests"]
    assert [c["status"] for c in conv] == ["failed"]
    assert conv[0]["minimal"]
    for n in (2, 4):
        assert results[n][0] == serial[0], f"-n {n}: property report differs"
        assert results[n][1] == serial[1], f"-n {n}: conversation report differs"
        # the terminal section lists the same runs, in the same order, with the same counts
        assert results[n][2] == serial[2], n
        assert results[n][3] == serial[3], n


class _Provider(BaseHTTPRequestHandler):
    """A rate-limited provider: the first ``trigger`` request gets 429 with Retry-After."""

    log: list[tuple[float, str]]
    lock = threading.Lock()
    limited_at: float | None = None
    retry_after = 2

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["prompt"]
        now = time.time()
        cls = type(self)
        with cls.lock:
            cls.log.append((now, prompt))
            limit = "trigger" in prompt and cls.limited_at is None
            if limit:
                cls.limited_at = now
        if limit:
            self._send(429, {"error": "slow down"}, {"Retry-After": str(cls.retry_after)})
        else:
            self._send(200, {"text": "ok"})

    def do_GET(self) -> None:
        cls = type(self)
        with cls.lock:
            steady = sum(1 for _, p in cls.log if "steady" in p)
            self._send(200, {"steady": steady, "limited_at": cls.limited_at,
                             "answered": any("trigger" in p for t, p in cls.log
                                             if cls.limited_at and t > cls.limited_at)})

    def _send(self, code: int, doc: dict[str, Any], headers: dict[str, str] | None = None
              ) -> None:
        data = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


RATE_SUITE = '''
import json, os, time, urllib.request
from agentverity_props.adapters import from_http
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync

URL = os.environ["AV_PROVIDER"]
ME = os.environ.get("PYTEST_XDIST_WORKER", "serial")

def state():
    with urllib.request.urlopen(URL) as resp:
        return json.loads(resp.read())

def engine():
    return Engine(from_http(URL, identity="provider"),
                  EngineConfig(max_workers=1, retries=3, backoff_base_s=0.01))

def test_gets_the_429():
    deadline = time.monotonic() + 120  # a hang limit: workers start slowly under load
    while state()["steady"] < 3:  # the other worker is calling by now
        assert time.monotonic() < deadline
        time.sleep(0.05)
    async def go():
        async with engine() as eng:
            obs = await eng.draw(Probe.make(ME + " trigger"))
            assert obs.error is None, obs.error
    run_sync(go())

def test_keeps_calling():
    deadline = time.monotonic() + 120  # a hang limit: workers start slowly under load
    async def go():
        async with engine() as eng:
            i = 0
            while not state()["answered"]:
                assert time.monotonic() < deadline
                await eng.draw(Probe.make(f"{ME} steady {i}"))
                i += 1
                time.sleep(0.02)
            for j in range(3):  # and calls again after the pause
                await eng.draw(Probe.make(f"{ME} steady after {j}"))
    run_sync(go())
'''


def test_a_429_on_one_worker_pauses_the_other(pytester: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    pytest.importorskip("httpx")
    _Provider.log, _Provider.limited_at = [], None
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("AV_PROVIDER", f"http://127.0.0.1:{server.server_port}/")
        pytester.makepyfile(test_rate=RATE_SUITE)
        res = pytester.runpytest_subprocess(*LEAN, "-n", "2")
        res.assert_outcomes(passed=2)
    finally:
        server.shutdown()
        server.server_close()
    log = list(_Provider.log)
    t429 = _Provider.limited_at
    assert t429 is not None
    trigger = {p.split()[0] for _, p in log if "trigger" in p}
    steady = [(t, p) for t, p in log if "steady" in p]
    assert len(trigger) == 1
    assert {p.split()[0] for _, p in steady} - trigger, "the two tests must run on two workers"
    # the other worker called before the 429 and after the pause, never during it
    assert any(t < t429 for t, _ in steady)
    assert any(t >= t429 + 1.9 for t, _ in steady)
    # wall-clock time: a call already on its way when the 429 came may land up to 0.5 s
    # later on a loaded machine; any call in the rest of the 2 s pause is one too many
    during = [round(t - t429, 3) for t, _ in steady if t429 + 0.5 < t < t429 + 1.9]
    assert during == [], f"the other worker called {len(during)} times during the pause"
    retried = [t for t, p in log if "trigger" in p][1]
    assert retried >= t429 + 1.9  # the worker that got the 429 waited too


SHARED_PROMPTS_SUITE = '''
import os, random
from hypothesis import given, settings, strategies as st
from agentverity_props import agent_property, from_callable

_rng = random.Random(7)  # its own generator: Hypothesis reseeds the global one

def noisy(prompt):
    with open(os.environ["AV_CALLS"], "a") as f:
        f.write("x")
    if _rng.random() < 0.2:
        return "review"
    return "block" if "URGENT" in prompt and len(prompt) > 20 else "allow"

gate = from_callable(noisy, identity="noisy-gate")
# both tests draw the same sources: their draws of one prompt share fingerprints
PROMPTS = st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 8),
                    st.sampled_from(["hello", "please", "urgent", "order"]))

@agent_property(agent=gate, budget=1500)
@settings(max_examples=15)
@given(prompt=PROMPTS)
def test_case(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")

# the noisy gate's draws depend on thread timing (one generator, several workers): a clean
# 20%-noise relation needs up to about 2,000 calls to pass, so it gets the default budget
@agent_property(agent=gate, budget=4000)
@settings(max_examples=15)
@given(prompt=PROMPTS)
def test_whitespace(check, prompt):
    check.invariant(prompt, prompt + "  ", name="whitespace")
'''


@pytest.mark.parametrize("workers", [None, 2], ids=["serial", "n2"])
def test_a_recorded_suite_sharing_prompts_replays_with_zero_calls(pytester: Any,
                                                                  workers: int | None) -> None:
    """Two tests drawing the same prompts from a noisy agent, recorded then replayed: the
    replay makes no agent call and every test ends as recorded (each test's draws are its
    own in the store; shared keys let the second test's recording replace the first's)."""
    if workers is not None:
        pytest.importorskip("xdist")
    import os
    pytester.makepyfile(test_shared=SHARED_PROMPTS_SUITE)
    calls, store = pytester.path / "calls.txt", pytester.path / "s.db"
    extra = [] if workers is None else ["-n", str(workers)]
    os.environ["AV_CALLS"] = str(calls)
    try:
        outcomes = []
        for mode in ("record", "replay"):
            calls.write_text("")
            report = pytester.path / f"{mode}.json"
            res = pytester.runpytest_subprocess(
                *LEAN, *extra, "-k", "case or whitespace", f"--agentverity-store={store}",
                f"--agentverity-store-mode={mode}", f"--agentverity-report={report}")
            out = res.stdout.str()
            assert "ReplayMiss" not in out, out[-3000:]
            tests = json.loads(report.read_text())["tests"]
            outcomes.append([(t["test"], t["status"], t["candidates"], t["raw_violations"],
                              t["confirmed"], (t["minimal"] or {}).get("source"))
                             for t in tests])
            spent = len(calls.read_text())
            if mode == "record":
                assert spent > 0
                assert sum(t["calls"] for t in tests) == spent
                assert [t["status"] for t in tests] == ["failed", "passed"], out[-3000:]
            else:
                assert spent == 0, f"replay made {spent} agent calls"
                assert all(t["calls"] == 0 and t["replayed"] > 0 for t in tests)
        assert outcomes[1] == outcomes[0]
    finally:
        os.environ.pop("AV_CALLS", None)
