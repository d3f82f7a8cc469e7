"""The relation procedure of ``run`` as a whole, at the tolerance, reverse side: every source
is a coin flip and its upper-cased follow-up 72/28 (a follow-up more decided than its source,
excess disagreement exactly the tolerance; ``tests/support/exact_runs.py``). HOLDS is wrong at
most ``beta`` at every probe-set size; the forward side is ``test_relation_run_exact.py``. The
check is a one-sided binomial test at the claim (p < 0.001): it fails when the claim is false.
"""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from tests.support.exact_runs import BETA, RUNS, wrong_holds

pytestmark = pytest.mark.stats


@pytest.mark.parametrize("n_inputs", [5, 10, 30])
def test_holds_is_wrong_at_most_beta_at_the_tolerance_reverse(n_inputs: int) -> None:
    wrong = wrong_holds(n_inputs, reverse=True)
    assert binomtest(wrong, RUNS, BETA, alternative="greater").pvalue > 0.001, (wrong, RUNS)
