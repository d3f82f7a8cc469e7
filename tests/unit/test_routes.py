"""Per-route claims: the meter and relations broken down by verdict label, and
``--require-verdicts`` (a finding of run, a refusal of snapshot, by a named rule)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from agentverity_props import create_snapshot, from_callable, run
from agentverity_props.cli import main as cli_main
from agentverity_props.errors import BadInput, InvalidArgument
from agentverity_props.report import render_run_text
from agentverity_props.runner import RunConfig, parse_required_verdicts, route_breakdown

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/schemas/run.schema.json").read_text())
FAQ = [f"what are your support hours {i}" for i in range(8)]
REFUND = [f"I want a refund for order {i}" for i in range(4)]


def _validate(d: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(d, SCHEMA)


def _router(noise_on_refund: float, seed: int = 0):
    rng = random.Random(seed)  # its own generator: Hypothesis reseeds the global one

    def route(prompt: str) -> str:
        if "refund" in prompt:
            return "escalate" if rng.random() < noise_on_refund else "refund"
        return "faq"
    return from_callable(route)


def test_routes_group_the_meter_by_majority_verdict_and_validate():
    r = run(_router(0.0), FAQ + REFUND, relations=[],
            config=RunConfig(budget=600, max_workers=1))
    d = r.to_dict()
    routes = d["routes"]
    assert {m["label"]: m["inputs"] for m in routes["meter"]} == {"faq": 8, "refund": 4}
    assert sum(m["pairs"] for m in routes["meter"]) == d["meter"]["pairs"]
    assert all(m["disagreements"] == 0 and m["ci_low"] == 0.0 for m in routes["meter"])
    # fewer pairs on the smaller route: a wider interval, although both are clean
    by = {m["label"]: m for m in routes["meter"]}
    assert by["refund"]["pairs"] < by["faq"]["pairs"]
    assert by["refund"]["ci_high"] > by["faq"]["ci_high"]
    assert routes["missing"] == []
    assert routes["error_rate"].startswith("descriptive")
    _validate(d)
    assert "Per route" in render_run_text(d)


def test_a_noisy_route_shows_its_own_disagreement_under_a_pooled_meter():
    # refund is noisy (30% escalate); faq is exact: the pooled estimate dilutes it, the
    # route keeps it
    faq = [f"{q} please" for q in FAQ] + [f"{q} today" for q in FAQ] + FAQ
    r = run(_router(0.3, seed=3), faq + REFUND, relations=[],
            config=RunConfig(budget=2000, max_workers=1, max_meter_calls=600))
    routes = r.to_dict()["routes"]
    by = {m["label"]: m for m in routes["meter"]}
    assert by["faq"]["disagreements"] == 0
    assert by["refund"]["estimate"] > r.meter.estimate
    assert by["refund"]["ci_low"] > 0.0


def test_missing_required_verdict_is_a_named_finding_exit_1():
    r = run(_router(0.0), FAQ + REFUND, relations=[],
            config=RunConfig(budget=600, max_workers=1,
                             require_verdicts=("faq", "refund", "order_lookup")))
    d = r.to_dict()
    assert d["routes"]["missing"] == ["order_lookup"]
    assert r.exit_code == 1
    assert any("order_lookup" in f and "never produced" in f for f in r.findings)
    text = render_run_text(d)
    assert "Exit 1: finding: required verdict never produced (order_lookup)" in text
    assert "blind probe set, confirmed violation or dependent draws" not in text
    _validate(d)


def test_all_required_verdicts_produced_is_no_finding():
    r = run(_router(0.0), FAQ + REFUND, relations=[],
            config=RunConfig(budget=600, max_workers=1, require_verdicts=("faq", "refund")))
    assert r.routes is not None
    assert r.routes.missing == ()
    assert not any("never produced" in f for f in r.findings)


def test_snapshot_refuses_a_missing_required_verdict_by_its_rule(tmp_path):
    out = tmp_path / "s.json"
    res = create_snapshot(_router(0.0), FAQ + REFUND, accept_reference=True, output=out,
                          config=RunConfig(require_verdicts=("faq", "refund", "escalate"),
                                           max_workers=1))
    rules = [r.rule for r in res.refusals]
    assert rules == ["required-verdicts"], rules
    assert "escalate" in res.refusal_message()
    assert not out.exists()
    table = {r["rule"]: r["passed"] for r in res.to_dict()["admission"]["rules"]}
    assert table["required-verdicts"] is False
    ok = create_snapshot(_router(0.0), FAQ + REFUND, accept_reference=True,
                         config=RunConfig(require_verdicts=("faq", "refund"), max_workers=1))
    assert ok.admitted


def test_route_of_ties_and_the_breakdown_counts_relation_outcomes():
    from agentverity_props import builtin_relations
    r = run(_router(0.0), FAQ + REFUND, relations=builtin_relations()[1:2],
            config=RunConfig(budget=1500, max_workers=1))
    routes = route_breakdown([], r_pool := _EmptyPool(), r.meter, r.relations,
                             layer="verdict", alpha=0.05)
    assert routes.meter == ()
    assert routes.unrouted == 0
    assert r_pool is not None
    rel = r.to_dict()["routes"]["relations"]["case"]
    assert Counter({row["label"]: row["inputs"] for row in rel}) == Counter(faq=8, refund=4)


class _EmptyPool:
    def get(self, fp: str):  # pragma: no cover - never called without probes
        raise AssertionError


def test_parse_required_verdicts_list_and_file_forms(tmp_path):
    assert parse_required_verdicts("faq, refund,,faq") == ("faq", "refund")
    f = tmp_path / "routes.txt"
    f.write_text("# the routes\nfaq\nrefund  # money back\n\n")
    assert parse_required_verdicts(f"@{f}") == ("faq", "refund")
    with pytest.raises(BadInput, match="names no verdict"):
        parse_required_verdicts(" , ")
    with pytest.raises(BadInput, match="cannot read"):
        parse_required_verdicts(f"@{tmp_path / 'none.txt'}")
    with pytest.raises(InvalidArgument):
        RunConfig(require_verdicts="faq")  # type: ignore[arg-type]


def test_cli_bad_require_verdicts_is_one_line_exit_2(tmp_path, capsys):
    inputs = tmp_path / "in.txt"
    inputs.write_text("hello\n")
    code = _run_cli(
        ["run", "--agent", "agentverity_props.examples.plain:gate", "--inputs", str(inputs),
         "--require-verdicts", f"@{tmp_path / 'missing.txt'}"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: --require-verdicts")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def _run_cli(argv: list[str]) -> int:
    try:
        cli_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0
