"""The store backend protocol: what the engine needs of a record/replay store.

The SQLite :class:`~agentverity_props.engine.Store` is the reference implementation; Redis,
the read-only ``.jsonl`` export and the read-only and multiplexed wrappers follow it
(``_stores.py``, ``_redis_store.py``). Its own module, so that the stores and the merge and
export functions (``_store_files.py``) can both name it without importing each other.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from ..observation import Observation
    from ._store import StoreRow

__all__ = ["ClosesOnce", "Key", "StoreBackend"]

_S = TypeVar("_S", bound="ClosesOnce")

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
