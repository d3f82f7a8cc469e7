"""Store backends without a server: runner namespaces, schema migration, read-only and
multiplexed wrappers, pooled replay, merge and export (the Redis backend: tests/faults/
test_store_redis.py)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentverity_props.engine import Engine, EngineConfig, Probe
from agentverity_props.errors import BadInput, InvalidArgument, ReplayMiss
from agentverity_props.observation import CallFailure, Observation
from agentverity_props.store import (
    JsonlStore,
    MultiplexedStore,
    ReadOnlyStore,
    ReplayView,
    Store,
    StoreBackend,
    export_store,
    merge_stores,
    open_store,
    runner_namespace,
)

K = ("agent", "sha256:ab", "default", 0)


def obs(text: str) -> Observation:
    return Observation(text=text, verdict=text)


def test_runner_namespaces_keep_draws_apart(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path, namespace="r1") as a, Store(path, namespace="r2") as b:
        assert a.put(K, obs("one"))
        assert b.put(K, obs("two"))  # same key, another runner: both kept
        assert a.get(K).text == "one"
        assert b.get(K).text == "two"
        assert a.get(K, namespace="r2").text == "two"
        assert a.indices(*K[:3]) == [("r1", 0), ("r2", 0)]
        assert sorted((r.namespace, r.observation.text) for r in a.rows()) == [
            ("r1", "one"), ("r2", "two")]
        assert isinstance(a, StoreBackend)


def test_a_schema_1_store_is_migrated_into_the_default_namespace(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE draws (agent TEXT NOT NULL, fp TEXT NOT NULL, extractor TEXT "
                 "NOT NULL, idx INTEGER NOT NULL, ok INTEGER NOT NULL, value TEXT NOT NULL, "
                 "recorded_at REAL NOT NULL, PRIMARY KEY (agent, fp, extractor, idx)) "
                 "WITHOUT ROWID")
    for i in range(3):
        conn.execute("INSERT INTO draws VALUES (?, ?, ?, ?, 1, ?, 0)",
                     (*K[:3], i, json.dumps(obs(f"t{i}").to_dict(include_text=True))))
    conn.execute("PRAGMA application_id = 1096175699")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with Store(path) as s:
        assert [(r.namespace, r.draw_index, r.observation.text) for r in s.rows()] == [
            ("", 0, "t0"), ("", 1, "t1"), ("", 2, "t2")]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    conn.close()


def test_read_only_and_multiplexed_wrappers(tmp_path: Path) -> None:
    with Store(tmp_path / "a.db") as a, Store(tmp_path / "b.db") as b:
        ro = ReadOnlyStore(a)
        assert ro.put(K, obs("x")) is False
        assert a.count() == 0
        both = MultiplexedStore(a, b)
        assert both.put(K, obs("x"))
        assert a.get(K).text == b.get(K).text == "x"  # written to each
        b.put((*K[:3], 1), obs("only in b"))
        assert both.get((*K[:3], 1)).text == "only in b"  # read from the first that has it
        assert both.count() == 2
        assert ReadOnlyStore(both).get(K).text == "x"
    with pytest.raises(InvalidArgument):
        MultiplexedStore()


def test_replay_view_pools_runners_own_first_then_by_name(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db", namespace="zed") as s:
        for ns, n in (("b", 2), ("a", 3), ("zed", 1)):
            for i in range(n):
                s.put((*K[:3], i), obs(f"{ns}{i}"), namespace=ns)
        s.put((*K[:3], 2), obs("zed2"), namespace="zed")  # a gap at zed index 1
        view = ReplayView(s)
        got = [view.get((*K[:3], i)) for i in range(9)]
        texts = [o.text if o is not None else None for o in got]
        # own namespace first at its recorded indices (the gap stays a gap), then a, then b
        assert texts == ["zed0", None, "zed2", "a0", "a1", "a2", "b0", "b1", None]


def test_two_runners_then_a_replay_uses_every_draw_and_calls_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    calls = {"n": 0}

    def agent(prompt: str) -> str:
        calls["n"] += 1
        return f"answer {calls['n']}"

    async def draws(mode: str, runner: str, n: int) -> list[str]:
        cfg = EngineConfig(store_path=path, store_mode=mode, store_runner=runner)
        with Engine(agent, cfg) as eng:
            return [o.text for o in await eng.draws(Probe.make("q"), n)]

    first = asyncio.run(draws("record", "r1", 3))
    second = asyncio.run(draws("record", "r2", 3))
    assert calls["n"] == 6
    replayed = asyncio.run(draws("replay", "reader", 6))
    assert calls["n"] == 6  # zero live calls
    assert replayed == first + second  # no draw lost, none overwritten
    with pytest.raises(ReplayMiss):
        asyncio.run(draws("replay", "reader", 7))
    # auto reads only its own runner's draws: r1 again replays its own 3, calls for more
    assert asyncio.run(draws("auto", "r1", 4))[:3] == first
    assert calls["n"] == 7


def test_merge_keeps_colliding_default_namespaces_apart_and_is_idempotent(
        tmp_path: Path) -> None:
    for name in ("m1", "m2"):  # two machines, both default namespace, both from index 0
        with Store(tmp_path / f"{name}.db") as s:
            for i in range(2):
                s.put((*K[:3], i), obs(f"{name}-{i}"))
            s.put((*K[:3], 2), Observation(error=CallFailure("timeout", "slow", True, 1)))
    with Store(tmp_path / "all.db") as dest:
        srcs = [open_store(tmp_path / f"{n}.db", mode="replay") for n in ("m1", "m2")]
        report = merge_stores(dest, srcs)
        assert (report.copied, report.already, report.renamed) == (6, 0, {"": "~2"})
        assert dest.count() == 6
        again = merge_stores(dest, srcs[:1])
        assert (again.copied, again.already, again.renamed) == (0, 3, {})
        assert sorted(r.observation.text or "" for r in dest.rows() if r.ok) == [
            "m1-0", "m1-1", "m2-0", "m2-1"]
        for s in srcs:
            s.close()
    with pytest.raises(BadInput, match="read only"):
        merge_stores(ReadOnlyStore(Store(tmp_path / "x.db")), [])


def test_export_jsonl_and_sqlite_both_replay(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db", namespace="r1") as s:
        for i in range(3):
            s.put((*K[:3], i), Observation(text=f"t{i}", verdict="v", raw={"n": i}))
        assert export_store(s, tmp_path / "e.jsonl") == 3
        assert export_store(s, tmp_path / "e.db") == 3
        with pytest.raises(BadInput, match="already exists"):
            export_store(s, tmp_path / "e.jsonl")
    lines = (tmp_path / "e.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"format": "agentverity-props-store", "version": 1,
                                    "draws": 3}
    assert json.loads(lines[1])["observation"]["raw"] == {"n": 0}
    import jsonschema
    schema = json.loads((Path(__file__).parents[2] / "docs" / "schemas" /
                         "store-export.schema.json").read_text())
    for line in lines:
        jsonschema.validate(json.loads(line), schema)
    for out in ("e.jsonl", "e.db"):
        with open_store(tmp_path / out, mode="replay") as back:
            assert back.read_only
            assert [(r.namespace, r.draw_index, r.observation.text) for r in back.rows()] == [
                ("r1", i, f"t{i}") for i in range(3)]
            view = ReplayView(back)
            assert view.get((*K[:3], 2)).text == "t2"
    assert isinstance(open_store(tmp_path / "e.jsonl", mode="replay"), JsonlStore)


@pytest.mark.parametrize(("content", "fragment"), [
    ("", "not an agentverity-props store export (line 1)"),
    ('{"format": "agentverity-props-store", "version": 9}\n', "version 9"),
    ('{"format": "agentverity-props-store", "version": 1}\n{"agent": 1}\n', "line 2"),
    ('{"format": "agentverity-props-store", "version": 1}\nnot json\n', "line 2"),
])
def test_a_bad_export_is_one_line_bad_input(tmp_path: Path, content: str,
                                            fragment: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(BadInput, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        open_store(path, mode="replay")


def test_store_specs_that_cannot_work_are_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="read only"):
        open_store(tmp_path / "e.jsonl", mode="auto")
    with pytest.raises(BadInput, match="not supported"):
        open_store("postgres://db/x", mode="auto")
    with pytest.raises(BadInput, match="does not exist"):
        open_store(tmp_path / "absent.db", mode="replay")
    with pytest.raises(InvalidArgument):
        EngineConfig(store_path="s.db", store_mode="auto", store_runner="bad\x1b[31m")


def test_runner_namespace_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AGENTVERITY_PROPS_RUNNER", "CI_JOB_ID", "BUILDKITE_JOB_ID",
                "CIRCLE_WORKFLOW_JOB_ID", "GITHUB_RUN_ID"):
        monkeypatch.delenv(var, raising=False)
    assert runner_namespace() == ""  # the embedded store's default
    host = runner_namespace(networked=True)
    assert host  # the host name
    monkeypatch.setenv("CI_JOB_ID", "4711")
    assert runner_namespace(networked=True) == "gitlab-4711"
    assert runner_namespace() == ""
    monkeypatch.setenv("AGENTVERITY_PROPS_RUNNER", "shard-2")
    assert runner_namespace() == runner_namespace(networked=True) == "shard-2"
    assert runner_namespace("explicit") == "explicit"
    with pytest.raises(InvalidArgument):
        runner_namespace("x" * 121)


_rows = st.lists(st.tuples(st.sampled_from(["", "a", "b"]), st.integers(0, 3),
                           st.sampled_from(["x", "y", "z"])), max_size=8)


@settings(max_examples=15, deadline=None)
@given(st.lists(_rows, min_size=1, max_size=3))
def test_merge_never_loses_or_changes_a_draw(sources: list[list[tuple[str, int, str]]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        stores = []
        for n, rows in enumerate(sources):
            s = Store(Path(d) / f"s{n}.db")
            for ns, i, text in rows:
                s.put((*K[:3], i), obs(text), namespace=ns)  # first write per key wins
            stores.append(s)
        with Store(Path(d) / "dest.db") as dest:
            report = merge_stores(dest, stores)
            merged = {(r.namespace, r.draw_index): r.observation.text for r in dest.rows()}
            for n, s in enumerate(stores):
                by_ns: dict[str, dict[int, str]] = {}
                for r in s.rows():
                    by_ns.setdefault(r.namespace, {})[r.draw_index] = r.observation.text
                for ns, draws in by_ns.items():
                    # the whole namespace arrived, under its name or one new name
                    homes = [t for t in {k[0] for k in merged}
                             if all(merged.get((t, i)) == x for i, x in draws.items())]
                    assert homes, (n, ns, draws, merged)
            assert report.copied == len(merged)
            assert report.copied + report.already == sum(s.count() for s in stores)
        for s in stores:
            s.close()
