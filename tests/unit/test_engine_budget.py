"""The budget is a hard cap: never exceeded, whatever the concurrency, retries and failures."""

from __future__ import annotations

import asyncio
import random
import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from agentverity_props.adapters import from_callable
from agentverity_props.engine import Engine, EngineConfig, Probe
from agentverity_props.errors import AgentCallError, BudgetExhausted
from agentverity_props.observation import Observation


async def _yield(delay: float) -> None:
    await asyncio.sleep(0)  # keep interleavings, skip the wall-clock wait


@settings(max_examples=30, deadline=None)
@given(
    max_workers=st.integers(1, 6),
    budget=st.integers(0, 40),
    retries=st.integers(0, 3),
    seed=st.integers(0, 2**32 - 1),
    failure_rate=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
    n_probes=st.integers(1, 6),
    n_draws=st.integers(1, 5),
    is_async=st.booleans(),
)
def test_budget_is_never_exceeded(max_workers, budget, retries, seed, failure_rate, n_probes,
                                  n_draws, is_async):
    rng = random.Random(seed)  # the agent's own generator: Hypothesis reseeds global random
    lock = threading.Lock()
    invoked = [0]

    def attempt(prompt: str) -> str:
        with lock:
            invoked[0] += 1
            fail = rng.random() < failure_rate
        if fail:
            raise AgentCallError("429", kind="rate_limit", retryable=True)
        return "ok"

    if is_async:
        async def agent(prompt: str) -> str:
            await asyncio.sleep(0)
            return attempt(prompt)
    else:
        agent = attempt  # type: ignore[assignment]

    # the budget alone: fail-fast (a stop after persistent failures) is tested on its own
    cfg = EngineConfig(max_workers=max_workers, budget=budget, retries=retries,
                       backoff_base_s=0.0001, backoff_max_s=0.001, seed=seed, fail_fast=None)
    probes = [Probe.make(f"q{i}", salt=b"") for i in range(n_probes)]

    async def main(eng: Engine) -> list[object]:
        jobs = [(p, i) for p in probes for i in eng.allocate(p, n_draws)]
        return await asyncio.gather(*(eng.draw(p, i) for p, i in jobs),
                                    return_exceptions=True)

    with Engine(from_callable(agent, identity="flaky"), cfg, sleep=_yield) as eng:
        results = asyncio.run(main(eng))

    assert invoked[0] <= budget
    assert eng.ledger.calls == invoked[0]
    assert eng.remaining == budget - invoked[0]
    unexpected = [r for r in results
                  if not isinstance(r, (Observation, BudgetExhausted))]
    assert unexpected == []
    if any(isinstance(r, BudgetExhausted) for r in results):
        assert invoked[0] == budget  # refusing a call is only allowed once the budget is spent
    observations = [r for r in results if isinstance(r, Observation)]
    # every unit spent is the first attempt or a retry of a draw that returned
    assert invoked[0] == len(observations) + eng.ledger.retries
    failed = [o for o in observations if o.error is not None]
    assert eng.ledger.failures == len(failed)
    assert all(o.error.attempts <= retries + 1 for o in failed)
    if failure_rate == 0.0:
        assert failed == []
        assert eng.ledger.retries == 0


def test_the_ledger_is_the_one_owner_of_the_budget() -> None:
    """Reserving a unit and counting the call are one step: racing threads take exactly
    ``budget`` units, the count never exceeds it, and a refused reservation counts nothing."""
    from agentverity_props.engine._ledger import Ledger

    led = Ledger(budget=50)
    taken: list[bool] = []
    lock = threading.Lock()

    def worker(retry: bool) -> None:
        for _ in range(20):
            ok = led.reserve(retry=retry)
            with lock:
                taken.append(ok)

    threads = [threading.Thread(target=worker, args=(i % 2 == 1,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(taken) == 50 == led.calls
    assert led.budget_remaining == 0
    assert not led.can_afford(1)
    assert led.retries <= led.calls
    assert led.to_dict()["budget_remaining"] == 0
    free = Ledger()  # no budget: every reservation succeeds and is counted
    assert all(free.reserve() for _ in range(5))
    assert (free.calls, free.budget_remaining, free.can_afford(10**9)) == (5, None, True)
