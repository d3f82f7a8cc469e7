"""The store backend protocol: what the engine needs of a record/replay store.

The SQLite :class:`~agentverity_props.store.Store` is the reference implementation; Redis,
the read-only ``.jsonl`` export and the read-only and multiplexed wrappers follow it
(``_stores.py``, ``_redis_store.py``). Its own module, so that the stores and the merge and
export functions (``_store_files.py``) can both name it without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..observation import Observation
    from ._store import StoreRow

__all__ = ["Key", "StoreBackend"]

#: a draw's key: (agent identity, input fingerprint, extractor id, draw index)
Key = tuple[str, str, str, int]


@runtime_checkable
class StoreBackend(Protocol):
    """What the engine needs of a store (the SQLite :class:`Store` is the reference).

    Attributes:
        location: where the draws live, for messages (never a password).
        namespace: the runner namespace written to, and read by default.
        read_only: true when :meth:`put` never writes.
    """

    location: str
    namespace: str
    read_only: bool

    def get(self, key: Key, *, namespace: str | None = None) -> Observation | None:
        """The draw ``key`` of ``namespace`` (default: this runner's), or None."""

    def put(self, key: Key, obs: Observation, *, overwrite: bool = False,
            namespace: str | None = None) -> bool:
        """Store a draw: first write wins (a success replaces a failure) unless
        ``overwrite``; True when this call wrote it."""

    def indices(self, agent: str, fp: str, extractor: str) -> list[tuple[str, int]]:
        """``(namespace, index)`` of every stored draw of one probe, sorted."""

    def rows(self) -> Iterator[StoreRow]:
        """Every stored draw."""

    def count(self) -> int:
        """Number of stored draws."""

    def close(self) -> None:
        """Release connections (idempotent)."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: object) -> None: ...

