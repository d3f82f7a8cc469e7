"""Every input's own evidence: the per-input screen's stated error, checked by simulation.

The screen (relations/_screen.py) clears a (relation, input) pair only when a violation of
the stated size on it is ruled out: a follow-up whose draws violate against the source's
modal verdict on a share 0.5 above the source's own re-draws (or the reverse, a follow-up
made more decided) is *cleared* with probability at most ``beta``. Here one pair's screen
is driven draw by draw exactly as :func:`screen` drives it (a source draw and a follow-up
draw when it asks for them), on inputs with their own generators; each error claim is a
one-sided binomial test at the claim (p < 0.001), so a false claim fails the test. Through
``run``: a coin-flip bug on one input of a quiet gate is VIOLATED.
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.stats import binomtest

from agentverity_props import from_callable, run
from agentverity_props.relations import Relation
from agentverity_props.relations._screen import (
    REF_DRAWS,
    SCREEN_SIZE,
    PairScreen,
    flip_of,
    prior_term_variance,
)
from agentverity_props.runner import RunConfig

pytestmark = pytest.mark.stats

BETA = 0.05
CASE = Relation("case", "invariant", str.upper)


class _Pool:
    def __init__(self) -> None:
        self.draws: dict[str, list[str]] = defaultdict(list)

    def get(self, fp: str) -> SimpleNamespace:
        keys = list(self.draws[fp])
        return SimpleNamespace(keys=lambda layer: keys, draws=dict(enumerate(keys)))


def screen_one(source: dict[str, float], follow_up: dict[str, float],
               rng: np.random.Generator, *, agent_noise: float, anchors: int = 1) -> str:
    """One pair's screen: verdicts drawn from the two label mixes; ``agent_noise`` is the
    pair disagreement the run would read off the agent (it sizes bets and flags)."""
    labels_s, p_s = list(source), np.array(list(source.values()))
    labels_f, p_f = list(follow_up), np.array(list(follow_up.values()))
    pool = _Pool()

    def draw(fp: str) -> None:
        labels, p = (labels_s, p_s) if fp == "s" else (labels_f, p_f)
        pool.draws[fp].append(labels[int(rng.choice(len(labels), p=p))])

    for _ in range(anchors):
        draw("s")
    c = SimpleNamespace(relation=CASE, source=SimpleNamespace(fp="s"),
                        follow_up=SimpleNamespace(fp="f"))
    ps = PairScreen(c, True, n_s0=max(anchors, REF_DRAWS))
    for _ in range(400):
        want_s, want_f = ps.evaluate(pool, BETA, prior_term_variance(agent_noise),
                                     flip_of(agent_noise))
        if ps.state != "more":
            return ps.state
        if want_s:
            draw("s")
        if want_f:
            draw("f")
    return ps.state


def cleared_at_most_beta(cleared: int, n: int) -> bool:
    return binomtest(cleared, n, BETA, alternative="greater").pvalue > 0.001


@pytest.mark.parametrize("r", [0.0, 0.05, 0.15, 0.3])
def test_a_violation_of_the_stated_size_is_cleared_at_most_beta(r: float) -> None:
    """Forward: the follow-up's verdict off the source's modal one on ``r + 0.5`` of its
    draws, the source's on ``r``."""
    rng = np.random.default_rng(int(r * 100) + 1)
    n = 600
    src = {"a": 1.0 - r, "b": r}
    fu = {"a": 0.5 - r, "b": 0.5 + r}
    pd = 2 * r * (1 - r)
    cleared = sum(screen_one(src, fu, rng, agent_noise=pd) == "cleared" for _ in range(n))
    assert cleared_at_most_beta(cleared, n), (cleared, n)


def test_a_follow_up_made_more_decided_by_the_size_is_cleared_at_most_beta() -> None:
    """Reverse, three verdicts: the follow-up always ``a``, the source on ``a`` 40% of the
    time (its modal verdict, 30/30 on the others): the follow-up's modal verdict gains 0.6,
    the source's modal verdict loses nothing."""
    rng = np.random.default_rng(7)
    n = 600
    src = {"a": 0.4, "b": 0.3, "c": 0.3}
    cleared = sum(screen_one(src, {"a": 1.0}, rng, agent_noise=0.66) == "cleared"
                  for _ in range(n))
    assert cleared_at_most_beta(cleared, n), (cleared, n)


def test_a_minority_verdict_the_transform_removes_is_flagged() -> None:
    """A 65/35 input of a quiet agent whose follow-up is always the modal verdict (an
    effect of 0.35, below the size): at least seven source draws show the minority verdict
    with probability 1 - 0.65^7 = 95%, and on a quiet agent one is a flag."""
    rng = np.random.default_rng(11)
    n = 600
    flagged = sum(screen_one({"a": 0.65, "b": 0.35}, {"a": 1.0}, rng, agent_noise=0.003)
                  == "flagged" for _ in range(n))
    assert binomtest(flagged, n, 0.9, alternative="less").pvalue > 0.001, flagged


@pytest.mark.parametrize("r", [0.0, 0.05, 0.15])
def test_a_clean_pair_is_cleared_and_rarely_flagged(r: float) -> None:
    """A flag costs the calls of a local test, never alpha; the docs state the cost: on a
    clean pair at 15% noise at most 15% of pairs are flagged and most are cleared."""
    rng = np.random.default_rng(int(r * 100) + 21)
    n = 400
    mix = {"a": 1.0 - r, "b": r} if r else {"a": 1.0}
    got = [screen_one(mix, mix, rng, agent_noise=2 * r * (1 - r)) for _ in range(n)]
    assert got.count("flagged") / n <= 0.15, got.count("flagged")
    assert got.count("cleared") / n >= (1.0 if r == 0 else 0.75), got.count("cleared")


def _one_bug(seed: int):
    rng = np.random.default_rng(seed)

    def agent(prompt: str) -> str:
        i = int(prompt.rsplit(maxsplit=1)[-1].lower())
        if i == 0 and prompt.isupper():
            return "allow" if rng.random() < 0.5 else "block"
        return "allow"

    return agent


def test_run_finds_a_coin_flip_bug_on_one_input_of_a_quiet_gate() -> None:
    """On a quiet gate the meter certifies a deterministic verdict, so ``standard`` takes the
    deterministic path (one follow-up draw a pair): a follow-up that flips half the time is
    found with about its flip share, as its statement says. ``thorough`` keeps the size-0.5
    guarantee on such an agent (no deterministic path): found with probability >= 0.95."""
    found = {"standard": 0, "thorough": 0}
    n = 20
    for seed in range(n):
        inputs = [f"question number {i}" for i in range(30)]
        for prof in found:
            res = run(from_callable(_one_bug(seed), identity=f"one-bug-{seed}-{prof}"),
                      inputs, [CASE], config=RunConfig(seed=seed, max_workers=2, profile=prof))
            rel = res.relations[0]
            found[prof] += str(rel.status) == "VIOLATED"
            if prof == "standard" and str(rel.status) == "HOLDS":
                assert "deterministic path" in rel.statement()
                assert "flips only part of the time, with about its flip share" in \
                    rel.statement()
    # thorough's claim: found with probability >= 0.95 (1 - beta); fails when the 20 runs
    # make that implausible (P(found <= 16 | 0.95) = 0.016)
    assert found["thorough"] >= 17, found
    # standard's: about the flip share (0.5) plus the audit's re-draws; fails when 20 runs
    # make a rate of 0.5 implausible (P(found <= 4 | 0.5) = 0.006)
    assert found["standard"] >= 5, found


def test_the_size_is_what_the_docs_state() -> None:
    assert SCREEN_SIZE == 0.5
