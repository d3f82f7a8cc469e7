"""The check every adapter that reports usage passes: on a recorded run, the report's token
totals are the sums of the usage the adapter returned (as the store recorded it), the phases
add up to the totals, and a replay of the recording counts no tokens (no live call)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentverity_props import run
from agentverity_props.engine import Price
from agentverity_props.runner import RunConfig
from agentverity_props.store import Store


def check_recorded_tokens(agent: Any, inputs: list[str], tmp_path: Path) -> dict[str, Any]:
    store = tmp_path / "draws.sqlite3"
    price = Price(input_per_1k=0.5, output_per_1k=2.0, model="offline")
    res = run(agent, inputs, relations=[],
              config=RunConfig(store_path=str(store), store_mode="record", max_workers=2,
                               price=price))
    d = res.to_dict()
    tok = d["tokens"]
    with Store(store) as s:
        used = [r.observation.usage for r in s.rows() if r.ok]
    assert used
    assert all(u is not None for u in used)  # this adapter reports usage on every call
    assert tok["reported"] is True
    assert tok["calls_reporting"] == tok["calls"] == len(used)
    assert tok["input"] == sum(u.input_tokens for u in used) > 0
    assert tok["output"] == sum(u.output_tokens for u in used) > 0
    assert tok["total"] == sum(u.total_tokens if u.total_tokens is not None
                               else u.input_tokens + u.output_tokens for u in used)
    assert tok["phases"], "a run's tokens are split by phase"
    assert sum(p["total"] for p in tok["phases"].values()) == tok["total"]
    assert sum(p["calls"] for p in tok["phases"].values()) == tok["calls"]
    assert tok["cost"] == tok["input"] / 1000 * 0.5 + tok["output"] / 1000 * 2.0
    # the deprecated flat ledger fields agree with the totals
    assert d["ledger"]["input_tokens"] == tok["input"]
    assert "tokens" not in d["ledger"]
    again = run(agent, inputs, relations=[],
                config=RunConfig(store_path=str(store), store_mode="replay", max_workers=2))
    t2 = again.to_dict()["tokens"]
    assert again.ledger["calls"] == 0
    assert t2["reported"] is False
    assert t2["total"] is None  # never 0 for "not counted"
    return tok
