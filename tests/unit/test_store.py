"""The SQLite record/replay store."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap

import pytest

from agentverity_props.errors import BadInput
from agentverity_props.observation import CallFailure, Observation, ToolCall, Usage
from agentverity_props.store import Store, StoreRow
from agentverity_props.store._store import APPLICATION_ID, SCHEMA_VERSION

KEY = ("agent", "sha256:abc", "default", 0)


def test_put_get_round_trip_keeps_everything_but_the_prompt(tmp_path):
    obs = Observation(text="the answer", verdict="allow",
                      tools=(ToolCall("search", {"q": "x"}), ToolCall("fetch", status="error")),
                      raw={"verdict": "allow", "n": [1, 2]}, latency_s=0.25,
                      usage=Usage(input_tokens=3, output_tokens=4, cost_usd=0.5))
    with Store(tmp_path / "s.db") as store:
        assert store.get(KEY) is None
        assert store.put(KEY, obs)
        assert store.get(KEY) == obs
        assert store.count() == 1 == len(store)
        assert list(store.rows()) == [StoreRow("agent", "sha256:abc", "default", 0, True, obs)]
        assert list(store) == list(store.rows())


def test_raw_that_is_not_json_is_dropped(tmp_path):
    obs = Observation(text="x", verdict="x", raw={"when": object()})
    with Store(tmp_path / "s.db") as store:
        store.put(KEY, obs)
        back = store.get(KEY)
    assert back is not None
    assert back.raw is None
    assert back.text == "x"


def test_first_row_wins_but_a_success_replaces_a_failure(tmp_path):
    failure = Observation(error=CallFailure("timeout", "slow", True, 3))
    first, second = Observation(text="a", verdict="a"), Observation(text="b", verdict="b")
    with Store(tmp_path / "s.db") as store:
        assert store.put(KEY, failure)
        assert not store.put(KEY, failure)
        assert store.get(KEY) == failure
        assert [r.ok for r in store.rows()] == [False]
        assert store.put(KEY, first)  # the failure was transient: the success replaces it
        assert not store.put(KEY, second)  # never two rows for one draw; the first stays
        assert not store.put(KEY, failure)
        assert store.get(KEY) == first
        assert store.put(KEY, second, overwrite=True)  # record mode replaces
        assert store.get(KEY) == second
        assert store.count() == 1


def test_distinct_indices_are_distinct_rows(tmp_path):
    with Store(tmp_path / "s.db") as store:
        for i in range(5):
            store.put(("agent", "sha256:abc", "default", i), Observation(text=str(i)))
        store.put(("agent", "sha256:abc", "regex:x", 0), Observation(text="other extractor"))
        store.put(("other", "sha256:abc", "default", 0), Observation(text="other agent"))
        assert store.count() == 7
        assert [store.get(("agent", "sha256:abc", "default", i)).text  # type: ignore[union-attr]
                for i in range(5)] == ["0", "1", "2", "3", "4"]


def test_schema_version_application_id_and_wal(tmp_path):
    path = tmp_path / "nested" / "dir" / "s.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    Store(path).close()  # reopening an existing store works


def test_a_store_never_contains_the_prompt_text(tmp_path):
    from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync

    prompt = "my-very-private-prompt-0xC0FFEE"
    path = tmp_path / "s.db"
    cfg = EngineConfig(store_mode="record", store_path=path)
    with Engine(lambda p: "answer", cfg) as eng:
        run_sync(eng.draws(Probe.make(prompt), 3))
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"answer" in blob  # the data is there (in the db or its WAL)...
    assert prompt.encode() not in blob  # ...but never the prompt


def test_a_file_that_is_not_sqlite_is_bad_input(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("just some notes, not a database\n" * 20)
    with pytest.raises(BadInput, match="not an agentverity-props store") as info:
        Store(path)
    assert "store_path=PATH" in str(info.value)  # the Python keyword
    assert path.read_text().startswith("just some notes")  # left untouched


def test_a_corrupt_sqlite_file_is_bad_input(tmp_path):
    path = tmp_path / "s.db"
    Store(path).close()
    data = bytearray(path.read_bytes())
    data[16:100] = b"\xff" * 84  # wreck the header after the magic string
    path.write_bytes(bytes(data))
    with pytest.raises(BadInput, match="not an agentverity-props store"):
        Store(path)


def test_someone_elses_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(BadInput, match="users"):
        Store(path)


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "s.db"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(BadInput, match="newer"):
        Store(path)


def test_missing_store_without_create_and_a_directory_are_bad_input(tmp_path):
    with pytest.raises(BadInput, match="record first"):
        Store(tmp_path / "absent.db", create=False)
    with pytest.raises(BadInput, match="directory"):
        Store(tmp_path)


_WRITER = textwrap.dedent("""
    import os, sys, time
    from agentverity_props.store import Store
    from agentverity_props.observation import Observation

    path, who, go = sys.argv[1], sys.argv[2], sys.argv[3]
    while not os.path.exists(go):  # start together, to collide as much as possible
        time.sleep(0.001)
    store = Store(path)
    for i in range(150):
        # shared keys both processes write, and keys only this process writes
        store.put(("agent", f"sha256:shared{i % 75}", "default", i // 75),
                  Observation(text=who, verdict=who))
        store.put(("agent", f"sha256:{who}", "default", i), Observation(text=who, verdict=who))
    store.close()
""")


def test_two_processes_writing_at_once_lose_nothing_and_duplicate_nothing(tmp_path):
    path, go = tmp_path / "shared.db", tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), who, str(go)],
                              stderr=subprocess.PIPE, text=True)
             for who in ("A", "B")]
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with Store(path) as store:
        rows = list(store.rows())
    keys = [(r.agent, r.fp, r.extractor, r.draw_index) for r in rows]
    assert len(keys) == len(set(keys)) == 150 + 150 + 150
    shared = [r for r in rows if "shared" in r.fp]
    assert len(shared) == 150
    assert {r.observation.text for r in shared} <= {"A", "B"}
    for who in ("A", "B"):
        own = sorted(r.draw_index for r in rows if r.fp == f"sha256:{who}")
        assert own == list(range(150))
