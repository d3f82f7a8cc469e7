"""Every split of a family-wise ``alpha``, in one place.

Each command that prints several decisions promises one family-wise error rate: the
probability that *any* of them is wrong is at most ``alpha``. It gets there by giving each
kind of decision a share of ``alpha`` (weighted Bonferroni): the shares of one family sum to
at most 1 (``tests/unit/test_decide_oracles.py`` checks it), and each decision is then
valid at its own share. docs/statistics.md ("Multiplicity") explains the choice of shares.
"""

from __future__ import annotations

__all__ = ["CHECK_CHANGE_SHARE", "COMPARE_METRICS", "COMPARE_WEIGHTS", "RUN_SHARES",
           "compare_alpha_split"]

#: ``run``: the four kinds of finding (relations are split again: half over the pooled
#: effects, half over the inputs tested one by one; blindness: half per bound).
RUN_SHARES = {"relations": 0.5, "blindness": 0.25, "dependence": 0.125,
              "stationarity": 0.125}

#: ``check``: the changed-during-the-check test; drift over the inputs gets the rest.
CHECK_CHANGE_SHARE = 0.125

#: ``compare``: the paired metrics, per pair of agents.
COMPARE_METRICS = ("pass_rate", "error_rate", "latency")
#: ``compare``: shares per pair: the overall metrics, the pass rate's equivalence, then all
#: per-task verdicts.
COMPARE_WEIGHTS = {"pass_rate": 0.5, "equivalence": 0.25, "error_rate": 0.0625,
                   "latency": 0.0625, "per_task": 0.125}


def compare_alpha_split(alpha: float, pairs: int, tasks: int) -> dict[str, float]:
    """The alpha of each ``compare`` verdict so that all of them together err with
    probability <= ``alpha``.

    >>> s = compare_alpha_split(0.05, 1, 4)
    >>> s["pass_rate"], s["equivalence"], s["latency"], round(s["per_task"], 6)
    (0.025, 0.0125, 0.003125, 0.000521)
    >>> m = COMPARE_METRICS
    >>> round(sum(s[k] for k in m) + s["equivalence"] + len(m) * 4 * s["per_task"], 12)
    0.05
    """
    out = {m: alpha * COMPARE_WEIGHTS[m] / pairs for m in COMPARE_METRICS}
    out["equivalence"] = alpha * COMPARE_WEIGHTS["equivalence"] / pairs
    out["per_task"] = alpha * COMPARE_WEIGHTS["per_task"] / (pairs * tasks * len(COMPARE_METRICS))
    return out
