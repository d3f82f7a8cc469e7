"""The call engine: concurrency, retries, timeouts, error policies, budget, interrupts."""

from __future__ import annotations

import asyncio
import gc
import os
import random
import signal
import threading
from collections import Counter
from dataclasses import FrozenInstanceError

import pytest

from agentverity_props._internal.fingerprint import fingerprint
from agentverity_props.engine import Engine, EngineConfig, Ledger, Probe, run_sync
from agentverity_props.engine._retry import Backoff
from agentverity_props.errors import (
    AgentCallError,
    BudgetExhausted,
    Interrupted,
    InvalidArgument,
)
from agentverity_props.observation import Observation, Usage, by_key
from agentverity_props.store import Store, StoreMode


def probes(n: int, prefix: str = "p") -> list[Probe]:
    return [Probe.make(f"{prefix}{i}", salt=b"") for i in range(n)]


class Sleeps:
    """An injectable sleep that records the delays the engine asks for."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        await asyncio.sleep(0)


# ---------------------------------------------------------------- config and probes


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"max_workers": 0}, "max_workers"),
        ({"max_workers": True}, "max_workers"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": float("nan")}, "timeout_s"),
        ({"retries": -1}, "retries"),
        ({"backoff_base_s": -1.0}, "backoff_base_s"),
        ({"backoff_base_s": 2.0, "backoff_max_s": 1.0}, "backoff_max_s"),
        ({"budget": -1}, "budget"),
        ({"budget": 2.5}, "budget"),
        ({"error_policy": "ignore"}, "error_policy"),
        ({"store_mode": "replay"}, "store_path"),
        ({"store_mode": "sometimes", "store_path": "x.db"}, "store_mode"),
        ({"store_path": "x.db"}, "store_mode is 'off'"),
        ({"extractor": lambda obs: "x"}, "VerdictExtractor"),
    ],
)
def test_config_rejects_impossible_arguments_eagerly(kwargs, needle):
    with pytest.raises(InvalidArgument, match=needle):
        EngineConfig(**kwargs)


def test_config_accepts_store_mode_enum_and_normalises_it(tmp_path):
    cfg = EngineConfig(store_mode=StoreMode.AUTO, store_path=tmp_path / "s.db")
    assert cfg.store_mode == "auto"
    assert type(cfg.store_mode) is str
    with pytest.raises(FrozenInstanceError):
        cfg.max_workers = 3  # type: ignore[misc]


def test_engine_rejects_non_config_and_non_agent():
    with pytest.raises(InvalidArgument, match="EngineConfig"):
        Engine(lambda p: p, {"max_workers": 2})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="from_callable"):
        Engine(42)


def test_probe_fingerprint_salt_and_private_repr(monkeypatch):
    monkeypatch.delenv("AGENTVERITY_PROPS_SALT", raising=False)
    p = Probe.make("secret prompt")
    assert p.fp == fingerprint("secret prompt")
    assert "secret" not in repr(p)
    monkeypatch.setenv("AGENTVERITY_PROPS_SALT", "pepper")
    salted = Probe.make("secret prompt")
    assert salted.fp == fingerprint("secret prompt", b"pepper") != p.fp
    assert Probe.make("secret prompt", salt=b"").fp == p.fp
    with pytest.raises(InvalidArgument, match="str"):
        Probe.make(b"bytes")  # type: ignore[arg-type]


def test_allocate_is_a_per_probe_counter_shared_with_draw():
    a, b = probes(2)
    with Engine(lambda p: "x") as eng:
        assert eng.allocate(a, 3) == [0, 1, 2]
        assert eng.allocate(b) == [0]
        assert eng.allocate(a, 0) == []
        run_sync(eng.draw(a))  # takes index 3
        assert eng.allocate(a, 2) == [4, 5]
        with pytest.raises(InvalidArgument):
            eng.allocate(a, -1)
        run_sync(eng.draw(b, 7))  # an explicit index is never handed out as fresh later
        assert eng.allocate(b) == [8]
        with pytest.raises(InvalidArgument, match="allocate"):
            run_sync(eng.draw(b, -1))
        with pytest.raises(InvalidArgument, match=r"Probe\.make"):
            run_sync(eng.draw("a prompt"))  # type: ignore[arg-type]


def test_draw_applies_the_extractor_and_sets_latency():
    cfg = EngineConfig(extractor=by_key("decision", labels={"allow", "block"}))
    with Engine(lambda p: {"decision": "block", "text": p}, cfg) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.verdict == "block"
    assert obs.latency_s > 0
    with Engine(lambda p: {"decision": "maybe"}, cfg) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.ok
    assert not obs.decided
    assert obs.no_decision is not None


# ---------------------------------------------------------------- concurrency


def test_sync_agent_reaches_but_never_exceeds_max_workers():
    mw = 3
    # all `mw` calls must be in flight at once for the barrier to open: reaching the bound
    # is proven without timing anything, and a BrokenBarrierError would fail the draw
    barrier = threading.Barrier(mw, timeout=20)
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def agent(prompt: str) -> str:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        try:
            barrier.wait()
        finally:
            with lock:
                state["now"] -= 1
        return "ok"

    async def main(eng: Engine) -> list[Observation]:
        return await asyncio.gather(*(eng.draw(p) for p in probes(4 * mw)))

    with Engine(agent, EngineConfig(max_workers=mw, timeout_s=None, retries=0)) as eng:
        results = run_sync(main(eng))
    assert all(o.ok for o in results), [o.error for o in results if o.error]
    assert state["peak"] == mw


def test_async_agent_reaches_but_never_exceeds_max_workers():
    mw = 4
    state = {"now": 0, "peak": 0}

    async def agent(prompt: str) -> str:
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        await asyncio.sleep(0.001)
        state["now"] -= 1
        return "ok"

    async def main() -> list[Observation]:
        async with Engine(agent, EngineConfig(max_workers=mw)) as eng:
            return await asyncio.gather(*(eng.draw(p) for p in probes(5 * mw)))

    results = asyncio.run(main())
    assert len(results) == 5 * mw
    assert all(o.ok for o in results)
    assert state["peak"] == mw


@pytest.mark.parametrize("is_async", [False, True])
def test_repeats_of_one_probe_are_never_concurrent(is_async):
    lock = threading.Lock()
    per_prompt: Counter[str] = Counter()
    overlaps: list[str] = []
    order: dict[str, list[int]] = {}

    def enter(prompt: str) -> None:
        with lock:
            per_prompt[prompt] += 1
            if per_prompt[prompt] > 1:
                overlaps.append(prompt)

    def leave(prompt: str) -> None:
        with lock:
            per_prompt[prompt] -= 1

    if is_async:
        async def agent(prompt: str) -> str:
            enter(prompt)
            await asyncio.sleep(0.002)
            leave(prompt)
            return "ok"
    else:
        ev = threading.Event()

        def agent(prompt: str) -> str:  # type: ignore[misc]
            enter(prompt)
            ev.wait(0.002)
            leave(prompt)
            return "ok"

    ps = probes(3)

    async def main(eng: Engine) -> None:
        jobs = [(p, i) for p in ps for i in eng.allocate(p, 6)]
        outs = await asyncio.gather(*(eng.draw(p, i) for p, i in jobs))
        for (p, i), o in zip(jobs, outs, strict=True):
            assert o.ok
            order.setdefault(p.fp, []).append(i)

    with Engine(agent, EngineConfig(max_workers=8)) as eng:
        run_sync(main(eng))
    assert overlaps == []
    assert all(v == list(range(6)) for v in order.values())


def test_engine_survives_several_event_loops():
    eng = Engine(lambda p: p.upper(), EngineConfig(max_workers=2))
    outs = [asyncio.run(eng.draw(Probe.make("a"))) for _ in range(4)]
    eng.close()
    assert [o.verdict for o in outs] == ["A"] * 4
    assert eng.ledger.calls == 4
    gc.collect()
    assert len(eng._states) <= 1  # closed loops are not kept alive (only the last one is)


def test_run_sync_works_inside_a_running_loop():
    async def outer() -> str | None:
        with Engine(lambda p: "inner") as eng:
            return run_sync(eng.draw(Probe.make("x"))).verdict

    assert asyncio.run(outer()) == "inner"


# ---------------------------------------------------------------- retries and backoff


def test_retryable_failure_then_success_is_one_retry():
    rng = random.Random(7)
    calls = []

    def agent(prompt: str) -> str:
        calls.append(prompt)
        if len(calls) == 1:
            raise AgentCallError("429 slow down", kind="rate_limit", retryable=True)
        return f"ok {rng.randint(0, 9)}"

    sleeps = Sleeps()
    with Engine(agent, EngineConfig(retries=3, backoff_base_s=0.2), sleep=sleeps) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.ok
    assert obs.verdict.startswith("ok")
    assert len(calls) == 2
    assert eng.ledger.calls == 2
    assert eng.ledger.retries == 1
    assert eng.ledger.failures == 0
    assert len(sleeps.delays) == 1
    assert 0 <= sleeps.delays[0] <= 0.2


def test_non_retryable_failure_is_not_retried():
    calls = []

    def agent(prompt: str) -> str:
        calls.append(prompt)
        raise ValueError("bad prompt")

    sleeps = Sleeps()
    with Engine(agent, EngineConfig(retries=5), sleep=sleeps) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert len(calls) == 1
    assert sleeps.delays == []
    assert obs.error is not None
    assert obs.error.kind == "error"
    assert not obs.error.retryable
    assert obs.error.attempts == 1
    assert obs.error.message == "ValueError: bad prompt"
    assert eng.ledger.failure_kinds == {"error": 1}
    assert eng.ledger.failure_samples["error"] == ["ValueError: bad prompt"]


def test_retry_after_is_a_floor_on_the_wait():
    attempts = []

    def agent(prompt: str) -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise AgentCallError("busy", kind="rate_limit", retryable=True, retry_after_s=2.5)
        return "ok"

    sleeps = Sleeps()
    with Engine(agent, EngineConfig(retries=2, backoff_base_s=0.1, backoff_max_s=1.0),
                sleep=sleeps) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.ok
    assert sleeps.delays == [2.5, 2.5]


def test_backoff_jitter_stays_within_bounds_and_is_seeded():
    def agent(prompt: str) -> str:
        raise AgentCallError("503", kind="http_5xx", retryable=True)

    def run(seed: int) -> list[float]:
        sleeps = Sleeps()
        cfg = EngineConfig(retries=6, backoff_base_s=0.1, backoff_max_s=0.5, seed=seed)
        with Engine(agent, cfg, sleep=sleeps) as eng:
            obs = run_sync(eng.draw(Probe.make("x")))
        assert obs.error is not None
        assert obs.error.attempts == 7
        assert obs.error.kind == "http_5xx"
        assert obs.error.retryable
        return sleeps.delays

    delays = run(1)
    caps = [min(0.5, 0.1 * 2**i) for i in range(6)]
    assert len(delays) == 6
    assert all(0 <= d <= cap for d, cap in zip(delays, caps, strict=True))
    assert run(1) == delays
    assert run(2) != delays
    backoff = Backoff(0.1, 0.5, seed=3)
    samples = [backoff.delay(4) for _ in range(2000)]
    assert 0 <= min(samples) < 0.05
    assert 0.45 < max(samples) <= 0.5


# ---------------------------------------------------------------- error policies and timeouts


def test_error_policy_record_returns_the_failure_raise_raises_it():
    def agent(prompt: str) -> str:
        raise AgentCallError("model refused", kind="refusal")

    with Engine(agent, EngineConfig(error_policy="record")) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.error is not None
    assert obs.error.kind == "refusal"
    assert obs.key() is None
    assert not obs.decided
    with Engine(agent, EngineConfig(error_policy="raise")) as eng:
        with pytest.raises(AgentCallError, match="model refused") as info:
            run_sync(eng.draw(Probe.make("x")))
        assert info.value.kind == "refusal"
        assert eng.ledger.failures == 1
        assert eng.ledger.failure_kinds == {"refusal": 1}


def test_error_policy_raise_wraps_other_exceptions_and_cuts_long_messages():
    def agent(prompt: str) -> str:
        raise KeyError("k" * 2000)

    with Engine(agent, EngineConfig(error_policy="raise")) as eng, \
            pytest.raises(AgentCallError) as info:
        run_sync(eng.draw(Probe.make("x")))
    assert info.value.kind == "error"
    assert not info.value.retryable
    assert str(info.value).startswith("KeyError: ")
    assert len(str(info.value)) == 500
    assert isinstance(info.value.__cause__, KeyError)


def test_bad_output_is_a_failure_not_a_verdict():
    with Engine(lambda p: 42) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.error is not None
    assert obs.error.kind == "bad_output"


def test_async_timeout_is_a_retryable_timeout_failure():
    async def agent(prompt: str) -> str:
        await asyncio.sleep(30)
        return "never"

    sleeps = Sleeps()
    cfg = EngineConfig(timeout_s=0.02, retries=1)
    with Engine(agent, cfg, sleep=sleeps) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.error is not None
    assert obs.error.kind == "timeout"
    assert obs.error.retryable
    assert obs.error.attempts == 2
    assert "0.02 s" in obs.error.message
    assert eng.ledger.timeouts == 2
    assert eng.ledger.calls == 2
    assert eng.ledger.retries == 1


def test_concurrent_and_later_attempts_each_get_their_own_deadline():
    async def agent(prompt: str) -> str:
        await asyncio.sleep(0 if prompt.startswith("fast") else 30)
        return prompt

    async def main(eng: Engine) -> tuple[list[Observation], Observation, Observation]:
        mixed = [Probe.make(f"{kind}{i}") for i in range(4) for kind in ("fast", "slow")]
        together = await asyncio.gather(*(eng.draw(p) for p in mixed))
        before = await eng.draw(Probe.make("fast-alone"))
        await asyncio.sleep(0.1)  # the single timer was armed for an attempt long finished
        late = await eng.draw(Probe.make("slow-alone"))
        return together, before, late

    # generous timeout: a loaded machine must not time out the fast calls
    with Engine(agent, EngineConfig(max_workers=8, timeout_s=0.4, retries=0)) as eng:
        together, before, late = run_sync(main(eng))
    kinds = [(o.verdict or "")[:4] if o.ok else o.error.kind for o in together]  # type: ignore[union-attr]
    assert kinds == ["fast", "timeout"] * 4
    assert before.verdict == "fast-alone"
    assert late.error is not None
    assert late.error.kind == "timeout"
    assert eng.ledger.timeouts == 5


def test_outer_cancellation_is_not_mistaken_for_a_timeout():
    async def main() -> None:
        gate = asyncio.Event()

        async def agent(prompt: str) -> str:
            gate.set()
            await asyncio.sleep(30)
            return "never"

        async with Engine(agent, EngineConfig(timeout_s=10)) as eng:
            task = asyncio.create_task(eng.draw(Probe.make("x")))
            await gate.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert eng.ledger.timeouts == 0

    asyncio.run(main())


def test_sync_timeout_keeps_the_worker_slot_until_the_agent_returns():
    release = threading.Event()
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}
    started: list[str] = []

    def agent(prompt: str) -> str:
        with lock:
            started.append(prompt)
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        try:
            if prompt == "slow":
                release.wait(20)
            return "done"
        finally:
            with lock:
                state["now"] -= 1

    async def main(eng: Engine) -> tuple[Observation, Observation]:
        slow = await eng.draw(Probe.make("slow"))
        fast = asyncio.create_task(eng.draw(Probe.make("fast")))
        await asyncio.sleep(0.05)  # a broken engine would start "fast" in this window
        assert started == ["slow"]
        release.set()
        return slow, await fast

    # generous timeout: on a loaded machine the "fast" call must still make it
    with Engine(agent, EngineConfig(max_workers=1, timeout_s=0.3, retries=0)) as eng:
        slow, fast = run_sync(main(eng))
    assert slow.error is not None
    assert slow.error.kind == "timeout"
    assert "worker thread" in slow.error.message
    assert fast.ok
    assert state["peak"] == 1


# ---------------------------------------------------------------- budget


def test_budget_is_a_hard_cap_and_exhaustion_raises():
    with Engine(lambda p: "ok", EngineConfig(budget=3)) as eng:
        assert eng.remaining == 3
        assert eng.can_afford(3)
        assert not eng.can_afford(4)
        run_sync(eng.draws(Probe.make("x"), 3))
        assert eng.remaining == 0
        assert not eng.can_afford(1)
        assert eng.can_afford(0)
        with pytest.raises(BudgetExhausted, match="budget of 3"):
            run_sync(eng.draw(Probe.make("x")))
    assert eng.ledger.calls == 3
    assert eng.ledger.to_dict()["budget_remaining"] == 0
    with Engine(lambda p: "ok") as eng:
        assert eng.remaining is None
        assert eng.can_afford(10**9)


def test_retries_stop_when_the_budget_is_spent():
    def agent(prompt: str) -> str:
        raise AgentCallError("busy", retryable=True)

    with Engine(agent, EngineConfig(budget=2, retries=5), sleep=Sleeps()) as eng:
        obs = run_sync(eng.draw(Probe.make("x")))
    assert obs.error is not None
    assert obs.error.attempts == 2
    assert "budget" in obs.error.message
    assert eng.ledger.calls == 2


# ---------------------------------------------------------------- interrupts


def test_request_stop_refuses_new_draws_and_keeps_finished_ones(tmp_path):
    async def main() -> tuple[list[object], Engine]:
        gate = asyncio.Event()
        entered = []

        async def agent(prompt: str) -> str:
            entered.append(prompt)
            await gate.wait()
            return "done"

        cfg = EngineConfig(max_workers=2, store_mode="record", store_path=tmp_path / "s.db")
        eng = Engine(agent, cfg)
        tasks = [asyncio.create_task(eng.draw(p)) for p in probes(4)]
        while len(entered) < 2:
            await asyncio.sleep(0.001)
        eng.request_stop()
        gate.set()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        with pytest.raises(Interrupted, match="interrupted"):
            await eng.draw(Probe.make("new"))
        await eng.aclose()
        return results, eng

    results, eng = asyncio.run(main())
    finished = [r for r in results if isinstance(r, Observation)]
    assert len(finished) == 2
    assert all(o.verdict == "done" for o in finished)
    assert sum(isinstance(r, Interrupted) for r in results) == 2
    assert eng.stopping
    assert eng.ledger.interrupted
    assert eng.ledger.to_dict()["interrupted"]
    with Store(tmp_path / "s.db") as store:
        assert store.count() == 2


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers need the main thread")
def test_signal_handlers_request_a_stop_and_are_restored():
    before = signal.getsignal(signal.SIGTERM)
    with Engine(lambda p: "ok") as eng:
        with eng.install_signal_handlers():
            assert signal.getsignal(signal.SIGTERM) is not before
            os.kill(os.getpid(), signal.SIGTERM)
            assert eng.stopping
            with pytest.raises(Interrupted):
                run_sync(eng.draw(Probe.make("x")))
        assert signal.getsignal(signal.SIGTERM) is before


def test_signal_handlers_are_a_no_op_outside_the_main_thread():
    out: list[bool] = []
    with Engine(lambda p: "ok") as eng:
        def worker() -> None:
            with eng.install_signal_handlers() as e:
                out.append(e is eng)

        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert out == [True]


# ---------------------------------------------------------------- ledger


def test_ledger_sums_usage_and_reports_percentiles():
    rng = random.Random(5)

    def agent(prompt: str) -> Observation:
        return Observation(text="ok", latency_s=rng.choice([0.1, 0.2, 0.3]),
                           usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.001))

    with Engine(agent, EngineConfig(budget=50)) as eng:
        run_sync(eng.draws(Probe.make("x"), 20))
    led = eng.ledger
    data = led.to_dict()
    assert data["calls"] == 20
    assert data["budget_remaining"] == 30
    assert (data["input_tokens"], data["output_tokens"], data["total_tokens"]) == (200, 100, 300)
    assert data["cost_usd"] == pytest.approx(0.02)
    assert 0.1 <= data["latency_p50_s"] <= data["latency_p95_s"] <= 0.3
    assert led.percentile(0) == min(led.latencies)
    assert led.percentile(100) == max(led.latencies)
    assert set(data) >= {"calls", "replayed", "retries", "failures", "failure_kinds",
                         "latency_p50_s", "latency_p95_s", "cost_usd", "budget",
                         "budget_remaining", "interrupted", "timeouts"}
    empty = Ledger()
    assert empty.percentile(50) is None
    assert empty.to_dict()["total_tokens"] is None
    with pytest.raises(InvalidArgument):
        empty.percentile(101)


def test_failure_samples_are_capped_per_kind():
    led = Ledger()
    for i in range(30):
        led.note_failure("timeout", f"t{i}")
    assert led.failures == 30
    assert len(led.failure_samples["timeout"]) == 20
