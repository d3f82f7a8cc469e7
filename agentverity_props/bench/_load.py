"""Reading a benchmark file: YAML with line numbers, strict validation, compiled evaluators.

Every problem is one :class:`~agentverity_props.errors.BadInput` line naming the file, the
line, the place (``tasks[2].evaluation``) and, for an unknown key, the key, the closest
allowed one and the full allowed list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._internal.jsonpath import format_path
from .._internal.schema_errors import schema_error
from .._internal.yaml import YamlDocument, parse_yaml, read_yaml
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


def _describe(err: Mapping[str, Any], loc: tuple[str | int, ...]) -> tuple[str, str] | None:
    if err["type"] == "union_tag_invalid":
        got = (err.get("ctx") or {}).get("tag", "?")
        return (f"unknown evaluation type {got!r} (use one of {', '.join(EVALUATOR_TYPES)})",
                "change type: to one of those")
    return None


def parse_benchmark(text: str, *, path: str = "<string>",
                    base_dir: str | Path | None = None) -> Benchmark:
    """Parse and validate benchmark-file text (see :func:`load_benchmark`)."""
    return _benchmark(parse_yaml(text, source=path), base_dir)


def _benchmark(doc: YamlDocument, base_dir: str | Path | None) -> Benchmark:
    from pydantic import ValidationError

    data = doc.require_mapping("benchmark file",
                               f'start with version: "1", name: and tasks: ({_SCHEMA_HINT})')
    try:
        model = BenchmarkFile.model_validate(data)
    except ValidationError as exc:
        raise schema_error(exc, doc, BenchmarkFile, describe=_describe,
                           fix=f"fix the benchmark file ({_SCHEMA_HINT})") from None
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    default_runs = model.runs or 1
    tasks = []
    for i, spec in enumerate(model.tasks):
        evaluators = []
        for j, ev in enumerate(spec.all_evaluations()):
            loc: tuple[str | int, ...] = ("tasks", i, "evaluation") \
                if spec.evaluation is not None else ("tasks", i, "evaluations", j)
            try:
                evaluators.append(compile_evaluation(ev, base_dir=base, prompt=spec.prompt))
            except BadInput as exc:
                raise BadInput(f"{doc.at(doc.line_of(loc))}: {format_path(loc)}: "
                               f"{exc.problem}", exc.fix) from None
        tasks.append(Task(spec=spec, evaluators=tuple(evaluators),
                          runs=spec.runs or default_runs,
                          threshold=spec.threshold if spec.threshold is not None
                          else model.threshold))
    return Benchmark(model=model, tasks=tuple(tasks), path=doc.source)


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
    p = Path(path)
    doc = read_yaml(p, what="benchmark file")
    return _benchmark(doc, p.resolve().parent)
