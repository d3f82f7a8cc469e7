"""Record, replay and auto modes of the engine's store."""

from __future__ import annotations

import asyncio
import random

import pytest

from agentverity_props.adapters import from_callable
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import AgentCallError, BadInput, ReplayMiss
from agentverity_props.observation import Observation, by_regex
from agentverity_props.store import Store


def stochastic(seed: int):
    rng = random.Random(seed)
    calls: list[str] = []

    def agent(prompt: str) -> dict[str, object]:
        calls.append(prompt)
        return {"text": f"{prompt}:{rng.random():.6f}", "verdict": rng.choice("abc"),
                "tools": ["search"] if rng.random() < 0.5 else []}

    return from_callable(agent, identity="stochastic"), calls


def refusing():
    def agent(prompt: str) -> str:
        raise AssertionError(f"replay called the agent for {prompt!r}")

    return from_callable(agent, identity="stochastic")


def cfg(path, mode, **kw) -> EngineConfig:
    return EngineConfig(store_path=path, store_mode=mode, **kw)


async def draw_all(eng: Engine, probes: list[Probe], n: int) -> dict[tuple[str, int], Observation]:
    # allocate in a fixed order, then run everything at once: finishing order must not matter
    jobs = [(p, i) for p in probes for i in eng.allocate(p, n)]
    outs = await asyncio.gather(*(eng.draw(p, i) for p, i in jobs))
    return {(p.fp, i): o for (p, i), o in zip(jobs, outs, strict=True)}


def test_record_then_replay_is_identical_and_free(tmp_path):
    path = tmp_path / "s.db"
    probes = [Probe.make(f"input {k}", salt=b"") for k in range(4)]
    agent, calls = stochastic(1)
    with Engine(agent, cfg(path, "record", max_workers=4)) as eng:
        recorded = run_sync(draw_all(eng, probes, 5))
    assert len(calls) == 20
    assert eng.ledger.calls == 20

    with Engine(refusing(), cfg(path, "replay", max_workers=4, budget=0)) as eng:
        replayed = run_sync(draw_all(eng, probes, 5))
        assert eng.ledger.calls == 0
        assert eng.ledger.replayed == 20
        assert eng.remaining == 0  # replayed draws cost nothing
    assert replayed == recorded
    for p in probes:  # five distinct draws per probe, replayed in order
        texts = [replayed[(p.fp, i)].text for i in range(5)]
        assert len(set(texts)) == 5
        assert texts == [recorded[(p.fp, i)].text for i in range(5)]


def test_sequential_draws_replay_in_order(tmp_path):
    path = tmp_path / "s.db"
    agent, _ = stochastic(2)
    p = Probe.make("x", salt=b"")
    with Engine(agent, cfg(path, "record")) as eng:
        first = run_sync(eng.draws(p, 5))
    with Engine(refusing(), cfg(path, "replay")) as eng:
        again = run_sync(eng.draws(p, 5))
    assert [o.text for o in again] == [o.text for o in first]
    assert len({o.text for o in first}) == 5


def test_replay_miss_names_the_draw_and_the_fix(tmp_path):
    path = tmp_path / "s.db"
    agent, _ = stochastic(3)
    p = Probe.make("x", salt=b"")
    with Engine(agent, cfg(path, "record")) as eng:
        run_sync(eng.draws(p, 2))
    with Engine(refusing(), cfg(path, "replay")) as eng:
        run_sync(eng.draws(p, 2))
        with pytest.raises(ReplayMiss) as info:
            run_sync(eng.draw(p))
    msg = str(info.value)
    assert p.short in msg
    assert "index 2" in msg
    assert 'record first with store_mode="record" or use store_mode="auto"' in msg  # Python


def test_replay_needs_an_existing_store(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        Engine(refusing(), cfg(tmp_path / "none.db", "replay"))
    assert not (tmp_path / "none.db").exists()


def test_a_different_extractor_is_a_different_recording(tmp_path):
    path = tmp_path / "s.db"
    agent, _ = stochastic(4)
    p = Probe.make("x", salt=b"")
    with Engine(agent, cfg(path, "record")) as eng:
        run_sync(eng.draw(p))
    other = cfg(path, "replay", extractor=by_regex(r"(\d)"))
    with Engine(refusing(), other) as eng, pytest.raises(ReplayMiss):
        run_sync(eng.draw(p))


def test_auto_records_only_the_missing_draws(tmp_path):
    path = tmp_path / "s.db"
    p, q = Probe.make("p", salt=b""), Probe.make("q", salt=b"")
    agent, calls = stochastic(5)
    with Engine(agent, cfg(path, "auto")) as eng:
        first = run_sync(eng.draws(p, 3))
    assert len(calls) == 3
    agent2, calls2 = stochastic(6)
    with Engine(agent2, cfg(path, "auto")) as eng:
        again = run_sync(eng.draws(p, 5))
        fresh = run_sync(eng.draws(q, 2))
        assert eng.ledger.replayed == 3
        assert eng.ledger.calls == 4
    assert again[:3] == first
    assert calls2 == ["p", "p", "q", "q"]
    with Store(path) as store:
        assert store.count() == 7
    with Engine(refusing(), cfg(path, "replay")) as eng:
        assert run_sync(eng.draws(p, 5)) == again
        assert run_sync(eng.draws(q, 2)) == fresh


def test_failures_replay_identically_and_auto_retries_them(tmp_path):
    path = tmp_path / "s.db"
    p = Probe.make("x", salt=b"")
    attempts: list[str] = []

    def broken(prompt: str) -> str:
        attempts.append(prompt)
        raise AgentCallError("upstream 503", kind="http_5xx", retryable=True)

    agent = from_callable(broken, identity="svc")
    with Engine(agent, cfg(path, "record", retries=0)) as eng:
        failed = run_sync(eng.draw(p))
    assert failed.error is not None
    assert failed.error.kind == "http_5xx"

    with Engine(from_callable(lambda s: 1 / 0, identity="svc"), cfg(path, "replay")) as eng:
        assert run_sync(eng.draw(p)) == failed
        assert eng.ledger.calls == 0
    with Engine(from_callable(lambda s: 1 / 0, identity="svc"),
                cfg(path, "replay", error_policy="raise")) as eng:
        with pytest.raises(AgentCallError, match="upstream 503") as info:
            run_sync(eng.draw(p))
        assert info.value.kind == "http_5xx"

    healed = from_callable(lambda s: "fine now", identity="svc")
    with Engine(healed, cfg(path, "auto")) as eng:
        obs = run_sync(eng.draw(p))
        assert obs.verdict == "fine now"
        assert eng.ledger.calls == 1
    with Store(path) as store:
        rows = list(store.rows())
    assert len(rows) == 1
    assert rows[0].ok
    assert rows[0].observation.verdict == "fine now"


def test_record_mode_rerecords(tmp_path):
    path = tmp_path / "s.db"
    p = Probe.make("x", salt=b"")
    for answer in ("old", "new"):
        with Engine(from_callable(lambda s, a=answer: a, identity="a"), cfg(path, "record")) as e:
            run_sync(e.draw(p))
    with Engine(from_callable(lambda s: "x", identity="a"), cfg(path, "replay")) as eng:
        assert run_sync(eng.draw(p)).verdict == "new"
