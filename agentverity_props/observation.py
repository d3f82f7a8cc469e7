"""What one agent call leaves behind: an :class:`Observation`.

Adapters produce observations; the engine stamps them with a verdict through a
:class:`VerdictExtractor`; every question the toolkit asks (meter, relations, snapshots,
benchmarks, tool assertions) reads them. Plain frozen data, cheap to build.

An extraction failure is a typed :class:`NoDecision` held in ``Observation.no_decision``,
never a verdict: the statistics treat it as incomplete evidence.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ._internal.jsonpath import MISSING, lookup, parse_path
from ._internal.settings import setting
from .errors import InvalidArgument

__all__ = [
    "Observation",
    "ToolCall",
    "Usage",
    "VerdictExtractor",
    "by_callable",
    "by_key",
    "by_regex",
]

Layer = Literal["verdict", "text", "tools"]
LAYERS: tuple[str, ...] = ("verdict", "text", "tools")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call, in the order the agent made it."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    status: str = "success"  # "success" | "error"
    call_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": dict(self.arguments), "status": self.status,
                "call_id": self.call_id}


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and cost, when the agent reports them."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cost_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "total_tokens": self.total_tokens, "cost_usd": self.cost_usd}


@dataclass(frozen=True, slots=True)
class CallFailure:
    """Why a call produced no usable output (kept when the error policy is ``record``)."""

    kind: str  # "timeout" | "error" | "rate_limit" | "http_5xx" | "bad_output" | ...
    message: str
    retryable: bool = False
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "retryable": self.retryable,
                "attempts": self.attempts}


@dataclass(frozen=True, slots=True)
class NoDecision:
    """The verdict could not be extracted from an otherwise successful call."""

    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason}


@dataclass(frozen=True, slots=True)
class Observation:
    """One agent call's outcome.

    Attributes:
        text: the final answer text.
        verdict: the categorical label the statistics test (``None`` if not extracted).
        tools: ordered tool calls.
        raw: the adapter's raw result (a dict, structured output...); never persisted
            unless it is JSON-serialisable.
        latency_s: wall-clock seconds of the successful attempt.
        usage: tokens / cost when known.
        error: set when the call failed; such an observation is never a verdict.
        no_decision: set when the call succeeded but no verdict could be extracted.
    """

    text: str = ""
    verdict: str | None = None
    tools: tuple[ToolCall, ...] = ()
    raw: Any = None
    latency_s: float = 0.0
    usage: Usage | None = None
    error: CallFailure | None = None
    no_decision: NoDecision | None = None

    @property
    def ok(self) -> bool:
        """True when the call succeeded (it may still lack a verdict)."""
        return self.error is None

    @property
    def decided(self) -> bool:
        """True when this observation carries a usable verdict."""
        return self.error is None and self.no_decision is None and self.verdict is not None

    def key(self, layer: str = "verdict") -> str | None:
        """The categorical value compared across draws at ``layer`` (None = no evidence)."""
        if self.error is not None:
            return None
        if layer == "verdict":
            return self.verdict if self.no_decision is None else None
        if layer == "text":
            # compared by digest: equality is all the statistics need, and reports that show
            # per-input counts then never carry answer text (or megabytes of it)
            return "text:" + hashlib.sha256(self.text.encode("utf-8", "surrogatepass")
                                            ).hexdigest()[:16]
        if layer == "tools":
            return ">".join(t.name for t in self.tools if t.status == "success")
        raise ValueError(f"unknown layer {layer!r}; use one of {', '.join(LAYERS)}")

    def fired_tools(self) -> tuple[str, ...]:
        """Names of the tools that ran successfully, in order."""
        return tuple(t.name for t in self.tools if t.status == "success")

    def to_dict(self, *, include_text: bool = False) -> dict[str, Any]:
        """JSON-ready dict. The answer text is kept only when ``include_text`` is set."""
        return {
            "verdict": self.verdict,
            "text": self.text if include_text else None,
            "tools": [t.to_dict() for t in self.tools],
            "latency_s": self.latency_s,
            "usage": self.usage.to_dict() if self.usage else None,
            "error": self.error.to_dict() if self.error else None,
            "no_decision": self.no_decision.to_dict() if self.no_decision else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Observation:
        usage = data.get("usage")
        error = data.get("error")
        nd = data.get("no_decision")
        return cls(
            text=data.get("text") or "",
            verdict=data.get("verdict"),
            tools=tuple(ToolCall(**t) for t in data.get("tools") or ()),
            raw=data.get("raw"),
            latency_s=float(data.get("latency_s") or 0.0),
            usage=Usage(**usage) if usage else None,
            error=CallFailure(**error) if error else None,
            no_decision=NoDecision(**nd) if nd else None,
        )


# ---------------------------------------------------------------- verdict extraction


#: longer "labels" are answers, not categories: a no-decision, never a verdict
MAX_LABEL_CHARS = 200


@dataclass(frozen=True)
class VerdictExtractor:
    """Turns an observation into one with ``verdict`` set, or a typed :class:`NoDecision`.

    ``config_id`` identifies the extraction in the record/replay key, so a recording made
    with one extractor is never replayed under another. ``labels``, when given, is the
    closed set of valid verdicts: anything else is a ``NoDecision`` ("unknown label").
    """

    config_id: str
    fn: Callable[[Observation], str | NoDecision | None]
    labels: frozenset[str] | None = None

    def apply(self, obs: Observation) -> Observation:
        if obs.error is not None:
            return obs
        try:
            verdict = self.fn(obs)
        except Exception as exc:  # a user's extractor must not crash a run
            return _stamped(obs, None,
                            NoDecision(f"extractor raised {type(exc).__name__}: {exc}"))
        if isinstance(verdict, NoDecision):  # the extractor says why there is none
            return _stamped(obs, None, verdict)
        if verdict is None:
            return _stamped(obs, None, NoDecision("no verdict found"))
        verdict = str(verdict)
        if len(verdict) > MAX_LABEL_CHARS:
            return _stamped(obs, None, NoDecision(
                f"verdict label of {len(verdict)} characters is not categorical; choose the "
                f"label with {setting('verdict')}"))
        if self.labels is not None and verdict not in self.labels:
            return _stamped(obs, None, NoDecision(f"unknown label {verdict[:40]!r}"))
        if verdict == obs.verdict and obs.no_decision is None:
            return obs
        return _stamped(obs, verdict, None)


def _stamped(obs: Observation, verdict: str | None, nd: NoDecision | None) -> Observation:
    # built directly: dataclasses.replace is the largest per-draw cost in the engine's path
    return Observation(obs.text, verdict, obs.tools, obs.raw, obs.latency_s, obs.usage,
                       obs.error, nd)


#: the keys of a dict answer the default extractor reads the verdict from, in this order
#: (``run`` on a dict-returning agent, ``assess`` on a recorded JSON answer alike)
VERDICT_KEYS = ("verdict", "decision", "label")


def _default(obs: Observation) -> str | None:
    if obs.verdict is not None:
        return obs.verdict
    if isinstance(obs.raw, Mapping):
        for k in VERDICT_KEYS:
            if k in obs.raw and obs.raw[k] is not None:
                return str(obs.raw[k])
    text = obs.text.strip()
    return text or None


DEFAULT_EXTRACTOR = VerdictExtractor("default", _default)


def by_key(key: str, *, labels: set[str] | None = None) -> VerdictExtractor:
    """Verdict = ``raw[key]`` of a dict result; ``key`` is a path (``result.label``,
    ``$.votes[0].label``: dots descend into objects, ``[n]`` into lists).

    Raises:
        InvalidArgument: a malformed path.
    """
    try:
        parts = parse_path(key)
    except ValueError as exc:
        raise InvalidArgument(f"verdict key: {exc}") from None

    def fn(obs: Observation) -> str | NoDecision | None:
        raw = obs.raw
        if not isinstance(raw, Mapping):
            return NoDecision(f"the verdict key {key!r} needs a JSON object answer; the agent "
                              f"answered {type(raw).__name__ if raw is not None else 'text'}")
        cur = lookup(raw, parts)
        if cur is MISSING or cur is None:
            keys = ", ".join(sorted(str(k) for k in raw)[:12]) or "none"
            return NoDecision(f"the verdict key {key!r} is absent; the answers have keys {keys}")
        return str(cur)

    return VerdictExtractor(f"key:{key}", fn, frozenset(labels) if labels else None)


def by_regex(pattern: str, *, group: int | str = 1, labels: set[str] | None = None,
             flags: int = 0) -> VerdictExtractor:
    """Verdict = a regex group searched in the answer text."""
    try:
        rx = re.compile(pattern, flags)
    except re.error as exc:
        from .errors import InvalidArgument
        raise InvalidArgument(f"by_regex: invalid pattern {pattern!r}: {exc}") from None

    def fn(obs: Observation) -> str | None:
        m = rx.search(obs.text)
        return m.group(group) if m else None

    return VerdictExtractor(f"regex:{pattern}:{group}:{flags}", fn,
                            frozenset(labels) if labels else None)


def by_callable(fn: Callable[[Observation], str | None], *, name: str | None = None,
                labels: set[str] | None = None) -> VerdictExtractor:
    """Verdict = ``fn(observation)``; ``None`` or an exception means no decision."""
    if not callable(fn):
        from .errors import InvalidArgument
        raise InvalidArgument(f"by_callable expects a callable, got {type(fn).__name__}")
    ident = name or f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
    return VerdictExtractor(f"callable:{ident}", fn, frozenset(labels) if labels else None)


def coerce_output(value: Any) -> Observation:
    """Turn what an agent returned (``str | dict | Observation``) into an Observation.

    A dict may carry ``text``/``answer``/``output``, ``verdict``/``decision``/``label`` and
    ``tools`` (names or dicts). Anything else raises
    :class:`~agentverity_props.errors.AgentCallError` of kind ``bad_output`` (not retryable):
    it is evidence of a broken agent, never a verdict.
    """
    from .errors import AgentCallError

    if isinstance(value, Observation):
        return value
    if isinstance(value, str):
        return Observation(text=value, raw=None)
    if isinstance(value, Mapping):
        text = value.get("text", value.get("answer", value.get("output", "")))
        tools_raw = value.get("tools") or ()
        tools: list[ToolCall] = []
        for t in tools_raw:
            if isinstance(t, str):
                tools.append(ToolCall(t))
            elif isinstance(t, Mapping) and isinstance(t.get("name"), str):
                tools.append(ToolCall(t["name"], dict(t.get("arguments") or {}),
                                      str(t.get("status", "success")), t.get("call_id")))
            else:
                raise AgentCallError(f"agent returned a tool entry of type {type(t).__name__}; "
                                     "use a name or {'name': ..., 'arguments': {...}}",
                                     kind="bad_output")
        verdict = None
        for k in VERDICT_KEYS:
            if value.get(k) is not None:
                verdict = str(value[k])
                break
        return Observation(text=str(text) if text is not None else "", verdict=verdict,
                           tools=tuple(tools), raw=dict(value))
    raise AgentCallError(
        f"agent returned {type(value).__name__}; return str, dict or Observation",
        kind="bad_output",
    )
