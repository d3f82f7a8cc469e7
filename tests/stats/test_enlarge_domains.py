"""enlarge at its defaults in domains no strategy pack covers (tests/support/domain_agents.py):
minority inputs that stay in the user's domain and a located boundary, at 5% noise, within the
default budget — and far fewer calls to the first find than random recombination."""

from __future__ import annotations

import statistics

import pytest

from agentverity_props import from_callable
from agentverity_props.search import enlarge
from agentverity_props.search._enlarge import DEFAULT_BUDGET
from agentverity_props.strategies._grammar import shared_word_share
from tests.support.domain_agents import DOMAINS

pytestmark = pytest.mark.stats

SEEDS = 10


def _run(domain: str, seed: int, search: str = "guided"):
    d = DOMAINS[domain]
    probes = d.probes(seed)
    r = enlarge(from_callable(d.agent(seed, noise=0.05)), probes, seed=seed, max_workers=1,
                search=search)
    minority = [a for a in r.added if r.verdicts[a] != r.modal_verdict
                and max(shared_word_share(a, p) for p in probes) >= 0.5]
    return r, minority


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_enlarge_finds_in_domain_minority_inputs_and_a_boundary(domain: str) -> None:
    met = 0
    for seed in range(SEEDS):
        r, minority = _run(domain, seed)
        assert r.calls <= DEFAULT_BUDGET
        assert all(r.origins[a]["parent"] in r.original for a in r.added)
        met += len(minority) >= 3 and len(r.boundary_pairs) >= 1
    # the goal is 90% of seeds; with 10 seeds, 8 or fewer would be evidence against it
    assert met >= 9, f"{domain}: goal met in {met}/{SEEDS} seeds"


def test_the_default_search_beats_random_recombination_to_the_first_find() -> None:
    ratios = []
    for domain in DOMAINS:
        guided = [_run(domain, s)[0].calls_to_first_minority or 400 for s in range(6)]
        baseline = [_run(domain, s, "recombine")[0].calls_to_first_minority or 400
                    for s in range(6)]
        # both pay the 20 baseline calls; compare the search calls
        ratios.append((statistics.median(guided) - 20) / (statistics.median(baseline) - 20))
    assert statistics.mean(ratios) <= 1 / 3, ratios
