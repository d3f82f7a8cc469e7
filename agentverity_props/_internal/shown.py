"""Text from agents and files, made safe to show: as data, never as markup or terminal codes.

An answer, a verdict, a prompt or a name from a case file can hold anything a model emits:
rich markup (``[/INST]`` is an ordinary chat-template token, and would crash the renderer;
``[link=...]`` would become a hyperlink; ``[red]general`` would show as ``general``), escape
sequences that retitle or clear the terminal, NUL, or bidi overrides (U+202E) that reorder
what is shown. Before a text report is rendered its result is passed through
:func:`for_markup` (renderers that build rich markup) or :func:`for_text` (plain text): every
string is escaped with :func:`rich.markup.escape` and its control and bidi characters are
replaced by visible ``\\x1b`` / ``\\u202e`` escapes. Tabs and line breaks stay.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["Shown", "for_markup", "for_text", "visible"]

# C0 controls but tab and line feed, DEL, C1 controls, and the bidi marks/overrides/isolates
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def _code(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def visible(text: str) -> str:
    """``text`` with every control or bidi character written out (``ESC`` -> ``\\x1b``)."""
    return _UNSAFE.sub(_code, text)


class Shown(str):
    """A string already escaped for rich markup. ``repr()`` (reports quote prompts with
    ``!r``) escapes the repr of the original, so quoting never undoes the escaping."""

    raw: str

    def __new__(cls, raw: str) -> Shown:
        from rich.markup import escape

        self = super().__new__(cls, escape(visible(raw)))
        self.raw = raw
        return self

    def __repr__(self) -> str:
        from rich.markup import escape

        return escape(visible(repr(self.raw)))


def _walk(value: Any, leaf: Any) -> Any:
    if isinstance(value, str):
        return leaf(value)
    if isinstance(value, dict):
        return {_walk(k, leaf): _walk(v, leaf) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_walk(v, leaf) for v in value) if isinstance(value, list) \
            else tuple(_walk(v, leaf) for v in value)
    return value


def for_markup(result: Any) -> Any:
    """A copy of ``result`` whose every string (keys too) is a :class:`Shown`."""
    return _walk(result, Shown)


def for_text(result: Any) -> Any:
    """A copy of ``result`` whose every string (keys too) has its control characters made
    visible (for plain-text renderers, and for ones that escape markup themselves)."""
    return _walk(result, visible)
