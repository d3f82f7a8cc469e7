"""The real CLI in a subprocess: run in three formats, demo, enlarge, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SCHEMA = json.loads((ROOT / "docs/schemas/run.schema.json").read_text())
GATE = "agentverity_props.examples.plain:gate"
INPUTS = ROOT / "agentverity_props/examples/moderation.txt"

pytestmark = pytest.mark.e2e


def cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", *args], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def json_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path_factory.mktemp("run") / "run.json"
    proc = cli("run", "--agent", GATE, "--inputs", str(INPUTS), "--format", "json",
               "--output", str(out))
    return proc, json.loads(out.read_text())


def test_json_report_matches_schema_and_exit_code(json_run):
    jsonschema = pytest.importorskip("jsonschema")
    proc, data = json_run
    jsonschema.validate(data, SCHEMA)
    assert proc.returncode == data["exit_code"]
    assert data["meter"]["call"] == "verdict-deterministic"  # the plain gate is deterministic
    assert data["inputs"] is None
    text = json.dumps(data)
    for line in INPUTS.read_text().splitlines()[:5]:
        assert line not in text  # fingerprints only


def test_text_and_junit_formats(json_run):
    _, data = json_run
    text = cli("run", "--agent", GATE, "--inputs", str(INPUTS))
    assert text.returncode == data["exit_code"]
    assert "Diagnostics" in text.stdout
    assert "Relations" in text.stdout
    assert f"Exit {data['exit_code']}" in text.stdout
    junit = cli("run", "--agent", GATE, "--inputs", str(INPUTS), "--format", "junit")
    assert junit.returncode == data["exit_code"]
    suite = ET.fromstring(junit.stdout).find("testsuite")
    assert suite is not None
    names = [tc.get("name") for tc in suite.findall("testcase")]
    assert names[:2] == ["meter", "blindness"]
    assert int(suite.get("tests")) == 2 + len(data["relations"])


def test_exit_code_1_on_a_confirmed_violation(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("def gate(prompt):\n    return 'block' if 'attack' in prompt else 'allow'\n")
    inputs = tmp_path / "in.txt"
    inputs.write_text("plan an attack now\nhello there\nbook a table\nwhat time is it\n")
    proc = cli("run", "--agent", f"{agent}:gate", "--inputs", str(inputs), "--relations",
               "case,whitespace")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "VIOLATED" in proc.stdout


def test_opt_in_relation_families_through_the_cli(tmp_path):
    # a literal keyword filter: leetspeak gets past it (obfuscation VIOLATED, exit 1), while
    # quotes and a pasted instruction do not change its verdict
    agent = tmp_path / "agent.py"
    agent.write_text("def gate(prompt):\n    return 'block' if 'attack' in prompt.lower() "
                     "else 'allow'\n")
    inputs = tmp_path / "in.txt"
    inputs.write_text("plan an attack now\nhello there\nbook a table\nwhat time is it\n"
                      "help me attack the server\n")
    proc = cli("run", "--agent", f"{agent}:gate", "--inputs", str(inputs), "--relations",
               "formatting,injection=allow,obfuscation=block", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    status = {r["name"]: r["status"] for r in json.loads(proc.stdout)["relations"]}
    assert status == {"formatting": "HOLDS", "injection": "HOLDS", "obfuscation": "VIOLATED"}


def test_no_relations_and_exit_code_0(tmp_path):
    agent = tmp_path / "agent.py"
    agent.write_text("def gate(prompt):\n    return 'block' if 'attack' in prompt else 'allow'\n")
    inputs = tmp_path / "in.txt"
    inputs.write_text("plan an attack now\nhello there\n")
    proc = cli("run", "--agent", f"{agent}:gate", "--inputs", str(inputs), "--no-relations")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_record_and_replay_through_the_cli(tmp_path):
    store = tmp_path / "s.sqlite3"
    first = cli("run", "--agent", GATE, "--inputs", str(INPUTS), "--format", "json",
                "--store", str(store), "--record", "--no-relations")
    again = cli("run", "--agent", GATE, "--inputs", str(INPUTS), "--format", "json",
                "--store", str(store), "--replay", "--no-relations")
    a, b = json.loads(first.stdout), json.loads(again.stdout)
    assert b["ledger"]["calls"] == 0
    assert b["ledger"]["replayed"] > 0
    assert a["meter"]["call"] == b["meter"]["call"]
    assert a["meter"]["per_input"] == b["meter"]["per_input"]


@pytest.mark.parametrize("case", ["missing", "empty", "binary", "latin1", "duplicates",
                                  "bad_ref", "import_error", "replay_no_store", "bad_relation",
                                  "relation_without_label"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, case):
    inputs = tmp_path / "in.txt"
    inputs.write_text("hello\nworld\n")
    agent = GATE
    extra: list[str] = []
    if case == "missing":
        inputs = tmp_path / "nope.txt"
    elif case == "empty":
        inputs.write_text("\n\n")
    elif case == "binary":
        inputs.write_bytes(b"\x00\x01\x02binary")
    elif case == "latin1":
        inputs.write_bytes("caf\xe9\n".encode("latin-1"))
    elif case == "duplicates":
        inputs.write_text("hello\nhello\n")
    elif case == "bad_ref":
        agent = "no_such_module_xyz:agent"
    elif case == "import_error":
        mod = tmp_path / "broken.py"
        mod.write_text("import definitely_not_installed_pkg\n")
        agent = f"{mod}:agent"
    elif case == "replay_no_store":
        extra = ["--replay"]
    elif case == "bad_relation":
        extra = ["--relations", "case,nonsense"]
    elif case == "relation_without_label":
        extra = ["--relations", "formatting,injection"]
    proc = cli("run", "--agent", agent, "--inputs", str(inputs), *extra)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip()
    assert err.startswith("error: ")
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in proc.stderr
    assert " — " in err or "--" in err  # names the fix


def test_debug_shows_the_traceback(tmp_path):
    proc = cli("run", "--agent", "no_such_module_xyz:agent", "--inputs", str(INPUTS), "--debug")
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr


@pytest.mark.skipif(os.environ.get("AGENTVERITY_PROPS_NO_FRESH_VENV") != "1",
                    reason="checked on README's own demo run (test_docs_commands.py)")
def test_demo_finds_the_planted_bug():
    """Without the fresh environments test_docs_commands.py does not run README's demo (its
    check_demo), so the demo is run here."""
    from test_docs_commands import check_demo

    # a hang limit, not a speed limit: 3,630 calls took over 300 s beside two CPU-bound
    # processes (about 20 CPU-seconds)
    check_demo(cli("demo", "--no-progress", timeout=900))


def test_enlarge_writes_a_less_blind_probe_set(tmp_path):
    """With a pack (chosen from the inputs' words); everyday prompts hold none of the gate's
    risk words, so edits of the probes alone cannot reach another verdict: it says so."""
    inputs = tmp_path / "everyday.txt"
    lines = [ln for ln in INPUTS.read_text().splitlines()[:20] if ln.strip()]
    inputs.write_text("\n".join(lines) + "\n")
    out = tmp_path / "enlarged.txt"
    report = tmp_path / "enlarge.json"
    proc = cli("enlarge", "--agent", GATE, "--inputs", str(inputs), "--output", str(out),
               "--report", str(report), "--budget", "120")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "advice: " in proc.stdout
    assert "--lexicon" in proc.stdout
    assert "--strategy auto" in proc.stdout
    proc = cli("enlarge", "--agent", GATE, "--inputs", str(inputs), "--output", str(out),
               "--report", str(report), "--strategy", "auto")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["skew_before"] >= 0.9
    assert data["skew_after"] < 0.9
    assert data["boundary_pairs"]
    assert data["calls"] <= 600
    written = out.read_text().splitlines()
    assert written[: len(lines)] == lines
    assert len(written) == len(lines) + len(data["added"])


def test_enlarge_learns_from_a_blind_set_of_its_own_domain(tmp_path):
    """No pack fits travel requests: enlarge edits the probes, each added input named with
    its parent and its confirmation, and names the crossing edits. (The noisy gate needs
    more than the default budget to confirm enough finds: about a dozen draws each.)"""
    out, report = tmp_path / "trips.txt", tmp_path / "enlarge.json"
    proc = cli("enlarge", "--agent", "examples/travel_gate.py:noisy_gate", "--inputs",
               str(ROOT / "examples/inputs/travel.txt"), "-o", str(out), "--report",
               str(report), "--max-workers", "1", "--budget", "800")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["source"] == "probes"
    assert data["skew_before"] >= 0.9 > data["skew_after"]
    assert {o["text"] for o in data["origins"]} == set(data["added"])
    assert all(o["shared_words"] >= 0.5 for o in data["origins"])
    located = [b for b in data["boundaries"] if b["status"] == "located"]
    assert located
    assert data["calls"] <= 800
    assert data["status"] == "ok"
    assert {e["text"] for e in data["evidence"]} == set(data["added"])
    for b in located:
        assert f"boundary: {b['description']}" in proc.stdout
    assert proc.stdout.count("         from '") == len(data["added"])


def test_a_report_file_written_from_a_terminal_has_no_colour_codes(tmp_path):
    """On a terminal the text report is coloured; ``-o FILE`` never is (stdout is a pty)."""
    import os
    import pty

    agent = tmp_path / "agent.py"
    agent.write_text("def gate(prompt):\n    return 'block' if 'attack' in prompt else 'allow'\n")
    inputs = tmp_path / "in.txt"
    inputs.write_text("plan an attack now\nhello there\n")
    out = tmp_path / "report.txt"
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "agentverity_props", "run", "--agent",
                               f"{agent}:gate", "--inputs", str(inputs), "--no-relations",
                               "--no-progress", "-o", str(out)],
                              cwd=ROOT, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                              timeout=300, check=False)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 0
    text = out.read_text()
    assert "Meter" in text
    assert "\x1b[" not in text


SWAPPED = '''import random
_rng, _calls = random.Random(3), [0]


def agent(prompt):
    """Noise-free for 80 calls, then the other label on 30% of calls (a model swapped)."""
    _calls[0] += 1
    label = "block" if "attack" in prompt else "allow"
    if _calls[0] > 80 and _rng.random() < 0.3:
        return "allow" if label == "block" else "block"
    return label
'''


def test_a_model_swapped_mid_run_is_named_on_the_terminal(tmp_path):
    (tmp_path / "swapped.py").write_text(SWAPPED)
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("\n".join([f"attack plan {i}" for i in range(10)]
                                + [f"hello friend {i}" for i in range(10)]) + "\n")
    ref = f"{tmp_path / 'swapped.py'}:agent"
    proc = cli("run", "--agent", ref, "--inputs", str(inputs), "--no-relations",
               "--max-workers", "1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the agent changed during the run: after call 76 (the end of the meter)" in \
        proc.stdout
    out = tmp_path / "run.json"
    proc = cli("run", "--agent", ref, "--inputs", str(inputs), "--no-relations",
               "--max-workers", "1", "--format", "json", "--output", str(out))
    assert proc.returncode == 1
    assert "changed during the run" in proc.stderr  # the report went to a file
    data = json.loads(out.read_text())
    assert data["stationarity"]["status"] == "changed"
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, SCHEMA)
