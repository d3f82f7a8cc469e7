"""The tool-assertion case file, as pydantic models (``extra="forbid"`` everywhere).

revefi-agent-test's format is a subset: ``config: {base_url, api_key, answer_timeout_s,
poll_attempts, poll_interval_s}`` and ``cases: [{name, url, api_key, body, required_tools,
baseline_answer, min_similarity}]`` load unchanged. Everything else is an extension.
``docs/schemas/tools-cases.schema.json`` is generated from :class:`ToolsSuite`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .._internal.unique import first_repeat
from ._assert import OPS, ArgRule

__all__ = ["ArgPredicate", "Case", "SuiteConfig", "ToolsSuite", "json_schema"]

SCHEMA_ID = "agentverity_props.tools-cases/1"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ArgPredicate(_Strict):
    """A predicate on one argument of a tool: some successful call of ``tool`` must have
    ``arg`` (dotted path into its arguments) satisfying every operator given."""

    tool: str = Field(min_length=1)
    arg: str = Field(min_length=1, description="argument name; dots descend into objects")
    equals: Any = Field(None, description="equal to this value (numbers compare as numbers)")
    contains: Any = Field(None, description="substring of a string / member of a list")
    regex: str | None = Field(None, description="Python regular expression, searched")
    gt: float | None = Field(None, description="a number greater than this")
    lt: float | None = Field(None, description="a number less than this")

    @model_validator(mode="after")
    def _one_op(self) -> ArgPredicate:
        if not any(op in self.model_fields_set for op in OPS):
            raise ValueError(f"give at least one of {', '.join(OPS)}")
        try:
            self.rules()  # compiles the regex now
        except TypeError as exc:  # InvalidArgument: pydantic reports only ValueErrors
            raise ValueError(str(exc)) from None
        return self

    def rules(self) -> list[ArgRule]:
        return [ArgRule(self.tool, self.arg, op, getattr(self, op)) for op in OPS
                if op in self.model_fields_set]


class SuiteConfig(_Strict):
    """Settings shared by every case (``config:``)."""

    base_url: str | None = Field(
        None, description="revefi-agent-test: the vendor span API. Accepted for compatibility; "
                          "spans are read from the built-in OTLP receiver instead.")
    api_key: str | None = Field(
        None, description="revefi-agent-test: read key of the vendor span API (redacted; unused "
                          "by the OTLP receiver).")
    answer_timeout_s: float = Field(120.0, gt=0, description="per-request timeout in seconds")
    poll_attempts: int | None = Field(None, ge=1, description="revefi-agent-test: with "
                                      "poll_interval_s, the span wait when span_timeout_s is unset")
    poll_interval_s: float | None = Field(None, gt=0)
    span_timeout_s: float | None = Field(None, gt=0, description="how long to wait for a "
                                         "call's spans after it answers (default 10)")
    runs: int = Field(1, ge=1, le=10_000, description="maximum calls per case")
    min_pass_rate: float = Field(1.0, gt=0, le=1, description="share of calls that must pass")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="error rate of the pass/fail call")
    otlp_port: int = Field(0, ge=0, le=65535, description="receiver port on 127.0.0.1 (0 = free)")
    max_otlp_bytes: int = Field(4 * 1024 * 1024, ge=1024, description="largest OTLP body")
    embedder: Literal["auto", "minilm", "lexical"] = "auto"
    min_similarity: float = Field(0.5, ge=-1, le=1, description="default similarity threshold")
    headers: dict[str, str] = Field(default_factory=dict, description="sent with every case")
    response_path: str | None = Field(None, description="dotted path to the answer in the "
                                      "JSON response; unset = text/answer/output/... or the body")
    retries: int = Field(2, ge=0, le=20, description="retries of retryable failures per call")
    budget: int | None = Field(None, ge=1, description="hard cap on agent calls for the file")

    def span_wait_s(self) -> float:
        if self.span_timeout_s is not None:
            return self.span_timeout_s
        if self.poll_attempts is not None and self.poll_interval_s is not None:
            return self.poll_attempts * self.poll_interval_s
        return 10.0


RequiredTools = list[str | list[str]]


class Case(_Strict):
    """One agent request and what its tool calls must look like (``cases[]``)."""

    name: str = Field(min_length=1)
    url: str | None = Field(None, description="HTTP agent endpoint (or use agent:)")
    api_key: str | None = Field(None, description="sent as 'Authorization: Bearer <key>'")
    body: Any = Field(None, description="JSON sent verbatim; '${prompt}' is replaced by prompt")
    required_tools: RequiredTools = Field(
        default_factory=list, description="flat list = all must fire; list of lists = any "
                                          "one group must fire fully")
    baseline_answer: str | None = None
    min_similarity: float | None = Field(None, ge=-1, le=1)
    agent: str | None = Field(None, description="in-process agent reference "
                                                "(module:attr or file.py:attr)")
    prompt: str | None = Field(None, description="the prompt (required with agent:)")
    method: Literal["POST", "PUT", "PATCH", "GET"] = "POST"
    headers: dict[str, str] = Field(default_factory=dict)
    response_path: str | None = None
    timeout_s: float | None = Field(None, gt=0)
    runs: int | None = Field(None, ge=1, le=10_000)
    min_pass_rate: float | None = Field(None, gt=0, le=1)
    forbidden_tools: list[str] = Field(default_factory=list)
    tool_sequence: list[str] = Field(default_factory=list,
                                     description="must fire in this order (gaps allowed)")
    tool_args: list[ArgPredicate] = Field(default_factory=list)

    @field_validator("required_tools")
    @classmethod
    def _no_empty_group(cls, v: RequiredTools) -> RequiredTools:
        if any(isinstance(g, list) and not g for g in v):
            raise ValueError("an any-of group is empty")
        return v

    @model_validator(mode="after")
    def _target(self) -> Case:
        if (self.url is None) == (self.agent is None):
            raise ValueError("give exactly one of url (an HTTP agent) or agent (in-process)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {self.url[:60]!r}")
        if self.agent is not None and self.prompt is None:
            raise ValueError("an agent: case needs a prompt:")
        if self.agent is not None and (self.body is not None or self.api_key is not None):
            raise ValueError("body and api_key apply to url: cases only")
        has_check = (self.required_tools or self.forbidden_tools or self.tool_sequence
                     or self.tool_args or self.baseline_answer is not None)
        if not has_check:
            raise ValueError("the case checks nothing; add required_tools, forbidden_tools, "
                             "tool_sequence, tool_args or baseline_answer")
        if self.min_similarity is not None and self.baseline_answer is None:
            raise ValueError("min_similarity needs a baseline_answer")
        return self


class ToolsSuite(_Strict):
    """A tool-assertion case file."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="agentverity-props tools cases",
                              json_schema_extra={"$id": SCHEMA_ID})

    version: Literal[1] = Field(1, description="format version (optional)")
    config: SuiteConfig = Field(default_factory=lambda: SuiteConfig.model_validate({}))
    cases: list[Case] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> ToolsSuite:
        if (repeated := first_repeat(c.name for c in self.cases)) is not None:
            raise ValueError(f"two cases are named {repeated!r}; names must be unique")
        return self


def json_schema() -> dict[str, Any]:
    """The published JSON Schema of the case file."""
    schema = ToolsSuite.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
