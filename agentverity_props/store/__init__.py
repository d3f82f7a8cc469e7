"""The record/replay stores: where the engine keeps every draw, and reads it back.

One protocol, :class:`StoreBackend` (get, put, the indices of a probe's draws, every row,
count, close), and its backends: :class:`Store` (one SQLite file, the embedded default),
:class:`RedisStore` (a server every CI runner reaches) and :class:`JsonlStore` (a ``.jsonl``
export, read only); the wrappers :class:`ReadOnlyStore` and :class:`MultiplexedStore`;
``open_store`` picks a backend by the form of ``--store``; ``merge_stores`` and
``export_store`` copy draws between stores. A draw is keyed by its runner namespace
(``runner_namespace``). With a ``redis://`` store the engine also keeps its call slots and
its 429 pause in the store's key space (``RedisSlots``, ``RedisPause``).

Example:
    >>> from agentverity_props.store import Store
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d, Store(pathlib.Path(d) / "s.db") as s:
    ...     s.count()
    0
"""

from __future__ import annotations

from ._backend import StoreBackend
from ._namespace import check_namespace, runner_namespace
from ._redis_quota import LEASE_S, RENEW_S, RedisPause
from ._redis_store import RedisStore
from ._store import Store, StoreMode, StoreRow
from ._store_files import export_store, merge_stores
from ._stores import (
    JsonlStore,
    MultiplexedStore,
    ReadOnlyStore,
    ReplayView,
    ScopedStore,
    open_store,
)

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "JsonlStore",
    "MultiplexedStore",
    "ReadOnlyStore",
    "RedisStore",
    "Store",
    "StoreBackend",
]
