"""Text and JUnit renderers of a ``tools`` result (the ``tools`` kind's dict)."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

__all__ = ["render_tools_junit", "render_tools_text"]

_MARK = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "inconclusive": "INCONCLUSIVE"}


#: what each exit code of ``tools`` means
TOOLS_EXIT = {0: "every case passed", 1: "at least one case failed",
              2: "incomplete: a case errored or its pass rate is undecided"}


def _rate(c: dict[str, Any]) -> str:
    if c.get("pass_rate") is None:
        return "-"
    n = int(c.get("passed") or 0) + int(c.get("failed") or 0)
    out = f"{c.get('passed', 0)}/{n}"
    interval = c.get("interval")
    if interval and n > 1:
        out += f" [{interval[0]:.2f}, {interval[1]:.2f}]"
    return out


def render_tools_text(d: dict[str, Any], *, width: int = 120, color: bool = False) -> str:
    """A table of cases, then each case's reasons; ends with the tally and exit code."""
    from rich.console import Console
    from rich.table import Table

    from .._internal.shown import for_markup

    d = for_markup(d)  # case names, messages and tool names are data, never markup
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, soft_wrap=False)
    table = Table(title=f"tool calls — {d.get('config')}", show_lines=False)
    table.add_column("case", overflow="fold")
    table.add_column("result")
    table.add_column("calls", justify="right")
    table.add_column("passed [CI]", justify="right")
    table.add_column("tools seen", overflow="fold")
    cases = d.get("cases") or []
    for c in cases:
        seen = ", ".join(c.get("tools_seen") or ()) or "none"
        if c.get("tools_errored"):
            seen += f" (error status: {', '.join(c['tools_errored'])})"
        status = str(c.get("status"))
        table.add_row(str(c.get("name")), _MARK.get(status, status.upper()),
                      str(c.get("calls", len(c.get("runs") or ()))), _rate(c), seen)
    console.print(table)
    for c in cases:
        status = str(c.get("status"))
        if status == "pass" and not c.get("reasons"):
            continue
        console.print(f"{_MARK.get(status, status)} {c.get('name')}: {c.get('decided_by')}")
        if c.get("message"):
            console.print(f"  {c['message']}")
        for why in (c.get("reasons") or [])[:5]:
            console.print(f"  - {why}")
    if d.get("embedder"):
        console.print(f"similarity embedder: {d['embedder']}")
    for note in d.get("notes") or ():
        console.print(f"note: {note}")
    k = d.get("summary") or {}
    budget = f" of budget {d['budget']}" if d.get("budget") is not None else ""
    console.print(f"{k.get('pass', 0)} passed, {k.get('fail', 0)} failed, {k.get('error', 0)} "
                  f"errors, {k.get('inconclusive', 0)} inconclusive; {d.get('calls', 0)} agent "
                  f"calls{budget}; exit {int(d.get('exit_code', 2))}")
    return buf.getvalue()


def render_tools_junit(d: dict[str, Any]) -> str:
    """JUnit XML: ``fail`` -> <failure>, ``error``/``inconclusive`` -> <error>."""
    k = d.get("summary") or {}
    cases = d.get("cases") or []

    def latency(c: dict[str, Any]) -> float:
        return sum(float(r.get("latency_s") or 0.0) for r in c.get("runs") or ())

    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", {
        "name": "agentverity-props tools", "tests": str(len(cases)),
        "failures": str(k.get("fail", 0)),
        "errors": str(k.get("error", 0) + k.get("inconclusive", 0)), "skipped": "0",
        "time": f"{sum(latency(c) for c in cases):.3f}"})
    classname = "tools." + Path(str(d.get("config", "tools"))).stem
    for c in cases:
        tc = ET.SubElement(suite, "testcase", {"classname": classname, "name": str(c.get("name")),
                                               "time": f"{latency(c):.3f}"})
        reasons = list(c.get("reasons") or ())
        decided = str(c.get("decided_by") or "")
        message = c.get("message")
        detail = "\n".join([decided, *reasons, *([message] if message else [])])
        status = c.get("status")
        if status == "fail":
            el = ET.SubElement(tc, "failure", {"message": (reasons or [decided])[0],
                                               "type": "ToolAssertion"})
            el.text = detail
        elif status in ("error", "inconclusive"):
            el = ET.SubElement(tc, "error", {"message": message or decided,
                                             "type": str(status)})
            el.text = detail
        out = ET.SubElement(tc, "system-out")
        out.text = (f"tools seen: {', '.join(c.get('tools_seen') or ()) or 'none'}\n"
                    f"passed {c.get('passed', 0)}, failed {c.get('failed', 0)}, "
                    f"errors {c.get('errors', 0)}")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
