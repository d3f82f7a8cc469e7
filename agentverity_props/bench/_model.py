"""The benchmark file, as pydantic models (``extra="forbid"`` everywhere).

agentverdict 0.1.0's format loads unchanged: ``version: "1"``, ``name``, ``description`` and
``tasks: [{id, name, category, prompt, evaluation: {type: exact_match|contains, expected} |
{type: regex, pattern}}]``. Everything else is an extension:

- file level: ``runs`` (runs per task) and ``threshold`` (share of runs that must pass);
- task level: ``runs``, ``threshold``, and ``evaluations`` (a list, all must pass) instead of
  a single ``evaluation``; ``name`` is optional (defaults to ``id``);
- evaluators: ``not_contains``, ``one_of``, ``json_path`` (``equals``), ``tool_called``
  and ``custom`` (a Python callable).

``docs/schemas/benchmark.schema.json`` is generated from :class:`BenchmarkFile`.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .._internal.jsonpath import parse_path
from .._internal.unique import first_repeat
from ..tools import ArgPredicate

__all__ = [
    "EVALUATOR_TYPES",
    "BenchmarkFile",
    "Contains",
    "Custom",
    "Evaluation",
    "ExactMatch",
    "JsonPath",
    "JudgeEval",
    "NotContains",
    "OneOf",
    "Regex",
    "TaskSpec",
    "ToolCalled",
    "json_schema",
    "parse_json_path",
]

SCHEMA_ID = "agentverity_props.benchmark/1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExactMatch(_Strict):
    """The answer text equals ``expected`` exactly (agentverdict: no trimming)."""

    type: Literal["exact_match"]
    expected: str


class Contains(_Strict):
    """``expected`` is a substring of the answer text."""

    type: Literal["contains"]
    expected: str


class Regex(_Strict):
    """The Python regular expression ``pattern`` is found (``re.search``) in the answer."""

    type: Literal["regex"]
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        return v


class NotContains(_Strict):
    """``expected`` does not occur in the answer text."""

    type: Literal["not_contains"]
    expected: str


class OneOf(_Strict):
    """The answer text equals one of ``expected``."""

    type: Literal["one_of"]
    expected: list[str] = Field(min_length=1)


class JudgeEval(_Strict):
    """A judge grades the free-text answer (docs/judges.md): the attempt passes when its
    label (the judge's consensus on the answer) is one of ``passing``.

    ``judge`` is an agent reference (``package.module:attr`` or ``path/file.py:attr``,
    relative to the benchmark file's folder); ``labels`` the labels it may answer (any other
    answer is a no-decision: the attempt is an error, never a pass); ``reference`` an
    optional reference answer shown to the judge.
    """

    type: Literal["judge"]
    judge: str = Field(min_length=3)
    labels: list[str] = Field(min_length=2)
    passing: list[str] = Field(min_length=1)
    reference: str | None = None
    margin: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _passing_labels(self) -> JudgeEval:
        unknown = [p for p in self.passing if p not in self.labels]
        if unknown:
            raise ValueError(f"passing label(s) {unknown} are not among labels {self.labels}")
        return self


class JsonPath(_Strict):
    """The answer parsed as JSON (or the agent's dict result) has ``equals`` at ``path``.

    ``path`` is ``$.a.b[0]`` or ``a.b.0``; numbers compare as numbers.
    """

    type: Literal["json_path"]
    path: str = Field(min_length=1)
    equals: Any = Field(description="the value expected at path (required; may be null)")

    @model_validator(mode="before")
    @classmethod
    def _equals_required(cls, data: Any) -> Any:
        if isinstance(data, dict) and "equals" not in data:
            raise ValueError("json_path needs 'equals' (the expected value)")
        return data

    @field_validator("path")
    @classmethod
    def _parses(cls, v: str) -> str:
        parse_json_path(v)
        return v


class ToolCalled(_Strict):
    """The tools the agent fired (successful calls only).

    ``tools`` must all fire: in any order (``order: any``) or in this order, other calls
    allowed in between (``order: ordered``); ``forbidden`` must not fire; ``args`` are
    argument predicates (``{tool, arg, equals|contains|regex|gt|lt}``).
    """

    type: Literal["tool_called"]
    tools: list[str] = Field(default_factory=list)
    order: Literal["any", "ordered"] = "any"
    forbidden: list[str] = Field(default_factory=list)
    args: list[ArgPredicate] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something(self) -> ToolCalled:
        if not (self.tools or self.forbidden or self.args):
            raise ValueError("tool_called needs at least one of tools, forbidden, args")
        return self


class Custom(_Strict):
    """A Python callable ``fn(output_text, observation) -> bool``.

    ``function`` is ``package.module:function`` or ``path/file.py:function`` (relative to the
    benchmark file's folder).
    """

    type: Literal["custom"]
    function: str = Field(min_length=3)

    @field_validator("function")
    @classmethod
    def _shape(cls, v: str) -> str:
        head, sep, tail = v.rpartition(":")
        if not sep or not head or not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", tail):
            raise ValueError(f"function {v!r} must be module:function or file.py:function")
        return v


Evaluation = Annotated[
    ExactMatch | Contains | Regex | NotContains | OneOf | JsonPath | ToolCalled | Custom
    | JudgeEval,
    Field(discriminator="type"),
]
EVALUATOR_TYPES: dict[str, type[_Strict]] = {
    "exact_match": ExactMatch, "contains": Contains, "regex": Regex,
    "not_contains": NotContains, "one_of": OneOf, "json_path": JsonPath,
    "tool_called": ToolCalled, "custom": Custom, "judge": JudgeEval,
}


class TaskSpec(_Strict):
    """One benchmark task (``tasks[]``)."""

    id: str = Field(min_length=1)
    name: str | None = Field(None, description="display name (default: the id)")
    category: str | None = None
    prompt: str = Field(min_length=1)
    evaluation: Evaluation | None = Field(None, description="one evaluator (agentverdict)")
    evaluations: list[Evaluation] | None = Field(
        None, min_length=1, description="several evaluators; a run passes when all pass")
    runs: int | None = Field(None, ge=1, le=100_000, description="runs of this task")
    threshold: float | None = Field(
        None, gt=0, le=1, description="share of runs that must pass (default: the file's)")

    @field_validator("id", "prompt", "name", "category")
    @classmethod
    def _not_blank(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("must be a non-empty string")
        return v

    @model_validator(mode="after")
    def _one_evaluation(self) -> TaskSpec:
        if (self.evaluation is None) == (self.evaluations is None):
            raise ValueError("give exactly one of 'evaluation' (one evaluator) or "
                             "'evaluations' (a list, all must pass)")
        return self

    def all_evaluations(self) -> list[Any]:
        return [self.evaluation] if self.evaluation is not None else list(self.evaluations or ())


class BenchmarkFile(_Strict):
    """A benchmark: agentverdict's schema version 1 plus the extensions above."""

    version: Literal["1"] = Field(description='schema version; only "1"')
    name: str = Field(min_length=1)
    description: str | None = None
    runs: int | None = Field(None, ge=1, le=100_000,
                             description="runs per task (CLI --runs overrides; default 1)")
    threshold: float = Field(1.0, gt=0, le=1, description="share of a task's runs that must "
                             "pass (1.0 = every run, as agentverdict)")
    tasks: list[TaskSpec] = Field(min_length=1)

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, v: Any) -> Any:
        # YAML reads `version: 1` as an int; accept it as "1"
        return "1" if v == 1 and not isinstance(v, bool) else v

    @model_validator(mode="after")
    def _unique_ids(self) -> BenchmarkFile:
        if (repeated := first_repeat(t.id for t in self.tasks)) is not None:
            raise ValueError(f"duplicate task id {repeated!r}")
        return self


def parse_json_path(path: str) -> list[str | int]:
    """``"$.a.b[0]"`` or ``"a.b.0"`` -> ``["a", "b", 0]``; ``ValueError`` if malformed
    (the one path syntax: :mod:`agentverity_props._internal.jsonpath`).

    >>> parse_json_path("$.items[1].name")
    ['items', 1, 'name']
    """
    return parse_path(path)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the benchmark file (``docs/schemas/benchmark.schema.json``)."""
    schema = BenchmarkFile.model_json_schema()
    head = {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://agentverity-props.invalid/schemas/benchmark.schema.json",
            "title": "agentverity-props benchmark file",
            "description": "YAML benchmark read by `agentverity-props bench` and `compare`. "
                           "agentverdict 0.1.0 benchmark files are a subset. Unknown keys "
                           "are rejected."}
    return {**head, **{k: v for k, v in schema.items() if k not in head}}
