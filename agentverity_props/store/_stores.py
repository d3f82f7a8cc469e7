"""Store backends: the protocol, the wrappers, opening a store from a path or URL.

Every backend holds draws keyed by ``(runner namespace, agent, fp, extractor, index)``. A
runner writes into its own namespace, so two CI runners that each number their draws from 0
never overwrite each other. The shapes follow Hypothesis's example databases: a backend
protocol, :class:`ReadOnlyStore` (replay never writes), :class:`MultiplexedStore` (write to
all, read from the first that has the draw), :class:`JsonlStore` (a portable export, read
only), and :func:`open_store`, which picks one from ``--store``:

* a path: the embedded SQLite :class:`~agentverity_props.store.Store` (the default);
* ``redis://host:port/db?namespace=team``: :class:`RedisStore` (extra ``redis``);
* a ``.jsonl`` file written by ``agentverity-props store export``: replay only.

Replay pools the runners (:class:`ReplayView`): a probe's draws are read runner by runner,
the replaying runner's own namespace first, at its recorded indices, then each other
namespace in name order after the last index of the previous one.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._internal.settings import setting
from ..errors import BadInput, InvalidArgument
from ..observation import Observation
from ._backend import Key, StoreBackend
from ._namespace import check_namespace, runner_namespace
from ._store import Store, StoreKey, StoreRow

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["JsonlStore", "MultiplexedStore", "ReadOnlyStore", "ReplayView", "ScopedStore",
           "StoreBackend", "check_namespace", "open_store", "runner_namespace",
           "scope_namespace"]


class _Wrapper:
    def __init__(self, inner: StoreBackend) -> None:
        self.inner = inner
        self.location = inner.location
        self.namespace = inner.namespace

    def get(self, key: Key, *, namespace: str | None = None) -> Observation | None:
        return self.inner.get(key, namespace=namespace)

    def indices(self, agent: str, fp: str, extractor: str) -> list[tuple[str, int]]:
        return self.inner.indices(agent, fp, extractor)

    def rows(self) -> Iterator[StoreRow]:
        return self.inner.rows()

    def count(self) -> int:
        return self.inner.count()

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ReadOnlyStore(_Wrapper):
    """``inner``, never written to (Hypothesis's ``ReadOnlyDatabase``): :meth:`put` is a
    no-op returning False. Replay opens every store through it."""

    read_only = True

    def put(self, key: Key, obs: Observation, *, overwrite: bool = False,
            namespace: str | None = None) -> bool:
        return False

    def __repr__(self) -> str:
        return f"ReadOnlyStore({self.inner!r})"


def scope_namespace(runner: str, scope: str) -> str:
    """The namespace of ``scope`` (one test) under the runner namespace ``runner``:
    ``runner|scope`` (``scope`` alone under ``""``), control characters replaced, at most
    120 characters (a longer one keeps its start and a digest of the whole).

    >>> scope_namespace("", "tests/test_gate.py::test_case")
    'tests/test_gate.py::test_case'
    >>> scope_namespace("shard-1", "t.py::test_a")
    'shard-1|t.py::test_a'
    """
    name = f"{runner}|{scope}" if runner else scope
    name = "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in name)
    if len(name) > 120:
        import hashlib
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[:103]}~{digest}"
    return check_namespace(name)


class ScopedStore(_Wrapper):
    """``inner`` read and written in a namespace of its own under the runner's (see
    :func:`scope_namespace`): the draws of one ``@agent_property`` test, which numbers its
    draws of a probe from 0 like every other test of the session. Without it two tests
    sharing a prompt would claim the same keys: ``record`` would replace one test's draws
    with the other's, and the replay of the first would read draws it never made."""

    def __init__(self, inner: StoreBackend, scope: str) -> None:
        super().__init__(inner)
        self.namespace = scope_namespace(inner.namespace, scope)
        self.read_only = inner.read_only

    def get(self, key: Key, *, namespace: str | None = None) -> Observation | None:
        return self.inner.get(key, namespace=self.namespace if namespace is None else namespace)

    def put(self, key: Key, obs: Observation, *, overwrite: bool = False,
            namespace: str | None = None) -> bool:
        return self.inner.put(key, obs, overwrite=overwrite,
                              namespace=self.namespace if namespace is None else namespace)

    def __repr__(self) -> str:
        return f"ScopedStore({self.inner!r}, namespace={self.namespace!r})"


class MultiplexedStore:
    """Several stores as one (Hypothesis's ``MultiplexedDatabase``): a draw is written to
    each, and read from the first that has it. E.g. a local SQLite copy next to the team's
    Redis, or a CI artifact next to the shared store.

    The first store's namespace is the one written to.
    """

    def __init__(self, *stores: StoreBackend) -> None:
        if not stores:
            raise InvalidArgument("MultiplexedStore needs at least one store")
        self.stores = stores
        self.location = " + ".join(s.location for s in stores)
        self.namespace = stores[0].namespace
        self.read_only = all(s.read_only for s in stores)

    def get(self, key: Key, *, namespace: str | None = None) -> Observation | None:
        ns = self.namespace if namespace is None else namespace
        for s in self.stores:
            found = s.get(key, namespace=ns)
            if found is not None:
                return found
        return None

    def put(self, key: Key, obs: Observation, *, overwrite: bool = False,
            namespace: str | None = None) -> bool:
        ns = self.namespace if namespace is None else namespace
        wrote = [s.put(key, obs, overwrite=overwrite, namespace=ns) for s in self.stores]
        return wrote[0]

    def indices(self, agent: str, fp: str, extractor: str) -> list[tuple[str, int]]:
        return sorted({i for s in self.stores for i in s.indices(agent, fp, extractor)})

    def rows(self) -> Iterator[StoreRow]:
        seen: set[tuple[str, StoreKey]] = set()
        for s in self.stores:
            for row in s.rows():
                if (row.namespace, row.key) not in seen:
                    seen.add((row.namespace, row.key))
                    yield row

    def count(self) -> int:
        return sum(1 for _ in self.rows())

    def close(self) -> None:
        for s in self.stores:
            s.close()

    def __enter__(self) -> MultiplexedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MultiplexedStore({', '.join(repr(s) for s in self.stores)})"


