"""Renderers: text, JSON, JUnit, Markdown and HTML, and CI annotations. They consume result
dicts (the versioned JSON), never live objects, so ``agentverity-props report FILE.json``
renders a saved result exactly.

``RESULT_KINDS`` is the one registry of result kinds (model, renderers, exit meanings, title);
``load_result`` / ``check_result`` read a file through it, ``render`` renders through it and
``document_for`` names the model reading a schema.
"""

from ._annotations import Finding, github_commands
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
from ._kinds import check_result, findings, load_result, render, render_markdown
from ._plan import render_plan_text
from ._registry import RESULT_KINDS, document_for, kind_for
from ._snapshot import check_moves, render_check_text, render_snapshot_text
from ._text import render_run_text
from ._tools import render_tools_junit, render_tools_text

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "document_for",
    "load_result",
    "render",
    "render_html",
]
