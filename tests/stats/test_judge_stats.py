"""Judges, statistically (docs/judges.md): through a judge wrong on 15% of its calls a planted
paraphrase bug is found and a clean agent holds, the agent is called no more often than with
a noise-free judge (at most 1.1 times), the judge's error rate is estimated within 0.05, and
a judge biased by the order of two answers is found by the order relation."""

from __future__ import annotations

import threading

import pytest

from agentverity_props import run
from agentverity_props.engine import run_sync
from agentverity_props.examples.judged_qa import (
    CAPITALS,
    PARAPHRASE,
    make_judge,
    make_qa_agent,
    qa_inputs,
)
from agentverity_props.judge import (
    Judge,
    JudgedAgent,
    judge_probes,
    judge_relations,
    judge_under_test,
)
from agentverity_props.runner import RunConfig

pytestmark = pytest.mark.stats

LABELS = "correct,incorrect"
ERROR = 0.15
SEEDS = (0, 1, 2)


def _counted(fn):
    n = [0]
    lock = threading.Lock()

    def wrapped(prompt: str) -> str:
        with lock:
            n[0] += 1
        return fn(prompt)

    wrapped.__qualname__ = fn.__qualname__
    return wrapped, n


def _judged_run(seed: int, *, bug: bool, error: float):
    """One seeded run, one call at a time: with concurrent calls the count also depends on
    the order calls complete in (seed 1's bug through the noisy judge: 541 agent calls at
    four workers, 517 at one), and the comparison below is of the procedure, not of the
    scheduler. (A CI run beside two CPU-bound processes once counted 743 at four workers
    against 541 for the exact judge; not reproduced since, under three.)"""
    agent, calls = _counted(make_qa_agent(seed, paraphrase_bug=bug))
    res = run(agent, qa_inputs(30), [PARAPHRASE],
              config=RunConfig(seed=seed, judge=make_judge(100 + seed, error=error),
                               judge_labels=LABELS, max_workers=1))
    return res, calls[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_paraphrase_bug_is_found_through_a_noisy_judge_and_a_clean_agent_holds(
        seed: int) -> None:
    for bug, want in ((True, "VIOLATED"), (False, "HOLDS")):
        res, calls = _judged_run(seed, bug=bug, error=ERROR)
        assert res.relations[0].status == want, (seed, bug, res.relations[0].statement())
        exact, exact_calls = _judged_run(seed, bug=bug, error=0.0)
        assert exact.relations[0].status == want
        # the judge's noise costs judge calls, not agent calls
        assert calls <= 1.1 * exact_calls, (seed, bug, calls, exact_calls)
        noise = res.judge["noise"]
        assert abs(noise["error_rate"] - ERROR) <= 0.05, (seed, bug, noise)
        assert res.judge["dominant"] == "judge"


@pytest.mark.parametrize("error", [0.05, 0.15, 0.3])
def test_the_judges_error_rate_is_estimated_within_five_points(error: float) -> None:
    """Twenty runs of 120 distinct answers each (a QA agent answering each of 30 questions
    in its phrasings), judged until the consensus and re-judged until the interval is
    tight: every estimate within 0.05 of the true per-call error rate, and its interval
    covers it in at least 17 of 20."""
    misses = covered = 0
    for seed in range(20):
        ja = JudgedAgent(make_qa_agent(seed), Judge(make_judge(seed, error=error),
                                                    labels=LABELS))

        async def go(ja: JudgedAgent = ja, seed: int = seed) -> None:
            for q in qa_inputs(30):
                for _ in range(4):
                    await ja.ainvoke(q)
            await ja.measure_noise(seed=seed)

        try:
            run_sync(go())
            noise = ja.noise()
        finally:
            ja.close()
        misses += abs(noise.error_rate - error) > 0.05
        lo, hi = noise.error_interval
        covered += lo <= error <= hi
    assert misses == 0
    assert covered >= 17


def _pairs(n: int = 16) -> list[tuple[str, str, str]]:
    items = []
    for i, (country, city) in enumerate(list(CAPITALS.items())[:n]):
        pair = (city, "Atlantis") if i % 2 else ("Atlantis", city)
        items.append((f"What is the capital of {country}?", f"It is {pair[0]}.",
                      f"It is {pair[1]}."))
    return items


@pytest.mark.parametrize("seed", SEEDS)
def test_an_order_biased_judge_is_found_and_a_fair_noisy_one_is_not(seed: int) -> None:
    for bias, error, want in ((0.3, 0.0, "VIOLATED"), (0.0, 0.1, "HOLDS")):
        judge = Judge.pairwise(make_judge(seed, error=error, order_bias=bias))
        res = run(judge_under_test(judge), judge_probes(judge, _pairs()),
                  judge_relations("judge-order"), config=RunConfig(seed=seed))
        assert res.relations[0].status == want, (seed, bias, res.relations[0].statement())
