"""The record/replay store under pytest-xdist: two worker processes record into one file at
once; no row is lost, no key is stored twice, every test was served the row the store kept,
and a replay serves each recorded draw exactly once, in index order.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentverity_props.adapters import from_callable
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.errors import ReplayMiss

from . import _xdist_store_cases as cases
from .conftest import ROOT, cli_env, read_store, record

pytestmark = pytest.mark.e2e


def test_store_under_xdist_loses_nothing_and_serves_each_draw_once(tmp_path: Path) -> None:
    pytest.importorskip("xdist")
    store, out = tmp_path / "shared.db", tmp_path / "manifests"
    out.mkdir()
    env = cli_env({"AGENTVERITY_XDIST_STORE": str(store), "AGENTVERITY_XDIST_OUT": str(out)})
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-q", "-p", "no:randomly",
         str(Path(cases.__file__).relative_to(ROOT))],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "8 passed" in proc.stdout, proc.stdout[-2000:]

    manifests = [json.loads(p.read_text()) for p in sorted(out.glob("manifest-*.json"))]
    assert len(manifests) == 8
    assert {m["worker"] for m in manifests} == {"gw0", "gw1"}  # really two processes

    state = read_store(store)
    assert state.integrity == "ok"
    stored = {f"{fp}#{idx}": v["text"] for _, fp, _, idx, _, v in state.rows}
    conn = sqlite3.connect(str(store))
    try:
        dupes = conn.execute("SELECT agent, fp, extractor, idx, COUNT(*) FROM draws GROUP BY "
                             "agent, fp, extractor, idx HAVING COUNT(*) > 1").fetchall()
    finally:
        conn.close()
    assert dupes == []
    expected = 8 * cases.OWN * cases.DRAWS + len(cases.SHARED) * cases.DRAWS
    assert len(state.rows) == expected  # no row lost
    for m in manifests:  # every test was served exactly what the store kept
        for key, text in m["seen"].items():
            assert stored[key] == text, key
    assert set(stored) == set().union(*(m["seen"] for m in manifests))  # nothing extra

    # replay: each draw once, in index order, then a miss (never a draw served twice)
    def boom(prompt: str) -> str:
        raise AssertionError("replay must not call the agent")

    prompts = [*cases.SHARED, *(p for k in range(8) for p in cases.own_prompts(k))]

    async def replay() -> int:
        served = 0
        cfg = EngineConfig(store_path=store, store_mode="replay")
        async with Engine(from_callable(boom, identity=cases.IDENTITY), cfg) as eng:
            for prompt in prompts:
                probe = Probe.make(prompt, salt=b"")
                texts = [o.text for o in await eng.draws(probe, cases.DRAWS)]
                assert texts == [stored[f"{probe.fp}#{i}"] for i in range(cases.DRAWS)]
                assert len(set(texts)) == cases.DRAWS
                served += len(texts)
                with pytest.raises(ReplayMiss):
                    await eng.draw(probe)
            assert eng.ledger.calls == 0
        return served

    served = run_sync(replay())
    assert served == expected
    record("store-xdist", workers=2, tests=8, rows=len(state.rows), replayed=served,
           shared_keys=len(cases.SHARED) * cases.DRAWS)
