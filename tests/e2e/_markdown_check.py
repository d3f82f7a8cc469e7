"""What every Markdown report must be, checked with a real CommonMark + GFM-table parser
(markdown-it-py): tables well formed, no raw control character, no HTML but ``<sub>``, every
link relative. Shared by the Markdown, CI-recipe and regression-workflow tests."""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                      "\u2066-\u2069]")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table").enable("strikethrough")


def _source_tables(text: str) -> list[list[str]]:
    """Blocks of consecutive lines starting with ``|`` (the tables as written)."""
    blocks: list[list[str]] = []
    current: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def check_markdown(text: str) -> dict[str, Any]:
    """Assert ``text`` is a sound report; returns what was found (tables, links, text)."""
    assert not _CONTROL.search(text), f"raw control character in {text!r:.300}"
    tokens = _parser().parse(text)
    tables = []
    row: list[int] = []
    current: list[list[int]] = []
    for t in tokens:
        if t.type == "table_open":
            current = []
        elif t.type == "tr_open":
            row = [0]
        elif t.type in ("th_open", "td_open"):
            row[0] += 1
        elif t.type == "tr_close":
            current.append(row)
        elif t.type == "table_close":
            tables.append([r[0] for r in current])
    source = _source_tables(text)
    assert len(tables) == len(source), f"{len(source)} tables written, {len(tables)} parsed"
    for counts, lines in zip(tables, source, strict=True):
        assert len(counts) == len(lines) - 1, f"a row fell out of the table: {lines}"
        assert len(set(counts)) == 1, f"rows of different widths {counts}: {lines}"
        widths = {len(_CELL_SPLIT.split(line.strip().strip("|"))) for line in lines}
        assert widths == {counts[0]}, f"cells {widths} vs header {counts[0]}: {lines}"
    links, html, plain, words = [], [], [], []

    def walk(children: Any) -> None:
        for c in children or ():
            if c.type == "link_open":
                links.append(c.attrs.get("href"))
            elif c.type == "image":
                links.append(c.attrs.get("src"))
            elif c.type == "html_inline":
                html.append(c.content)
            elif c.type in ("text", "code_inline"):
                words.append(c.content)
                if c.type == "text":
                    plain.append(c.content)
            walk(c.children)

    for t in tokens:
        if t.type == "html_block":
            html.append(t.content)
        walk(t.children)
    for h in html:
        assert h.strip() in ("<sub>", "</sub>"), f"raw HTML in the report: {h!r}"
    for href in links:
        assert href, "an empty link"
        assert not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^/", href), \
            f"link not relative: {href!r}"
    return {"tables": tables, "links": links, "text": "\n".join(words), "plain": plain,
            "headings": [tokens[i + 1].content for i, t in enumerate(tokens)
                         if t.type == "heading_open"]}
