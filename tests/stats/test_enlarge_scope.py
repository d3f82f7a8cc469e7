"""Issue 44: enlarge claims only what it verified (tests/support/scope_agents.py).

Measured at the defaults (budget 600, one call at a time), seeds 0-2: intake 9, 5, 9 added
inputs, all truly ``urgent``, with 3, 2, 3 true boundary pairs, each run done (decided not
blind) in 394, 217, 562 calls; refund 9, 5, 9, all truly ``reject``, boundaries to adjacent
dollar values in 26-42 calls; the noisy all-``billing`` router: nothing added, never done.
"""

from __future__ import annotations

import random

import pytest

from agentverity_props import from_callable
from agentverity_props.search import enlarge
from agentverity_props.search._verify import Verifier
from agentverity_props.strategies._grammar import shared_word_share
from tests.support.scope_agents import SCOPE_DOMAINS

pytestmark = pytest.mark.stats


def _run(domain: str, seed: int):
    d = SCOPE_DOMAINS[domain]
    probes = d.probes(seed)
    return d, probes, enlarge(from_callable(d.agent(seed)), probes, seed=seed, max_workers=1)


def test_negation_scope_finds_in_domain_minority_inputs_and_a_true_boundary() -> None:
    met, false = 0, 0
    for seed in range(3):
        d, probes, r = _run("intake", seed)
        truly = [a for a in r.added if d.truth(a) != r.modal_verdict]
        false += len(r.added) - len(truly)
        inside = [a for a in truly if max(shared_word_share(a, p) for p in probes) >= 0.5]
        pairs = [b for b in r.boundaries if b["status"] == "located"
                 and d.truth(b["low"]) != d.truth(b["high"])]
        met += len(inside) >= 3 and bool(pairs)
    assert met >= 2, met
    assert false == 0, false


def test_two_numbers_stay_found_and_the_boundary_within_one_percent() -> None:
    for seed in range(3):
        d, _, r = _run("refund", seed)
        assert len(r.added) >= 3
        assert all(d.truth(a) == "reject" for a in r.added)
        located = [b for b in r.boundaries if b["status"] == "located"]
        assert located
        assert all(b["calls"] <= 60 for b in located)
        for b in located:
            lo, hi = (float(b["edit"][k].strip("$").replace(",", ""))
                      for k in ("before", "after"))
            assert abs(hi - lo) <= max(1.0, 0.01 * max(lo, hi)), b["edit"]


def test_a_noisy_one_verdict_set_is_never_reported_done() -> None:
    for seed in range(2):
        _, _, r = _run("billing", seed)
        assert not r.added
        assert not r.success
        assert r.status != "ok"
        assert r.to_dict()["blindness_before"]["status"] == "undecided"


def test_candidates_that_are_truly_majority_are_added_within_the_stated_error() -> None:
    """The worst case: every tested candidate draws its minority verdict half the time.
    Over a whole search (the budget's worth of candidates), the chance that any is confirmed
    is at most the finds' alpha share (0.025)."""
    rng = random.Random(3)
    runs, any_false, alpha = 200, 0, 0.025  # the finds' share of alpha = 0.05

    def draw(texts: list[str]) -> list[str | None]:
        return ["v" if rng.random() < 0.5 else "m" for _ in texts]

    for _ in range(runs):
        ver = Verifier(draw, alpha=alpha, width=4, can_afford=lambda n: True)
        got = ver.confirm([(f"c{i}", "v") for i in range(200)])
        any_false += bool(got)
    # at most 0.025 * 200 = 5 expected (measured: 4); above 11 has chance < 1% at the bound
    assert any_false <= 11, any_false
