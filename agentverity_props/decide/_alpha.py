"""Every split of a family-wise ``alpha``, in one place (``run``, ``check``, ``compare``,
``bench``, ``snapshot``, ``enlarge`` and its boundary search, the relations of ``run``,
``@agent_property`` and conversation tests, blindness's two bounds; tests/unit/
test_alpha_splits.py fails if a module outside ``decide/`` divides an alpha itself).

Each command that prints several decisions promises one family-wise error rate: the
probability that *any* of them is wrong is at most ``alpha``. It gets there by giving each
kind of decision a share of ``alpha`` (weighted Bonferroni): the shares of one family sum to
at most 1 (``tests/unit/test_decide_oracles.py`` checks it), and each decision is then
valid at its own share. docs/statistics.md ("Multiplicity") explains the choice of shares.
"""

from __future__ import annotations

__all__ = [
    "BLINDNESS_BOUND_SHARE",
    "CHECK_CHANGE_SHARE",
    "COMPARE_METRICS",
    "COMPARE_WEIGHTS",
    "ENLARGE_SHARES",
    "RELATION_SHARES",
    "RUN_SHARES",
    "bonferroni",
    "candidate_alpha",
    "check_alpha_split",
    "compare_alpha_split",
    "enlarge_alpha_split",
    "find_alpha",
    "local_family_split",
    "relation_alpha_split",
    "spending_alpha",
]

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


def bonferroni(alpha: float, members: int) -> float:
    """Each member's alpha when ``members`` decisions share ``alpha`` equally (the inputs of a
    snapshot, the tasks of a benchmark, the inputs a relation tests one by one, the
    candidate pairs of enlarge's boundary search). ``members`` below 1 counts as one.

    >>> bonferroni(0.05, 4), bonferroni(0.05, 0)
    (0.0125, 0.05)
    """
    return alpha / max(1, members)


def candidate_alpha(alpha: float, max_candidates: int) -> float:
    """The alpha of each example an ``@agent_property`` test confirms one by one: the
    relations' local half, split over at most ``max_candidates`` examples.

    >>> candidate_alpha(0.05, 5)
    0.005
    """
    return alpha * RELATION_SHARES["local"] / max_candidates


def local_family_split(alpha_local: float, fixed: int, sequential: int) -> tuple[float, float]:
    """On a recording, the relations' local alpha over its two kinds of per-input test:
    each of the ``fixed`` relations tested by the exact split test gets ``alpha_local / R``
    (``R = fixed + sequential``; Holm over its inputs), and the ``sequential`` ones share
    the rest (split again over the inputs admitted).

    >>> local_family_split(0.0125, 1, 1)
    (0.00625, 0.00625)
    """
    total = fixed + sequential
    return alpha_local / total, alpha_local * sequential / total


def spending_alpha(alpha: float, attempt: int) -> float:
    """The alpha of the ``attempt``-th test (from 1) of a sequence of tests run until one
    succeeds: ``alpha / 2^attempt``, which sums to at most ``alpha`` however many are run.

    >>> spending_alpha(0.05, 1), sum(spending_alpha(0.05, k) for k in range(1, 60)) <= 0.05
    (0.025, True)
    """
    return alpha / 2 ** attempt


#: ``enlarge``: the minority verdict of every added input (split again over every candidate
#: the search may test), the boundary pairs it reports, and the blindness of the starting
#: and of the enlarged set (half each).
ENLARGE_SHARES = {"finds": 0.5, "boundaries": 0.25, "blindness": 0.25}


def enlarge_alpha_split(alpha: float) -> dict[str, float]:
    """``enlarge``'s alpha: ``finds``, shared by every candidate the search tests
    (:func:`find_alpha`), ``boundaries`` (every boundary pair reported), ``blindness`` (each
    of the two sets' blindness tests).

    >>> enlarge_alpha_split(0.05)
    {'finds': 0.025, 'boundaries': 0.0125, 'blindness': 0.00625}
    """
    return {"finds": alpha * ENLARGE_SHARES["finds"],
            "boundaries": alpha * ENLARGE_SHARES["boundaries"],
            "blindness": alpha * ENLARGE_SHARES["blindness"] / 2}


def find_alpha(alpha: float, tested: int) -> float:
    """The alpha of the ``tested``-th candidate (from 1) an enlargement tests: ``alpha /
    (j (j + 1))``, which sums to at most ``alpha`` however many are tested (the first tests,
    made while finds are few, are the cheapest).

    >>> find_alpha(0.025, 1), sum(find_alpha(0.025, j) for j in range(1, 10**5)) <= 0.025
    (0.0125, True)
    """
    return alpha / (tested * (tested + 1))


#: ``check``: the changed-during-the-check test; drift over the inputs gets the rest.
CHECK_CHANGE_SHARE = 0.125


def check_alpha_split(alpha: float, inputs: int) -> tuple[float, float]:
    """``check``'s alpha: the changed-during-the-check test's share, and each input's drift
    test's (the rest, Bonferroni over the inputs).

    >>> check_alpha_split(0.05, 5)
    (0.00625, 0.00875)
    """
    change = alpha * CHECK_CHANGE_SHARE
    return change, (alpha - change) / max(1, inputs)

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
