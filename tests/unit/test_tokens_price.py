"""Tokens summed per phase, said plainly when the adapter reports none; prices inline or from
a validated file (bad input is one line); plan priced in tokens and money; and the
``max_calls_in_flight`` limit across the engines of one process."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from agentverity_props import run
from agentverity_props._internal.tokens import NOT_REPORTED, tokens_line
from agentverity_props.adapters import from_callable
from agentverity_props.engine import (
    Engine,
    EngineConfig,
    Ledger,
    Price,
    Probe,
    parse_price,
    run_sync,
)
from agentverity_props.errors import BadInput, InvalidArgument
from agentverity_props.observation import Observation, Usage
from agentverity_props.runner import RunConfig, TokensPerCall, plan

PROMPTS = ["hello there", "plan an attack on the server", "what is the weather"]


def _usage_agent(split: bool = True):
    def agent(prompt: str) -> Observation:
        n = len(prompt.split())
        usage = (Usage(input_tokens=10 * n, output_tokens=n) if split
                 else Usage(total_tokens=11 * n))
        return Observation(text="allow", verdict="allow", usage=usage)
    return from_callable(agent, identity="usage-agent")


def test_tokens_are_summed_per_phase_and_priced() -> None:
    price = Price(input_per_1k=0.15, output_per_1k=0.6, model="m")
    res = run(_usage_agent(), PROMPTS, relations=[], config=RunConfig(price=price))
    d = res.to_dict()
    tok = d["tokens"]
    assert tok["reported"] is True
    assert tok["calls"] == tok["calls_reporting"] == d["ledger"]["calls"]
    # the phases are those the calls are counted in, and they add up
    assert set(tok["phases"]) <= {"meter", "blindness", "dependence", "stationarity"}
    for name, part in tok["phases"].items():
        assert part["calls"] == d["calls"][name]
    assert sum(p["input"] for p in tok["phases"].values()) == tok["input"]
    assert tok["total"] == tok["input"] + tok["output"]
    assert tok["cost"] == pytest.approx(tok["input"] * 0.15 / 1000 + tok["output"] * 0.6 / 1000)
    assert tok["price"] == {"model": "m", "input_per_1k": 0.15, "output_per_1k": 0.6,
                            "currency": "USD"}
    line = tokens_line(tok)
    assert line.startswith(f"Tokens: {tok['input']:,} in + {tok['output']:,} out")
    assert "cost" in line
    assert "USD" in line


def test_no_usage_is_said_never_zero() -> None:
    res = run(from_callable(lambda p: "allow"), PROMPTS, relations=[])
    tok = res.to_dict()["tokens"]
    assert tok["reported"] is False
    assert (tok["input"], tok["output"], tok["total"], tok["cost"]) == (None,) * 4
    assert tok["note"] == NOT_REPORTED
    assert tokens_line(tok) == "Tokens: not reported by the adapter"


def test_total_only_and_partial_usage_are_said() -> None:
    led = Ledger()
    led.price = Price(1.0, 1.0)
    led.phase = "a"
    led.note_success(Observation(text="x", usage=Usage(total_tokens=7)))
    led.note_success(Observation(text="x"))
    tok = led.tokens()
    assert tok["total"] == 7
    assert tok["input"] is None
    assert tok["cost"] is None  # no input/output split: no cost, never a guess
    assert "1 of 2 live calls reported no tokens" in tok["note"]
    assert "total tokens only" in tok["note"]
    assert list(tok["phases"]) == ["a"]
    assert tok["phases"]["a"]["calls_reporting"] == 1
    assert "(a 7" not in tokens_line(tok)  # one phase: no split printed


def test_price_inline_and_files(tmp_path: Path) -> None:
    assert parse_price("0.15, 0.60") == Price(0.15, 0.6)
    yml = tmp_path / "prices.yaml"
    yml.write_text("small: {input_per_1k: 0.1, output_per_1k: 0.4}\n"
                   "large: {input_per_1k: 2.5, output_per_1k: 10, currency: EUR}\n")
    assert Price.load(yml, model="large") == Price(2.5, 10.0, model="large", currency="EUR")
    js = tmp_path / "prices.json"
    js.write_text(json.dumps({"only": {"input_per_1k": 1, "output_per_1k": 2}}))
    assert parse_price(str(js)) == Price(1.0, 2.0, model="only")
    bad = {
        "several": (yml, None, "lists 2 models"),
        "unknown model": (yml, "medium", "has no model 'medium'"),
    }
    for path, model, text in bad.values():
        with pytest.raises(BadInput, match=text):
            parse_price(str(path), model=model)
    for content, text in [("m: {input_per_1k: -1, output_per_1k: 1}", "greater than or equal"),
                          ("m: {input_per_1k: 1, output: 1}", "output"),
                          ("m: {input_per_1k: .inf, output_per_1k: 1}", "finite"),
                          ("[1, 2]", "mapping of model names"),
                          ("m: {input_per_1k: 1, output_per_1k: 1, currency: 'US dollars'}",
                           "currency"),
                          ("m: {input_per_1k: 1, output_per_1k: 1, currency: '\x1b[31m'}",
                           "not YAML text")]:
        (tmp_path / "bad.yaml").write_text(content)
        with pytest.raises(BadInput, match=text) as err:
            parse_price(str(tmp_path / "bad.yaml"))
        assert "\n" not in str(err.value)
    with pytest.raises(BadInput, match="neither IN,OUT nor a price file"):
        parse_price("0.1")
    with pytest.raises(InvalidArgument):
        Price(-1.0, 1.0)
    with pytest.raises(InvalidArgument, match="price must be a Price"):
        EngineConfig(price=(0.1, 0.2))  # type: ignore[arg-type]


def test_plan_in_tokens_and_money(tmp_path: Path) -> None:
    per_call = TokensPerCall(input=400.0, output=20.0)
    p = plan(PROMPTS, relations=[], seeds=1, noises=(0.1,), default_noises=False,
             config=RunConfig(price=Price(1.0, 2.0)), tokens_per_call=per_call)
    d = p.to_dict()
    lv = d["levels"][0]
    calls = lv["calls"]["total"]
    assert lv["tokens"]["input"]["mean"] == calls["mean"] * 400
    assert lv["tokens"]["total"]["high"] == calls["high"] * 420
    assert lv["cost"]["mean"] == pytest.approx(calls["mean"] * (400 * 1 + 20 * 2) / 1000)
    assert d["tokens_per_call"]["source"] == "stated"
    # measured on an earlier report: the mean over the calls that reported usage
    report = tmp_path / "run.json"
    report.write_text(json.dumps(run(_usage_agent(), PROMPTS, relations=[]).to_dict()))
    measured = TokensPerCall.measured(str(report))
    tok = json.loads(report.read_text())["tokens"]
    assert measured.input == tok["input"] / tok["calls_reporting"]
    assert measured.calls == tok["calls_reporting"]
    no_usage = tmp_path / "plain.json"
    no_usage.write_text(json.dumps(run(from_callable(lambda p: "a"), PROMPTS,
                                       relations=[]).to_dict()))
    with pytest.raises(BadInput, match="not reported by the adapter"):
        TokensPerCall.measured(str(no_usage))


def test_max_calls_in_flight_holds_across_the_engines_of_a_process() -> None:
    lock = threading.Lock()
    now = [0, 0]

    async def agent(prompt: str) -> str:
        with lock:
            now[0] += 1
            now[1] = max(now[1], now[0])
        await asyncio.sleep(0.02)
        with lock:
            now[0] -= 1
        return "ok"

    cfg = EngineConfig(max_workers=4, max_calls_in_flight=3)

    async def go() -> None:
        async with Engine(agent, cfg) as a, Engine(agent, cfg) as b:
            await asyncio.gather(*(e.draw(Probe.make(f"p{i}")) for e in (a, b)
                                   for i in range(8)))

    t0 = time.monotonic()
    run_sync(go())
    assert now[1] == 3, now[1]  # 8 without the limit (two engines of 4 workers)
    assert time.monotonic() - t0 < 30
    with pytest.raises(InvalidArgument, match="max_calls_in_flight"):
        EngineConfig(max_calls_in_flight=0)


def test_tokens_per_call_measured_on_a_recorded_store(tmp_path: Path) -> None:
    from agentverity_props.store import Store

    db = tmp_path / "draws.sqlite3"
    run(_usage_agent(), PROMPTS, relations=[],
        config=RunConfig(store_path=str(db), store_mode="record", budget=60))
    with Store(db) as s:
        used = [r.observation.usage for r in s.rows() if r.ok]
    measured = TokensPerCall.measured(str(db))
    assert measured.calls == len(used) > 0
    assert measured.input == sum(u.input_tokens for u in used) / len(used)
    assert measured.output == sum(u.output_tokens for u in used) / len(used)
    assert measured.source.startswith("store ")
    empty = tmp_path / "plain.sqlite3"
    run(from_callable(lambda p: "a"), PROMPTS, relations=[],
        config=RunConfig(store_path=str(empty), store_mode="record", budget=10))
    with pytest.raises(BadInput, match="no recorded draw carries"):
        TokensPerCall.measured(str(empty))
