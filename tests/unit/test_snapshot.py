"""Snapshots: admission rules, privacy, atomic writes; check: re-admission, drift, refusals."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from agentverity_props import compare_snapshot, create_snapshot
from agentverity_props.decide import confirmation_plan
from agentverity_props.errors import BadInput, InvalidArgument
from agentverity_props.observation import by_key
from agentverity_props.report._json import dumps
from agentverity_props.runner import RunConfig
from agentverity_props.snapshot._document import load_snapshot, write_snapshot

ROOT = Path(__file__).resolve().parents[2]
INPUTS = [f"attack plan {i}" for i in range(10)] + [f"hello friend {i}" for i in range(10)]


def gate(p: str) -> str:
    return "block" if "attack" in p else "allow"


def validate(d: dict, name: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "schemas" / f"{name}.schema.json").read_text())
    jsonschema.validate(json.loads(dumps(d)), schema)


class Noisy:
    """Flips a share of verdicts at random, from its own generator."""

    def __init__(self, rate: float, seed: int = 0) -> None:
        self.rate, self.rng, self.lock = rate, random.Random(seed), threading.Lock()

    def __call__(self, p: str) -> str:
        with self.lock:
            flip = self.rng.random() < self.rate
        v = gate(p)
        return ("allow" if v == "block" else "block") if flip else v


@pytest.fixture(scope="module")
def snap(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("snap") / "snap.json"
    res = create_snapshot(gate, INPUTS, accept_reference=True, output=path)
    assert res.admitted
    assert res.exit_code == 0
    assert res.path == str(path)
    return path


# ------------------------------------------------------------------ creating


def test_admitted_snapshot_holds_references_not_prompts(snap):
    doc = load_snapshot(snap)
    text = snap.read_text()
    assert doc["schema"] == "agentverity_props.snapshot/2"
    assert doc["admission"] == {"admitted": True, "rules": [
        {"rule": r, "passed": True, "message": "ok"}
        for r in ("complete", "verdict-deterministic", "not-blind", "independent-draws",
                  "unchanged-agent", "required-verdicts", "accepted")]}
    assert not any(p in text for p in ("attack plan", "hello friend"))
    refs = sorted(e["reference"] for e in doc["inputs"])
    assert refs == ["allow"] * 10 + ["block"] * 10
    assert all(e["fp"].startswith("sha256:") and e["draws"] >= 1 for e in doc["inputs"])
    assert doc["calls"]["total"] == doc["calls"]["meter"] + doc["calls"]["blindness"] + \
        doc["calls"]["dependence"] + doc["calls"]["reference"] + doc["calls"]["calibration"]
    assert doc["calibration"]["draws_per_input"] == 6
    assert doc["calls"]["calibration"] == 6 * len(INPUTS)
    assert all(e["calibration"] == {"draws": 6, "mismatches": 0, "failures": 0}
               and e["status"] == "stable" for e in doc["inputs"])
    validate(doc, "snapshot")


def test_refusal_names_every_failed_rule_and_writes_nothing(tmp_path):
    out = tmp_path / "s.json"
    out.write_text("previous")
    res = create_snapshot(gate, INPUTS, output=out)  # not accepted
    assert [r.rule for r in res.refusals] == ["accepted"]
    assert res.exit_code == 2
    assert out.read_text() == "previous"
    with pytest.raises(BadInput, match=r"\[accepted\]"):
        res.write(out)
    validate(res.to_dict(), "snapshot")

    res = create_snapshot(Noisy(0.3, seed=1), INPUTS, accept_reference=True, output=out)
    rules = {r.rule: r.message for r in res.refusals}
    assert "verdict-deterministic" in rules
    assert "verdict-stochastic" in rules[
        "verdict-deterministic"]
    assert out.read_text() == "previous"

    res = create_snapshot(lambda p: "allow", INPUTS, accept_reference=True)
    rules = {r.rule: r.message for r in res.refusals}
    assert list(rules) == ["not-blind"]
    assert "blind" in rules["not-blind"]


def test_undecided_blindness_refuses_and_suggests_enlarge():
    inputs = [f"attack {i}" for i in range(2)] + [f"hello {i}" for i in range(14)]
    res = create_snapshot(gate, inputs, accept_reference=True)
    rules = {r.rule: r.message for r in res.refusals}
    assert res.document["blindness"]["status"] == "undecided"
    assert list(rules) == ["not-blind"]
    assert "undecided" in rules["not-blind"]
    assert "enlarge" in rules["not-blind"]


def test_incomplete_run_is_refused():
    def broken(p: str) -> str:
        if "3" in p:
            raise RuntimeError("down")
        return gate(p)
    res = create_snapshot(broken, INPUTS, accept_reference=True)
    rules = {r.rule: r.message for r in res.refusals}
    assert "complete" in rules
    assert "failed" in rules["complete"]
    res = create_snapshot(gate, INPUTS, accept_reference=True, config=RunConfig(budget=20))
    assert "complete" in {r.rule for r in res.refusals}


def test_salted_fingerprints_and_text_layer(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTVERITY_PROPS_SALT", "pepper")
    res = create_snapshot(lambda p: f"Answer: {gate(p)}", INPUTS, accept_reference=True,
                          config=RunConfig(layer="text"), output=tmp_path / "t.json")
    doc = res.document
    assert res.admitted
    assert doc["fingerprints"] == {"scheme": "hmac-sha256", "salted": True}
    assert doc["reference_form"] == "fingerprint"
    assert all(e["reference"].startswith("hmac-sha256:") for e in doc["inputs"])
    assert "Answer" not in (tmp_path / "t.json").read_text()
    chk = compare_snapshot(lambda p: f"Answer: {gate(p)}", INPUTS, tmp_path / "t.json")
    assert chk.status == "clean"
    monkeypatch.delenv("AGENTVERITY_PROPS_SALT")
    chk = compare_snapshot(lambda p: f"Answer: {gate(p)}", INPUTS, tmp_path / "t.json")
    assert chk.status == "inadmissible"
    assert chk.inadmissible[0].rule == "input-set"
    assert "set AGENTVERITY_PROPS_SALT" in chk.inadmissible[0].message


def test_load_snapshot_errors(tmp_path, snap):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BadInput, match="not valid JSON"):
        load_snapshot(bad)
    bad.write_text(json.dumps({"schema": "agentverity_props.run/1"}))
    with pytest.raises(BadInput, match="not a snapshot"):
        load_snapshot(bad)
    doc = load_snapshot(snap)
    doc["admission"]["admitted"] = False
    bad.write_text(json.dumps(doc))
    with pytest.raises(BadInput, match="refused when created"):
        load_snapshot(bad)
    with pytest.raises(BadInput, match="not found"):
        load_snapshot(tmp_path / "missing.json")
    with pytest.raises(InvalidArgument):
        write_snapshot(tmp_path / "x.json", {"schema": "other"})


# ------------------------------------------------------------------ checking


def test_clean_agent_is_readmitted_for_far_fewer_calls(snap):
    chk = compare_snapshot(gate, INPUTS, snap)
    d = chk.to_dict()
    assert chk.status == "clean"
    assert chk.exit_code == 0
    assert d["admission"]["call"] == "low"
    assert d["admission"]["mismatches"] == 0
    assert d["calls"]["total"] < 0.7 * d["calls"]["full_rerun_estimate"]
    assert d["calls"]["saved"] == d["calls"]["full_rerun_estimate"] - d["calls"]["total"]
    assert all(i["screen"]["draws"] >= 1 for i in d["inputs"])  # every input screened
    validate(d, "check")


def test_drift_on_one_input_is_confirmed_and_named(snap):
    def drifted(p: str) -> str:
        return "allow" if p == "attack plan 3" else gate(p)
    chk = compare_snapshot(drifted, INPUTS, snap)
    d = chk.to_dict()
    assert chk.status == "drift"
    assert chk.exit_code == 1
    (row,) = [i for i in d["inputs"] if i["status"] != "clean"]
    assert row["status"] == "drift"
    assert row["reference"] == "block"
    assert row["current"] == "allow"
    assert row["confirmation"]["mismatches"] >= row["confirmation"]["c"]
    assert d["drift"]["fps"] == [row["fp"]]
    validate(d, "check")


def test_stochastic_agent_is_inadmissible(snap):
    chk = compare_snapshot(Noisy(0.35, seed=3), INPUTS, snap)
    assert chk.status == "inadmissible"
    assert chk.exit_code == 2
    assert [r.rule for r in chk.inadmissible] == ["verdict-deterministic"]
    assert chk.stability is not None
    assert chk.stability["call"] == "verdict-stochastic"
    validate(chk.to_dict(), "check")


def test_many_deterministic_changes_are_drift_not_noise(snap):
    chk = compare_snapshot(lambda p: "allow", INPUTS, snap)
    assert chk.status == "drift"
    assert len(chk.drifted) == 10
    assert chk.stability["call"] == "verdict-deterministic"


def test_input_set_and_extractor_mismatch_make_no_call(snap):
    calls = []

    def agent(p):
        calls.append(p)
        return gate(p)
    chk = compare_snapshot(agent, [*INPUTS[:-1], "something new"], snap)
    (r,) = chk.inadmissible
    assert r.rule == "input-set"
    assert "not in the snapshot" in r.message
    assert "missing from the inputs passed" in r.message
    chk = compare_snapshot(agent, INPUTS, snap, config=RunConfig(extractor=by_key("v")))
    assert [r.rule for r in chk.inadmissible] == ["extractor"]
    assert calls == []
    assert chk.exit_code == 2


def test_incomplete_check_exit_2(snap):
    chk = compare_snapshot(gate, INPUTS, snap, config=RunConfig(budget=10))
    assert chk.status == "incomplete"
    assert chk.exit_code == 2
    assert chk.inadmissible[0].rule == "complete"
    assert "budget" in chk.inadmissible[0].message


def test_confirmation_plan(snap):
    assert confirmation_plan(0.10, 0.0025) == (5, 4)
    k, c = confirmation_plan(0.45, 0.05 / 100)
    assert c <= k
    assert k > 10
    with pytest.raises(InvalidArgument, match="drift_tolerance"):
        compare_snapshot(gate, INPUTS, snap, drift_tolerance=0.9)


def test_check_tolerance_is_the_deprecated_name_of_drift_tolerance(snap):
    with pytest.warns(DeprecationWarning, match="use drift_tolerance="):
        old = compare_snapshot(gate, INPUTS, snap, tolerance=0.3)
    new = compare_snapshot(gate, INPUTS, snap, drift_tolerance=0.3)
    assert old.drift_tolerance == new.drift_tolerance == 0.3
    assert old.to_dict()["drift"]["tolerance"] == 0.3  # check/1's published field
    # RunConfig.tolerance is the relations' effect limit: not the drift limit
    other = compare_snapshot(gate, INPUTS, snap, config=RunConfig(tolerance=0.3))
    assert other.drift_tolerance != 0.3
    with pytest.warns(DeprecationWarning, match="drift_tolerance"):
        assert old.tolerance == 0.3
    with pytest.raises(InvalidArgument, match="give drift_tolerance= only"):
        compare_snapshot(gate, INPUTS, snap, drift_tolerance=0.3, tolerance=0.3)


# ------------------------------------------------------------------ calibration (snapshot/2)


class Borderline:
    """The gate, except one input answered 50/50 (own generator): a borderline input."""

    def __init__(self, prompt: str, seed: int) -> None:
        self.prompt, self.rng, self.lock = prompt, random.Random(seed), threading.Lock()

    def __call__(self, p: str) -> str:
        if p != self.prompt:
            return gate(p)
        with self.lock:
            return "block" if self.rng.random() < 0.5 else "allow"


def test_calibration_lists_borderline_and_untestable_inputs():
    from agentverity_props.engine import Probe
    fp = Probe.make("attack plan 0").fp
    seen = set()
    for seed in range(8):
        res = create_snapshot(Borderline("attack plan 0", seed), INPUTS, accept_reference=True,
                              config=RunConfig(seed=seed))
        if not res.admitted:
            continue
        doc = res.document
        validate(doc, "snapshot")
        row = next(e for e in doc["inputs"] if e["fp"] == fp)
        assert row["calibration"]["draws"] == 6
        others = [e for e in doc["inputs"] if e["fp"] != fp]
        assert all(e["status"] == "stable" for e in others)
        seen.add(row["status"])
        if row["status"] != "stable":
            assert fp in doc["calibration"][row["status"]]
            assert row["note"].startswith(row["status"])
            assert row["status"] in res.summary()
        if row["status"] == "untestable":  # check screens it but never calls it drift
            chk = compare_snapshot(lambda p: "allow" if p == "attack plan 0" else gate(p),
                                   INPUTS, doc)
            entry = next(i for i in chk.to_dict()["inputs"] if i["fp"] == fp)
            assert entry["snapshot_status"] == "untestable"
            assert entry["status"] in ("clean", "unconfirmed")
            assert fp in chk.to_dict()["drift"]["untestable"]
            assert fp not in chk.drifted
    assert seen & {"borderline", "untestable"}


def test_drift_p_value_accounts_for_the_stopping_rule(snap):
    from agentverity_props.decide import drift_p_value, drift_plan
    chk = compare_snapshot(lambda p: "allow" if p == "attack plan 3" else gate(p), INPUTS, snap)
    d = chk.to_dict()
    (row,) = [i for i in d["inputs"] if i["status"] == "drift"]
    cf = row["confirmation"]
    assert row["calibration"] == {"draws": 6, "mismatches": 0}
    # drift's share of alpha: 7/8 of it over 20 inputs (the change check has the rest)
    assert d["drift"]["alpha_per_input"] == pytest.approx(0.05 * 7 / 8 / 20)
    k, c = drift_plan(a=0, m=6, tolerance=0.1, alpha=d["drift"]["alpha_per_input"])
    assert (cf["k"], cf["c"]) == (k, c) == (9, 8)
    assert cf["draws"] == cf["mismatches"] == c  # curtailed at c
    assert cf["p_value"] == pytest.approx(drift_p_value(c, a=0, m=6, k=k, tolerance=0.1))
    assert cf["p_value"] <= d["drift"]["alpha_per_input"]
    assert cf["p_family"] == pytest.approx(min(1.0, 20 * cf["p_value"]))
    assert cf["p_family"] <= 0.05 * 7 / 8
    assert "unchanged" in d["drift"]["guarantee"]
    assert "p (family)" in chk.summary()


def test_snapshot_1_file_is_migrated_on_load(tmp_path, snap):
    """An old file loads (nothing lost); flipped inputs get their admission counts as their
    recorded rate, the others the tolerance alone, and check says to re-create it."""
    doc = json.loads(snap.read_text())
    old = {k: v for k, v in doc.items() if k != "calibration"}
    old["schema"] = "agentverity_props.snapshot/1"
    old["inputs"] = [{k: v for k, v in e.items() if k not in ("calibration", "status", "note")}
                     for e in doc["inputs"]]
    old["inputs"][0].update(counts={old["inputs"][0]["reference"]: 3, "other": 1}, draws=4,
                            flipped=True)
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    new = load_snapshot(path)
    assert new["schema"] == "agentverity_props.snapshot/2"
    assert new["migrated_from"] == "agentverity_props.snapshot/1"
    assert new["inputs"][0]["calibration"] == {"draws": 4, "mismatches": 1, "failures": 0}
    assert all(e["calibration"] is None for e in new["inputs"][1:])
    assert new["calibration"]["source"] == "admission"
    assert {k: v for k, v in new.items() if k in old} == \
        {**old, "schema": new["schema"], "inputs": new["inputs"]}
    assert json.loads(path.read_text()) == old  # the file itself is left as it was
    chk = compare_snapshot(gate, INPUTS, path)
    assert chk.status == "clean"
    d = chk.to_dict()
    assert d["snapshot"]["migrated_from"] == "agentverity_props.snapshot/1"
    assert "re-create" in d["drift"]["guarantee"]
    assert "re-create" in chk.summary()
    validate(d, "check")
    chk = compare_snapshot(lambda p: "allow" if p == "attack plan 3" else gate(p), INPUTS, path)
    assert chk.status == "drift"  # tolerance-only inputs still find drift


def test_bad_calibration_arguments(tmp_path, snap):
    with pytest.raises(InvalidArgument, match="calibration_draws"):
        create_snapshot(gate, INPUTS, calibration_draws=0)
    doc = json.loads(snap.read_text())
    doc["inputs"][0]["calibration"] = {"draws": 2, "mismatches": 5}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(BadInput, match=r"inputs\[0\]\.calibration\.failures: field required"):
        load_snapshot(bad)
    doc["inputs"][0]["calibration"] = {"draws": 2, "mismatches": 5, "failures": 0}
    bad.write_text(json.dumps(doc))
    with pytest.raises(BadInput, match=r"inputs\[0\]\.calibration: .*mismatches \(5\) exceed "
                                       r"draws \(2\)"):
        load_snapshot(bad)


def _damaged(doc: dict, path: tuple, value: object) -> dict:
    import copy
    out = copy.deepcopy(doc)
    *where, last = path
    node = out
    for k in where:
        node = node[k]
    if value is _DROP:
        del node[last]
    else:
        node[last] = value
    return out


_DROP = object()


@pytest.mark.parametrize(("path", "value", "named"), [
    # what the hand-written validator before the model caught: each is still one line that
    # names the field (the model is now the one validator)
    (("config",), _DROP, "lacks config"),
    (("inputs",), _DROP, "lacks inputs"),
    (("created_at",), 3, "created_at: input should be a valid string"),
    (("inputs",), {"a": 1}, "inputs: input should be a valid list"),
    (("admission",), [], "admission: input should be a valid dictionary"),
    (("calls",), "many", "calls: input should be a valid dictionary"),
    (("config", "epsilon"), _DROP, "config.epsilon: field required"),
    (("config", "epsilon"), "0.1", "config.epsilon: input should be a valid number"),
    (("config", "epsilon"), -0.5, "config.epsilon: input should be greater than 0"),
    (("config", "alpha"), float("inf"), "config.alpha: input should be a finite number"),
    (("config", "layer"), "words", "config.layer: input should be 'verdict'"),
    (("config", "extractor"), 7, "config.extractor: input should be a valid string"),
    (("calls", "total"), 1.5, "calls.total: input should be a valid integer"),
    (("inputs", 0, "fp"), None, r"inputs\[0\]\.fp: input should be a valid string"),
    (("inputs", 0), "x", r"inputs\[0\]: input should be a valid dictionary"),
    (("surprise",), 1, "surprise: extra inputs are not permitted"),
])
def test_a_damaged_snapshot_is_refused_in_one_line_naming_the_field(
        tmp_path, snap, path, value, named):
    doc = _damaged(json.loads(snap.read_text()), path, value)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(BadInput, match=named) as exc:
        load_snapshot(bad)
    assert "\n" not in str(exc.value)
    assert exc.value.fix == "recreate the snapshot"


def test_a_snapshot_of_a_version_this_one_does_not_read_is_refused(tmp_path, snap):
    doc = json.loads(snap.read_text())
    bad = tmp_path / "bad.json"
    for schema in ("agentverity_props.snapshot/7", "snapshot/2", None):
        bad.write_text(json.dumps({**doc, "schema": schema}))
        with pytest.raises(BadInput, match=r"is not a snapshot \(schema .*expected "
                                           r"'agentverity_props.snapshot/2'\)"):
            load_snapshot(bad)
    bad.write_text(json.dumps([doc]))
    with pytest.raises(BadInput, match="is not a snapshot"):
        load_snapshot(bad)


def test_a_damaged_snapshot_1_file_is_refused_too_and_an_admitted_one_needs_references(
        tmp_path, snap):
    """An older version is validated by the same model once migrated (only what it never
    recorded may be absent), and an admitted snapshot must hold every input's reference."""
    doc = json.loads(snap.read_text())
    old = {k: v for k, v in doc.items() if k != "calibration"}
    old["schema"] = "agentverity_props.snapshot/1"
    old["inputs"] = [{k: v for k, v in e.items() if k not in ("calibration", "status", "note")}
                     for e in doc["inputs"]]
    bad = tmp_path / "old.json"
    bad.write_text(json.dumps({**old, "config": {**old["config"], "epsilon": "high"}}))
    with pytest.raises(BadInput, match=r"claims schema 'agentverity_props.snapshot/1' but "
                                       r"config.epsilon: input should be a valid number"):
        load_snapshot(bad)
    bad.write_text(json.dumps({**old, "inputs": 3}))
    with pytest.raises(BadInput, match="inputs: input should be a valid list"):
        load_snapshot(bad)
    bad.write_text(json.dumps({k: v for k, v in old.items() if k != "agent"}))
    with pytest.raises(BadInput, match="lacks agent"):
        load_snapshot(bad)
    doc["inputs"][1]["reference"] = None
    bad.write_text(json.dumps(doc))
    with pytest.raises(BadInput, match=r"marked admitted but inputs\[1\] has no reference"):
        load_snapshot(bad)


