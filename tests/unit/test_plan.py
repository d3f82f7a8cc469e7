"""``plan``: budgets it calls reachable are reached by the real pipeline, the CLI's output
and its bad input, and the synthetic agent's noise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentverity_props.adapters import from_callable
from agentverity_props.engine import run_sync
from agentverity_props.relations import select_builtins
from agentverity_props.runner import RunConfig, arun, plan
from agentverity_props.runner._plan import LABELS, synthetic_agent

ROOT = Path(__file__).parents[2]
INPUTS = ROOT / "agentverity_props/examples/moderation.txt"
TEXTS = ["What is a good name for a puppy?", "How do I boil an egg?",
         "Suggest a dinner for four.", "Translate good morning into Spanish.",
         "Summarise a novel in three sentences.", "What time is it in Tokyo?"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)


def invoke(*args: str) -> tuple[int | None, str]:
    """The CLI in-process (the click group and ``run_cli``): (exit code, stderr)."""
    import contextlib
    import io

    from agentverity_props.cli._common import run_cli
    from agentverity_props.cli._main import cli as group

    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run_cli(group, list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, err.getvalue()


def test_the_budget_plan_names_is_the_one_a_run_needs():
    # noise-free, the synthetic agent is deterministic: the budgets are exact
    rels = select_builtins(["case", "punctuation"])
    lv = plan(TEXTS, rels, seeds=1).levels[0]
    need = lv["reach"]["run"]["budget"]
    assert need == lv["calls"]["total"]["mean"]
    assert lv["reach"]["meter"]["budget"] <= lv["reach"]["relation:case"]["budget"] <= need

    def go(budget: int):
        agent = from_callable(synthetic_agent(TEXTS, rels, noise=0.0, seed=0))
        return run_sync(arun(agent, TEXTS, rels, config=RunConfig(budget=budget)))

    assert go(need).complete
    short = go(need - 1)
    assert not short.complete
    assert short.ledger["calls"] <= need - 1
    case_at = go(lv["reach"]["relation:case"]["budget"])
    assert {r.relation.name: str(r.status) for r in case_at.relations}["case"] == "HOLDS"


def test_synthetic_agent_flips_at_the_stated_rate_and_relations_hold():
    rels = select_builtins(["case"])
    agent = synthetic_agent(TEXTS, rels, noise=0.15, seed=3)
    src, fu = TEXTS[0], rels[0].apply(TEXTS[0])

    async def draws(text: str, n: int) -> list[str]:
        return [(await agent(text)).verdict for _ in range(n)]

    a, b = run_sync(draws(src, 4000)), run_sync(draws(fu, 4000))
    base = LABELS[0]
    assert a.count(base) / 4000 == pytest.approx(0.85, abs=0.02)
    assert b.count(base) / 4000 == pytest.approx(0.85, abs=0.02)  # the follow-up: same verdict
    quiet = synthetic_agent(TEXTS, rels, noise=0.0, seed=3)
    assert {run_sync(quiet(src)).verdict for _ in range(20)} == {base}


def test_cli_json_and_text(tmp_path):
    out = tmp_path / "plan.json"
    proc = cli("plan", "--inputs", str(INPUTS), "--relations", "case", "--seeds", "1",
               "--latency", "500ms", "--budget", "700", "--format", "json", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    d = json.loads(out.read_text())
    assert d["schema"] == "agentverity_props.plan/2"
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(d, json.loads((ROOT / "docs/schemas/plan.schema.json").read_text()))
    again = cli("report", str(out), "--format", "text")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("plan: 33 inputs, 1 relation(s)")
    assert [lv["noise"] for lv in d["levels"]] == [0.0, 0.1, 0.25]  # pair disagreements
    for lv in d["levels"]:  # each simulated by the flip share giving that pair disagreement
        p = lv["flip"]
        assert 2 * p - 1.5 * p * p == pytest.approx(lv["noise"])
    for lv in d["levels"]:
        assert lv["wall_s"]["mean"] == pytest.approx(lv["calls"]["total"]["mean"] * 0.5 / 4)
        assert lv["budget_enough"] == (lv["calls"]["total"]["high"] <= 700)
    # noise-free, one relation: ~620 calls, ~180 of them the dependence check's spaced blocks
    # (only draws spaced apart tell a deterministic agent from one behind a cache)
    assert d["levels"][0]["budget_enough"] is True
    text = again.stdout
    assert "noise 0.25" in text
    assert "noise = pair disagreement, as run prints it over the whole run" in text
    assert "relation 'case'" in text
    assert "no agent was called" in text
    assert "wall time at 0.5 s per call and 4 worker(s)" in text


@pytest.mark.parametrize("args", [
    ("--latency", "fast"), ("--latency", "0s"), ("--relations", "nope"),
    ("--tolerance", "1.5"), ("--noise", "0.9"), ("--max-workers", "0"),
])
def test_bad_input_is_one_line_and_exit_2(args):
    code, err = invoke("plan", "--inputs", str(INPUTS), *args)
    assert code == 2
    assert err.startswith("error: ")
    assert err.count("\n") == 1
    assert "internal error" not in err


def test_missing_inputs_file_is_exit_2(tmp_path):
    code, err = invoke("plan", "--inputs", str(tmp_path / "none.txt"))
    assert code == 2
    assert err.startswith("error: ")
    assert err.count("\n") == 1


def test_a_relation_name_is_shown_as_data():
    from agentverity_props.relations import Relation
    from agentverity_props.report import render_plan_text

    rel = Relation("\x1b[31mred\u202e", "invariant", str.upper)
    text = render_plan_text(plan(TEXTS[:2], [rel], seeds=1, noises=(0.0,),
                                 default_noises=False).to_dict())
    assert "\x1b" not in text
    assert "\u202e" not in text
    assert "relation '\\x1b[31mred\\u202e'" in text


def test_impossible_arguments_are_refused_eagerly():
    from agentverity_props.errors import InvalidArgument

    for kw in ({"seeds": 0}, {"latency_s": 0.0}, {"noises": (0.7,)}, {"modal_share": 1.0},
               {"default_noises": False}):
        with pytest.raises(InvalidArgument):
            plan(TEXTS, [], **kw)


def test_noise_is_the_pair_disagreement_run_prints():
    """``plan --noise D`` simulates an agent whose pair disagreement is D: the synthetic
    agent flipping each call with probability flip_share(D) disagrees with itself on D of
    the pairs of calls (checked by drawing pairs from it)."""
    import asyncio

    from agentverity_props.runner._plan import flip_share, pair_disagreement, synthetic_agent

    for d in (0.0, 0.081, 0.25, 0.6):
        assert pair_disagreement(flip_share(d)) == pytest.approx(d)
    agent = synthetic_agent(["one input"], [], noise=flip_share(0.2), seed=1)

    async def pairs(n: int) -> float:
        differ = 0
        for _ in range(n):
            a, b = await agent("one input"), await agent("one input")
            differ += a.verdict != b.verdict
        return differ / n

    assert asyncio.run(pairs(4000)) == pytest.approx(0.2, abs=0.025)
    with pytest.raises(Exception, match="pair disagreement"):
        plan(TEXTS, [], noises=(0.7,))


def test_a_plan_1_file_reads_as_plan_2():
    """A saved plan/1 (noise = the flip share) is migrated: noise becomes the pair
    disagreement and the old figure is kept as flip."""
    from agentverity_props.results import PlanDocument

    d = plan(TEXTS[:2], [], seeds=1, noises=(0.1,), default_noises=False).to_dict()
    old = {**d, "schema": "agentverity_props.plan/1",
           "levels": [{k: v for k, v in lv.items() if k != "flip"} | {"noise": 0.05}
                      for lv in d["levels"]]}
    doc = PlanDocument.model_validate(old).model_dump(by_alias=True)
    assert doc["schema"] == "agentverity_props.plan/2"
    assert doc["levels"][0]["flip"] == 0.05
    assert doc["levels"][0]["noise"] == pytest.approx(0.09625)


def test_plan_has_a_row_for_every_phase_a_run_counts_and_reads_noise_from_evidence(tmp_path):
    import json as _json
    import random as _random
    import subprocess as _sp
    import sys as _sys

    from agentverity_props import run as _run
    from agentverity_props.runner import RunConfig as _RC
    from agentverity_props.runner._plan import PHASES, covering

    rng = _random.Random(5)
    res = _run(from_callable(lambda p: "a" if rng.random() < 0.85 else "b"), TEXTS[:4],
               relations=[], config=_RC(max_workers=1))
    # every phase the run's calls are counted in has its row in the plan
    assert set(res.phase_calls) <= set(PHASES)
    report = tmp_path / "run.json"
    report.write_text(_json.dumps(res.to_dict()))
    inputs = tmp_path / "in.txt"
    inputs.write_text("\n".join(TEXTS) + "\n")
    out = _sp.run([_sys.executable, "-m", "agentverity_props", "plan", "--inputs", str(inputs),
                   "--relations", "case", "--seeds", "2", "--noise-from", str(report),
                   "--format", "json"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    d = _json.loads(out.stdout)
    assert any("too thin to plan with" in w for w in d["warnings"])  # a handful of pairs
    assert all("stationarity" in lv["calls"] for lv in d["levels"])
    assert d["config"]["profile"] == "standard"
    # the budget covers runs not simulated: never below mean + 3 sd
    assert covering([100, 120, 80]) >= 100 + 3 * 20
    # and a margin for an agent unlike the synthetic one (plan's mean misses by up to ~25%)
    assert covering([100, 120, 80]) >= 1.25 * (100 + 3 * 20)
    assert covering([50]) >= 1.25 * 50


def test_noise_from_a_report_reads_the_whole_run_figure_and_falls_back_to_the_meter(tmp_path):
    import json as _json
    import random as _random

    from agentverity_props import run as _run
    from agentverity_props.runner import NoiseEstimate
    from agentverity_props.runner import RunConfig as _RC

    rng = _random.Random(11)
    res = _run(from_callable(lambda p: "a" if rng.random() < 0.8 else "b"), TEXTS[:6],
               relations=[], config=_RC(max_workers=1))
    doc = res.to_dict()
    whole = doc["noise"]
    # every source draw of the run, input by input: at least the meter's pairs
    assert whole["inputs"] == 6
    assert whole["pairs"] >= doc["meter"]["pairs"]
    assert whole["ci_low"] <= whole["pair_disagreement"] <= whole["ci_high"]
    report = tmp_path / "run.json"
    report.write_text(_json.dumps(doc))
    est = NoiseEstimate.read(str(report))
    assert est.estimate == pytest.approx(whole["pair_disagreement"])
    assert "every source draw" in est.source
    assert est.inputs == 6
    # a report written before the whole-run figure: the meter's pairs, said so
    del doc["noise"]
    report.write_text(_json.dumps(doc))
    old = NoiseEstimate.read(str(report))
    assert old.estimate == pytest.approx(doc["meter"]["disagreements"] / doc["meter"]["pairs"])
    assert "its meter" in old.source
    # a malformed figure is not trusted: the meter's again
    doc["noise"] = {**whole, "pair_disagreement": "high"}
    report.write_text(_json.dumps(doc))
    assert "its meter" in NoiseEstimate.read(str(report)).source


def test_the_whole_run_noise_averages_inputs_not_draws():
    from agentverity_props.runner._plan_tokens import noise_of_draws

    # one input drawn 40 times that always splits, one quiet input drawn twice: each counts
    # once (the synthetic agent plan simulates is noisy equally on every input)
    noisy = ["a", "b"] * 20
    est = noise_of_draws([noisy, ["a", "a"]], "test")
    assert est is not None
    assert est.estimate == pytest.approx((1 - 2 * 20 * 19 / (40 * 39)) / 2)
    assert est.pairs == 21
    assert est.inputs == 2
    assert noise_of_draws([["a"], []], "test") is None


def test_plan_prices_the_screen_of_the_profile_it_plans_for():
    rels = select_builtins(["case"])
    std = plan(TEXTS, rels, seeds=1, noises=(0.1,), default_noises=False).levels[0]["screen"]
    thorough = plan(TEXTS, rels, seeds=1, noises=(0.1,), default_noises=False,
                    config=RunConfig(profile="thorough")).levels[0]["screen"]
    quick = plan(TEXTS, rels, seeds=1, noises=(0.1,), default_noises=False,
                 config=RunConfig(profile="quick")).levels[0]["screen"]
    assert std["power"] == pytest.approx(0.95)
    assert thorough["power"] == pytest.approx(0.99)
    # a smaller beta takes more draws to clear a pair, quiet or not
    assert thorough["follow_ups"] > std["follow_ups"]
    assert quick is None  # quick screens no pair: no screen to price


def test_the_floor_under_sampled_epochs_is_below_every_quick_run() -> None:
    # quick's epochs sample the inputs (10 of these 40 an epoch): the floor a plan and a
    # budget note print is a sampled run's, below a full sweep's, and still below what a
    # quick run spends
    import random

    from agentverity_props import run
    from agentverity_props.runner._run import min_relation_calls

    rels = select_builtins(["case", "whitespace", "punctuation"])
    texts = [f"{t} (note {i})" for i in range(7) for t in TEXTS][:40]
    rng = random.Random("floor-quick")

    def agent(p: str) -> str:  # 10% noise: not the deterministic path, whose epochs sweep
        v = "block" if "egg" in p.lower() else "allow"
        return ("allow" if v == "block" else "block") if rng.random() < 0.1 else v

    for tol in (0.2, 0.3):
        floor = min_relation_calls(texts, rels, tol, sampled=True)
        res = run(from_callable(agent, identity=f"floor-{tol}"), texts, rels,
                  config=RunConfig(max_workers=1, profile="quick", tolerance=tol, seed=3))
        assert floor <= res.to_dict()["calls"]["relations"]
    assert min_relation_calls(texts, rels, 0.3, sampled=True) < min_relation_calls(
        texts, rels, 0.3)
