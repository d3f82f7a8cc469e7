"""The networked store against a real Redis server.

``.ci/run`` starts ``redis-server`` and exports ``AGENTVERITY_TEST_REDIS_URL``; with that
variable set, or ``CI=true``, a missing server or client is a failure, never a skip.
Locally the fixture starts its own ``redis-server`` on a free port when one is installed,
and skips only when none is.

The goal: two runners recording into one store at once, then a third replaying: zero live
calls, and every draw of both runners still there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentverity_props.errors import BadInput
from agentverity_props.observation import CallFailure, Observation
from agentverity_props.store import RedisStore, Store, open_store

from .conftest import (
    agent_ref,
    assert_one_line_error,
    cli_many,
    free_port,
    invoke,
    load_json,
    write_inputs,
)

pytestmark = pytest.mark.e2e

K = ("agent", "sha256:ab", "default", 0)


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") \
        or bool(os.environ.get("AGENTVERITY_TEST_REDIS_URL"))


def _unavailable(why: str) -> None:
    if _in_ci():
        pytest.fail(f"CI=true but {why}: .ci/run must start redis-server and export "
                    "AGENTVERITY_TEST_REDIS_URL")
    pytest.skip(why)


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    try:
        import redis
    except ImportError:
        _unavailable("the redis client is not installed (pip install -e '.[dev]')")
    url = os.environ.get("AGENTVERITY_TEST_REDIS_URL")
    if url:
        redis.Redis.from_url(url).ping()  # a URL that does not answer fails, never skips
        yield url
        return
    exe = shutil.which("redis-server")
    if exe is None:
        _unavailable("redis-server is not installed (apt-get install redis-server)")
    assert exe is not None
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(folder)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def url(redis_server: str) -> str:
    """A fresh key space of the server for each test."""
    return f"{redis_server}?namespace=t-{uuid.uuid4().hex[:12]}"


def test_first_write_wins_a_success_replaces_a_failure_runners_stay_apart(url: str) -> None:
    fail = Observation(error=CallFailure("timeout", "slow", True, 1))
    with RedisStore(url, runner="r1") as a, RedisStore(url, runner="r2") as b:
        assert a.put(K, fail)
        assert a.put(K, Observation(text="ok", verdict="ok"))  # success replaces failure
        assert not a.put(K, Observation(text="later", verdict="later"))  # first one stays
        assert a.get(K).text == "ok"
        assert a.put(K, Observation(text="new", verdict="new"), overwrite=True)  # record mode
        assert a.get(K).text == "new"
        assert b.get(K) is None  # another runner's key
        assert b.put(K, Observation(text="b", verdict="b"))
        assert a.indices(*K[:3]) == [("r1", 0), ("r2", 0)]
        assert a.count() == 2
        assert sorted((r.namespace, r.ok, r.observation.text) for r in b.rows()) == [
            ("r1", True, "new"), ("r2", True, "b")]
        raw = Observation(text="t", verdict="v", raw={"deep": [1, {"x": "y"}]})
        assert a.put((*K[:3], 1), raw)
        assert a.get((*K[:3], 1)).raw == {"deep": [1, {"x": "y"}]}


def test_urls_keep_passwords_out_and_bad_servers_are_one_line(url: str,
                                                              redis_server: str) -> None:
    with RedisStore(url.replace("redis://", "redis://:s3cretpass@", 1)
                    if "@" not in url else url, runner="r") as s:
        assert "s3cretpass" not in s.location
        assert "namespace=t-" in s.location
    with pytest.raises(BadInput, match="cannot be reached"):
        RedisStore(f"redis://127.0.0.1:{free_port()}/0", runner="r")
    with pytest.raises(BadInput, match="holds no recording"):
        open_store(f"{redis_server}?namespace=empty-{uuid.uuid4().hex[:8]}", mode="replay")
    import redis
    other = f"other-{uuid.uuid4().hex[:8]}"
    redis.Redis.from_url(redis_server).hset(f"avp:{other}:meta", "format", "someone-else")
    with pytest.raises(BadInput, match="not an agentverity-props store"):
        RedisStore(f"{redis_server}?namespace={other}", runner="r")


def _run_args(store: str, inputs: Path, report: Path, *extra: str) -> list[str]:
    return ["run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--store", store,
            "--max-workers", "2", "--no-relations", "--format", "json", "--output",
            str(report), *extra]


def test_two_runners_record_concurrently_then_one_replays_with_no_live_call(
        tmp_path: Path, url: str) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    jobs = {name: (_run_args(url, inputs, tmp_path / f"{name}.json", "--record", "--runner",
                             name), None) for name in ("runner-1", "runner-2")}
    procs = cli_many(jobs, parallel=2)
    reports: dict[str, Any] = {}
    for name, proc in procs.items():
        assert "Traceback" not in proc.stderr
        reports[name] = load_json(tmp_path / f"{name}.json")
        assert reports[name]["ledger"]["calls"] > 0, proc.stderr[-1000:]
    with RedisStore(url, runner="reader") as store:
        rows = list(store.rows())
    by_runner: dict[str, list[Any]] = {}
    for row in rows:
        by_runner.setdefault(row.namespace, []).append(row)
    # no lost draws: each runner's every live call is a stored draw of its own
    assert sorted(by_runner) == ["runner-1", "runner-2"]
    for name, drawn in by_runner.items():
        assert len(drawn) == reports[name]["ledger"]["calls"]
        # the agent numbers its answers per process: both runs drew "answer 1", ...
        assert {r.observation.text for r in drawn} == {
            f"answer {n}" for n in range(1, len(drawn) + 1)}
    code, _, err = invoke(_run_args(url, inputs, tmp_path / "replay.json", "--replay",
                                    "--runner", "reader"))
    assert code == 0, err
    replay = load_json(tmp_path / "replay.json")
    assert replay["ledger"]["calls"] == 0, replay["ledger"]  # zero live calls
    assert replay["complete"] is True
    # pooled in name order, so replay reads runner-1's draws first: runner-1's verdicts
    def verdicts(rep: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in rep["meter"].items() if k != "calls"}

    assert verdicts(replay) == verdicts(reports["runner-1"])
    # the CI artifact: exported from the shared store, it replays on its own
    art = tmp_path / "draws.jsonl"
    code, out, err = invoke(["store", "export", url, str(art)])
    assert code == 0, err
    assert f"exported {len(rows)} draw(s)" in out
    code, _, err = invoke(_run_args(str(art), inputs, tmp_path / "art.json", "--replay"))
    assert code == 0, err
    assert load_json(tmp_path / "art.json")["ledger"]["calls"] == 0
    # merged into a local SQLite file, every draw arrives once
    code, out, err = invoke(["store", "merge", str(tmp_path / "m.db"), str(art), url])
    assert code == 0, err
    assert f"{len(rows)} draw(s) copied, {len(rows)} already there" in out
    with Store(tmp_path / "m.db") as merged:
        assert merged.count() == len(rows)
    code, out, err = invoke(["store", "info", url])
    assert code == 0, err
    assert "runner runner-1" in out
    assert "runner runner-2" in out
    code, _, err = invoke(["store", "export", url, str(art)])
    assert_one_line_error(code, err, "already exists")
    assert json.loads(art.read_text().splitlines()[0])["draws"] == len(rows)
