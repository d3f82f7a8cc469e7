"""Results of a tools run: frozen data, rendered elsewhere (``_render.py``, shared reports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._internal.outcome import CaseStatus, Exit, exit_code
from ..results import ToolsDocument
from ._assert import ToolCheck

if TYPE_CHECKING:
    from ..engine import EngineConfig

__all__ = ["SCHEMA", "CaseResult", "RunResult", "ToolsConfig", "ToolsReport"]

_EMBEDDERS = ("auto", "minilm", "lexical")


@dataclass(frozen=True, kw_only=True)
class ToolsConfig:
    """How :func:`~agentverity_props.tools.run_suite` runs a case file, over the file's own
    ``config:`` (each field left ``None`` takes the file's value).

    ``runs`` caps the calls per case, ``otlp_port`` is the OTLP receiver's port (0 = any
    free one), ``span_timeout_s`` the wait for a call's spans, ``embedder`` the similarity
    embedder (auto, minilm, lexical). ``engine`` is how every call is made: ``None`` (the
    default) builds each case's engine from the file (its ``retries``, a timeout of the
    case's answer timeout + span wait + 5 s, one call at a time); an ``EngineConfig`` is used
    as given for every case (its retries, timeout, ``fail_fast``, store, ...; the file's
    ``retries`` and timeouts are then not used), its ``budget``, when set, being the calls of
    the whole file (over the file's ``budget``). Its error policy must stay ``record``.

    >>> from agentverity_props.engine import EngineConfig
    >>> ToolsConfig(engine=EngineConfig(retries=0, fail_fast=1)).engine.fail_fast
    1
    >>> ToolsConfig(runs=0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentverity_props.errors.InvalidArgument: ToolsConfig: runs=0 must be an int >= 1; ...
    """

    runs: int | None = None
    otlp_port: int | None = None
    span_timeout_s: float | None = None
    embedder: str | None = None
    engine: EngineConfig | None = None

    def __post_init__(self) -> None:
        from ..engine import EngineConfig
        from ..errors import InvalidArgument

        def bad(msg: str) -> InvalidArgument:
            return InvalidArgument(f"ToolsConfig: {msg}")

        if self.runs is not None and (not _is_int(self.runs) or self.runs < 1):
            raise bad(f"runs={self.runs!r} must be an int >= 1; use None for the file's runs")
        if self.otlp_port is not None and (
                not _is_int(self.otlp_port) or not 0 <= self.otlp_port <= 65535):
            raise bad(f"otlp_port={self.otlp_port!r} must be an int in 0..65535 (0 = any "
                      "free port) or None")
        if self.span_timeout_s is not None and (
                isinstance(self.span_timeout_s, bool)
                or not isinstance(self.span_timeout_s, (int, float))
                or not 0 < self.span_timeout_s <= 3600):
            raise bad(f"span_timeout_s={self.span_timeout_s!r} must be a number in (0, 3600] "
                      "or None")
        if self.embedder is not None and self.embedder not in _EMBEDDERS:
            raise bad(f"embedder={self.embedder!r}; use one of {', '.join(_EMBEDDERS)} or None")
        if self.engine is not None:
            if not isinstance(self.engine, EngineConfig):
                raise bad(f"engine must be an EngineConfig or None, got "
                          f"{type(self.engine).__name__}; pass engine=EngineConfig(...)")
            if self.engine.error_policy != "record":
                raise bad("engine error_policy must be 'record' (a failed call is an errored "
                          "run, never a verdict); drop error_policy='raise'")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

SCHEMA = ToolsDocument.SCHEMA

#: exit codes: a definite failure outranks incomplete evidence


@dataclass(frozen=True)
class RunResult:
    """One call of one case."""

    index: int
    status: CaseStatus  # runs: pass | fail | error
    trace_id: str | None = None
    tools: tuple[dict[str, Any], ...] = ()
    check: ToolCheck | None = None
    similarity: float | None = None
    latency_s: float = 0.0
    error_kind: str | None = None
    error: str | None = None
    reasons: tuple[str, ...] = ()

    @property
    def fired(self) -> tuple[str, ...]:
        return self.check.fired if self.check is not None else ()

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "status": self.status, "trace_id": self.trace_id,
                "fired": list(self.fired), "tools": [dict(t) for t in self.tools],
                "check": self.check.to_dict() if self.check is not None else None,
                "similarity": self.similarity, "latency_s": round(self.latency_s, 6),
                "error_kind": self.error_kind, "error": self.error,
                "reasons": list(self.reasons)}


@dataclass(frozen=True)
class CaseResult:
    """A case over its repeated calls.

    ``status`` is ``pass``, ``fail``, ``error`` (no usable evidence: every call failed, or
    some failed while the rest passed) or ``inconclusive`` (the sequential rule could not
    decide within ``max_runs``).
    """

    name: str
    target: str
    status: CaseStatus
    runs: tuple[RunResult, ...]
    max_runs: int
    min_pass_rate: float
    alpha: float
    decided_by: str
    interval: tuple[float, float] | None = None
    message: str | None = None
    similarity_threshold: float | None = None

    @property
    def n_pass(self) -> int:
        return sum(r.status == "pass" for r in self.runs)

    @property
    def n_fail(self) -> int:
        return sum(r.status == "fail" for r in self.runs)

    @property
    def n_error(self) -> int:
        return sum(r.status == "error" for r in self.runs)

    @property
    def pass_rate(self) -> float | None:
        n = self.n_pass + self.n_fail
        return self.n_pass / n if n else None

    @property
    def tools_seen(self) -> tuple[str, ...]:
        """Tools that fired in any call, in order of first appearance."""
        return tuple(dict.fromkeys(t for r in self.runs for t in r.fired))

    @property
    def tools_errored(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t for r in self.runs if r.check is not None
                                   for t in r.check.errored))

    @property
    def reasons(self) -> tuple[str, ...]:
        """Distinct failure reasons, most frequent first, with counts."""
        counts: dict[str, int] = {}
        for r in self.runs:
            for why in r.reasons:
                counts[why] = counts.get(why, 0) + 1
        return tuple(f"{why} (x{n})" if n > 1 else why
                     for why, n in sorted(counts.items(), key=lambda kv: -kv[1]))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "target": self.target, "status": self.status,
                "calls": len(self.runs), "max_runs": self.max_runs, "passed": self.n_pass,
                "failed": self.n_fail, "errors": self.n_error, "pass_rate": self.pass_rate,
                "interval": list(self.interval) if self.interval else None,
                "min_pass_rate": self.min_pass_rate, "alpha": self.alpha,
                "decided_by": self.decided_by, "message": self.message,
                "tools_seen": list(self.tools_seen), "tools_errored": list(self.tools_errored),
                "similarity_threshold": self.similarity_threshold,
                "reasons": list(self.reasons), "runs": [r.to_dict() for r in self.runs]}


@dataclass(frozen=True)
class ToolsReport:
    """Everything a ``tools`` run found."""

    config_path: str
    cases: tuple[CaseResult, ...]
    span_sources: tuple[str, ...] = ()
    embedder: str | None = None
    calls: int = 0
    budget: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def exit_code(self) -> Exit:
        """The one precedence (README, "Exit codes"): a case that errored or stayed
        inconclusive makes the evidence incomplete (2), which outranks a failed case (1)."""
        statuses = {c.status for c in self.cases}
        return exit_code(incomplete=bool(statuses & {"error", "inconclusive"}),
                         finding="fail" in statuses)

    def counts(self) -> dict[str, int]:
        out = {"pass": 0, "fail": 0, "error": 0, "inconclusive": 0}
        for c in self.cases:
            out[c.status] = out.get(c.status, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "config": self.config_path, "exit_code": self.exit_code,
                "summary": self.counts(), "calls": self.calls, "budget": self.budget,
                "embedder": self.embedder, "span_sources": list(self.span_sources),
                "notes": list(self.notes), "cases": [c.to_dict() for c in self.cases]}
