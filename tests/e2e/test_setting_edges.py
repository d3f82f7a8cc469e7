"""One budget-exhausted situation through the three edges: each message names the budget
in its own terms (Python ``budget=``, the CLI ``--budget N``, pytest
``--agentverity-budget N`` / ini ``agentverity_budget``) and leaks no other edge's spelling."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
GATE = "agentverity_props.examples.plain:gate"
INPUTS = ROOT / "agentverity_props/examples/moderation.txt"
BUDGET = 40  # far below what the relations need: the run ends on its budget

pytestmark = pytest.mark.e2e


def test_python_names_the_keyword() -> None:
    from agentverity_props import run
    from agentverity_props.examples.plain import gate
    from agentverity_props.runner import RunConfig

    res = run(gate, INPUTS.read_text().splitlines(), config=RunConfig(budget=BUDGET))
    text = " ".join(res.advice)
    assert f"the call budget ({BUDGET}) ran out" in text
    assert "budget=" in text
    assert "--budget" not in text
    assert "--agentverity" not in text


def test_the_cli_names_its_flag() -> None:
    proc = subprocess.run([sys.executable, "-m", "agentverity_props", "run", "--agent", GATE,
                           "--inputs", str(INPUTS), "--budget", str(BUDGET)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=ROOT)
    out = proc.stdout + proc.stderr
    assert f"the call budget ({BUDGET}) ran out" in out, out
    assert "--budget " in out
    assert "budget=" not in out
    assert "--agentverity" not in out
    assert "store_path" not in out


def test_pytest_names_the_plugins_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_props='''
from hypothesis import given, settings, strategies as st
from agentverity_props import agent_property, from_callable

@agent_property(agent=from_callable(lambda p: "allow", identity="c"), budget=6)
@settings(database=None, max_examples=30)
@given(prompt=st.text("ab ", min_size=1, max_size=8))
def test_small_budget(check, prompt):
    check.invariant(prompt, prompt + "?", name="q")
''')
    res = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    res.assert_outcomes(failed=1)
    out = res.stdout.str()
    assert "Inconclusive" in out
    assert "--agentverity-budget N (ini agentverity_budget)" in out
    assert "budget= in @agent_property" in out  # the test's own keyword works too
    assert " --budget " not in out
    assert "RunConfig" not in out
