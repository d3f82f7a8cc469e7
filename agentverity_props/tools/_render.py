"""Render a :class:`ToolsReport` as terminal text (rich), JSON or JUnit XML.

HTML comes from the shared report machinery through :meth:`ToolsReport.to_dict`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from ._results import CaseResult, ToolsReport

__all__ = ["FORMATS", "render", "render_json", "render_junit", "render_text"]

FORMATS = ("text", "json", "junit")
_MARK = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "inconclusive": "INCONCLUSIVE"}


def _rate(c: CaseResult) -> str:
    if c.pass_rate is None:
        return "-"
    n = c.n_pass + c.n_fail
    out = f"{c.n_pass}/{n}"
    if c.interval and n > 1:
        out += f" [{c.interval[0]:.2f}, {c.interval[1]:.2f}]"
    return out


def render_text(report: ToolsReport, *, width: int = 120) -> str:
    """A table of cases, then each case's reasons; ends with the tally and exit code."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False,
                      highlight=False, soft_wrap=False)
    table = Table(title=f"tool calls — {report.config_path}", show_lines=False)
    table.add_column("case", overflow="fold")
    table.add_column("result")
    table.add_column("calls", justify="right")
    table.add_column("passed [CI]", justify="right")
    table.add_column("tools seen", overflow="fold")
    for c in report.cases:
        seen = ", ".join(c.tools_seen) or "none"
        if c.tools_errored:
            seen += f" (error status: {', '.join(c.tools_errored)})"
        table.add_row(c.name, _MARK.get(c.status, c.status.upper()), str(len(c.runs)),
                      _rate(c), seen)
    console.print(table)
    for c in report.cases:
        if c.status == "pass" and not c.reasons:
            continue
        console.print(f"{_MARK.get(c.status, c.status)} {c.name}: {c.decided_by}")
        if c.message:
            console.print(f"  {c.message}")
        for why in c.reasons[:5]:
            console.print(f"  - {why}")
    if report.embedder:
        console.print(f"similarity embedder: {report.embedder}")
    for note in report.notes:
        console.print(f"note: {note}")
    k = report.counts()
    budget = f" of budget {report.budget}" if report.budget is not None else ""
    console.print(f"{k['pass']} passed, {k['fail']} failed, {k['error']} errors, "
                  f"{k['inconclusive']} inconclusive; {report.calls} agent calls{budget}; "
                  f"exit {report.exit_code}")
    return buf.getvalue()


def render_json(report: ToolsReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"


def render_junit(report: ToolsReport) -> str:
    """JUnit XML: ``fail`` -> <failure>, ``error``/``inconclusive`` -> <error>."""
    import xml.etree.ElementTree as ET

    k = report.counts()
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", {
        "name": "agentverity-props tools", "tests": str(len(report.cases)),
        "failures": str(k["fail"]), "errors": str(k["error"] + k["inconclusive"]),
        "skipped": "0",
        "time": f"{sum(r.latency_s for c in report.cases for r in c.runs):.3f}"})
    classname = "tools." + Path(report.config_path).stem
    for c in report.cases:
        tc = ET.SubElement(suite, "testcase", {
            "classname": classname, "name": c.name,
            "time": f"{sum(r.latency_s for r in c.runs):.3f}"})
        detail = "\n".join([c.decided_by, *(c.reasons), *([c.message] if c.message else [])])
        if c.status == "fail":
            el = ET.SubElement(tc, "failure", {"message": (c.reasons or (c.decided_by,))[0],
                                               "type": "ToolAssertion"})
            el.text = detail
        elif c.status in ("error", "inconclusive"):
            el = ET.SubElement(tc, "error", {"message": c.message or c.decided_by,
                                             "type": c.status})
            el.text = detail
        out = ET.SubElement(tc, "system-out")
        out.text = (f"tools seen: {', '.join(c.tools_seen) or 'none'}\n"
                    f"passed {c.n_pass}, failed {c.n_fail}, errors {c.n_error}")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def render(report: ToolsReport, fmt: str) -> str:
    if fmt == "text":
        return render_text(report)
    if fmt == "json":
        return render_json(report)
    if fmt == "junit":
        return render_junit(report)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
