"""One path syntax into JSON/YAML data, for every place a user names a value by path.

Users write these paths in ``--verdict-key`` / :func:`~agentverity_props.by_key`, the HTTP
adapter's ``response_path`` / ``verdict_path``, a tool-argument predicate's ``arg`` and a
benchmark's ``json_path`` evaluator; error messages print locations in the same syntax
(``tasks[0].evaluation``), so a location can be pasted back as a path.

The syntax::

    path     :=  ["$"] segment*          a first segment may drop its dot: "a.b" is "$.a.b"
    segment  :=  "." name                a key, or an index when name is an integer
              |  "[" integer "]"         an index; negative counts from the end
              |  "[" quoted "]"          a key holding '.', '[' or ']': ['a.b'] or ["a.b"]
    name     :=  any characters but '.', '[' and ']'

Looking a segment up: in a mapping, the key (``a.0`` finds the key ``"0"``); in a list, the
index (``a.0`` and ``a[0]`` alike); anything else, or an index out of range, is "not there"
(:data:`MISSING`), never an error.

>>> parse_path("$.items[1].name")
['items', 1, 'name']
>>> parse_path("a.b.0") == parse_path("$.a.b[0]")
True
>>> lookup({"a": {"b": [1, 2]}}, "a.b.-1")
2
>>> lookup({"a": 1}, "a.b") is MISSING
True
>>> format_path(["tasks", 0, "evaluation"])
'tasks[0].evaluation'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MISSING", "PathParts", "format_path", "lookup", "parse_path"]

#: a parsed path: keys (str) and list indexes (int)
PathParts = list[str | int]

_SEGMENT = re.compile(r"\.([^.\[\]]+)|\[(-?\d+)\]|\[(['\"])(.*?)\3\]")
_INDEX = re.compile(r"-?\d+")
_PLAIN = re.compile(r"[^.\[\]'\"]+")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: what :func:`lookup` returns when the path leads nowhere (``None`` may be a real value)
MISSING: Any = _Missing()


def parse_path(path: str) -> PathParts:
    """``"$.a.b[0]"``, ``"a.b.0"`` -> ``["a", "b", 0]``.

    Raises:
        ValueError: an empty or malformed path; the message shows where and the syntax.
    """
    s = path.strip()
    if s.startswith("$"):
        s = s[1:]
    elif s and not s.startswith((".", "[")):
        s = "." + s
    out: PathParts = []
    pos = 0
    while pos < len(s):
        m = _SEGMENT.match(s, pos)
        if m is None:
            raise ValueError(f"malformed path {path!r} at {s[pos:pos + 10]!r}; "
                             "write a.b[0] (or $.a.b[0]; ['a.b'] for a key with dots)")
        if m.group(1) is not None:
            name = m.group(1)
            out.append(int(name) if _INDEX.fullmatch(name) else name)
        elif m.group(2) is not None:
            out.append(int(m.group(2)))
        else:
            out.append(m.group(4))
        pos = m.end()
    if not out:
        raise ValueError(f"empty path {path!r}; write a key name, e.g. verdict or result.label")
    return out


def lookup(doc: Any, path: str | Sequence[str | int]) -> Any:
    """The value at ``path`` in ``doc`` (a path string or :func:`parse_path` parts), or
    :data:`MISSING`.

    Raises:
        ValueError: ``path`` is a malformed path string.
    """
    parts = parse_path(path) if isinstance(path, str) else path
    cur = doc
    for part in parts:
        if isinstance(cur, Mapping):
            if str(part) in cur:
                cur = cur[str(part)]
            elif part in cur:  # a mapping with int keys (a Python agent's dict)
                cur = cur[part]
            else:
                return MISSING
        elif isinstance(cur, (list, tuple)):
            index = part if isinstance(part, int) else (
                int(part) if _INDEX.fullmatch(part) else None)
            if index is None or not -len(cur) <= index < len(cur):
                return MISSING
            cur = cur[index]
        else:
            return MISSING
    return cur


def format_path(parts: Sequence[str | int]) -> str:
    """``["regions", "everyday", "templates", 2]`` -> ``regions.everyday.templates[2]``
    (``(top level)`` for no parts); parses back with :func:`parse_path`."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN.fullmatch(part) and not _INDEX.fullmatch(part) \
                and not (not out and part.startswith("$")):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or "(top level)"
