"""Evaluators: one run's observation in, pass or fail (with a reason) out.

agentverdict's three (``exact_match``, ``contains``, ``regex``) keep its exact semantics
(no trimming; ``re.search``). A custom evaluator that raises makes the run an ERROR, never a
silent FAIL: a broken check is not evidence about the agent.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._internal.jsonpath import MISSING, lookup
from .._internal.settings import setting
from ..errors import BadInput
from ..observation import Observation
from ._model import (
    Contains,
    Custom,
    ExactMatch,
    JsonPath,
    JudgeEval,
    NotContains,
    OneOf,
    Regex,
    ToolCalled,
    parse_json_path,
)

__all__ = ["CompiledEvaluator", "EvaluatorError", "compile_evaluation"]

_PREVIEW = 80


class EvaluatorError(Exception):
    """A custom evaluator raised or returned something that is not a bool."""


@dataclass(frozen=True)
class CompiledEvaluator:
    """``check(observation, reveal) -> (passed, reason)``; ``describe`` names it in reports.

    ``reveal``: the reason may quote the answer.
    """

    kind: str
    describe: str
    check: Callable[[Observation, bool], tuple[bool, str]]
    #: a judge evaluator: the calls its judge has made so far (the bench counts them)
    judge_calls: Callable[[], int] | None = None


def _preview(text: str) -> str:
    t = text.replace("\n", "\\n")
    return t if len(t) <= _PREVIEW else t[: _PREVIEW - 1] + "…"


def _got(o: Observation, reveal: bool) -> str:
    return f", got {_preview(o.text)!r}" if reveal else " (the answer differs; " \
        f"{setting('include_outputs')} shows it)"


def compile_evaluation(spec: Any, *, base_dir: Path, prompt: str = "") -> CompiledEvaluator:
    """Turn one validated evaluation spec into a :class:`CompiledEvaluator`.

    A check's reason quotes the answer only when ``reveal`` is true (``--include-outputs``):
    reports otherwise identify answers by fingerprint.
    """
    if isinstance(spec, ExactMatch):
        exp = spec.expected
        return CompiledEvaluator("exact_match", f"exact_match {exp!r}", lambda o, r: (
            (True, "exact match") if o.text == exp else (False, f"expected {exp!r}{_got(o, r)}")))
    if isinstance(spec, Contains):
        exp = spec.expected
        return CompiledEvaluator("contains", f"contains {exp!r}", lambda o, r: (
            (True, "substring found") if exp in o.text else
            (False, f"expected the answer to contain {exp!r}{_got(o, r) if r else ''}")))
    if isinstance(spec, NotContains):
        exp = spec.expected
        return CompiledEvaluator("not_contains", f"not_contains {exp!r}", lambda o, r: (
            (True, "substring absent") if exp not in o.text else
            (False, f"the answer contains {exp!r}")))
    if isinstance(spec, Regex):
        rx = re.compile(spec.pattern)
        return CompiledEvaluator("regex", f"regex {spec.pattern!r}", lambda o, r: (
            (True, "regex matched") if rx.search(o.text) is not None else
            (False, f"no match for {spec.pattern!r}{_got(o, r) if r else ''}")))
    if isinstance(spec, OneOf):
        options = tuple(spec.expected)
        return CompiledEvaluator("one_of", f"one_of {list(options)!r}", lambda o, r: (
            (True, "matched an option") if o.text in options else
            (False, f"expected one of {list(options)!r}{_got(o, r)}")))
    if isinstance(spec, JsonPath):
        return _json_path(spec)
    if isinstance(spec, ToolCalled):
        return _tool_called(spec)
    if isinstance(spec, Custom):
        return _custom(spec, base_dir)
    if isinstance(spec, JudgeEval):
        return _judge(spec, base_dir, prompt)
    raise BadInput(f"unsupported evaluation {type(spec).__name__}", "use a documented type")


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return float(a) == float(b)
    return bool(a == b)


def _json_path(spec: JsonPath) -> CompiledEvaluator:
    parts = parse_json_path(spec.path)
    expected = spec.equals

    def check(o: Observation, reveal: bool) -> tuple[bool, str]:
        doc: Any = _MISSING
        try:
            doc = json.loads(o.text)
        except (ValueError, TypeError):
            if isinstance(o.raw, (Mapping, list)):
                doc = o.raw
        if doc is _MISSING:
            return False, "the answer is not JSON"
        got = lookup(doc, parts)
        if got is MISSING:
            return False, f"{spec.path} not found"
        if _same(got, expected):
            return True, f"{spec.path} equals {expected!r}"
        if not reveal:
            return False, (f"{spec.path} is not {expected!r} ({setting('include_outputs')} "
                          "shows it)")
        return False, f"{spec.path} is {got!r}, expected {expected!r}"

    return CompiledEvaluator("json_path", f"json_path {spec.path} == {expected!r}", check)


def _tool_called(spec: ToolCalled) -> CompiledEvaluator:
    from ..tools import tool_called

    rules = [r for a in spec.args for r in a.rules()]
    ev = tool_called(required=list(spec.tools) or None, forbidden=spec.forbidden,
                     sequence=list(spec.tools) if spec.order == "ordered" else None,
                     args=rules)
    parts = []
    if spec.tools:
        parts.append(("in order " if spec.order == "ordered" else "") + ", ".join(spec.tools))
    if spec.forbidden:
        parts.append("not " + ", ".join(spec.forbidden))
    if rules:
        parts.append(f"{len(rules)} argument rule(s)")

    def check(o: Observation, reveal: bool) -> tuple[bool, str]:
        res = ev(o)
        return bool(res.passed), "; ".join(res.reasons) if res.reasons else "tools as required"

    return CompiledEvaluator("tool_called", "tool_called " + "; ".join(parts), check)


def _load_callable(ref: str, base_dir: Path) -> Callable[..., Any]:
    target, _, attr = ref.rpartition(":")
    try:
        if target.endswith(".py") or "/" in target or "\\" in target:
            path = Path(target)
            path = path if path.is_absolute() else base_dir / path
            if not path.is_file():
                raise BadInput(f"custom evaluator file {path} not found",
                               "paths are relative to the benchmark file's folder")
            digest = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass"))
            name = f"_agentverity_eval_{digest.hexdigest()[:12]}"
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise BadInput(f"cannot load {path} as Python", "reference a .py file")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        else:
            sys.path.insert(0, str(base_dir))
            try:
                module = importlib.import_module(target)
            finally:
                sys.path.remove(str(base_dir))
    except BadInput:
        raise
    except (Exception, SystemExit) as exc:
        raise BadInput(f"loading custom evaluator {ref!r} failed: {type(exc).__name__}: "
                       f"{exc}", "fix the module; rerun with --debug") from exc
    fn: Any = module
    for part in attr.split("."):
        fn = getattr(fn, part, _MISSING)
        if fn is _MISSING:
            raise BadInput(f"custom evaluator {ref!r}: no attribute {attr!r}",
                           "name a function defined in that module")
    if not callable(fn):
        raise BadInput(f"custom evaluator {ref!r} is a {type(fn).__name__}, not callable",
                       "reference fn(output_text, observation) -> bool")
    return fn


def _arity(fn: Callable[..., Any]) -> int:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return 2
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return 2
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return 1 if len(positional) == 1 else 2


def _custom(spec: Custom, base_dir: Path) -> CompiledEvaluator:
    fn = _load_callable(spec.function, base_dir)
    n = _arity(fn)

    def check(o: Observation, reveal: bool) -> tuple[bool, str]:
        try:
            out = fn(o.text) if n == 1 else fn(o.text, o)
        except Exception as exc:
            raise EvaluatorError(f"custom evaluator {spec.function} raised "
                                 f"{type(exc).__name__}: {exc}") from exc
        reason = ""
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], str):
            out, reason = out
        if type(out).__name__ not in ("bool", "bool_"):
            raise EvaluatorError(f"custom evaluator {spec.function} returned "
                                 f"{type(out).__name__}; return True or False")
        passed = bool(out)
        return passed, reason or ("custom check passed" if passed else "custom check failed")

    return CompiledEvaluator("custom", f"custom {spec.function}", check)


def _judge(spec: JudgeEval, base_dir: Path, prompt: str) -> CompiledEvaluator:
    """The judge's consensus label on the answer (judge/: cached per identical answer, its
    calls through its own engine); a no-decision is an evaluator error, never a pass."""
    import threading

    from .._internal.aio import run_sync
    from ..judge import Judge, JudgedAgent

    judge_obj = _load_callable(spec.judge, base_dir)
    judge = Judge(judge_obj, labels=tuple(spec.labels), margin=spec.margin)
    made: list[JudgedAgent] = []
    lock = threading.Lock()

    def judged() -> JudgedAgent:
        with lock:
            if not made:
                made.append(JudgedAgent(_no_agent, judge))
            return made[0]

    def check(o: Observation, reveal: bool) -> tuple[bool, str]:
        label, why = run_sync(judged().grade(prompt, o.text, reference=spec.reference,
                                             use_reference=False))
        if label is None:
            raise EvaluatorError(f"judge {spec.judge} gave no label: {why}")
        passed = label in spec.passing
        return passed, f"judge label {label!r}" + ("" if passed else
                                                    f", not one of {spec.passing}")

    def calls() -> int:
        with lock:
            return made[0].judge_calls if made else 0

    return CompiledEvaluator("judge", f"judge {spec.judge} passing {spec.passing}", check,
                             judge_calls=calls)


def _no_agent(prompt: str) -> str:  # the bench's engine calls the agent; the judge grades
    return ""
