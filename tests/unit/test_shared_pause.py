"""The provider pause shared by the processes of a session: the later pause is kept, a
broken file is no pause, and one engine's 429 pauses another engine's calls."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agentverity_props.engine import (
    PAUSE_FILE_ENV,
    Engine,
    EngineConfig,
    Probe,
    SharedPause,
    run_sync,
)
from agentverity_props.errors import AgentCallError


def test_the_plugin_names_the_engines_variable() -> None:
    import agentverity_props_pytest

    assert agentverity_props_pytest.PAUSE_FILE_ENV == PAUSE_FILE_ENV


def test_the_longer_pause_is_kept_and_a_broken_file_is_no_pause(tmp_path: Path) -> None:
    p = SharedPause(tmp_path / "pause.json")
    assert p.remaining() == 0.0
    p.extend(60)
    p.extend(1)  # a later, shorter Retry-After does not shorten the pause
    assert 59 < p.remaining() <= 60
    other = SharedPause(tmp_path / "pause.json")  # another process's view
    assert 59 < other.remaining() <= 60
    for junk in ("", "{", '{"paused_until": "soon"}', '{"paused_until": NaN}', "[]"):
        (tmp_path / "pause.json").write_text(junk)
        assert SharedPause(tmp_path / "pause.json").remaining() == 0.0, junk
    SharedPause(tmp_path / "gone" / "deeper" / "pause.json").extend(5)  # folder made
    gone = SharedPause(tmp_path / "gone")
    gone.path = tmp_path / "no" / "such"
    assert gone.remaining() == 0.0


def test_a_429_on_one_engine_pauses_another_engine(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Needs wall-clock time (a real 1 s pause); its bounds leave a loaded machine room."""
    monkeypatch.setenv(PAUSE_FILE_ENV, str(tmp_path / "pause.json"))
    limited = {"done": False}

    def provider(prompt: str) -> str:
        if prompt == "trigger" and not limited["done"]:
            limited["done"] = True
            raise AgentCallError("HTTP 429", kind="rate_limit", retryable=True,
                                 retry_after_s=1.0)
        return "ok"

    cfg = EngineConfig(max_workers=1, retries=2, backoff_base_s=0.0)

    async def go() -> float:
        async with Engine(provider, cfg) as first, Engine(lambda p: "ok", cfg) as second:
            limited_call = asyncio.ensure_future(first.draw(Probe.make("trigger")))
            while not limited["done"]:
                await asyncio.sleep(0.01)
            t0 = time.monotonic()
            await second.draw(Probe.make("other"))  # its own engine never got a 429
            waited = time.monotonic() - t0
            await limited_call
            return waited

    waited = run_sync(go())
    # the rest of the first engine's 1 s pause; the upper bound is wall-clock time with a
    # margin for a loaded machine (without the shared pause it would not wait at all)
    assert 0.4 < waited < 2.5
    assert json.loads((tmp_path / "pause.json").read_text())["paused_until"] > 0


def test_an_injected_clock_never_pauses_real_engines(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PAUSE_FILE_ENV, str(tmp_path / "pause.json"))
    slept: list[float] = []

    async def fake_sleep(s: float) -> None:
        slept.append(s)

    def provider(prompt: str) -> str:
        if not slept:
            raise AgentCallError("429", kind="rate_limit", retryable=True, retry_after_s=300)
        return "ok"

    async def go() -> None:
        async with Engine(provider, EngineConfig(retries=1), sleep=fake_sleep) as eng:
            await eng.draw(Probe.make("x"))

    run_sync(go())
    assert slept
    assert slept[0] >= 300
    assert not (tmp_path / "pause.json").exists()
