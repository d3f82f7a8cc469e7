"""Renderers: text, JSON, JUnit and HTML. They consume result dicts (the versioned JSON), never
live objects, so ``agentverity-props report FILE.json`` renders a saved result exactly."""

from ._html import render_html
from ._json import dumps, load_result
from ._junit import render_junit
from ._text import render_run_text

__all__ = ["dumps", "load_result", "render_html", "render_junit", "render_run_text"]