class ReplayView:
    """Replay's reading of a store: every runner's draws of a probe, pooled.

    Draw ``i`` of a probe is found runner by runner: the store's own namespace first, then
    the others in name order; each namespace covers as many indices as its highest
    recorded index + 1, at their recorded positions (a gap stays a gap, so a store with one
    namespace replays exactly as recorded). The order of each probe is read once and kept,
    so one replay sees one order.
    """

    def __init__(self, store: StoreBackend) -> None:
        self.store = store
        self._orders: dict[tuple[str, str, str], list[tuple[str, int]]] = {}
        self._lock = threading.Lock()

    def _segments(self, agent: str, fp: str, extractor: str) -> list[tuple[str, int]]:
        group = (agent, fp, extractor)
        with self._lock:
            got = self._orders.get(group)
        if got is None:
            top: dict[str, int] = {}
            for ns, idx in self.store.indices(agent, fp, extractor):
                top[ns] = max(top.get(ns, -1), idx)
            own = self.store.namespace
            names = ([own] if own in top else []) + sorted(n for n in top if n != own)
            got = [(n, top[n] + 1) for n in names]
            with self._lock:
                got = self._orders.setdefault(group, got)
        return got

    def get(self, key: Key) -> Observation | None:
        agent, fp, extractor, index = key
        for ns, length in self._segments(agent, fp, extractor):
            if index < length:
                return self.store.get((agent, fp, extractor, index), namespace=ns)
            index -= length
        return None


class JsonlStore:
    """A store exported as JSON Lines (``agentverity-props store export``), read only.

    Line 1 is a header (``{"format": "agentverity-props-store", "version": 1, ...}``); each
    further line one draw: ``namespace``, ``agent``, ``fp``, ``extractor``, ``index``, ``ok``
    and the ``observation``. The file is read whole when opened.
    """

    read_only = True

    def __init__(self, path: str | os.PathLike[str], *, namespace: str = "") -> None:
        from ._store_files import read_jsonl

        self.path = path
        self.location = str(path)
        self.namespace = namespace
        self._rows: dict[tuple[str, StoreKey], StoreRow] = {}
        for row in read_jsonl(path):
            self._rows.setdefault((row.namespace, row.key), row)

    def get(self, key: Key, *, namespace: str | None = None) -> Observation | None:
        ns = self.namespace if namespace is None else namespace
        row = self._rows.get((ns, StoreKey(*key)))
        return None if row is None else row.observation

    def put(self, key: Key, obs: Observation, *, overwrite: bool = False,
            namespace: str | None = None) -> bool:
        return False

    def indices(self, agent: str, fp: str, extractor: str) -> list[tuple[str, int]]:
        return sorted((ns, k.draw_index) for ns, k in self._rows
                      if (k.agent, k.fp, k.extractor) == (agent, fp, extractor))

    def rows(self) -> Iterator[StoreRow]:
        return iter(sorted(self._rows.values(),
                           key=lambda r: (r.agent, r.fp, r.extractor, r.namespace,
                                          r.draw_index)))

    def count(self) -> int:
        return len(self._rows)

    def close(self) -> None:
        pass

    def __enter__(self) -> JsonlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __repr__(self) -> str:
        return f"JsonlStore({self.location!r})"


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(spec: object) -> bool:
    """True when ``spec`` is a store URL rather than a path."""
    return isinstance(spec, str) and bool(_URL.match(spec))


def open_store(spec: Any, *, mode: str = "auto", namespace: str | None = None,
               create: bool | None = None) -> StoreBackend:
    """The store ``spec`` names: a backend object, a SQLite path, a ``.jsonl`` export or a
    ``redis://`` URL; read only in ``replay`` mode.

    Args:
        spec: what ``--store`` was given (or a :class:`StoreBackend`, used as it is).
        mode: the engine's store mode; ``replay`` opens read only and needs the store to
            exist.
        namespace: the runner namespace (see :func:`runner_namespace`).
        create: whether a missing SQLite file is created (default: unless replaying).
    """
    replay = mode == "replay"
    if isinstance(spec, StoreBackend):
        store: StoreBackend = spec
    elif is_url(spec):
        scheme = spec.split("://", 1)[0].lower()
        if scheme not in ("redis", "rediss", "unix"):
            raise BadInput(f"store URL scheme {scheme}:// is not supported",
                           "use a file path (SQLite) or redis://host:port/db")
        from ._redis_store import RedisStore
        store = RedisStore(spec, runner=namespace, must_exist=replay)
    elif str(spec).endswith(".jsonl"):
        if not replay:
            raise BadInput(f"store {spec} is a JSON Lines export, which is read only",
                           f"replay it with {setting('replay')}, or merge it into a store with "
                           "`agentverity-props store merge`")
        store = JsonlStore(_path(spec), namespace=runner_namespace(namespace))
    else:
        # replay only reads: opened read only, so a replay never initialises, migrates
        # or otherwise writes the file it reads
        store = Store(_path(spec), create=not replay if create is None else create,
                      namespace=runner_namespace(namespace), read_only=replay)
    if replay and not store.read_only:
        return ReadOnlyStore(store)
    return store


def _path(spec: Any) -> Path:
    from pathlib import Path
    return Path(spec)
