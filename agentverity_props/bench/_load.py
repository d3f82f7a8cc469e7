"""Reading a benchmark file: YAML with line numbers, strict validation, compiled evaluators.

Every problem is one :class:`~agentverity_props.errors.BadInput` line naming the file, the
line, the place (``tasks[2].evaluation``) and, for an unknown key, the key, the closest
allowed one and the full allowed list.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._internal.yamlpos import line_of as _line_of
from .._internal.yamlpos import parse_yaml
from .._internal.yamlpos import where as _where
from ..errors import BadInput
from ._evaluators import CompiledEvaluator, compile_evaluation
from ._model import EVALUATOR_TYPES, BenchmarkFile, TaskSpec

__all__ = ["Benchmark", "Task", "load_benchmark", "parse_benchmark"]

_SCHEMA_HINT = "see docs/schemas/benchmark.schema.json"


@dataclass(frozen=True)
class Task:
    """One task, ready to run: its spec plus compiled evaluators."""

    spec: TaskSpec
    evaluators: tuple[CompiledEvaluator, ...]
    runs: int
    threshold: float

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def name(self) -> str:
        return self.spec.name or self.spec.id

    @property
    def prompt(self) -> str:
        return self.spec.prompt

    def describe_evaluation(self) -> str:
        return " AND ".join(e.describe for e in self.evaluators)


@dataclass(frozen=True)
class Benchmark:
    """A validated benchmark file."""

    model: BenchmarkFile
    tasks: tuple[Task, ...]
    path: str

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def version(self) -> str:
        return self.model.version

    def with_runs(self, runs: int | None) -> Benchmark:
        """The same benchmark with every task's run count overridden (None = unchanged)."""
        if runs is None:
            return self
        from dataclasses import replace
        return replace(self, tasks=tuple(replace(t, runs=runs) for t in self.tasks))






def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the discriminator tags pydantic inserts into union locations."""
    out: list[Any] = []
    for part in loc:
        prev = out[-1] if out else None
        inside_eval = prev == "evaluation" or (isinstance(prev, int) and len(out) >= 2
                                               and out[-2] == "evaluations")
        if isinstance(part, str) and part in EVALUATOR_TYPES and inside_eval:
            continue
        out.append(part)
    return tuple(out)


def _node_at(data: Any, loc: tuple[Any, ...]) -> Any:
    cur = data
    for part in loc:
        if (isinstance(cur, Mapping) and part in cur) or (
                isinstance(cur, list) and isinstance(part, int) and part < len(cur)):
            cur = cur[part]
        else:
            return None
    return cur


def _allowed_keys(loc: tuple[Any, ...], data: Any) -> list[str]:
    """The keys allowed in the mapping that holds ``loc[-1]``."""
    from ..tools import ArgPredicate

    parent = loc[:-1]
    names = [p for p in parent if not isinstance(p, int)]
    model: Any
    if not names:
        model = BenchmarkFile
    elif names[-1] == "tasks":
        model = TaskSpec
    elif names[-1] in ("evaluation", "evaluations"):
        node = _node_at(data, parent)
        kind = node.get("type") if isinstance(node, Mapping) else None
        model = EVALUATOR_TYPES.get(str(kind))
        if model is None:
            return ["type", "(then the keys of that evaluator type)"]
    elif names[-1] == "args":
        model = ArgPredicate
    else:
        return []
    return sorted(model.model_fields)


def _describe(err: Mapping[str, Any], root: Any, data: Any, path: str) -> str:
    loc = _clean_loc(tuple(err.get("loc", ())))
    line = _line_of(root, loc)
    at = f"{path}:{line}" if line else path
    if err.get("type") == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        allowed = _allowed_keys(loc, data)
        hint = difflib.get_close_matches(key, allowed, n=1)
        sugg = f"; did you mean {hint[0]!r}?" if hint else ""
        return (f"{at}: unknown key {key!r} in {_where(loc[:-1])}{sugg} "
                f"(allowed: {', '.join(allowed)})")
    if err.get("type") == "union_tag_invalid":
        got = (err.get("ctx") or {}).get("tag", "?")
        return (f"{at}: {_where(loc)}: unknown evaluation type {got!r} (use one of "
                f"{', '.join(EVALUATOR_TYPES)})")
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if err.get("type") == "string_type" and not isinstance(err.get("input"), (dict, list)):
        msg += (f" (YAML read {err.get('input')!r} as a {type(err.get('input')).__name__}: "
                "quote it)")
    return f"{at}: {_where(loc)}: {msg}"


def parse_benchmark(text: str, *, path: str = "<string>",
                    base_dir: str | Path | None = None) -> Benchmark:
    """Parse and validate benchmark-file text (see :func:`load_benchmark`)."""
    from pydantic import ValidationError

    root, data = parse_yaml(text, path)
    if data is None:
        raise BadInput(f"{path}: the benchmark file is empty",
                       'add version: "1", name: and tasks:')
    if not isinstance(data, dict):
        raise BadInput(f"{path}: the top level must be a mapping (version, name, tasks), "
                       f"got a {type(data).__name__}", _SCHEMA_HINT)
    try:
        model = BenchmarkFile.model_validate(data)
    except ValidationError as exc:
        errs = exc.errors()
        first = "; ".join(_describe(e, root, data, path) for e in errs[:3])
        more = f" (and {len(errs) - 3} more)" if len(errs) > 3 else ""
        raise BadInput(first + more, f"fix the benchmark file ({_SCHEMA_HINT})") from None
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    default_runs = model.runs or 1
    tasks = []
    for i, spec in enumerate(model.tasks):
        evaluators = []
        for j, ev in enumerate(spec.all_evaluations()):
            key = "evaluation" if spec.evaluation is not None else "evaluations"
            loc: tuple[Any, ...] = ("tasks", i, key) if key == "evaluation" else \
                ("tasks", i, key, j)
            try:
                evaluators.append(compile_evaluation(ev, base_dir=base))
            except BadInput as exc:
                line = _line_of(root, loc)
                raise BadInput(f"{path}:{line}: {_where(loc)}: {exc.problem}",
                               exc.fix) from None
        tasks.append(Task(spec=spec, evaluators=tuple(evaluators),
                          runs=spec.runs or default_runs,
                          threshold=spec.threshold if spec.threshold is not None
                          else model.threshold))
    return Benchmark(model=model, tasks=tuple(tasks), path=path)


def load_benchmark(path: str | Path) -> Benchmark:
    """Read and validate the benchmark file at ``path``.

    Custom evaluators given as ``file.py:function`` are resolved relative to the file's folder.

    Raises:
        BadInput: unreadable file, malformed YAML, an unknown key, a wrong type or an
            unloadable custom evaluator, each with the file line.

    Example:
        >>> b = load_benchmark("tests/data/general.yaml")  # doctest: +SKIP
        >>> b.tasks[0].id  # doctest: +SKIP
        'greeting'
    """
    from .._internal.inputs import read_text_file

    p = Path(path)
    text = read_text_file(p, what="benchmark file", yaml_file=True)
    return parse_benchmark(text, path=str(p), base_dir=p.resolve().parent)