def test_cli_calibration_draws_and_rerendered_check(tmp_path):
    import subprocess
    import sys
    agent = tmp_path / "agents.py"
    agent.write_text("def gate(p):\n    return 'block' if 'attack' in p else 'allow'\n")
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("\n".join(INPUTS) + "\n")
    run = [sys.executable, "-m", "agentverity_props.cli"]
    res = subprocess.run([*run, "snapshot", "--agent", f"{agent}:gate", "--inputs", str(inputs),
                          "-o", str(tmp_path / "s.json"), "--accept-reference",
                          "--calibration-draws", "3"], capture_output=True, text=True,
                         timeout=120, check=False, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "Calibration: 3 fresh draws" in res.stdout
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["calls"]["calibration"] == 3 * len(INPUTS)
    res = subprocess.run([*run, "check", "--agent", f"{agent}:gate", "--inputs", str(inputs),
                          "--snapshot", str(tmp_path / "s.json"), "--format", "json", "-o",
                          str(tmp_path / "c.json")], capture_output=True, text=True,
                         timeout=120, check=False, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([*run, "report", str(tmp_path / "c.json"), "--format", "text"],
                         capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "unchanged since the snapshot" in res.stdout
    res = subprocess.run([*run, "snapshot", "--agent", f"{agent}:gate", "--inputs", str(inputs),
                          "-o", str(tmp_path / "x.json"), "--calibration-draws", "0"],
                         capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr


def test_check_never_costs_more_than_a_new_snapshot(tmp_path):
    """8 inputs: an agent that flipped every verdict, or some of them, never makes check
    spend more than the snapshot cost (its dependence check's spaced blocks included: a
    cache can make a noisy agent look deterministic), whether it decides drift or stops at
    the cap."""
    inputs = INPUTS[:4] + INPUTS[10:14]
    path = tmp_path / "s8.json"
    res = create_snapshot(gate, inputs, accept_reference=True, output=path,
                          config=RunConfig(max_workers=1))
    full = res.document["calls"]["total"]
    flipped = compare_snapshot(lambda p: "allow" if gate(p) == "block" else "block", inputs,
                               path, config=RunConfig(max_workers=1))
    d = flipped.to_dict()
    assert d["calls"]["total"] <= full
    assert d["status"] in ("incomplete", "drift")
    if d["status"] == "incomplete":
        assert "cost of a new snapshot" in flipped.summary()
    validate(d, "check")
    some = compare_snapshot(lambda p: ("allow" if gate(p) == "block" else "block")
                            if p.endswith(("0", "1")) else gate(p), inputs, path,
                            config=RunConfig(max_workers=1))
    assert some.to_dict()["status"] == "drift"
    assert some.to_dict()["calls"]["total"] <= full
