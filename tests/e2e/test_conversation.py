"""Conversation tests end to end: real Strands agents (offline model, real tools) holding a
conversation, the real pytest plugin in a subprocess, the real CLI re-rendering the report."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
from hypothesis import seed
from hypothesis import strategies as st

from agentverity_props import by_regex
from agentverity_props.adapters import from_strands
from agentverity_props.conversation import (
    RECORDS,
    conversation_machine,
    conversational,
    from_strands_conversation,
    insert_irrelevant,
    never_before,
    run_conversation_test,
)
from agentverity_props.errors import PropertyViolation
from agentverity_props.examples.support_conversation import (
    FILLERS,
    TURNS,
    strands_support_factory,
)

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs/schemas/conversation.schema.json").read_text())
REFUND = never_before("issue_refund", required="lookup_order")
VERDICT = by_regex(r'"verdict": "([a-z_]+)"')  # the offline model answers in JSON text


def test_strands_agent_keeps_its_messages_and_the_planted_bug_shrinks_to_three_turns():
    conv = from_strands_conversation(strands_support_factory(seed=0, noise=0.15, bug=True))
    # one conversation at a time: the offline model's noise comes from one seeded generator
    # shared by every call, so with concurrent replays the order of calls (timing, load)
    # would decide which answers are noisy, and with them where shrinking ends
    machine = seed(0)(conversation_machine(agent=conv, turns=st.sampled_from(TURNS),
                                           invariants=[REFUND], extractor=VERDICT,
                                           max_workers=1))
    with pytest.raises(PropertyViolation, match="3-turn conversation") as err:
        run_conversation_test(machine, max_examples=100)
    assert "Flaky" not in type(err.value).__name__
    ce = RECORDS[-1].minimal[REFUND.name]
    assert ce.n_turns == 3
    assert ce.turns[-1].tools == ("issue_refund",)   # real toolUse blocks of that turn only
    assert ce.turns[-1].verdict == "issue_refund"


def test_a_from_strands_adapter_becomes_a_conversation_and_fixed_agent_passes_relations():
    adapter = from_strands(strands_support_factory(seed=1, noise=0.15, bug=False))
    conv = conversational(adapter)
    assert conv.identity == adapter.identity
    machine = seed(1)(conversation_machine(
        agent=adapter, turns=st.sampled_from(TURNS), invariants=[REFUND],
        relations=[insert_irrelevant(FILLERS)], extractor=VERDICT, max_turns=4))
    rec = run_conversation_test(machine, max_examples=25)
    assert rec.status == "passed"
    assert rec.confirmed == 0


def test_pytest_plugin_summarises_the_minimal_conversation_and_writes_its_report(tmp_path):
    (tmp_path / "test_support.py").write_text(textwrap.dedent("""
        from hypothesis import settings

        from agentverity_props.examples.support_conversation import support_machine

        TestBuggy = support_machine(seed=0, bug=True).TestCase
        TestFixed = support_machine(seed=1, bug=False, max_turns=4).TestCase
        TestFixed.settings = settings(max_examples=20)
    """))
    report = tmp_path / "conversations.json"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         str(tmp_path / "test_support.py"), f"--agentverity-conversation-report={report}"],
        check=False, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:]
    assert "1 failed, 1 passed" in out
    assert "agentverity-props conversations" in out
    assert "minimal conversation (invariant 'issue_refund_after_lookup_order', 3 turns" in out
    assert "1. 'my order is 1002'" in out
    assert "reproduce: @reproduce_failure(" in out
    assert "Flaky" not in out
    data = json.loads(report.read_text())
    jsonschema.validate(data, SCHEMA)
    assert "my order is" not in report.read_text()   # fingerprints in files unless asked
    statuses = sorted(t["status"] for t in data["tests"])
    assert statuses == ["failed", "passed"]

    cli = subprocess.run([sys.executable, "-m", "agentverity_props.cli", "report", str(report),
                          "--format", "text"], check=False, capture_output=True, text=True,
                         timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert "minimal conversation: 3 turns" in cli.stdout
    assert "1. user: fp " in cli.stdout


@pytest.fixture
def session_service():
    """A real HTTP service on loopback keeping each conversation's history by session id and
    answering with the support agent (planted bug, no noise)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from agentverity_props.examples.support_conversation import support_conversation

    agent = support_conversation(seed=0, noise=0.0, bug=True)
    histories: dict[str, list[dict[str, str]]] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                history = histories.setdefault(req["session_id"], [])
                history.append({"role": "user", "content": req["prompt"]})
                out = agent(list(history))
                history.append({"role": "assistant", "content": out["text"]})
            data = json.dumps({"text": out["text"], "verdict": out["verdict"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/chat", histories
    finally:
        server.shutdown()
        server.server_close()


def test_http_service_keeping_sessions_is_a_conversation(session_service):
    from agentverity_props._internal.outcome import CandidateStatus
    from agentverity_props.conversation import from_http_conversation
    from agentverity_props.conversation._run import ConversationRun

    url, histories = session_service
    conv = from_http_conversation(url, verdict_path="verdict")
    run = ConversationRun(agent=conv, test="http", alpha=0.05, beta=0.01, budget=500,
                          max_turns=3, max_candidates=10, max_workers=2, timeout_s=10, seed=0)
    try:
        out = run.relation(("my order is 1002", "I want a refund"), insert_irrelevant(FILLERS),
                           ("my order is 1002", "thanks", "I want a refund"))
    finally:
        run.close()
    assert out.status == CandidateStatus.CONFIRMED
    assert (out.source, out.follow_up) == ("lookup_order", "issue_refund")
    # every replay was its own session, each turn one request carrying that session's id
    assert all(len(h) in (4, 6) for h in histories.values())
    assert run.record.calls == sum(len(h) // 2 for h in histories.values())
