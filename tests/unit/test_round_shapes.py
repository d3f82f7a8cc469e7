"""The shape of a pooled round (relations/_rounds.py): its score law is the law of the
procedure's own exact scores, and the shape it prices is the one a real run takes."""

from __future__ import annotations

import itertools
import random
import sys
from pathlib import Path

import pytest

from agentverity_props.relations import Relation
from agentverity_props.relations._pooled import exact_scores, prior_variance
from agentverity_props.relations._rounds import round_sizes, score_law, score_variance

CASE = Relation("case", "invariant", str.upper)


@pytest.mark.parametrize(("sources", "follow_ups"), [(2, 2), (5, 3), (8, 4)])
def test_the_score_law_is_the_law_of_the_exact_scores(sources: int, follow_ups: int) -> None:
    """Every outcome of the law is exact_scores of draws with its counts, with its binomial
    probability: summed over every sequence of draws, the law is recovered exactly."""
    flip = 0.2
    want: dict[tuple[float, float], float] = {}
    for s in itertools.product((0, 1), repeat=sources):
        for f in itertools.product((0, 1), repeat=follow_ups):
            k = sum(s) + sum(f)
            pr = flip ** k * (1 - flip) ** (sources + follow_ups - k)
            fwd, rev = exact_scores(CASE, ["block" if x else "allow" for x in s],
                                    ["block" if x else "allow" for x in f])
            assert rev is not None
            key = (round(fwd, 9), round(rev, 9))
            want[key] = want.get(key, 0.0) + pr
    got: dict[tuple[float, float], float] = {}
    for pr, fwd, rev in score_law(flip, sources, follow_ups):
        key = (round(fwd, 9), round(rev, 9))
        got[key] = got.get(key, 0.0) + pr
    assert got.keys() == want.keys()
    for key, pr in want.items():
        assert got[key] == pytest.approx(pr, abs=1e-12)


def test_the_score_variance_is_what_sampled_rounds_show() -> None:
    """Simulated rounds of a 15%-noise binary verdict (the relation holds) have the variance
    the model gives, side by side: it is the prior the pooled test's first bets use."""
    rng = random.Random(7)
    d = 2 * 0.15 * 0.85
    for sources, follow_ups in ((2, 2), (5, 3)):
        fwds, revs = [], []
        for _ in range(20000):
            s = ["block" if rng.random() < 0.15 else "allow" for _ in range(sources)]
            f = ["block" if rng.random() < 0.15 else "allow" for _ in range(follow_ups)]
            fwd, rev = exact_scores(CASE, s, f)
            assert rev is not None
            fwds.append(fwd)
            revs.append(rev)
        sim = max(sum(x * x for x in v) / len(v) - (sum(v) / len(v)) ** 2 for v in (fwds, revs))
        assert score_variance(d, sources, follow_ups) == pytest.approx(sim, rel=0.06)
        assert prior_variance(d, sources, follow_ups) >= score_variance(d, sources, follow_ups)


def test_the_shape_follows_the_price() -> None:
    """A quiet agent takes the cheapest round; more noise or a smaller tolerance never takes
    fewer draws; more relations sharing the sources never take fewer sources."""
    assert round_sizes(0.0, 8, tolerance=0.1) == (2, 2)
    assert round_sizes(None, 8, tolerance=0.1) == (2, 2)
    ds = [0.02, 0.05, 0.1, 0.18, 0.255, 0.35, 0.45]
    for rels in (1, 3, 7):
        for tol in (0.1, 0.2):
            sizes = [sum(round_sizes(d, rels, tolerance=tol)) for d in ds]
            assert sizes == sorted(sizes), (rels, tol, sizes)
        for d in ds:
            assert sum(round_sizes(d, rels, tolerance=0.1)) >= sum(
                round_sizes(d, rels, tolerance=0.2))
    for d in ds:
        src = [round_sizes(d, r, tolerance=0.1)[0] for r in (1, 3, 7, 12)]
        assert src == sorted(src), (d, src)


def test_a_run_takes_the_shape_it_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The epochs of a real `quick` run on a 15%-noise agent take the priced shape (the
    meter's noise first, then the noise its scored source draws show)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from relation_effects import noisy_clean, prompts

    import agentverity_props.relations._pooled as pooled
    from agentverity_props import from_callable, run
    from agentverity_props.runner import RunConfig

    asked: list[tuple[int, int, float | None]] = []
    real = pooled.round_sizes

    def spy(noise: float | None, relations: int, **kw: float) -> tuple[int, int]:
        out = real(noise, relations, **kw)
        asked.append((*out, noise))
        return out

    monkeypatch.setattr(pooled, "round_sizes", spy)
    ps = prompts(30, 3)
    res = run(from_callable(noisy_clean(ps, 3), identity="shapes"), ps, None,
              config=RunConfig(seed=3, max_workers=1, profile="quick"))
    assert all(str(r.status) in ("HOLDS", "NOT EXERCISED") for r in res.relations)
    noises = [n for _, _, n in asked if n is not None]
    assert noises
    assert all(0.15 < n < 0.4 for n in noises[-10:])
    # 15% noise (d = 0.255) at quick's tolerance: more than the quiet agent's two and two
    assert all(s + f >= 6 for s, f, _ in asked[-10:])
