"""The embedded record/replay store: one SQLite file of finished draws.

One row per draw, keyed by ``(runner namespace, agent identity, probe fingerprint, extractor
config id, draw index)``, so repeated draws of one probe stay distinct and replay in order,
and two runners that each numbered their draws from 0 never overwrite each other's (the
runner namespace is ``""`` unless one is named). Networked backends implement the same
:class:`~agentverity_props.store.StoreBackend` protocol (``_stores.py``). The prompt text
is never stored, only its fingerprint. The value is the observation as JSON (answer text,
verdict, tools, latency, usage, failure; ``raw`` only when it is JSON-serialisable).

Safe for several processes writing at once (pytest-xdist): WAL journal, a 30 s busy
timeout, and a primary key so the same draw is never stored twice: an insert that finds
the key taken leaves the stored row alone (except that a success replaces a stored
failure, see :meth:`Store.put`). Every write is its own committed transaction, so a
killed run loses nothing it had finished.
"""

from __future__ import annotations

import enum
import os
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from .._internal.settings import setting
from ..errors import BadInput
from ..observation import Observation

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["SCHEMA_VERSION", "Store", "StoreKey", "StoreMode", "StoreRow", "encode"]

#: 2 added the runner namespace to the key (a schema-1 file is migrated on opening)
SCHEMA_VERSION = 2
# "AVPS" — marks the file as ours, so a stranger's SQLite database is refused, not written to.
APPLICATION_ID = 0x41565053
_BUSY_TIMEOUT_S = 30.0
_SQLITE_MAGIC = b"SQLite format 3\x00"
def _fix() -> str:
    return f"pass a new path with {setting('store')} or delete it"


def _damaged_fix() -> str:
    return ("delete it (or move it aside) and record again, or pass a new path with "
            + setting("store"))


def sqlite3_damaged(path: Path, why: str) -> BadInput:
    """The one-line error for a store whose file is corrupted (a damaged page, a cut file)."""
    return BadInput(f"store {path} is damaged ({' '.join(why.split())[:120]})", _damaged_fix())


def _guarded(method: Any) -> Any:
    """A Store method whose SQLite corruption errors become :func:`sqlite3_damaged`."""
    import functools

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        import sqlite3
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError as exc:
            raise sqlite3_damaged(self.path, str(exc)) from None
    return wrapper


class StoreMode(str, enum.Enum):
    """How the engine uses the store.

    ``OFF``: no store. ``RECORD``: always call live and write (replacing older rows).
    ``REPLAY``: only read; a missing draw raises ``ReplayMiss``. ``AUTO``: read if present,
    else call live and write; a recorded failure is retried live.
    """

    OFF = "off"
    RECORD = "record"
    REPLAY = "replay"
    AUTO = "auto"

    def __str__(self) -> str:
        return self.value


class StoreKey(NamedTuple):
    """Identifies one draw."""

    agent: str
    fp: str
    extractor: str
    draw_index: int


