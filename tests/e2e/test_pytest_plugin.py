"""The pytest plugin and @agent_property, driven through pytester (a real pytest run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SCHEMA = json.loads((Path(__file__).parents[2] / "docs/schemas/counterexample.schema.json")
                    .read_text())

pytestmark = pytest.mark.e2e

HEADER = '''
import random
import pytest
from hypothesis import example, given, settings, strategies as st
from agentverity_props import agent_property, from_callable, Relation

def planted(prompt):
    if "URGENT" in prompt and len(prompt) > 40:
        return "block"
    return "allow"

gate = from_callable(planted, identity="planted")
prompts = st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 15),
                    st.sampled_from(["hello", "please", "urgent", "order"]))
'''


def test_violation_is_reported_with_minimal_counterexample(pytester):
    pytester.makepyfile(test_props=HEADER + '''
@agent_property(agent=gate)
@settings(database=None, max_examples=60)
@given(prompt=prompts)
def test_case(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")
''')
    report = pytester.path / "ce.json"
    res = pytester.runpytest_subprocess(f"--agentverity-report={report}")
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    assert "CaseViolation" in out
    assert "agentverity-props minimal counterexample" in out
    assert "hello hello hello hello hello hello urgent" in out
    assert "@example(prompt='hello hello hello hello hello hello urgent')" in out
    assert "= agentverity-props =" in out.replace("=", "=")  # terminal summary section
    data = json.loads(report.read_text())
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(data, SCHEMA)
    (t,) = data["tests"]
    assert t["status"] == "failed"
    assert t["minimal"]["source"] == "hello hello hello hello hello hello urgent"
    assert t["shrink_calls"] >= 0


def test_user_settings_override_defaults_wherever_stacked(pytester):
    pytester.makepyfile(test_props=HEADER + '''
from agentverity_props.property._records import RECORDS

@settings(max_examples=7, database=None)
@agent_property(agent=from_callable(lambda p: "allow", identity="const"))
@given(prompt=prompts)
def test_above(check, prompt):
    check.invariant(prompt, prompt + "!", name="bang")

@agent_property(agent=from_callable(lambda p: "allow", identity="const2"))
@settings(max_examples=9, database=None)
@given(prompt=prompts)
def test_below(check, prompt):
    check.invariant(prompt, prompt + "!", name="bang")

@agent_property(agent=from_callable(lambda p: "allow", identity="const3"))
@given(prompt=prompts)
@settings(database=None)
def test_default(check, prompt):
    check.invariant(prompt, prompt + "!", name="bang")

def test_counts():
    by = {r.test.split("::")[-1]: r.candidates for r in RECORDS}
    assert by["test_above"] <= 7
    assert by["test_below"] <= 9
    assert 10 < by["test_default"] <= 100  # the user's explicit settings own max_examples
''')
    res = pytester.runpytest_subprocess("-p", "no:randomly")
    res.assert_outcomes(passed=4)


def test_example_fixtures_and_parametrize_compose(pytester):
    pytester.makepyfile(test_props=HEADER + '''
from agentverity_props.property._records import RECORDS

@pytest.fixture(scope="module")
def suffix():
    return " thanks"

@pytest.mark.parametrize("word", ["a", "b"])
@agent_property(agent=from_callable(lambda p: "allow", identity="const"))
@example(prompt="explicit example prompt")
@settings(max_examples=3, database=None)
@given(prompt=prompts)
def test_compose(check, prompt, suffix, word):
    check.invariant(prompt, prompt + suffix + word, name="suffix")
''')
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(passed=2)


def test_distinct_relations_stay_distinct_bugs(pytester):
    # every example violates one of the two relations, so Hypothesis stops generating about
    # ten calls after its first failure (report_multiple_bugs keeps going only that long):
    # half the words are "urgent" so that both kinds are among them, and derandomize fixes
    # which examples those are (with `prompts`, one word in four, about 6% of runs saw
    # no "urgent" and reported the bang bug alone)
    pytester.makepyfile(test_props=HEADER + '''
def two_bugs(prompt):
    if "URGENT" in prompt:
        return "block"
    if prompt.endswith("!"):
        return "review"
    return "allow"

either = st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 15),
                   st.sampled_from(["urgent", "order"]))

@agent_property(agent=from_callable(two_bugs, identity="two"))
@settings(database=None, max_examples=40, report_multiple_bugs=True, derandomize=True)
@given(prompt=either)
def test_two(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")
    check.invariant(prompt, prompt + "!", name="bang")
''')
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    assert "CaseViolation" in out
    assert "BangViolation" in out


def test_budget_exhaustion_is_inconclusive_not_a_pass(pytester):
    pytester.makepyfile(test_props=HEADER + '''
@agent_property(agent=from_callable(lambda p: "allow", identity="c"), budget=6)
@settings(database=None, max_examples=30)
@given(prompt=prompts)
def test_small_budget(check, prompt):
    check.invariant(prompt, prompt + "?", name="q")
''')
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(failed=1)
    assert "Inconclusive" in res.stdout.str()


def test_stochastic_agent_never_flaky(pytester):
    pytester.makepyfile(test_props=HEADER + '''
rng = random.Random(5)

def noisy_planted(prompt):
    if "URGENT" in prompt and len(prompt) > 40:
        return "block"
    return "review" if rng.random() < 0.05 else "allow"

from hypothesis import seed

@agent_property(agent=from_callable(noisy_planted, identity="noisy"))
@seed(3)
@settings(database=None, max_examples=60)
@given(prompt=prompts)
def test_case(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")
''')
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    assert "Flaky" not in out
    assert "CaseViolation" in out


def test_misuse_is_rejected_eagerly(pytester):
    pytester.makepyfile(test_props=HEADER + '''
from agentverity_props.errors import InvalidArgument

def test_below_given():
    with pytest.raises(InvalidArgument, match="above @given"):
        agent_property(agent=gate)(lambda check, prompt: None)

def test_check_required():
    with pytest.raises(InvalidArgument, match="check"):
        @agent_property(agent=gate)
        @given(prompt=prompts)
        def t(prompt):
            pass

def test_bad_alpha():
    with pytest.raises(InvalidArgument):
        agent_property(agent=gate, alpha=2.0)
''')
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(passed=3)


def test_collection_stays_light(pytester):
    pytester.makeconftest('''
import sys
def pytest_collection_finish(session):
    heavy = [m for m in ("numpy", "scipy", "strands", "agentverity_props.runner._run")
             if m in sys.modules]
    print("HEAVY:", heavy)
''')
    pytester.makepyfile(test_light="def test_x():\n    pass\n")
    res = pytester.runpytest_subprocess("-s")
    res.assert_outcomes(passed=1)
    assert "HEAVY: []" in res.stdout.str()


def test_ledger_fixture(pytester):
    pytester.makepyfile(test_props=HEADER + '''
@agent_property(agent=from_callable(lambda p: "allow", identity="c"))
@settings(database=None, max_examples=5)
@given(prompt=prompts)
def test_a(check, prompt):
    check.invariant(prompt, prompt + "?", name="q")

def test_ledger(agentverity_ledger):
    assert agentverity_ledger.total_calls() > 0
    assert agentverity_ledger.records()[0].status == "passed"
''')
    res = pytester.runpytest_subprocess("-p", "no:randomly")
    res.assert_outcomes(passed=2)


@pytest.mark.parametrize("option", ["--agentverity-alpha=2", "--agentverity-budget=-5",
                                    "--agentverity-epsilon=0.7", "--agentverity-tolerance=1.5",
                                    "--agentverity-budget=1", "--agentverity-profile=nope",
                                    "--agentverity-max-calls-in-flight=0"])
def test_bad_plugin_options_are_a_usage_error_not_a_traceback_per_test(pytester, option):
    pytester.makepyfile(test_props=HEADER + '''
@agent_property(agent=gate)
@given(prompt=prompts)
def test_case(check, prompt):
    check.invariant(prompt, prompt, name="same")
''')
    res = pytester.runpytest_subprocess(option)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    err = res.stderr.str()
    assert option.split("=")[0] in err
    assert "Traceback" not in err + res.stdout.str()


def test_the_setting_options_apply_to_every_agent_property_test(pytester):
    """--agentverity-tolerance / -alpha / -budget (and their ini twins) reach each test
    through its config, over the decorator's own settings."""
    pytester.makepyfile(test_props=HEADER + '''
from agentverity_props.property import records

@agent_property(agent=from_callable(lambda p: "allow", identity="c"), alpha=0.05,
                tolerance=0.1)
@settings(database=None, max_examples=5)
@given(prompt=prompts)
def test_a(check, prompt):
    check.invariant(prompt, prompt + "?", name="q")

def test_settings_applied():
    rec = records()[-1]
    assert (rec.alpha, rec.effects["q"]["tolerance"]) == (0.1, 0.3), rec
    assert rec.calls <= 300
''')
    res = pytester.runpytest_subprocess("-p", "no:randomly", "--agentverity-tolerance=0.3",
                                        "--agentverity-alpha=0.1", "--agentverity-budget=300")
    res.assert_outcomes(passed=2)
    pytester.makeini("[pytest]\nagentverity_tolerance = 0.3\nagentverity_alpha = 0.1\n"
                     "agentverity_budget = 300\n")
    res = pytester.runpytest_subprocess("-p", "no:randomly")
    res.assert_outcomes(passed=2)


