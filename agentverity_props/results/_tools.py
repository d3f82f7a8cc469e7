"""The ``tools`` result file format (``agentverity-props tools --format json``)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model

__all__ = ["ToolCase", "ToolCaseRun", "ToolCheck", "ToolSeen", "ToolsDocument"]

_Count = Annotated[int, Field(ge=0)]


class ToolSeen(Model):
    """A tool call seen in the agent's spans, in order."""

    name: str
    arguments: dict[str, Any]
    status: str | None
    call_id: str | None


class ToolCheck(Model):
    """The case's tool assertions against one call's tool calls."""

    passed: bool
    fired: list[str]
    errored: list[str]
    missing: list[list[str]] | list[str]
    forbidden_fired: list[str]
    sequence_ok: bool | None
    failed_args: list[str]
    reasons: list[str]


class ToolCaseRun(Model):
    """One call of one case."""

    index: _Count
    status: Literal["pass", "fail", "error"]
    trace_id: str | None
    fired: list[str]
    tools: list[ToolSeen]
    check: ToolCheck | None
    similarity: float | None
    latency_s: Annotated[float, Field(ge=0.0)]
    error_kind: str | None
    error: str | None
    reasons: list[str]


class ToolCase(Model):
    """A case over its repeated calls: ``inconclusive`` when its sequential rule could not
    decide within ``max_runs``, ``error`` when a call gave no usable evidence."""

    name: str
    target: str
    status: Literal["pass", "fail", "error", "inconclusive"]
    calls: _Count
    max_runs: Annotated[int, Field(ge=1)]
    passed: _Count
    failed: _Count
    errors: _Count
    pass_rate: Annotated[float, Field(ge=0.0, le=1.0)] | None
    interval: Annotated[list[float], Field(min_length=2, max_length=2)] | None
    min_pass_rate: Annotated[float, Field(ge=0.0, le=1.0)]
    alpha: Annotated[float, Field(gt=0.0, lt=1.0)]
    decided_by: str
    message: str | None
    tools_seen: list[str]
    tools_errored: list[str]
    similarity_threshold: float | None
    reasons: list[str]
    runs: list[ToolCaseRun]


class ToolsDocument(Document):
    """Written by ``agentverity-props tools --format json`` and ``ToolsReport.to_dict()``:
    each case's calls, the tool calls read from their OpenTelemetry spans and the case's
    decision. Prompts are the case file's own; answers are not kept."""

    TITLE: ClassVar[str] = "agentverity-props tool-call cases result"

    schema_: Annotated[Literal["agentverity_props.tools/1"], Field(alias="schema")]
    config: str
    exit_code: Literal[0, 1, 2]
    summary: dict[Literal["pass", "fail", "error", "inconclusive"], _Count]
    calls: _Count
    budget: Annotated[int, Field(ge=0)] | None
    embedder: str | None
    span_sources: list[str]
    notes: list[str]
    cases: list[ToolCase]
