"""The engine's settings, validated when built."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..errors import InvalidArgument
from ..observation import DEFAULT_EXTRACTOR, VerdictExtractor
from ._store import StoreMode

if TYPE_CHECKING:
    from ._stores import StoreBackend

__all__ = ["EngineConfig"]

_POLICIES = ("raise", "record")
_MODES = tuple(m.value for m in StoreMode)


@dataclass(frozen=True)
class EngineConfig:
    """How the engine calls the agent.

    Attributes:
        max_workers: concurrent calls across distinct probes (per event loop). Repeats of
            one probe always run one after another.
        timeout_s: seconds per attempt (None = wait forever). A *sync* agent that times out
            keeps running in its worker thread (Python cannot kill a thread); its worker
            slot stays taken until it returns, so the agent never sees more than
            ``max_workers`` calls at once.
        retries: extra attempts for retryable failures only (``AgentCallError(retryable=True)``
            and timeouts).
        backoff_base_s, backoff_max_s: exponential backoff with full jitter between attempts;
            a server's ``retry_after_s`` is honoured as a floor.
        budget: hard cap on live agent calls; every attempt, retries included, costs one and
            replayed draws cost none. Never exceeded, even under concurrency and retries.
        error_policy: ``"record"`` returns a failed call as an ``Observation`` with ``error``
            set; ``"raise"`` raises ``AgentCallError``.
        store_path: the record/replay store: a SQLite file path, a ``.jsonl`` export
            (replay only), a ``redis://host:port/db?namespace=team`` URL, or a
            :class:`~agentverity_props.engine.StoreBackend` object.
        store_runner: the runner namespace draws are written to (default: see
            :func:`~agentverity_props.engine.runner_namespace`).
        store_mode: ``"off"``, ``"record"``, ``"replay"`` or ``"auto"`` (see ``StoreMode``).
        extractor: turns each observation into a verdict; its ``config_id`` is part of the
            store key.
        seed: seeds the backoff jitter.
        fail_fast: stop the engine (no new call; the evidence is incomplete, the cause is on
            ``Engine.stop_cause``) when each of the agent's first ``fail_fast`` answered draws
            failed or gave no verdict: an agent that fails persistently costs at most that
            many draws (plus calls in flight and retries), not a whole run. ``None`` never
            stops. With ``error_policy="raise"`` the first failure already stops the caller.

    Example:
        >>> EngineConfig(max_workers=8, budget=200).budget
        200
        >>> EngineConfig(max_workers=0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        agentverity_props.errors.InvalidArgument: max_workers must be an int >= 1, got 0; ...
    """

    max_workers: int = 4
    timeout_s: float | None = 60.0
    retries: int = 2
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    budget: int | None = None
    error_policy: Literal["raise", "record"] = "record"
    store_path: str | os.PathLike[str] | StoreBackend | None = None
    store_mode: Literal["off", "record", "replay", "auto"] = "off"
    store_runner: str | None = None
    extractor: VerdictExtractor = DEFAULT_EXTRACTOR
    seed: int = 0
    fail_fast: int | None = 5

    def __post_init__(self) -> None:
        if not _is_int(self.max_workers) or self.max_workers < 1:
            raise InvalidArgument(f"max_workers must be an int >= 1, got {self.max_workers!r}; "
                                  "use 1 for sequential calls")
        if self.timeout_s is not None and (
                not _is_real(self.timeout_s) or not self.timeout_s > 0):
            raise InvalidArgument(f"timeout_s must be a number > 0 or None, got "
                                  f"{self.timeout_s!r}; use None to wait without limit")
        if self.fail_fast is not None and (not _is_int(self.fail_fast) or self.fail_fast < 1):
            raise InvalidArgument(f"fail_fast must be an int >= 1 or None, got "
                                  f"{self.fail_fast!r}")
        if not _is_int(self.retries) or self.retries < 0:
            raise InvalidArgument(f"retries must be an int >= 0, got {self.retries!r}; "
                                  "use 0 to never retry")
        for name in ("backoff_base_s", "backoff_max_s"):
            value = getattr(self, name)
            if not _is_real(value) or value < 0 or math.isinf(value):
                raise InvalidArgument(f"{name} must be a finite number >= 0, got {value!r}")
        if self.backoff_max_s < self.backoff_base_s:
            raise InvalidArgument(
                f"backoff_max_s ({self.backoff_max_s!r}) is below backoff_base_s "
                f"({self.backoff_base_s!r}); raise backoff_max_s or lower backoff_base_s")
        if self.budget is not None and (not _is_int(self.budget) or self.budget < 0):
            raise InvalidArgument(f"budget must be an int >= 0 or None, got {self.budget!r}; "
                                  "use None for no limit")
        if self.error_policy not in _POLICIES:
            raise InvalidArgument(f"error_policy must be 'raise' or 'record', got "
                                  f"{self.error_policy!r}")
        mode = self.store_mode
        if isinstance(mode, StoreMode):
            mode = mode.value
        if mode not in _MODES:
            raise InvalidArgument(f"store_mode must be one of {', '.join(_MODES)}, got "
                                  f"{self.store_mode!r}")
        # plain str, so comparisons on the hot path are cheap and reprs stay readable
        object.__setattr__(self, "store_mode", mode)
        if mode != "off" and self.store_path is None:
            raise InvalidArgument(f"store_mode={mode!r} needs a store_path; pass "
                                  "store_path='draws.db' (CLI: --store FILE)")
        if mode == "off" and self.store_path is not None:
            raise InvalidArgument("store_path is set but store_mode is 'off'; pass "
                                  "store_mode='auto', 'record' or 'replay', or drop store_path")
        if self.store_runner is not None:
            from ._runner import check_namespace
            check_namespace(self.store_runner)
        if not isinstance(self.extractor, VerdictExtractor):
            raise InvalidArgument(
                f"extractor must be a VerdictExtractor, got {type(self.extractor).__name__}; "
                "build one with by_key(), by_regex() or by_callable()")
        if not _is_int(self.seed):
            raise InvalidArgument(f"seed must be an int, got {self.seed!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and not (isinstance(value, float) and math.isnan(value))
