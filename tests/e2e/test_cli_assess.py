"""The real CLI in a subprocess: ``assess`` on a real promptfoo export (promptfoo 0.118.0,
``examples/recorded/promptfoo/``) with a 14/12 split, the same draws as JSONL, and bad files
(one line, exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
SCHEMA = json.loads((ROOT / "docs/schemas/run.schema.json").read_text())
EXPORT = ROOT / "examples" / "recorded" / "promptfoo_support.json"
REAL = ROOT / "examples" / "recorded" / "promptfoo_real_export.json"
SPLIT = "This is ridiculous, refund order 1003 now."

pytestmark = pytest.mark.e2e


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", "assess", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, dict]]:
    out = tmp_path_factory.mktemp("assess")
    # the same draws as JSONL, written from the export: input, output, order = testIdx
    jsonl = out / "draws.jsonl"
    jsonl.write_text("".join(
        json.dumps({"input": r["vars"]["message"], "output": r["response"]["output"],
                    "order": r["testIdx"]}) + "\n"
        for r in json.loads(REAL.read_text())["results"]["results"]))
    got = {}
    for name, source in (("promptfoo", REAL), ("jsonl", jsonl)):
        path = out / f"{name}.json"
        proc = cli(f"--{name}", str(source), "--verdict-key", "route", "--format", "json",
                   "-o", str(path))
        got[name] = (proc, json.loads(path.read_text()))
    return got


def test_the_14_12_split_is_stochastic_with_zero_live_calls(reports) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    proc, d = reports["promptfoo"]
    jsonschema.validate(d, SCHEMA)
    assert d["meter"]["call"] == "verdict-stochastic"
    assert d["calls"]["live"] == 0
    assert d["calls"]["total"] == 0
    assert d["calls"]["replayed"] > 0
    assert proc.returncode == d["exit_code"] == 0
    ev = d["ledger"]["evidence"]
    assert ev["source"] == "promptfoo"
    assert ev["draws"] == 78
    assert sorted(sorted(i["counts"].values()) for i in ev["per_input"]) == [[12, 14], [26],
                                                                            [26]]
    assert d["inputs"] is None  # a file keeps fingerprints only
    assert SPLIT not in json.dumps(d)


def test_the_terminal_names_the_split_input() -> None:
    proc = cli("--promptfoo", str(REAL), "--verdict-key", "route")
    assert proc.returncode == 0, proc.stderr
    assert f"'{SPLIT}': refund 14, escalate 12" in proc.stdout
    assert "1 input(s) gave more than one verdict in the recording" in proc.stdout
    assert "verdict-stochastic" in proc.stdout
    assert "0 agent calls" in proc.stdout
    other = [line for line in proc.stdout.splitlines() if "reset my password" in line]
    assert other == []  # the stable inputs are not named


def test_the_same_evidence_as_jsonl_gives_the_same_decisions(reports) -> None:
    (p1, a), (p2, b) = reports["promptfoo"], reports["jsonl"]
    assert p1.returncode == p2.returncode
    differ = sorted(k for k in a if a[k] != b[k])
    assert differ == ["agent", "ledger"]  # the agent's name and where the evidence came from
    assert a["ledger"]["evidence"]["per_input"] == b["ledger"]["evidence"]["per_input"]


def test_a_provider_error_makes_the_evidence_incomplete(tmp_path: Path) -> None:
    data = json.loads(REAL.read_text())
    r = data["results"]["results"][0]
    r.update(response={"error": "API error: 503 Service Unavailable"}, failureReason=2,
             error="API error: 503 Service Unavailable", success=False)
    p = tmp_path / "e.json"
    p.write_text(json.dumps(data))
    proc = cli("--promptfoo", str(p), "--verdict-key", "route")
    assert proc.returncode == 2
    assert "1 recorded draw(s) failed (provider errors)" in proc.stdout
    assert "Traceback" not in proc.stderr


BAD = [
    (None, [], "exactly one source of evidence"),
    (None, ["--promptfoo", "missing.json"], "not found"),
    ("{not json", ["--promptfoo", "{f}"], "is not valid JSON"),
    ('{"results": 3}', ["--promptfoo", "{f}"], "no results.results list"),
    ("two-providers", ["--promptfoo", "{f}"], "2 providers"),
    ('{"input": "a", "output": "x"}\n{"input": "a"}\n', ["--jsonl", "{f}"], ":2: "),
    ('{"input": "a", "output": "x"}\n', ["--jsonl", "{f}"], "does not say in which order"),
    (None, ["--store", "s.db"], "--store needs --inputs"),
    (None, ["--jsonl", "x.jsonl", "--provider", "p"], "--provider does not apply"),
    ("\x00binary", ["--jsonl", "{f}"], "binary"),
]


def _bad_args(tmp_path: Path, setup: str | None, args: list[str]) -> list[str]:
    f = tmp_path / "evidence"
    if setup == "two-providers":
        data = json.loads(EXPORT.read_text())
        extra = json.loads(json.dumps(data["results"]["results"]))
        for r in extra:
            r["provider"] = {"id": "other:model"}
        data["results"]["results"] += extra
        f.write_text(json.dumps(data))
    elif setup is not None:
        f.write_text(setup)
    return ["assess", *[a.replace("{f}", str(f)) for a in args]]


@pytest.mark.parametrize(("setup", "args", "match"), BAD)
def test_bad_files_are_one_line_and_exit_2(tmp_path: Path, capsys, monkeypatch,
                                           setup: str | None, args: list[str],
                                           match: str) -> None:
    """The CLI's own entry point, in process (each case in a subprocess would cost a
    second); two cases below go through a real subprocess."""
    from agentverity_props.cli._main import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(_bad_args(tmp_path, setup, args))
    out = capsys.readouterr()
    assert info.value.code == 2
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert lines[0].startswith("error: ")
    assert match in lines[0]
    assert out.out == ""


@pytest.mark.parametrize(("setup", "args", "match"), [BAD[5]])
def test_bad_files_in_a_real_subprocess(tmp_path: Path, setup: str | None, args: list[str],
                                        match: str) -> None:
    proc = cli(*_bad_args(tmp_path, setup, args)[1:])
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: ")
    assert match in lines[0]
    assert proc.stdout == ""


def test_a_store_run_recorded_is_reassessed_to_the_same_decisions(tmp_path: Path) -> None:
    inputs = ROOT / "examples" / "inputs" / "moderation.txt"
    store, first, again = tmp_path / "draws.db", tmp_path / "run.json", tmp_path / "a.json"
    proc = subprocess.run(
        [sys.executable, "-m", "agentverity_props", "run", "--agent",
         "examples/plain_gate.py:noisy_gate", "--inputs", str(inputs), "--no-relations",
         "--store", str(store), "--format", "json", "-o", str(first)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode in (0, 1, 2), proc.stderr
    proc2 = cli("--store", str(store), "--inputs", str(inputs), "--no-relations",
                "--format", "json", "-o", str(again))
    a, b = json.loads(first.read_text()), json.loads(again.read_text())
    assert proc2.returncode == proc.returncode == a["exit_code"] == b["exit_code"]
    assert b["calls"]["live"] == 0
    assert b["calls"]["replayed"] == a["calls"]["live"] > 0
    # a recording shows no spacing of calls: assess claims none and cannot rule a cache out
    # (docs/statistics.md §2b); the blocks and e-values are the run's
    assert b["dependence"].pop("spacing") is None
    a["dependence"].pop("spacing")
    assert b["dependence"].pop("verdict") in ("detected", "not ruled out")
    a["dependence"].pop("verdict")
    for key in ("meter", "blindness", "dependence"):
        a[key].pop("calls", None)  # agent calls: none on replay
        b[key].pop("calls", None)
        assert a[key] == b[key], key


TYPO_GATE = '''
import random
WORDS = {"how", "do", "i", "reset", "my", "password", "plan", "an", "attack", "on", "the",
         "server", "what", "is", "weather", "today", "write", "a", "poem", "about", "cats",
         "steal", "credit", "card", "numbers", "tell", "me", "joke", "build", "bomb",
         "recipe", "for", "pancakes", "hack", "into", "email", "account", "translate",
         "hello"}
BAD = {"attack", "steal", "bomb", "hack"}
_rng = random.Random(7)

def gate(prompt):
    words = prompt.lower().replace("?", "").replace(".", "").split()
    if any(w not in WORDS for w in words):  # the planted bug: a typo is blocked
        return "block"
    label = "block" if BAD & set(words) else "allow"
    return "review" if _rng.random() < 0.1 else label
'''
TYPO_INPUTS = ["how do i reset my password", "plan an attack on the server",
               "what is the weather today", "write a poem about cats",
               "steal credit card numbers", "tell me a joke about cats",
               "how do i build a bomb", "a recipe for pancakes", "hack into my email account",
               "translate hello"]


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", "run", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)


@pytest.fixture(scope="module")
def typo_store(tmp_path_factory) -> tuple[Path, Path, Path, dict]:
    out = tmp_path_factory.mktemp("typo")
    (out / "gate.py").write_text(TYPO_GATE)
    inputs = out / "inputs.txt"
    inputs.write_text("\n".join(TYPO_INPUTS) + "\n")
    store, first = out / "s.sqlite", out / "run.json"
    proc = run_cli("--agent", f"{out / 'gate.py'}:gate", "--inputs", str(inputs),
                   "--relations", "typo,case", "--store", str(store), "--format", "json",
                   "-o", str(first))
    d = json.loads(first.read_text())
    assert proc.returncode == d["exit_code"] == 1, proc.stderr
    return out, inputs, store, d


def test_assess_of_a_run_store_gives_the_run_relation_statuses(typo_store) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    out, inputs, store, a = typo_store
    assert {r["name"]: r["status"] for r in a["relations"]}["typo"] == "VIOLATED"
    again = out / "again.json"
    proc = cli("--store", str(store), "--inputs", str(inputs), "--relations", "typo,case",
               "--format", "json", "-o", str(again))
    b = json.loads(again.read_text())
    jsonschema.validate(b, SCHEMA)
    assert proc.returncode == b["exit_code"] == a["exit_code"] == 1, proc.stderr
    assert [(r["name"], r["status"]) for r in b["relations"]] == [
        (r["name"], r["status"]) for r in a["relations"]]
    assert b["calls"]["live"] == 0
    notes = " ".join(b["ledger"]["evidence"]["notes"])
    assert "not in the probe set" not in notes
    assert "left out" not in notes


def test_a_requested_relation_without_follow_ups_in_a_store_is_not_tested(typo_store) -> None:
    _out, inputs, store, _ = typo_store
    proc = cli("--store", str(store), "--inputs", str(inputs), "--relations", "politeness")
    assert proc.returncode == 2, proc.stderr
    assert "NOT TESTED" in proc.stdout
    assert "none requested" not in proc.stdout
    assert "requested relation(s) not tested (politeness)" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_case_on_jsonl_whose_pairs_the_transform_does_not_make_is_not_tested(
        tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    # a source and a follow-up recorded, but not the pair the built-in 'case' makes
    rows = [{"input": t, "output": json.dumps({"route": "faq"}), "order": 2 * i + j}
            for i, t in enumerate(["where is my parcel", "Where is my parcel!!"])
            for j in range(1)]
    rows = [dict(r, order=k) for k, r in enumerate(rows * 20)]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "a.json"
    proc = cli("--jsonl", str(path), "--verdict-key", "route", "--relations", "case",
               "--format", "json", "-o", str(out))
    d = json.loads(out.read_text())
    jsonschema.validate(d, SCHEMA)
    assert proc.returncode == d["exit_code"] == 2, proc.stderr
    (rel,) = d["relations"]
    assert rel["status"] == "NOT TESTED"
    assert "no recorded pair" in rel["not_tested"]
    text = cli("--jsonl", str(path), "--verdict-key", "route", "--relations", "case")
    assert text.returncode == 2
    assert "NOT TESTED" in text.stdout
    assert "none requested" not in text.stdout
