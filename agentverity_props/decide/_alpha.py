"""Every split of a family-wise ``alpha``, in one place (``run``, ``check``, ``compare``,
the relations of ``run`` and ``@agent_property``, blindness's two bounds).

Each command that prints several decisions promises one family-wise error rate: the
probability that *any* of them is wrong is at most ``alpha``. It gets there by giving each
kind of decision a share of ``alpha`` (weighted Bonferroni): the shares of one family sum to
at most 1 (``tests/unit/test_decide_oracles.py`` checks it), and each decision is then
valid at its own share. docs/statistics.md ("Multiplicity") explains the choice of shares.
"""

from __future__ import annotations

__all__ = ["BLINDNESS_BOUND_SHARE", "CHECK_CHANGE_SHARE", "COMPARE_METRICS",
           "COMPARE_WEIGHTS", "RELATION_SHARES", "RUN_SHARES", "compare_alpha_split",
           "relation_alpha_split"]

#: ``run``: the four kinds of finding (relations are split again: half over the pooled
#: effects, half over the inputs tested one by one; blindness: half per bound).
RUN_SHARES = {"relations": 0.5, "blindness": 0.25, "dependence": 0.125,
              "stationarity": 0.125}

#: The relations' alpha (``run``'s share, or an ``@agent_property`` test's whole alpha):
#: half over the pooled effects (then per relation, then per side), half over the inputs
#: tested one by one (then per input admitted).
RELATION_SHARES = {"pooled": 0.5, "local": 0.5}

#: Blindness: each of its two bounds (the pooled share and the per-input sequences).
BLINDNESS_BOUND_SHARE = 0.5


def relation_alpha_split(alpha: float, relations: int) -> dict[str, float]:
    """The alpha of each relation's pooled test (``pooled``, split again over its sides by
    :class:`~agentverity_props.decide.EffectTest`) and of the whole family of inputs tested
    one by one (``local``, split again over the inputs admitted).

    >>> relation_alpha_split(0.025, 5)
    {'pooled': 0.0025, 'local': 0.0125}
    """
    return {"pooled": alpha * RELATION_SHARES["pooled"] / max(1, relations),
            "local": alpha * RELATION_SHARES["local"]}


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