def test_summary_of_many_passing_runs_with_a_warning_and_a_failure(pytester):
    """More than ten runs, not verbose, one with a health warning: listed without a crash."""
    pytester.makepyfile(test_props=HEADER + '''
blind = from_callable(lambda p: "allow", identity="blind")

@pytest.mark.parametrize("k", range(11))
@agent_property(agent=blind)
@settings(database=None, max_examples=12)
@given(prompt=prompts)
def test_many(check, prompt, k):
    check.invariant(prompt, prompt + "!", name="bang")

@agent_property(agent=gate)
@settings(database=None, max_examples=60)
@given(prompt=prompts)
def test_case(check, prompt):
    check.invariant(prompt, prompt.upper(), name="case")
''')
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(passed=11, failed=1)
    out = res.stdout.str()
    assert "passed runs not listed" in out
    assert "minimal counterexample (case)" in out
    assert "UnboundLocalError" not in out + res.stderr.str()


def test_the_reproduce_line_of_a_follow_ups_strategy_is_runnable(pytester):
    """@example(...) with Perturbation values: pasted back, it reproduces the failure."""
    body = '''
import agentverity_props.strategies as avs
from agentverity_props.strategies import Perturbation
from hypothesis import Phase
upper = from_callable(lambda p: "block" if "URGENT" in p else "allow", identity="upper")
sources = st.sampled_from(["this is urgent now", "hello there"])

@agent_property(agent=upper)
@settings(database=None, max_examples=40{phases})
{example}@given(t=avs.follow_ups(sources, avs.case_changes()))
def test_fu(check, t):
    src, pert, fu = t
    check.invariant(src, fu, name="case")
'''
    pytester.makepyfile(test_fu=HEADER + body.format(phases="", example=""))
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(failed=1)
    line = next(ln for ln in res.stdout.lines if "reproduce: @example(" in ln)
    example = line.split("reproduce: ", 1)[1].split("  #")[0]
    assert "arguments not recoverable" not in example
    pytester.makepyfile(test_fu=HEADER + body.format(
        phases=", phases=[Phase.explicit]", example=example + "\n"))
    res = pytester.runpytest_subprocess()
    res.assert_outcomes(failed=1)
    assert "CaseViolation" in res.stdout.str()


