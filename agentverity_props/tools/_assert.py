"""Tool-call assertions on one observation: the single source of truth for "did it fire".

:func:`assert_tools` is used by case files, inside ``@agent_property`` tests and by the
``tool_called`` benchmark evaluator. Only calls whose status is ``success`` count as fired:
a tool that ran and failed did not do its job.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._internal.jsonpath import MISSING, lookup, parse_path
from ..errors import InvalidArgument, violation_class
from ..observation import Observation, ToolCall

__all__ = ["OPS", "ArgRule", "ToolCheck", "assert_tools", "normalize_required",
           "tool_called"]

OPS = ("equals", "contains", "regex", "gt", "lt")


@dataclass(frozen=True)
class ArgRule:
    """A predicate on one argument of one tool: holds when *some* successful call of
    ``tool`` has ``arg`` (a dotted path into its arguments) satisfying ``op value``."""

    tool: str
    arg: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise InvalidArgument(f"ArgRule op {self.op!r} is not one of {', '.join(OPS)}")
        try:
            parse_path(self.arg)
        except ValueError as exc:
            raise InvalidArgument(f"ArgRule arg: {exc}") from None
        if self.op == "regex":
            try:
                re.compile(str(self.value))
            except re.error as exc:
                raise InvalidArgument(f"ArgRule regex {self.value!r} is invalid: {exc}") from None
        if self.op in ("gt", "lt") and not _is_number(self.value):
            raise InvalidArgument(f"ArgRule {self.op} needs a number, got {self.value!r}")

    def describe(self) -> str:
        return f"{self.tool}.{self.arg} {self.op} {self.value!r}"

    def holds(self, arguments: Mapping[str, Any]) -> bool:
        actual = lookup(arguments, self.arg)
        if actual is MISSING:
            return False
        v = self.value
        if self.op == "equals":
            if _is_number(actual) and _is_number(v):
                return float(actual) == float(v)
            return bool(actual == v)
        if self.op == "contains":
            if isinstance(actual, str):
                return str(v) in actual
            if isinstance(actual, Mapping):
                return v in actual
            if isinstance(actual, (list, tuple)):
                return v in actual
            return False
        if self.op == "regex":
            return isinstance(actual, (str, int, float)) and re.search(str(v), str(actual)) \
                is not None
        try:
            num = float(actual)
        except (TypeError, ValueError):
            return False
        if math.isnan(num):
            return False
        return num > float(v) if self.op == "gt" else num < float(v)

    @classmethod
    def parse(cls, spec: ArgRule | Mapping[str, Any]) -> list[ArgRule]:
        """``{"tool": t, "arg": a, "<op>": value, ...}`` -> one rule per operator."""
        if isinstance(spec, ArgRule):
            return [spec]
        if not isinstance(spec, Mapping) or "tool" not in spec or "arg" not in spec:
            raise InvalidArgument(f"an argument predicate needs tool, arg and one of "
                                  f"{', '.join(OPS)}; got {spec!r}")
        extra = set(spec) - {"tool", "arg", *OPS}
        if extra:
            raise InvalidArgument(f"unknown keys {sorted(extra)} in argument predicate; "
                                  f"use tool, arg and {', '.join(OPS)}")
        rules = [cls(str(spec["tool"]), str(spec["arg"]), op, spec[op]) for op in OPS
                 if op in spec]
        if not rules:
            raise InvalidArgument(f"argument predicate on {spec['tool']}.{spec['arg']} has no "
                                  f"operator; add one of {', '.join(OPS)}")
        return rules


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@dataclass(frozen=True)
class ToolCheck:
    """The outcome of :func:`assert_tools` on one observation. Truthy when it passed."""

    passed: bool
    fired: tuple[str, ...]
    errored: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    forbidden_fired: tuple[str, ...] = ()
    sequence_ok: bool | None = None
    failed_args: tuple[str, ...] = ()
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def __bool__(self) -> bool:
        return self.passed

    def raise_if_failed(self) -> None:
        """Raise a ``ToolsViolation`` (an ``AssertionError``) listing the reasons."""
        if not self.passed:
            raise violation_class("tools")("; ".join(self.reasons))

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "fired": list(self.fired), "errored": list(self.errored),
                "missing": list(self.missing), "forbidden_fired": list(self.forbidden_fired),
                "sequence_ok": self.sequence_ok, "failed_args": list(self.failed_args),
                "reasons": list(self.reasons)}


def normalize_required(required: Sequence[Any] | None) -> list[list[str]]:
    """revefi-agent-test's rule: a flat list is one all-of group; a list containing lists is
    any-of groups (a bare string among them is a one-tool group). ``[]`` -> no groups."""
    if not required:
        return []
    if isinstance(required, str):
        raise InvalidArgument(f"required tools must be a list, got the string {required!r}")
    if any(isinstance(g, (list, tuple)) for g in required):
        groups = [[str(t) for t in g] if isinstance(g, (list, tuple)) else [str(g)]
                  for g in required]
    else:
        groups = [[str(t) for t in required]]
    if any(not g for g in groups):
        raise InvalidArgument("an any-of group of required tools is empty")
    return groups


def _is_subsequence(needle: Sequence[str], hay: Sequence[str]) -> bool:
    it = iter(hay)
    return all(any(h == n for h in it) for n in needle)


def _tools_of(observation: Observation | Iterable[ToolCall | str]) -> tuple[ToolCall, ...]:
    if isinstance(observation, Observation):
        return observation.tools
    out = []
    for t in observation:
        if isinstance(t, ToolCall):
            out.append(t)
        elif isinstance(t, str):
            out.append(ToolCall(t))
        else:
            raise InvalidArgument(f"assert_tools expects an Observation or ToolCalls/names, "
                                  f"got an item of type {type(t).__name__}")
    return tuple(out)


def assert_tools(observation: Observation | Iterable[ToolCall | str], *,
                 required: Sequence[Any] | None = None,
                 forbidden: Iterable[str] | None = None,
                 sequence: Sequence[str] | None = None,
                 args: Iterable[ArgRule | Mapping[str, Any]] | None = None) -> ToolCheck:
    """Check the tools one agent call fired.

    Args:
        observation: an :class:`~agentverity_props.observation.Observation` (or its tool
            calls, or plain names meaning "fired").
        required: all-of list ``["a", "b"]`` or any-of groups ``[["a", "b"], ["c"]]``.
        forbidden: tools that must not fire.
        sequence: tools that must fire in this order (other calls may come in between).
        args: argument predicates, ``{"tool": ..., "arg": ..., "equals"|"contains"|"regex"|
            "gt"|"lt": value}`` or :class:`ArgRule`.

    Returns:
        A :class:`ToolCheck`; call ``.raise_if_failed()`` to turn a failure into an
        ``AssertionError`` inside a test.

    Example:
        >>> check = assert_tools(["lookup_order", "issue_refund"],
        ...                      required=["lookup_order"], forbidden=["escalate_to_human"])
        >>> check.passed, check.fired
        (True, ('lookup_order', 'issue_refund'))
    """
    groups = normalize_required(required)
    rules = [r for spec in (args or ()) for r in ArgRule.parse(spec)]
    calls = _tools_of(observation)
    ok_calls = [t for t in calls if t.status == "success"]
    fired = tuple(t.name for t in ok_calls)
    errored = tuple(t.name for t in calls if t.status != "success")
    fired_set = set(fired)
    reasons: list[str] = []

    missing: tuple[str, ...] = ()
    if groups:
        satisfied = [g for g in groups if all(t in fired_set for t in g)]
        if not satisfied:
            closest = min(groups, key=lambda g: (sum(t not in fired_set for t in g),
                                                 -sum(t in fired_set for t in g)))
            missing = tuple(t for t in closest if t not in fired_set)
            failed_note = [t for t in missing if t in errored]
            note = f" ({', '.join(failed_note)} ran with error status)" if failed_note else ""
            if len(groups) == 1:
                reasons.append(f"required tools not fired: {', '.join(missing)}{note}")
            else:
                opts = " or ".join("[" + ", ".join(g) + "]" for g in groups)
                reasons.append(f"no required tool group fired fully; need {opts}; "
                               f"closest misses {', '.join(missing)}{note}")

    forbidden_fired = tuple(dict.fromkeys(t for t in fired if t in set(forbidden or ())))
    if forbidden_fired:
        reasons.append(f"forbidden tools fired: {', '.join(forbidden_fired)}")

    sequence_ok: bool | None = None
    if sequence:
        sequence_ok = _is_subsequence([str(s) for s in sequence], fired)
        if not sequence_ok:
            reasons.append(f"tool sequence {' > '.join(sequence)} not found in order "
                           f"(fired: {' > '.join(fired) or 'none'})")

    failed_args: list[str] = []
    for rule in rules:
        if not any(t.name == rule.tool and rule.holds(t.arguments) for t in ok_calls):
            failed_args.append(rule.describe())
    if failed_args:
        reasons.append("argument predicates failed: " + "; ".join(failed_args))

    return ToolCheck(passed=not reasons, fired=fired, errored=errored, missing=missing,
                     forbidden_fired=forbidden_fired, sequence_ok=sequence_ok,
                     failed_args=tuple(failed_args), reasons=tuple(reasons))


def tool_called(*, required: Sequence[Any] | None = None,
                forbidden: Iterable[str] | None = None,
                sequence: Sequence[str] | None = None,
                args: Iterable[ArgRule | Mapping[str, Any]] | None = None) -> Any:
    """A benchmark evaluator: ``evaluator(observation) -> ToolCheck`` (truthy = pass).

    The arguments are validated now, not at the first call.
    """
    normalize_required(required)
    rules = [r for spec in (args or ()) for r in ArgRule.parse(spec)]
    forbidden_t = tuple(forbidden or ())
    sequence_t = tuple(sequence or ())

    def evaluator(observation: Observation) -> ToolCheck:
        return assert_tools(observation, required=required, forbidden=forbidden_t,
                            sequence=sequence_t, args=rules)

    evaluator.__name__ = "tool_called"
    evaluator.__qualname__ = "tool_called"
    return evaluator
