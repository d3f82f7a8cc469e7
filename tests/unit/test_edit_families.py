"""Each built-in relation is the family its name claims, and ``run`` finds a bug confined to
one kind of edit: a router that misroutes on ``!``, a final ``?``, trailing whitespace or a
tab gets the matching relation VIOLATED with the kind named; the clean router gets none.
Profiles choose the per-input evidence and say so in the report."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter

import pytest

from agentverity_props import from_callable, run
from agentverity_props._internal.outcome import CandidateStatus
from agentverity_props.errors import InvalidArgument
from agentverity_props.relations import (
    SWEEP_MAX,
    builtin_relations,
    follow_ups,
    pairs_relation,
    per_input,
    register_profile,
)
from agentverity_props.runner import RunConfig
from tests.support.routers import BUGS as BUGS_ALL
from tests.support.routers import PROMPTS, ROUTES, topic
from tests.support.routers import router as make_router

INPUTS = PROMPTS[:20]
#: the bugs of issue 42's router, each with the relation that must find it
BUGS = {name: BUGS_ALL[name] for name in ("`!` anywhere", "a final `?`",
                                          "trailing whitespace", "a tab")}


def router(bug: str | None, noise: float, seed: int):
    return from_callable(make_router(bug, noise, seed),
                         identity=f"router-{bug}-{noise}-{seed}")


def test_every_kind_of_a_family_is_tried_on_its_share_of_the_inputs() -> None:
    for rel in builtin_relations():
        rows = follow_ups(rel, INPUTS, seed=3)
        kinds = Counter(k for row in rows for k, y in row if k is not None)
        first = rel.edits[0]
        assert kinds[first.kind] == sum(first.transform(t) != t for t in INPUTS)
        for e in rel.edits[1:]:
            # stratified, not random: every other kind that makes a follow-up of its own
            # (not the input, not the primary's) is tried on 3 inputs, or all it can move
            own = sum(e.transform(t) not in (t, first.transform(t)) for t in INPUTS)
            assert kinds[e.kind] >= min(3, own), (rel.name, e.kind, kinds)
        for t, row in zip(INPUTS, rows, strict=True):
            texts = [y for _, y in row]
            assert len(set(texts)) == len(texts)
            assert all(y != t for y in texts) or len(row) == 1


def test_a_small_probe_set_gets_more_follow_ups_per_input() -> None:
    ws = builtin_relations("whitespace")[0]
    assert per_input(ws, 100) == 2  # the primary kind, and room for the others' 3 inputs
    assert per_input(ws, 5) == 5
    assert per_input(ws, 2) == len(ws.edits)
    assert per_input(ws, 5, 2) == 2
    with pytest.raises(InvalidArgument):
        per_input(ws, 5, 0)


@pytest.mark.parametrize("bug", list(BUGS))
@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_a_bug_on_one_edit_kind_is_found_and_named(bug: str, noise: float) -> None:
    relation = BUGS[bug][0]
    found = 0
    for seed in range(3):
        res = run(router(bug, noise, seed), INPUTS, builtin_relations(relation),
                  config=RunConfig(seed=seed, max_workers=1))
        (r,) = res.relations
        if r.status == "VIOLATED":
            found += 1
            assert any(v["confirmed"] for v in r.edits_tried().values())
            assert "confirmed violating by edit(s)" in r.statement()
    assert found >= 2, (bug, noise, found)


@pytest.mark.parametrize("noise", [0.0, 0.1])
def test_the_clean_router_gets_no_false_violation(noise: float) -> None:
    res = run(router(None, noise, 7), INPUTS, builtin_relations("whitespace", "punctuation",
                                                                "case"),
              config=RunConfig(seed=7, max_workers=1))
    assert all(r.status != "VIOLATED" for r in res.relations), [
        (r.relation.name, r.status) for r in res.relations]


def test_pairs_the_user_brings_are_each_tested_byte_for_byte() -> None:
    pairs = {"I like Ann.": ["I like Bo.", "I like Cy. ", "I like Dee."],
             "Ann is here.": ["Bo is here."]}
    rel = pairs_relation("names", pairs)
    res = run(from_callable(lambda p: "neg" if "Cy" in p else "pos"), list(pairs), [rel],
              config=RunConfig(max_workers=1))
    (r,) = res.relations
    assert r.exercised == 4
    assert r.inputs_exercised == 2
    assert r.status == "VIOLATED"
    assert {k for k, v in r.edits_tried().items() if v["confirmed"]} == {"pair 2"}
    assert res.follow_up_texts()[r.outcomes[1].follow_up_fp] == "I like Cy. "
    with pytest.raises(InvalidArgument):
        pairs_relation("bad", {"x": "not a list"})


def test_quick_profile_screens_nothing_and_says_so() -> None:
    # a noisy agent: the pooled effect only
    res = run(router(None, 0.1, 1), INPUTS, builtin_relations("case"),
              config=RunConfig(max_workers=1, profile="quick"))
    d = res.to_dict()
    assert d["profile"]["name"] == "quick"
    assert d["profile"]["screen"] is False
    (r,) = d["relations"]
    assert r["status"] == "HOLDS"
    assert r["effect"]["per_input"] is None
    assert "not screened (profile quick" in r["statement"]
    std = run(router(None, 0.1, 1), INPUTS, builtin_relations("case"),
              config=RunConfig(max_workers=1))
    assert std.to_dict()["relations"][0]["effect"]["per_input"]["screened"] > 0


def _case_bug_on_one_input(noise: float, seed: int, bugged: str | None):
    """A noisy router whose case variants of ``bugged`` (one input) all go to technical."""
    rng = random.Random(f"quick-admit:{seed}")

    def route(p: str) -> str:
        hit = bugged is not None and p != bugged and p.lower() == bugged.lower()
        v = "technical" if hit else topic(p)
        if rng.random() < noise:
            v = rng.choice(ROUTES)
        return v
    return from_callable(route, identity=f"quick-admit-{bugged}-{noise}-{seed}")


def _tested_alone(r) -> list:
    return [o for o in r.outcomes if o.decision and "betting" in str(o.decision.get("test"))]


def test_quick_tests_on_its_own_only_an_input_whose_draws_differ_beyond_chance() -> None:
    # clean at 15% noise: a share of 0.25 is reached by chance on most inputs, but few
    # inputs' draws differ beyond chance (the three most suspicious of each relation were
    # tested before, about a fifth of the run's calls)
    tested = 0
    for seed in range(3):
        res = run(_case_bug_on_one_input(0.15, seed, None), INPUTS,
                  builtin_relations("case", "whitespace"),
                  config=RunConfig(max_workers=1, profile="quick", seed=seed))
        assert all(r.status == "HOLDS" for r in res.relations)
        tested += sum(len(_tested_alone(r)) for r in res.relations)
    assert tested <= 9, tested  # 18 before (3 a relation and seed): 7 here
    # a strong bug on one input is still tested on its own and confirmed
    res = run(_case_bug_on_one_input(0.15, 0, INPUTS[0]), INPUTS, builtin_relations("case"),
              config=RunConfig(max_workers=1, profile="quick"))
    (r,) = res.relations
    assert r.status == "VIOLATED"
    confirmed = [o for o in r.outcomes if o.status == CandidateStatus.CONFIRMED]
    assert confirmed
    texts = res.follow_up_texts()
    assert {texts[o.follow_up_fp].lower() for o in confirmed} == {INPUTS[0].lower()}


def test_quick_samples_the_inputs_so_its_cost_does_not_grow_with_the_probe_set() -> None:
    # every epoch of quick, the first too, is a uniform sample of the inputs: on four times
    # the probe set it spends about what it spends on one (a sweep of every input, or a first
    # look of one draw a pair, made it grow with the set), and a pair whose input was never
    # drawn reads undecided "not drawn", never clean
    from agentverity_props.relations._model import NOT_DRAWN

    inputs = [f"{p} (ticket {i})" for i in range(4) for p in PROMPTS]
    assert len(inputs) > SWEEP_MAX
    rels = builtin_relations("case", "whitespace")
    big = run(_case_bug_on_one_input(0.15, 0, None), inputs, rels,
              config=RunConfig(max_workers=1, profile="quick"))
    small = run(_case_bug_on_one_input(0.15, 0, None), PROMPTS, rels,
                config=RunConfig(max_workers=1, profile="quick"))
    assert big.to_dict()["calls"]["relations"] <= 2 * small.to_dict()["calls"]["relations"]
    for r in big.relations:
        assert r.status == "HOLDS"
        pairs = [o for o in r.outcomes if o.status != CandidateStatus.SKIPPED]
        undrawn = [o for o in pairs if o.follow_up is None]
        assert undrawn
        assert len(undrawn) < len(pairs)
        assert all(o.status == CandidateStatus.UNDECIDED and o.note == NOT_DRAWN
                   and o.draws == 0 for o in undrawn)
        assert all(o.status != CandidateStatus.CLEAN or o.draws > 0 for o in pairs)
        # what the report says adds up: the pairs drawn, and only they count as edits tried
        drawn = len(pairs) - len(undrawn)
        assert f"{drawn} of {len(pairs)} pairs drawn" in r.per_input_statement()
        assert sum(v["pairs"] for v in r.edits_tried().values()) == drawn
        assert r.undecided == 0
    assert big.to_dict()["profile"]["tolerance"] == 0.2


def test_quick_profile_on_a_deterministic_agent_takes_the_deterministic_path() -> None:
    res = run(router(None, 0.0, 1), INPUTS, builtin_relations("case"),
              config=RunConfig(max_workers=1, profile="quick"))
    (r,) = res.to_dict()["relations"]
    pi = r["effect"]["per_input"]
    assert r["effect"]["deterministic_path"] == "taken"
    assert pi["path"] == "deterministic"
    assert pi["screened"] == pi["pairs"]
    assert 0.0 < 1 - pi["power"] <= 2 * pi["flip_bound"] + 1e-12
    assert "deterministic path" in r["statement"]


def test_registered_profiles_and_unknown_names() -> None:
    prof = register_profile("test-wide", screen_beta=0.02, edits_per_input=2)
    cfg = RunConfig(profile="test-wide")
    assert cfg.profile is prof
    with pytest.raises(InvalidArgument, match="unknown profile"):
        RunConfig(profile="no-such-profile")
    with pytest.raises(InvalidArgument):
        register_profile("quick")
    with pytest.raises(InvalidArgument):
        register_profile("odd", screen_size=0.0)


def test_a_profiles_tolerance_applies_only_when_none_is_given() -> None:
    from agentverity_props.property import PropertyConfig

    # explicit, else the precision's, else the profile's (quick: 0.2), else 0.1
    assert RunConfig(profile="quick").tolerance == 0.2
    assert RunConfig().tolerance == 0.1
    assert RunConfig(profile="quick", tolerance=0.05).tolerance == 0.05
    assert RunConfig(profile="quick", precision="strict").tolerance == 0.05
    assert PropertyConfig(profile="quick").tolerance == 0.2
    assert PropertyConfig(profile="quick", tolerance=0.3).tolerance == 0.3
    mine = register_profile("test-coarse", parent="standard", tolerance=0.15)
    assert RunConfig(profile=mine.name).tolerance == 0.15
    assert mine.to_dict()["tolerance"] == 0.15
    with pytest.raises(InvalidArgument, match="tolerance"):
        register_profile("test-bad-tol", tolerance=1.0)


def test_cli_profile_reaches_the_json_and_a_bad_one_is_one_line(tmp_path) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("\n".join(INPUTS[:6]) + "\n")
    agent = tmp_path / "agent.py"
    agent.write_text("def agent(p):\n    return 'a' if 'password' in p else 'b'\n")
    base = [sys.executable, "-m", "agentverity_props", "run", "--agent", f"{agent}:agent",
            "--inputs", str(inputs), "--relations", "case", "--max-workers", "1"]
    out = subprocess.run([*base, "--profile", "quick", "--format", "json"],
                         capture_output=True, text=True, check=False)
    assert out.returncode in (0, 1), out.stderr  # 1: a finding (blind set, violation)
    assert json.loads(out.stdout)["profile"]["name"] == "quick"
    bad = subprocess.run([*base, "--profile", "nope"], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 2
    assert "unknown profile" in bad.stderr
    assert "Traceback" not in bad.stderr
    bad = subprocess.run([*base, "--edits-per-input", "0"], capture_output=True, text=True,
                         check=False)
    assert bad.returncode == 2
    assert "--edits-per-input" in bad.stderr


def test_agent_property_takes_a_profile_and_the_plugin_sets_one(tmp_path) -> None:
    from agentverity_props.property import PropertyConfig

    assert PropertyConfig().candidate_beta == 0.01
    assert PropertyConfig(profile="quick").candidate_beta == 0.05
    assert PropertyConfig(profile="thorough", beta=0.2).candidate_beta == 0.2  # given wins
    with pytest.raises(InvalidArgument, match="unknown profile"):
        PropertyConfig(profile="nope")
    test = tmp_path / "test_prop.py"
    test.write_text(
        "from hypothesis import given, settings, strategies as st\n"
        "from agentverity_props import agent_property\n"
        "@agent_property(agent=lambda p: 'allow', profile='quick')\n"
        "@settings(max_examples=5)\n"
        "@given(st.sampled_from(['a b', 'c d', 'e f']))\n"
        "def test_case(check, p):\n"
        "    check.invariant(p, p.upper(), name='case')\n")
    ok = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         str(test), "--agentverity-profile", "thorough"],
                        capture_output=True, text=True, check=False, cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(test), "--agentverity-profile", "nope"],
                         capture_output=True, text=True, check=False, cwd=tmp_path)
    assert bad.returncode != 0
    assert "unknown profile 'nope'" in bad.stdout + bad.stderr