class StoreRow(NamedTuple):
    """One stored draw, as :meth:`Store.rows` yields it (``namespace``: the runner's)."""

    agent: str
    fp: str
    extractor: str
    draw_index: int
    ok: bool
    observation: Observation
    namespace: str = ""

    @property
    def key(self) -> StoreKey:
        return StoreKey(self.agent, self.fp, self.extractor, self.draw_index)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS draws (
    ns TEXT NOT NULL,
    agent TEXT NOT NULL,
    fp TEXT NOT NULL,
    extractor TEXT NOT NULL,
    idx INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    value TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    PRIMARY KEY (agent, fp, extractor, ns, idx)
) WITHOUT ROWID
"""
_INSERT = "INSERT INTO draws (ns, agent, fp, extractor, idx, ok, value, recorded_at) " \
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, fp, extractor, ns, idx) DO " \
          "UPDATE SET ok = excluded.ok, value = excluded.value, recorded_at = excluded.recorded_at"
# keep the first stored row, except that a success replaces a stored (transient) failure
_PUT = _INSERT + " WHERE draws.ok = 0 AND excluded.ok = 1"
_GET = "SELECT value FROM draws WHERE ns = ? AND agent = ? AND fp = ? AND extractor = ? " \
       "AND idx = ?"
_INDICES = "SELECT ns, idx FROM draws WHERE agent = ? AND fp = ? AND extractor = ? " \
           "ORDER BY ns, idx"
# schema 1 -> 2: the same rows, in the runner namespace ""
_MIGRATE_1 = ("ALTER TABLE draws RENAME TO draws_v1", _SCHEMA,
              "INSERT INTO draws (ns, agent, fp, extractor, idx, ok, value, recorded_at) "
              "SELECT '', agent, fp, extractor, idx, ok, value, recorded_at FROM draws_v1",
              "DROP TABLE draws_v1")


_S = TypeVar("_S", bound="ClosesOnce")


class ClosesOnce:
    """An idempotent, thread-safe :meth:`close` and the ``with`` block that calls it: what the
    stores holding a connection (SQLite, Redis) share. A subclass implements
    :meth:`_release` (close its connection) and calls ``super().__init__()`` before anything
    that may fail."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False

    def _release(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._release()

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Store(ClosesOnce):
    """A SQLite file of recorded draws.

    Args:
        path: the database file; created (with its folder) if absent.
        create: when False a missing file is a :class:`~agentverity_props.errors.BadInput`
            (replay needs an existing recording).
        namespace: the runner namespace this store writes to and reads from by default.
        read_only: open for reading only (SQLite ``mode=ro``): the file is never written,
            not even initialised or migrated, and whatever is not an agentverity-props
            store (an empty file, a text file, another program's SQLite database) is a
            :class:`~agentverity_props.errors.BadInput`; :meth:`put` writes nothing.
            Replay and every inspecting command open stores this way.

    Example:
        >>> import tempfile, os
        >>> from agentverity_props.observation import Observation
        >>> with tempfile.TemporaryDirectory() as d, Store(os.path.join(d, "s.db")) as s:
        ...     s.put(("agent", "sha256:ab", "default", 0), Observation(text="hi", verdict="hi"))
        ...     s.get(("agent", "sha256:ab", "default", 0)).verdict
        True
        'hi'
    """

    read_only = False

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True,
                 namespace: str = "", read_only: bool = False) -> None:
        # sqlite3, json and pathlib load only when a store is used: `import
        # agentverity_props.store` stays light for runs without one.
        import sqlite3
        from pathlib import Path

        self.path = Path(path)
        self.location = str(self.path)
        self.namespace = str(namespace)
        super().__init__()
        self.read_only = bool(read_only)
        if not self.path.exists():
            if not create or read_only:
                raise BadInput(f"store {self.path} does not exist",
                               f"record first with {setting('record')} or use {setting('auto')}")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif self.path.is_dir():
            raise BadInput(f"store {self.path} is a directory, not an agentverity-props store",
                           _fix())
        else:
            _check_magic(self.path, empty_ok=not read_only)
        try:
            if read_only:  # a URI, so SQLite itself refuses every write to the file
                from urllib.parse import quote
                uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
                if not _side_file(self.path, "-wal").exists():
                    # no process has it open (SQLite removes the -wal file when the last
                    # connection closes): read it as immutable, or a read-only connection
                    # would leave -wal and -shm files behind it
                    uri += "&immutable=1"
                self._conn = sqlite3.connect(uri, uri=True, timeout=_BUSY_TIMEOUT_S,
                                             isolation_level=None, check_same_thread=False)
            else:
                self._conn = sqlite3.connect(str(self.path), timeout=_BUSY_TIMEOUT_S,
                                             isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise BadInput(f"store {self.path} cannot be opened: {exc}", _fix()) from None
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            if isinstance(exc, sqlite3.OperationalError):  # a sound file we cannot use
                if "locked" in str(exc):
                    raise BadInput(f"store {self.path} stayed locked by another process for "
                                   f"{_BUSY_TIMEOUT_S:g} s", "wait for it to finish or pass "
                                   f"another path with {setting('store')}") from None
                raise BadInput(f"store {self.path} cannot be used: {exc}",
                               "check the file and folder are writable, or pass another "
                               f"path with {setting('store')}") from None
            if "malformed" in str(exc):
                raise sqlite3_damaged(self.path, str(exc)) from None
            raise BadInput(f"store {self.path} is not an agentverity-props store: {exc}",
                           _fix()) from None
        except BaseException:
            self._conn.close()
            raise

    # -- setup ------------------------------------------------------------------------------

    def _setup(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id == 0 and version == 0 and self.read_only:
            tables = [r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
            what = (f"a SQLite database made by another program (tables: "
                    f"{', '.join(tables[:5])})" if tables else "an empty SQLite database")
            raise BadInput(f"store {self.path} is not an agentverity-props store: it is {what}",
                           _fix())
        if app_id == 0 and version == 0:
            self._create_schema()
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID:
            raise BadInput(f"store {self.path} is not an agentverity-props store: it is a "
                           "SQLite database made by another program", _fix())
        if version > SCHEMA_VERSION:
            raise BadInput(f"store {self.path} has schema version {version}, newer than this "
                           f"agentverity-props understands ({SCHEMA_VERSION})",
                           "upgrade agentverity-props or record a new store")
        # a damaged page is found here, before any agent call, not halfway through a run
        verdict = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        if verdict != "ok":
            raise sqlite3_damaged(self.path, str(verdict))
        if self.read_only:
            if version < SCHEMA_VERSION:
                # an older file is read as it is (no migration: nothing is written); its
                # rows are the default runner's, as the migration would make them
                conn.execute("CREATE TEMP VIEW draws AS SELECT '' AS ns, agent, fp, "
                             "extractor, idx, ok, value, recorded_at FROM main.draws")
            return
        if version < SCHEMA_VERSION:
            self._migrate()
        _retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
        # WAL + NORMAL: a committed draw survives a killed process (not a power cut), and a
        # commit costs no fsync, which keeps recording cheap.
        conn.execute("PRAGMA synchronous = NORMAL")

    def _create_schema(self) -> None:
        conn = self._conn
        # IMMEDIATE takes the write lock first, so two processes creating the same new file
        # serialise here instead of both deciding it is empty.
        _retry_locked(lambda: conn.execute("BEGIN IMMEDIATE"))
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            if app_id == 0:
                tables = [r[0] for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'")]
                if tables:
                    raise BadInput(f"store {self.path} is not an agentverity-props store: it "
                                   f"holds other tables ({', '.join(tables[:5])})", _fix())
                conn.execute(_SCHEMA)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _migrate(self) -> None:
        """Schema 1 -> 2 in one transaction: a crash leaves the file as it was."""
        conn = self._conn
        _retry_locked(lambda: conn.execute("BEGIN IMMEDIATE"))
        try:
            # another process may have migrated it while this one waited for the lock
            if conn.execute("PRAGMA user_version").fetchone()[0] == 1:
                for statement in _MIGRATE_1:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- access -----------------------------------------------------------------------------

    @_guarded
    def get(self, key: tuple[str, str, str, int], *,
            namespace: str | None = None) -> Observation | None:
        """The stored observation for ``key`` (agent, fp, extractor, index) in ``namespace``
        (default: this store's), or None."""
        ns = self.namespace if namespace is None else namespace
        with self._lock:
            row = self._conn.execute(_GET, (ns, *key)).fetchone()
        if row is None:
            return None
        import json

        return Observation.from_dict(json.loads(row[0]))

    @_guarded
    def put(self, key: tuple[str, str, str, int], obs: Observation, *,
            overwrite: bool = False, namespace: str | None = None) -> bool:
        """Store ``obs`` under ``key``, committed at once; True if this call wrote it.

        Without ``overwrite`` the first stored row wins (another process may have stored the
        same draw first), except that a success replaces a stored failure. With ``overwrite``
        (record mode) the row is replaced. Either way there is one row per key.
        ``namespace`` (default: this store's) is the runner namespace written to.
        """
        if self.read_only:
            return False
        value = encode(obs)
        ns = self.namespace if namespace is None else namespace
        params = (ns, *key, 0 if obs.error is not None else 1, value, time.time())
        with self._lock:
            cur = self._conn.execute(_INSERT if overwrite else _PUT, params)
            return cur.rowcount > 0

    @_guarded
    def count(self) -> int:
        """Number of stored draws."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM draws").fetchone()[0])

    @_guarded
    def indices(self, agent: str, fp: str, extractor: str) -> list[tuple[str, int]]:
        """``(namespace, index)`` of every stored draw of one probe, ordered."""
        with self._lock:
            return [(ns, int(i)) for ns, i in
                    self._conn.execute(_INDICES, (agent, fp, extractor)).fetchall()]

    def rows(self) -> Iterator[StoreRow]:
        """Every stored draw, ordered by key (runner namespace after extractor)."""
        import json

        with self._lock:
            data = self._conn.execute(
                "SELECT agent, fp, extractor, idx, ok, value, ns FROM draws "
                "ORDER BY agent, fp, extractor, ns, idx").fetchall()
        for agent, fp, extractor, idx, ok, value, ns in data:
            yield StoreRow(agent, fp, extractor, int(idx), bool(ok),
                           Observation.from_dict(json.loads(value)), ns)

    __iter__ = rows

    def __len__(self) -> int:
        return self.count()

    def _release(self) -> None:
        self._conn.close()

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"


def encode(obs: Observation) -> str:
    """``obs`` as the JSON every backend stores (``raw`` kept only when it is JSON)."""
    import json

    data = obs.to_dict(include_text=True)
    if obs.raw is None:
        return json.dumps(data, separators=(",", ":"))
    data["raw"] = obs.raw
    try:
        return json.dumps(data, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):  # raw is not JSON: drop it, keep the rest
        del data["raw"]
        return json.dumps(data, separators=(",", ":"))


def _side_file(path: Path, suffix: str) -> Path:
    """SQLite's ``-wal`` / ``-shm`` file of the database at ``path``."""
    return path.with_name(path.name + suffix)


def _check_magic(path: Path, *, empty_ok: bool = True) -> None:
    try:
        with path.open("rb") as fh:
            head = fh.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise BadInput(f"store {path} cannot be read: {exc.strerror or exc}", _fix()) from None
    if not head and not empty_ok:  # reading: an empty file holds no recording
        raise BadInput(f"store {path} is not an agentverity-props store: the file is empty",
                       f"record into it first ({setting('record')}), or pass the path of "
                       "a recorded store")
    if head and head != _SQLITE_MAGIC:  # an empty file is fine to write: SQLite initialises it
        raise BadInput(f"store {path} is not an agentverity-props store: not a SQLite file",
                       _fix())


def _retry_locked(fn: Any) -> Any:
    """Run ``fn``, retrying "database is locked" that SQLite returns without waiting."""
    import sqlite3

    deadline = time.monotonic() + _BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
