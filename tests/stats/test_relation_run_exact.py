"""The relation procedure of ``run`` as a whole, at the tolerance: HOLDS is wrong at most
``beta`` at every probe-set size, on noisy inputs.

``tests/stats/test_relation_effects.py`` checks the pooled test on its own scores; here the
whole procedure runs (:func:`~agentverity_props.runner.run_relations`: the per-input
screen first, then the pooled epochs, which score the screen's draws before drawing more,
with blocks re-sized from the first epoch), through a real engine, on agents with their own
generators whose every input is 72/28 and whose follow-up is a coin flip (forward excess
disagreement exactly the tolerance) or the reverse. The check is a one-sided binomial test at
the claim (p < 0.001): it fails when the claim is false.
"""

from __future__ import annotations

import math
import random

import pytest
from scipy.stats import binomtest

from agentverity_props._internal.aio import run_sync
from agentverity_props.engine import Engine, EngineConfig, EvidencePool, Probe
from agentverity_props.relations import Relation
from agentverity_props.runner._run import run_relations

pytestmark = pytest.mark.stats

TOL, ALPHA, BETA = 0.1, 0.05, 0.05
#: P(block) of a source whose shift to a coin flip has excess disagreement exactly TOL.
NOISY_P = 0.5 - math.sqrt(TOL / 2)
CASE = Relation("case", "invariant", str.upper)
#: Calls per run: a HOLDS at the tolerance is a lucky early stop, and a run that reaches the
#: budget is incomplete (never HOLDS), so the cap changes no error, only the test's time.
BUDGET = 2000
RUNS = 100


def one_run(n_inputs: int, src_p: float, fu_p: float, seed: int) -> str:
    """One ``run_relations`` of the case relation: every source P(block) = ``src_p``, its
    upper-cased follow-up ``fu_p``."""
    rng = random.Random(f"exact:{seed}")

    def agent(prompt: str) -> str:
        p = fu_p if prompt.isupper() else src_p
        return "block" if rng.random() < p else "allow"

    inputs = [f"question number {i}" for i in range(n_inputs)]

    async def main() -> str:
        eng = Engine(agent, EngineConfig(budget=BUDGET, max_workers=1))
        try:
            res = await run_relations(eng, [Probe.make(t) for t in inputs], EvidencePool(),
                                      [CASE], alpha=ALPHA / 2, holds_error=BETA, seed=seed,
                                      tolerance=TOL)
        finally:
            await eng.aclose()
        return str(res[0].status)

    return run_sync(main())


@pytest.mark.parametrize("n_inputs", [5, 10, 30])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_holds_is_wrong_at_most_beta_at_the_tolerance(n_inputs: int, reverse: bool) -> None:
    src_p, fu_p = (0.5, NOISY_P) if reverse else (NOISY_P, 0.5)
    wrong = sum(one_run(n_inputs, src_p, fu_p, 1000 * n_inputs + s + 500 * reverse) == "HOLDS"
                for s in range(RUNS))
    assert binomtest(wrong, RUNS, BETA, alternative="greater").pvalue > 0.001, (wrong, RUNS)


@pytest.mark.parametrize("n_inputs", [10, 30])
def test_the_budget_leaves_holds_within_reach(n_inputs: int) -> None:
    """The same agents with the relation holding (follow-up like the source): HOLDS in most
    runs within the budget, so the test above could see a HOLDS that should not be."""
    held = sum(one_run(n_inputs, NOISY_P, NOISY_P, 7 + s) == "HOLDS" for s in range(20))
    assert held >= 12, held
