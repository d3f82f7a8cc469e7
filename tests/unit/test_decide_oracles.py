"""Oracle tests: every closed-form interval and tail function of ``decide/`` against scipy.stats.

``decide/`` computes its intervals and tails through ``scipy.special`` (so reports need not
import ``scipy.stats``); each is checked here against the independent ``scipy.stats``
implementation, over counts Hypothesis chooses.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from agentverity_props.decide import (
    beta_cs_interval,
    binomial_quantile,
    binomial_tail,
    clopper_pearson,
    difference_interval,
    fisher_tail,
    sign_log_e,
    wilson,
)


@st.composite
def counts(draw: st.DrawFn, max_n: int = 300) -> tuple[int, int]:
    n = draw(st.integers(1, max_n))
    return draw(st.integers(0, n)), n


alphas = st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.2])
rates = st.floats(0.001, 0.999)


@settings(max_examples=200, deadline=None)
@given(counts(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_matches_scipy(kn: tuple[int, int], confidence: float) -> None:
    k, n = kn
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    assert wilson(k, n, confidence=confidence) == pytest.approx((ci.low, ci.high), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(counts(), alphas)
def test_clopper_pearson_matches_scipy(kn: tuple[int, int], alpha: float) -> None:
    k, n = kn
    two = stats.binomtest(k, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    assert clopper_pearson(k, n, alpha=alpha) == pytest.approx((two.low, two.high), abs=1e-9)
    # one-sided bounds: scipy's interval follows the test's alternative
    upper = stats.binomtest(k, n, alternative="less").proportion_ci(confidence_level=1 - alpha)
    lower = stats.binomtest(k, n, alternative="greater").proportion_ci(confidence_level=1 - alpha)
    assert clopper_pearson(k, n, alpha=alpha, side="upper") == pytest.approx(
        (0.0, upper.high), abs=1e-9)
    assert clopper_pearson(k, n, alpha=alpha, side="lower") == pytest.approx(
        (lower.low, 1.0), abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(counts(max_n=400), rates)
def test_binomial_tail_matches_scipy(kn: tuple[int, int], p: float) -> None:
    c, n = kn
    # relative agreement wherever a tail can meet an alpha; far below (1e-294 at c=105 of
    # n=123, p=0.001) scipy's bdtrc and binom.sf themselves differ by 1e-6 relative, and no
    # decision reads a tail there
    assert binomial_tail(c, n, p) == pytest.approx(float(stats.binom.sf(c - 1, n, p)),
                                                   rel=1e-7, abs=1e-15)
    assert binomial_tail(105, 123, 0.001) < 1e-290


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 400), st.floats(0.0, 1.0), st.floats(0.001, 0.999))
def test_binomial_quantile_matches_scipy(n: int, p: float, q: float) -> None:
    # (q = 1 is left out: scipy then returns n by convention, not the smallest such k)
    k = binomial_quantile(q, n, p)
    cdf = stats.binom.cdf
    assert cdf(k, n, p) >= q - 1e-9
    assert k == 0 or cdf(k - 1, n, p) < q + 1e-9
    if all(abs(cdf(j, n, p) - q) > 1e-9 for j in (k - 1, k)):  # no tie a rounding decides
        assert k == max(0, int(stats.binom.ppf(q, n, p)))


@settings(max_examples=200, deadline=None)
@given(counts(max_n=40), counts(max_n=40))
def test_fisher_tail_matches_scipy(then: tuple[int, int], now: tuple[int, int]) -> None:
    a, m = then
    x, k = now
    table = [[x, k - x], [a, m - a]]  # rows: now / then; columns: mismatch / match
    expected = stats.fisher_exact(table, alternative="greater").pvalue if x else 1.0
    assert fisher_tail(a, m, x, k) == pytest.approx(float(expected), rel=1e-9, abs=1e-12)
    # the same tail as a hypergeometric survival function
    if x:
        hyper = stats.hypergeom.sf(x - 1, m + k, a + x, k)
        assert fisher_tail(a, m, x, k) == pytest.approx(float(hyper), rel=1e-9, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 60), st.integers(0, 60))
def test_sign_e_value_is_the_uniform_mixture_integral(w: int, l: int) -> None:  # noqa: E741
    # E = integral over q in [0, 1] of the likelihood ratio q^w (1-q)^l / (1/2)^(w+l)
    def ratio(q: float) -> float:
        return float(math.exp(w * math.log(2 * q) + l * math.log(2 * (1 - q))))

    two, _ = integrate.quad(ratio, 1e-300, 1 - 1e-16, epsabs=0, epsrel=1e-10, limit=200)
    one, _ = integrate.quad(ratio, 0.5, 1 - 1e-16, epsabs=0, epsrel=1e-10, limit=200)
    assert sign_log_e(w, l) == pytest.approx(math.log(two), abs=1e-6)
    assert sign_log_e(w, l, one_sided=True) == pytest.approx(math.log(2 * one), abs=1e-6)


def _mixture_ratio(s: int, n: int, theta: float, a: float = 0.5, b: float = 0.5) -> float:
    """The beta-binomial mixture against the binomial at ``theta``, from scipy.stats."""
    return float(stats.betabinom.pmf(s, n, a, b) / stats.binom.pmf(s, n, theta))


@settings(max_examples=150, deadline=None)
@given(counts(max_n=200), alphas)
def test_beta_cs_interval_ends_where_the_mixture_reaches_one_over_alpha(
        kn: tuple[int, int], alpha: float) -> None:
    s, n = kn
    lo, hi = beta_cs_interval(s, n, alpha)
    assert 0.0 <= lo <= s / n <= hi <= 1.0
    for end, open_end in ((lo, 0.0), (hi, 1.0)):
        if end != open_end:  # an interior end: the mixture is exactly 1/alpha there
            # brentq stops within 1e-10 of the root in theta: near theta = 0 the log ratio
            # moves by s / theta per unit, so compare the logs to 1e-3 (0.1% of E)
            assert math.log(_mixture_ratio(s, n, end)) == pytest.approx(math.log(1 / alpha),
                                                                         abs=1e-3)
    # inside the set the mixture stays below 1/alpha (no rate there is rejected)
    mid = min(max(s / n, 1e-9), 1 - 1e-9)
    assert _mixture_ratio(s, n, mid) < 1 / alpha


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 200), st.data(), alphas)
def test_difference_interval_contains_every_corner_of_its_parts(n: int, data: st.DataObject,
                                                                alpha: float) -> None:
    discordant = data.draw(st.integers(0, n))
    wins = data.draw(st.integers(0, discordant))
    lo, hi = difference_interval(n, discordant, wins, alpha)
    estimate = (2 * wins - discordant) / n
    assert -1.0 <= lo <= estimate + 1e-12
    assert estimate - 1e-12 <= hi <= 1.0


def test_every_alpha_family_spends_at_most_alpha() -> None:
    from agentverity_props.decide import (
        CHECK_CHANGE_SHARE,
        COMPARE_METRICS,
        COMPARE_WEIGHTS,
        RUN_SHARES,
        compare_alpha_split,
    )

    assert sum(RUN_SHARES.values()) <= 1.0 + 1e-12
    assert 0.0 < CHECK_CHANGE_SHARE < 1.0
    assert sum(COMPARE_WEIGHTS.values()) <= 1.0 + 1e-12
    for pairs, tasks in ((1, 1), (3, 5), (6, 40)):
        s = compare_alpha_split(0.05, pairs, tasks)
        spent = pairs * (sum(s[m] for m in COMPARE_METRICS) + s["equivalence"]
                         + len(COMPARE_METRICS) * tasks * s["per_task"])
        assert spent <= 0.05 + 1e-12


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.just((0, 0)), st.tuples(st.integers(0, 400), st.integers(0, 400))),
                min_size=1, max_size=12),
       st.lists(st.sampled_from("ab"), max_size=80),
       st.sampled_from([0.3, 0.6, 0.75, 0.9, 0.95]))
def test_the_census_shortcut_never_changes_a_blindness_call(
        units: list[tuple[int, int]], keys: list[str], threshold: float) -> None:
    """``blindness_call`` skips the census when too few units are drawn for it to call;
    the call must be the one the census computed in full would give (units with hundreds
    of draws, so that the census does call both ways)."""
    per_input = [["a"] * na + ["b"] * nb for na, nb in units]
    from dataclasses import replace

    from agentverity_props.decide import blindness_call
    from agentverity_props.decide._blindness import (
        BLINDNESS_BOUND_SHARE,
        census_call,
        mixture_call,
    )
    alpha = 0.05
    a = mixture_call(keys, threshold, alpha * BLINDNESS_BOUND_SHARE)
    b = census_call(per_input, threshold, alpha * BLINDNESS_BOUND_SHARE)
    if "undecided" not in (a.status, b.status) and a.status != b.status:
        full = replace(a, status="undecided")
    elif a.status != "undecided" or b.status == "undecided":
        full = a
    else:
        full = b
    assert blindness_call(keys, threshold=threshold, alpha=alpha, per_input=per_input) == full
