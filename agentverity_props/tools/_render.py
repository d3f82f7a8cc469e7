"""A :class:`ToolsReport` as terminal text, JSON or JUnit XML: each renderer reads the report's
versioned dict (``to_dict()``), as every renderer does (:mod:`agentverity_props.report`)."""

from __future__ import annotations

import json

from ._results import ToolsReport

__all__ = ["FORMATS", "render", "render_json", "render_junit", "render_text"]

FORMATS = ("text", "json", "junit")


def render_text(report: ToolsReport, *, width: int = 120, color: bool = False) -> str:
    """A table of cases, then each case's reasons; ends with the tally and exit code."""
    from ..report import render_tools_text
    return render_tools_text(report.to_dict(), width=width, color=color)


def render_json(report: ToolsReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"


def render_junit(report: ToolsReport) -> str:
    """JUnit XML: ``fail`` -> <failure>, ``error``/``inconclusive`` -> <error>."""
    from ..report import render_tools_junit
    return render_tools_junit(report.to_dict())


def render(report: ToolsReport, fmt: str) -> str:
    if fmt == "text":
        return render_text(report)
    if fmt == "json":
        return render_json(report)
    if fmt == "junit":
        return render_junit(report)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
