"""Markdown building blocks: agent- and file-supplied text as data, tables that stay tables.

GitHub renders a job summary and a pull-request comment as GitHub Flavored Markdown, then
links ``@name`` mentions and ``#123`` references in the text it produced. Text an agent or a
file supplied is therefore never pasted as it is: :func:`code` puts a value in a code span
(no emphasis, link, HTML, entity or mention is read inside one), and :func:`esc` escapes
every ASCII punctuation character of a sentence that carries such text (CommonMark's
backslash escapes) and puts ``@`` and ``#`` in code spans of their own, so no mention or
reference is formed. Control and bidi characters are written out first
(:func:`agentverity_props._internal.shown.visible`), line breaks become spaces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

from .._internal.fingerprint import short
from .._internal.shown import visible

__all__ = ["code", "esc", "exit_of", "fence", "head", "kind_of", "label", "link", "meaning",
           "num", "pct", "table", "tail"]

# what can start markup inside a line: emphasis, code, links and images, HTML, entities,
# strikethrough, table cells; ``:`` before ``//`` and ``.`` after ``www`` (GFM autolinks)
_INLINE = re.compile(r"([\\`*_\[\]<>|~&!]|:(?=//)|(?<=www)\.)")
# what can start a block at the head of a line: a list item, a heading underline
_LEAD = re.compile(r"^(\d+)([.)])|^([-+=])")
_TICKS = re.compile(r"`+")
#: the longest value shown in a code span (the JSON keeps the whole text)
LONGEST = 160
#: the most rows a table shows (most important first: every caller sorts them so); a job
#: summary holds 1 MiB and a pull-request comment 65,536 characters
ROWS = 100


def _flat(text: str, limit: int | None = LONGEST) -> str:
    s = visible(str(text)).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    s = s.replace("\t", " ")
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def code(value: Any, *, limit: int | None = LONGEST) -> str:
    """``value`` as a code span: shown literally whatever it holds (backticks included)."""
    s = _flat("" if value is None else str(value), limit)
    if not s:
        return "*(empty)*"
    longest = max((len(m) for m in _TICKS.findall(s)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if s[0] in "` " or s[-1] in "` " else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def esc(text: Any, *, limit: int | None = 2000) -> str:
    """A sentence that may carry supplied text, as inert Markdown text.

    >>> esc("a *b* <i>[x](y) @you #1 http://h 1. two")
    'a \\\\*b\\\\* \\\\<i\\\\>\\\\[x\\\\](y) `@`you `#`1 http\\\\://h 1. two'
    """
    s = _INLINE.sub(r"\\\1", _flat("" if text is None else str(text), limit))
    s = _LEAD.sub(lambda m: f"{m.group(1)}\\{m.group(2)}" if m.group(1) else f"\\{m.group(3)}",
                  s)
    return s.replace("@", "`@`").replace("#", "`#`")


def num(x: Any, fmt: str = ".3f", none: str = "–") -> str:
    """A number (or the dash for none)."""
    if x is None or isinstance(x, bool) or not isinstance(x, (int, float)):
        return none
    return format(x, fmt)


def pct(x: Any) -> str:
    return num(x * 100 if isinstance(x, (int, float)) else None, ".0f") + \
        ("%" if isinstance(x, (int, float)) else "")


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *,
          align: str = "", limit: int = ROWS) -> list[str]:
    """A GFM table: every row has the header's column count, pipes in cells escaped (also
    inside code spans, as GFM reads the row's cells before their content), line breaks
    flattened. ``align``: one letter per column, ``l`` or ``r`` (default left). Past
    ``limit`` rows a line says how many more the JSON holds."""
    width = len(headers)

    def cell(v: Any) -> str:
        s = str(v).replace("\r", " ").replace("\n", " ").replace("|", "\\|").strip()
        return s or "–"

    marks = [("---:" if (align[i:i + 1] == "r") else "---") for i in range(width)]
    out = ["| " + " | ".join(cell(h) for h in headers) + " |",
           "| " + " | ".join(marks) + " |"]
    rows = list(rows)
    for row in rows[:limit]:
        cells = [cell(v) for v in list(row)[:width]]
        cells += ["–"] * (width - len(cells))
        out.append("| " + " | ".join(cells) + " |")
    if len(rows) > limit:
        out += ["", f"*… and {len(rows) - limit} more rows: the JSON result has every one*"]
    return out


def fence(text: str, info: str = "") -> list[str]:
    """A fenced code block holding ``text`` literally (the fence outgrows its backticks)."""
    body = visible(text).replace("\r", "")
    longest = max((len(m) for m in _TICKS.findall(body)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [ticks + info, *body.split("\n"), ticks]


def link(label: str, target: str, *, base: str | None = None) -> str:
    """A relative link to ``target`` (a file this command wrote), from the folder of
    ``base`` (the Markdown file; None: the working directory). The label is escaped."""
    start = os.path.dirname(os.path.abspath(base)) if base else os.getcwd()
    rel = os.path.relpath(os.path.abspath(target), start).replace(os.sep, "/")
    quoted = "".join(c if c.isalnum() or c in "-._~/" else
                     "".join(f"%{b:02X}" for b in c.encode()) for c in rel)
    return f"[{esc(label)}]({quoted})"


# -- the page around every kind's body ------------------------------------------------------

_MARK = {0: "✅", 1: "❌", 2: "⚠️"}


def exit_of(d: dict[str, Any]) -> int | None:
    """The exit code ``d`` records (None: none). A Markdown body is given its result with the
    exit code its kind derives when the format records none (``render_markdown``)."""
    code_ = d.get("exit_code")
    return code_ if isinstance(code_, int) and not isinstance(code_, bool) else None


def kind_of(d: dict[str, Any]) -> str:
    """The result's kind (``run``, ``check``...; ``boundary`` for that command's result)."""
    schema = d.get("schema")
    if isinstance(schema, str) and schema.startswith("agentverity_props."):
        return schema.removeprefix("agentverity_props.").split("/")[0]
    return "boundary" if "low_verdict" in d and "high_verdict" in d else "result"


def head(title: str, d: dict[str, Any], meaning: str, who: str | None) -> list[str]:
    """The heading (command, ✅/❌/⚠️ and the exit code), the code's meaning, and ``who``
    (a line naming the agent and the size of the run, already Markdown)."""
    ec = exit_of(d)
    mark = _MARK.get(ec, "") if ec is not None else ""
    out = [f"### agentverity-props {title}: {mark} exit {ec if ec is not None else '?'}", ""]
    out.append(f"**{esc(meaning)}**" if meaning else "")
    if who:
        out += ["", who]
    return [*out, ""]


def privacy_said(privacy: str, shown: bool) -> str:
    """The privacy line of a page: the result's own, and, when the page shows inputs by the
    text passed to the report (``shown``), that it does (the result file still does not)."""
    if not shown:
        return privacy
    return ("this page shows inputs by their text, passed to the report and not stored; the "
            f"result file: {privacy}")


def tail(d: dict[str, Any], html: str | None, base: str | None,
         labels: dict[str, str] | None = None) -> list[str]:
    """The privacy line and the link to the HTML report written beside the Markdown."""
    out = []
    if d.get("privacy"):
        out.append(f"<sub>Privacy: {esc(privacy_said(str(d['privacy']), bool(labels)))}</sub>")
        out.append("")
    if html:
        out.append(f"Full report: {link('HTML report', html, base=base)}")
        out.append("")
    return out


def label(fp: Any, names: dict[str, Any] | None) -> str:
    """An input by its text when ``names`` has it, else by its short fingerprint."""
    text = (names or {}).get(str(fp))
    return code(text) if isinstance(text, str) else code(short(str(fp)))


def meaning(meanings: dict[int, str], d: dict[str, Any]) -> str:
    """What the result's exit code means for its kind."""
    ec = exit_of(d)
    return meanings.get(ec, "") if ec is not None else ""