def test_a_recorded_suite_replays_with_zero_calls_without_the_example_database(pytester):
    """Record with a store, delete .hypothesis, replay: the same examples, no agent call."""
    pytester.makepyfile(test_props=HEADER + '''
import os

def counted(prompt):
    with open(os.environ["CALLS_FILE"], "a") as f:
        f.write("x")
    return "block" if "attack" in prompt else "allow"

counted_gate = from_callable(counted, identity="counted-gate")

@agent_property(agent=counted_gate)
@settings(max_examples=15)
@given(prompt=prompts)
def test_case(check, prompt):
    check.invariant(prompt, prompt + " ", name="space")
''')
    calls = pytester.path / "calls.txt"
    store = pytester.path / "store.sqlite3"
    env = {"CALLS_FILE": str(calls)}
    import os
    os.environ.update(env)
    try:
        res = pytester.runpytest_subprocess(f"--agentverity-store={store}",
                                            "--agentverity-store-mode=record")
        res.assert_outcomes(passed=1)
        recorded = len(calls.read_text())
        assert recorded > 0
        import shutil
        shutil.rmtree(pytester.path / ".hypothesis", ignore_errors=True)
        calls.write_text("")
        res = pytester.runpytest_subprocess(f"--agentverity-store={store}",
                                            "--agentverity-store-mode=replay")
        res.assert_outcomes(passed=1)
        assert calls.read_text() == ""
    finally:
        os.environ.pop("CALLS_FILE", None)
