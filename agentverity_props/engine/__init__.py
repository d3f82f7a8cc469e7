"""The call engine: the only code that ever calls an agent.

:class:`Engine` owns concurrency, timeouts, retries with backoff, the hard call budget, the
:class:`Ledger` and the record/replay :class:`Store`; :class:`Probe` is an input identified by
its fingerprint. Everything else in agentverity-props draws evidence through
:meth:`Engine.draw`.

Example:
    >>> from agentverity_props.engine import Engine, EngineConfig, Probe, run_sync
    >>> with Engine(lambda p: p.upper(), EngineConfig(max_workers=2)) as eng:
    ...     run_sync(eng.draws(Probe.make("ok"), 2))[1].verdict
    'OK'
"""

from __future__ import annotations

from .._internal.aio import run_sync
from ._config import ENGINE_FIELDS, UNSET, Configurable, EngineConfig, configured, engine_with
from ._engine import Engine
from ._evidence import EvidencePool
from ._ledger import Ledger
from ._pause import PAUSE_FILE_ENV, SharedPause
from ._price import Price, parse_price
from ._probe import Probe
from ._redis_quota import LEASE_S, RENEW_S, RedisPause
from ._redis_store import RedisStore
from ._session import LoopThread, run_session
from ._slots import MAX_IN_FLIGHT_ENV, SLOT_DIR_ENV, SharedSlots
from ._store import Store, StoreMode, StoreRow
from ._store_files import export_store, merge_stores
from ._stores import (
    JsonlStore,
    MultiplexedStore,
    ReadOnlyStore,
    ReplayView,
    StoreBackend,
    open_store,
    runner_namespace,
)
from ._tokens import ledger_part

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "EngineConfig",
    "JsonlStore",
    "MultiplexedStore",
    "Price",
    "ReadOnlyStore",
    "RedisStore",
    "Store",
    "StoreBackend",
]
