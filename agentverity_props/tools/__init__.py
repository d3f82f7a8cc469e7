"""Tool-call assertions: case files, the runner, and :func:`assert_tools` for tests.

Example:
    >>> from agentverity_props.tools import assert_tools
    >>> assert_tools(["search_faq"], required=[["lookup_order"], ["search_faq"]]).passed
    True
"""

from __future__ import annotations

from ._assert import ArgRule, ToolCheck, assert_tools, normalize_required, tool_called
from ._load import LoadedSuite, expand_env, load_suite, parse_suite
from ._model import ArgPredicate, Case, SuiteConfig, ToolsSuite, json_schema
from ._render import FORMATS, render, render_json, render_junit, render_text
from ._results import SCHEMA, CaseResult, RunResult, ToolsConfig, ToolsReport
from ._runner import RunOptions, run_suite, run_suite_async

__all__ = [
    "FORMATS",
    "SCHEMA",
    "ArgPredicate",
    "ArgRule",
    "Case",
    "CaseResult",
    "LoadedSuite",
    "RunOptions",
    "RunResult",
    "SuiteConfig",
    "ToolCheck",
    "ToolsConfig",
    "ToolsReport",
    "ToolsSuite",
    "assert_tools",
    "expand_env",
    "json_schema",
    "load_suite",
    "normalize_required",
    "parse_suite",
    "render",
    "render_json",
    "render_junit",
    "render_text",
    "run_suite",
    "run_suite_async",
    "tool_called",
]
