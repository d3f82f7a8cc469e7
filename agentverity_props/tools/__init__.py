"""Tool-call assertions: case files, the runner, and :func:`assert_tools` for tests.

Example:
    >>> from agentverity_props.tools import assert_tools
    >>> assert_tools(["search_faq"], required=[["lookup_order"], ["search_faq"]]).passed
    True
"""

from __future__ import annotations

from ._assert import ToolCheck, assert_tools, tool_called
from ._load import load_suite, parse_suite
from ._model import ArgPredicate, Case, json_schema
from ._render import render, render_json, render_junit, render_text
from ._results import SCHEMA, CaseResult, RunResult, ToolsConfig, ToolsReport
from ._runner import RunOptions, run_suite

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "Case",
    "ToolsConfig",
    "ToolsReport",
    "assert_tools",
    "run_suite",
    "tool_called",
]
