"""Reading a store never writes it: ``store info``, ``store export``, a ``store merge``
source, ``assess --store`` and ``run --replay`` open SQLite read only (``mode=ro``).

What is not a store (an empty file, a text file, another program's SQLite database, an empty
SQLite database) is refused with one line and exit code 2, and the file stays byte for byte
what it was; a real store (schema 2, or an older schema-1 file that a writer would migrate)
is read without a byte of it changing and without ``-wal``/``-shm`` files left beside it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from agentverity_props.adapters import from_callable
from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
from agentverity_props.observation import Observation
from agentverity_props.store import Store
from agentverity_props.store._store import APPLICATION_ID

from .conftest import assert_one_line_error, invoke, write_inputs

pytestmark = pytest.mark.e2e


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _text(p: Path) -> None:
    p.write_text("not a database at all\n", encoding="utf-8")


def _foreign(p: Path) -> None:
    conn = sqlite3.connect(str(p))
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("INSERT INTO notes VALUES ('mine')")
    conn.commit()
    conn.close()


def _empty_sqlite(p: Path) -> None:
    conn = sqlite3.connect(str(p))
    conn.execute("VACUUM")  # a valid SQLite file with no table
    conn.close()


NOT_STORES = {"empty": _empty, "text": _text, "foreign": _foreign,
              "empty-sqlite": _empty_sqlite}


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _side_files(p: Path) -> list[str]:
    return sorted(q.name for q in p.parent.iterdir() if q.name.startswith(p.name + "-"))


def _readers(path: Path, tmp: Path) -> dict[str, list[str]]:
    inputs = write_inputs(tmp / "inputs.txt", ["hello there", "book a table"])
    return {
        "store info": ["store", "info", str(path)],
        "store export jsonl": ["store", "export", str(path), str(tmp / "out.jsonl")],
        "store export sqlite": ["store", "export", str(path), str(tmp / "out.db")],
        "store merge source": ["store", "merge", str(tmp / "merged.db"), str(path)],
        "assess --store": ["assess", "--store", str(path), "--inputs", str(inputs)],
        "run --replay": ["run", "--agent", "agentverity_props.examples.plain:gate",
                         "--inputs", str(inputs), "--store", str(path), "--replay",
                         "--no-relations"],
    }


@pytest.mark.parametrize("kind", list(NOT_STORES))
def test_what_is_not_a_store_is_refused_and_left_untouched(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "e.db"
    NOT_STORES[kind](path)
    before = _digest(path)
    for what, argv in _readers(path, tmp_path).items():
        code, _, err = invoke(argv)
        line = assert_one_line_error(code, err, f"{kind}: {what}")
        assert "not an agentverity-props store" in line, (what, line)
        assert _digest(path) == before, f"{kind}: {what} changed the file"
        assert _side_files(path) == [], f"{kind}: {what} left {_side_files(path)}"


def _store(path: Path) -> None:
    with Store(path) as s:
        for i in range(3):
            s.put(("agent", Probe.make("hello there").fp, "default", i),
                  Observation(text="hi", verdict="allow"))


def _schema_1(path: Path) -> None:
    conn = sqlite3.connect(str(path))
    conn.execute("CREATE TABLE draws (agent TEXT NOT NULL, fp TEXT NOT NULL, extractor TEXT "
                 "NOT NULL, idx INTEGER NOT NULL, ok INTEGER NOT NULL, value TEXT NOT NULL, "
                 "recorded_at REAL NOT NULL, PRIMARY KEY (agent, fp, extractor, idx)) "
                 "WITHOUT ROWID")
    for i in range(3):
        conn.execute("INSERT INTO draws VALUES (?, ?, ?, ?, 1, ?, 0)",
                     ("agent", Probe.make("hello there").fp, "default", i,
                      '{"text":"hi","verdict":"allow"}'))
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("make", [_store, _schema_1], ids=["schema-2", "schema-1"])
def test_reading_a_store_changes_no_byte_of_it(tmp_path: Path, make: object) -> None:
    path = tmp_path / "s.db"
    make(path)  # type: ignore[operator]
    before = _digest(path)
    code, out, err = invoke(["store", "info", str(path)])
    assert code == 0, err
    assert "3 draw(s)" in out
    code, out, err = invoke(["store", "export", str(path), str(tmp_path / "out.jsonl")])
    assert code == 0, err
    assert "exported 3 draw(s)" in out

    def boom(prompt: str) -> str:
        raise AssertionError("replay must not call the agent")

    async def replay_named() -> list[str | None]:
        cfg = EngineConfig(store_path=path, store_mode="replay")
        async with Engine(from_callable(boom, identity="agent"), cfg) as eng:
            return [o.verdict for o in await eng.draws(Probe.make("hello there"), 3)]

    assert run_sync(replay_named()) == ["allow"] * 3
    assert _digest(path) == before
    assert _side_files(path) == []
