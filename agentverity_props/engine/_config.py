"""The engine's settings, validated when built."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._internal.settings import setting
from .._internal.unset import UNSET
from ..errors import InvalidArgument
from ..observation import DEFAULT_EXTRACTOR, VerdictExtractor
from ..store import StoreMode
from ._price import Price

if TYPE_CHECKING:
    from ..store import StoreBackend

__all__ = ["ENGINE_FIELDS", "UNSET", "Configurable", "EngineConfig", "configured",
           "engine_with"]

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
            :class:`~agentverity_props.store.StoreBackend` object.
        store_runner: the runner namespace draws are written to (default: see
            :func:`~agentverity_props.store.runner_namespace`).
        store_mode: ``"off"``, ``"record"``, ``"replay"`` or ``"auto"`` (see ``StoreMode``).
        extractor: turns each observation into a verdict; its ``config_id`` is part of the
            store key.
        seed: seeds the backoff jitter.
        fail_fast: stop the engine (no new call; the evidence is incomplete, the cause is on
            ``Engine.stop_cause``) when each of the agent's first ``fail_fast`` answered draws
            failed or gave no verdict: an agent that fails persistently costs at most that
            many draws (plus calls in flight and retries), not a whole run. ``None`` never
            stops. With ``error_policy="raise"`` the first failure already stops the caller.
        max_calls_in_flight: at most this many live agent calls at once across every engine
            that shares the quota: with a ``redis://`` store, every process of every runner
            on its ``?namespace=`` (slots leased for 10 s, renewed while the process lives);
            else the processes naming ``AGENTVERITY_PROPS_SLOT_DIR`` (lock files); else the
            engines of this process. ``None`` (default): only ``max_workers`` per engine, or
            ``AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT`` when set.
        price: what the agent's tokens cost (a :class:`~agentverity_props.engine.Price`): the
            reports turn the tokens the adapter reports into money. ``None``: tokens only.

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
    max_calls_in_flight: int | None = None
    price: Price | None = None

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
                                  f"{self.fail_fast!r}; use None to never stop early")
        if self.max_calls_in_flight is not None and (
                not _is_int(self.max_calls_in_flight) or self.max_calls_in_flight < 1):
            raise InvalidArgument(f"max_calls_in_flight must be an int >= 1 or None, got "
                                  f"{self.max_calls_in_flight!r}; use None for no shared limit")
        if self.price is not None and not isinstance(self.price, Price):
            raise InvalidArgument(f"price must be a Price, got {type(self.price).__name__}; "
                                  "build one with Price(input_per_1k=..., output_per_1k=...) "
                                  "or Price.load('prices.yaml', model=...)")
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
                                  f"{setting('store', repr('draws.db'))}")
        if mode == "off" and self.store_path is not None:
            raise InvalidArgument("store_path is set but store_mode is 'off'; pass "
                                  "store_mode='auto', 'record' or 'replay', or drop store_path")
        if self.store_runner is not None:
            from ..store import check_namespace
            check_namespace(self.store_runner)
        if not isinstance(self.extractor, VerdictExtractor):
            raise InvalidArgument(
                f"extractor must be a VerdictExtractor, got {type(self.extractor).__name__}; "
                "build one with by_key(), by_regex() or by_callable()")
        if not _is_int(self.seed):
            raise InvalidArgument(f"seed must be an int, got {self.seed!r}")

    def with_fields(self, **fields: Any) -> EngineConfig:
        """A copy with ``fields`` applied over this config (see :func:`engine_with`).

        >>> EngineConfig(budget=100).with_fields(retries=0).retries
        0
        """
        return engine_with(self, fields, where="EngineConfig.with_fields")


#: Every :class:`EngineConfig` field: the engine keywords every entry point and every
#: ``XConfig`` accepts flat (applied over its nested ``engine``).
ENGINE_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(EngineConfig))


def engine_with(base: EngineConfig | None, fields: Mapping[str, Any], *,
                where: str) -> EngineConfig:
    """``base`` (default ``EngineConfig()``) with the engine keywords ``fields`` applied.

    The one mechanism behind every flat engine keyword (``RunConfig(budget=...)``,
    ``measure(retries=...)``, ``agent_property(store_path=...)``): a keyword that is
    :data:`UNSET` is skipped; ``store_mode=None`` means "unchanged"; ``extractor=None`` the
    default extractor; a ``store_path`` given without a ``store_mode`` over a config whose
    store is off turns the store on in ``auto`` mode (``store_path=None`` turns it off). An
    unknown keyword is an :class:`~agentverity_props.errors.InvalidArgument` naming the
    valid ones (``where`` names the caller).

    >>> engine_with(None, {"budget": 200, "store_path": "d.db"}, where="demo").store_mode
    'auto'
    >>> engine_with(None, {"retry": 1}, where="demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentverity_props.errors.InvalidArgument: demo got unknown argument(s) retry; engine ...
    """
    base = EngineConfig() if base is None else base
    if not isinstance(base, EngineConfig):
        raise InvalidArgument(f"{where}: engine must be an EngineConfig, got "
                              f"{type(base).__name__}; build one with EngineConfig(...)")
    given = {k: v for k, v in fields.items() if v is not UNSET}
    unknown = sorted(set(given) - set(ENGINE_FIELDS))
    if unknown:
        raise InvalidArgument(f"{where} got unknown argument(s) {', '.join(unknown)}; "
                              "engine settings are " + ", ".join(ENGINE_FIELDS))
    if "store_mode" in given and given["store_mode"] is None:
        del given["store_mode"]
    if "extractor" in given and given["extractor"] is None:
        given["extractor"] = DEFAULT_EXTRACTOR
    if "store_path" in given and "store_mode" not in given:
        if given["store_path"] is None:
            given["store_mode"] = "off"
        elif base.store_mode == "off":
            given["store_mode"] = "auto"
    return dataclasses.replace(base, **given) if given else base


C = TypeVar("C")


def configured(cls: type[C], config: C | None, given: Mapping[str, Any], *,
               where: str) -> C:
    """``config`` (default ``cls()``) with the keywords ``given`` explicitly applied over it.

    The one rule of every entry point that takes both ``config=`` and flat keywords, of
    :meth:`Configurable.with_fields` and of the pytest plugin's options: a keyword given
    explicitly (not :data:`UNSET`) overrides the config. A keyword naming a field of ``cls``
    replaces that field (``engine=`` replaces the nested engine whole); one naming an
    :class:`EngineConfig` field is applied over the nested ``engine`` with
    :func:`engine_with`. ``cls`` is a dataclass with an ``engine`` field. The result is built
    by ``cls``'s constructor, so every setting is validated and resolved in one place, the
    config's own: a field the constructor resolved from others (``RunConfig.tolerance`` from
    ``precision``) is rebuilt from the value it was given (``config._given``), so changing
    ``precision`` re-resolves it.

    >>> from dataclasses import dataclass, field
    >>> @dataclass(frozen=True)
    ... class DemoConfig:
    ...     alpha: float = 0.05
    ...     engine: EngineConfig = field(default_factory=EngineConfig)
    >>> c = configured(DemoConfig, DemoConfig(alpha=0.1), {"alpha": UNSET, "retries": 0},
    ...                where="demo")
    >>> c.alpha, c.engine.retries
    (0.1, 0)
    """
    if config is None:
        config = cls()
    elif not isinstance(config, cls):
        raise InvalidArgument(f"{where}: config must be a {cls.__name__}, got "
                              f"{type(config).__name__}; build one with {cls.__name__}(...)")
    own_names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    given = {k: v for k, v in given.items() if v is not UNSET}
    own = {k: v for k, v in given.items() if k in own_names}
    flat = {k: v for k, v in given.items() if k not in own_names}
    unknown = sorted(set(flat) - set(ENGINE_FIELDS))
    if unknown:
        mine = ", ".join(sorted(own_names - {"engine"}))
        raise InvalidArgument(f"{where} got unknown argument(s) {', '.join(unknown)}; "
                              f"its settings are {mine} and the engine settings "
                              + ", ".join(ENGINE_FIELDS))
    if flat:
        engine = own.get("engine", getattr(config, "engine"))  # noqa: B009
        own["engine"] = engine_with(engine, flat, where=where)
    if not own:
        return config
    as_given = {k: v for k, v in getattr(config, "_given", {}).items() if k not in own}
    return dataclasses.replace(config, **as_given, **own)  # type: ignore[type-var]


class Configurable:
    """A config whose settings are changed through its constructor: ``with_fields``.

    >>> from agentverity_props.runner import RunConfig
    >>> RunConfig(precision="cheap").with_fields(precision="strict", retries=0).tolerance
    0.05
    """

    def with_fields(self: C, **fields: Any) -> C:
        """A copy with ``fields`` applied over this config: its own fields, and any
        :class:`EngineConfig` field over its nested ``engine`` (validated and resolved by the
        constructor, as when the config was made)."""
        return configured(type(self), self, fields, where=f"{type(self).__name__}.with_fields")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and not (isinstance(value, float) and math.isnan(value))
