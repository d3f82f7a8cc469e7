"""The relation procedure of ``run`` as a whole, at the tolerance: HOLDS is wrong at most
``beta`` at every probe-set size, on noisy inputs (forward side; the reverse side is
``test_relation_run_exact_reverse.py``, a module of its own so that ``--dist loadfile``
can give the two to different workers).

``tests/stats/test_relation_effects.py`` checks the pooled test on its own scores; here the
whole procedure runs (:func:`~agentverity_props.runner.run_relations`: the per-input
screen first, then the pooled epochs, which score the screen's draws before drawing more,
with blocks re-sized from the first epoch), through a real engine, on agents with their own
generators whose every input is 72/28 and whose follow-up is a coin flip (forward excess
disagreement exactly the tolerance; ``tests/support/exact_runs.py``). The check is a one-sided
binomial test at the claim (p < 0.001): it fails when the claim is false.
"""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from tests.support.exact_runs import BETA, NOISY_P, RUNS, one_run, wrong_holds

pytestmark = pytest.mark.stats


@pytest.mark.parametrize("n_inputs", [5, 10, 30])
def test_holds_is_wrong_at_most_beta_at_the_tolerance(n_inputs: int) -> None:
    wrong = wrong_holds(n_inputs, reverse=False)
    assert binomtest(wrong, RUNS, BETA, alternative="greater").pvalue > 0.001, (wrong, RUNS)


@pytest.mark.parametrize("n_inputs", [10, 30])
def test_the_budget_leaves_holds_within_reach(n_inputs: int) -> None:
    """The same agents with the relation holding (follow-up like the source): HOLDS in most
    runs within the budget, so the tests at the tolerance could see a HOLDS that should not
    be."""
    held = sum(one_run(n_inputs, NOISY_P, NOISY_P, 7 + s) == "HOLDS" for s in range(20))
    assert held >= 12, held
