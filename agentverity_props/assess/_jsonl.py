"""Recorded draws as JSON Lines: one JSON object per line, one line per draw.

``docs/schemas/assess-jsonl.schema.json`` is generated from :class:`JsonlDraw` (the schema
of one line) by :func:`json_schema`. A line is::

    {"input": "Can I get a refund?", "output": "{\\"route\\": \\"billing\\"}", "order": 17}

- ``input`` (required): the input text, exactly as the agent was given it;
- ``output``: the answer (a string, or an object such as an agent's structured output),
  whose verdict is taken as ``run`` takes it; or ``verdict``: the verdict itself; or
  ``error``: the call failed (incomplete evidence, never a verdict);
- ``tools`` (optional): the tool calls, in order (names, or ``{"name", "arguments"}``);
- ``order`` (optional): the position of the draw in the sequence the calls were made in
  (any distinct integers; a timestamp in microseconds will do). Every line has one or none
  has; without it the file's line order is the draw order only if ``--file-order`` says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .._internal.settings import setting
from ..errors import BadInput
from ._recording import RecordedDraw, Recording, failed, group_draws, observed

__all__ = ["JSONL_SCHEMA_ID", "JsonlDraw", "JsonlTool", "jsonl_schema", "load_jsonl"]

JSONL_SCHEMA_ID = "agentverity_props.assess-jsonl/1"
_FIX = "one JSON object per line (schema: docs/schemas/assess-jsonl.schema.json)"


class JsonlTool(BaseModel):
    """One tool call of a recorded answer."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    status: str = "success"


class JsonlDraw(BaseModel):
    """One recorded draw (one line of the file)."""

    model_config = ConfigDict(extra="forbid", frozen=True,
                              title="agentverity-props assess: one recorded draw per line",
                              json_schema_extra={"$id": JSONL_SCHEMA_ID})

    input: str = Field(min_length=1, description="the input text, as the agent was given it")
    output: str | dict[str, Any] | None = Field(
        None, description="the answer; its verdict is taken as `run` takes it "
                          "(--verdict-key / --verdict-regex)")
    verdict: str | None = Field(None, min_length=1, description="the verdict, when recorded "
                                "instead of (or besides) the answer; it wins over the output")
    error: str | None = Field(None, min_length=1, description="the call failed: incomplete "
                              "evidence, never a verdict")
    tools: list[str | JsonlTool] | None = Field(None, description="tool calls, in order")
    order: int | None = Field(None, ge=0, description="position in the sequence the calls "
                              "were made in (distinct integers); on every line or none")

    @model_validator(mode="after")
    def _one_answer(self) -> JsonlDraw:
        if self.error is not None and (self.output is not None or self.verdict is not None):
            raise ValueError("a line with 'error' is a failed call: it has no output or "
                             "verdict")
        if self.error is None and self.output is None and self.verdict is None:
            raise ValueError("give the answer ('output'), the 'verdict', or the 'error' of "
                             "the failed call")
        return self

    def observation(self, extractor: Any) -> Any:
        if self.error is not None:
            return failed("error", self.error)
        tools = None if self.tools is None else [
            t if isinstance(t, str) else t.model_dump() for t in self.tools]
        return observed(self.output if self.output is not None else "", extractor,
                        verdict=self.verdict, tools=tools)


def jsonl_schema() -> dict[str, Any]:
    """The published JSON Schema of one line."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            **JsonlDraw.model_json_schema()}


def load_jsonl(path: str | Path, *, extractor: Any, file_order: bool = False,
               agent: str | None = None) -> Recording:
    """The recording in a JSONL file (module docstring).

    Raises:
        BadInput: a line that is not a draw (its number, what is wrong, the fix).
    """
    from .._internal.files import loads_json
    from .._internal.inputs import read_text_file

    p = Path(path)
    text = read_text_file(p, what="JSONL evidence file")
    draws: list[RecordedDraw] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{p}:{n}"
        data = loads_json(line, where=where, fix=_FIX)
        if not isinstance(data, dict):
            raise BadInput(f"{where} is a JSON {type(data).__name__}, not an object", _FIX)
        try:
            row = JsonlDraw.model_validate(data)
        except ValidationError as exc:
            raise BadInput(f"{where}: {_first_error(exc)}", _FIX) from None
        order = row.order
        if order is None and file_order:
            order = n
        draws.append(RecordedDraw(row.input, order, row.observation(extractor), where))
    how = ("the 'order' of each line" if draws and draws[0].order is not None and not file_order
           else f"the file's line order ({setting('file_order')})" if file_order
           else "unknown")
    return group_draws(draws, source="jsonl", agent=agent or f"jsonl:{p.name}", order=how,
                       where=f"JSONL evidence file {p}")


def _first_error(exc: ValidationError) -> str:
    errs = exc.errors()
    e = errs[0]
    loc = ".".join(str(x) for x in e.get("loc", ()) if not str(x).startswith("function-"))
    msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")
    if e.get("type") == "extra_forbidden":
        msg = ("unknown field; allowed: " + ", ".join(JsonlDraw.model_fields))
    more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
    return (f"{loc}: {msg}" if loc else msg) + more
