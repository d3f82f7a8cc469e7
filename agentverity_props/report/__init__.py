"""Renderers: text, JSON, JUnit, Markdown and HTML, and CI annotations. They consume result
dicts (the versioned JSON), never live objects, so ``agentverity-props report FILE.json``
renders a saved result exactly.

``RESULT_KINDS`` is the one registry of result kinds (model, renderers, exit meanings, title);
``load_result`` / ``check_result`` read a file through it and ``render`` renders through it.
"""

from ._annotations import Finding, findings, github_commands
from ._bench import (
    render_bench_junit,
    render_bench_text,
    render_compare_junit,
    render_compare_text,
)
from ._conversation import render_conversation_junit, render_conversation_text
from ._html import render_html
from ._json import dumps, iter_dumps
from ._junit import render_junit
from ._kinds import RESULT_KINDS, ResultKind, check_result, kind_for, load_result, render
from ._markdown import render_markdown
from ._plan import render_plan_text
from ._snapshot import (
    check_moves,
    render_check_junit,
    render_check_text,
    render_snapshot_junit,
    render_snapshot_text,
)
from ._text import render_run_text
from ._tools import render_tools_junit, render_tools_text

__all__ = [
    "RESULT_KINDS",
    "Finding",
    "ResultKind",
    "check_moves",
    "check_result",
    "dumps",
    "findings",
    "github_commands",
    "iter_dumps",
    "kind_for",
    "load_result",
    "render",
    "render_bench_junit",
    "render_bench_text",
    "render_check_junit",
    "render_check_text",
    "render_compare_junit",
    "render_compare_text",
    "render_conversation_junit",
    "render_conversation_text",
    "render_html",
    "render_junit",
    "render_markdown",
    "render_plan_text",
    "render_run_text",
    "render_snapshot_junit",
    "render_snapshot_text",
    "render_tools_junit",
    "render_tools_text",
]
