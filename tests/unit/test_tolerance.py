"""The relation tolerance: presets, bad values, a budget that cannot reach HOLDS, run/2 files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from agentverity_props import from_callable, run
from agentverity_props.diagnose import resolve_tolerance
from agentverity_props.errors import InvalidArgument
from agentverity_props.relations import Relation
from agentverity_props.report import load_result
from agentverity_props.runner import RunConfig, budget_note

ROOT = Path(__file__).parents[2]
SCHEMA = json.loads((ROOT / "docs/schemas/run.schema.json").read_text())
CASE = [Relation("case", "invariant", str.upper)]


def test_presets_and_default() -> None:
    assert resolve_tolerance(None, None) == 0.1
    assert resolve_tolerance(None, "strict") == 0.05
    assert resolve_tolerance(None, "cheap") == 0.2
    assert RunConfig(tolerance=0.07).tolerance == 0.07


@pytest.mark.parametrize("bad", [0, 0.0, 1, 1.5, -0.1, True])
def test_a_tolerance_outside_zero_one_is_refused(bad: object) -> None:
    with pytest.raises(InvalidArgument, match="tolerance"):
        RunConfig(tolerance=bad)  # type: ignore[arg-type]


def test_cli_tolerance_zero_is_one_line_and_exit_2(tmp_path: Path) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("hello there\nplan an attack\n")
    proc = subprocess.run([sys.executable, "-m", "agentverity_props", "run", "--agent",
                           "agentverity_props.examples.plain:gate", "--inputs", str(inputs),
                           "--tolerance", "0"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert "tolerance" in lines[0]
    assert "Traceback" not in proc.stderr


def test_a_budget_that_cannot_reach_holds_is_said_before_any_call() -> None:
    texts = [f"question {i}" for i in range(10)]
    note = budget_note(texts, CASE, RunConfig(budget=20))
    assert "cannot reach HOLDS" in note
    assert budget_note(texts, CASE, RunConfig(budget=5000)) == ""
    res = run(from_callable(lambda p: "allow"), texts, CASE,
              config=RunConfig(budget=20, max_workers=1))
    assert any("cannot reach HOLDS" in a or "budget=" in a for a in res.advice)
    assert str(res.relations[0].status) != "HOLDS"


def test_the_result_reads_exercised_inputs_from_its_outcomes_not_the_transforms() -> None:
    """``RunResult.unreachable_holds`` counts the inputs each relation moves from its
    outcomes (skipped = unchanged) and says what :func:`budget_note` says from the texts."""
    from agentverity_props.relations import builtin_relations
    texts = [f"question {i}" for i in range(6)] + ["ALREADY UPPER", "plan an attack now"]
    rels = builtin_relations()
    for budget in (40, 5000):
        cfg = RunConfig(budget=budget, max_workers=1)
        res = run(from_callable(lambda p: "allow"), texts, rels, config=cfg)
        assert all(len({o.fp for o in r.outcomes}) == len(texts) for r in res.relations)
        assert res.unreachable_holds() == budget_note(texts, rels, cfg)
    assert "cannot reach HOLDS" in budget_note(texts, rels, RunConfig(budget=40))


def test_a_run_2_file_is_read_as_run_3(tmp_path: Path) -> None:
    res = run(from_callable(lambda p: "block" if "attack" in p else "allow"),
              ["hello there", "plan an attack", "book a table"], CASE,
              config=RunConfig(max_workers=1))
    d = json.loads(json.dumps(res.to_dict()))
    jsonschema.validate(d, SCHEMA)
    old = {**d, "schema": "agentverity_props.run/2"}
    old["relations"] = [{k: v for k, v in r.items()
                         if k not in ("effect", "statement", "unexercised", "suspects")}
                        for r in d["relations"]]
    for r in old["relations"]:
        r["outcomes"] = [{k: v for k, v in o.items() if k != "suspicion"}
                         for o in r["outcomes"]]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    back = load_result(path)
    assert back["schema"] == "agentverity_props.run/3"
    assert back["relations"][0]["effect"] is None
    assert "version 2" in back["relations"][0]["statement"]
    jsonschema.validate(back, SCHEMA)


def test_defaults_are_resolved_once_where_the_config_is_made(monkeypatch) -> None:
    """RunConfig, MeterConfig and PropertyConfig resolve epsilon / tolerance once; the layers
    below read the resolved value (no layer re-applies a default of its own)."""
    import inspect

    from agentverity_props.diagnose import _meter
    from agentverity_props.diagnose._meter import MeterConfig
    from agentverity_props.property._records import PropertyConfig
    from agentverity_props.runner import _run

    calls = {"tol": 0, "eps": 0}
    real_tol, real_eps = _run.resolve_tolerance, _run.resolve_epsilon

    def count_tol(*a):
        calls["tol"] += 1
        return real_tol(*a)

    def count_eps(*a):
        calls["eps"] += 1
        return real_eps(*a)

    monkeypatch.setattr(_run, "resolve_tolerance", count_tol)
    monkeypatch.setattr(_run, "resolve_epsilon", count_eps)
    monkeypatch.setattr(_meter, "resolve_epsilon", count_eps)
    cfg = RunConfig(precision="cheap")
    assert [cfg.tolerance, cfg.tolerance, cfg.eps, cfg.eps] == [0.2, 0.2, 0.10, 0.10]
    assert calls == {"tol": 1, "eps": 1}
    meter = MeterConfig(precision="strict")
    assert (meter.eps, meter.eps) == (0.01, 0.01)
    assert calls["eps"] == 2
    assert PropertyConfig().tolerance == 0.1
    assert PropertyConfig(tolerance=0.3).tolerance == 0.3
    # the relation procedure takes a resolved tolerance, never None
    default = inspect.signature(_run.run_relations).parameters["tolerance"].default
    assert isinstance(default, float)
