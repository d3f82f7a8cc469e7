"""Run by ``test_store_xdist.py`` as ``pytest -n 2`` in a subprocess (never collected on its
own: the file name does not start with ``test_``).

Eight tests, spread over two xdist worker processes, record draws into ONE store file
(``AGENTVERITY_XDIST_STORE``) at the same time: each test records its own probes
(``record`` mode) and all of them draw the same shared probes (``auto`` mode, so whichever
test stores a shared draw first wins and the others must be served that very row). Each
test writes what it observed to ``AGENTVERITY_XDIST_OUT/manifest-<k>.json`` for the parent
to check against the store.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agentverity_props.adapters import from_callable
from agentverity_props.engine import Engine, EngineConfig, Probe

STORE = os.environ.get("AGENTVERITY_XDIST_STORE", "")
OUT = os.environ.get("AGENTVERITY_XDIST_OUT", "")
DRAWS = 6
OWN = 5
SHARED = [f"shared prompt {j}" for j in range(3)]
IDENTITY = "xdist-agent"

pytestmark = pytest.mark.skipif(not STORE, reason="run by test_store_xdist.py only")


def own_prompts(k: int) -> list[str]:
    return [f"test {k} own prompt {j}" for j in range(OWN)]


def _agent(k: int) -> Any:
    counter = itertools.count()
    lock = threading.Lock()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")

    def answer(prompt: str) -> dict[str, Any]:
        with lock:
            n = next(counter)
        # unique per call, so a row can be traced to the test and call that made it
        return {"verdict": "allow", "text": f"{worker}/test{k}/call{n}"}

    return from_callable(answer, identity=IDENTITY)


async def _record(k: int) -> dict[str, str]:
    seen: dict[str, str] = {}
    for mode, prompts in (("record", own_prompts(k)), ("auto", SHARED)):
        cfg = EngineConfig(max_workers=4, store_path=STORE, store_mode=mode)  # type: ignore[arg-type]
        async with Engine(_agent(k), cfg) as eng:
            probes = [Probe.make(p, salt=b"") for p in prompts]
            results = await asyncio.gather(*(eng.draws(p, DRAWS) for p in probes))
        for probe, observations in zip(probes, results, strict=True):
            for i, obs in enumerate(observations):
                assert obs.error is None
                seen[f"{probe.fp}#{i}"] = obs.text
    return seen


@pytest.mark.parametrize("k", range(8))
def test_record_into_the_shared_store(k: int) -> None:
    seen = asyncio.run(_record(k))
    manifest = {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "seen": seen}
    Path(OUT, f"manifest-{k}.json").write_text(json.dumps(manifest), encoding="utf-8")
