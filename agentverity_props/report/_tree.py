"""A readable tree of any JSON value, for kinds without a dedicated HTML view.

The result is plain nested data the ``tree`` macro in ``templates/_macros.html.j2`` walks:
scalars, key/value maps, tables (a list of flat objects) and lists, each capped so that a
huge result still gives a page a browser opens.
"""

from __future__ import annotations

from typing import Any

__all__ = ["tree"]

MAX_ITEMS = 200
MAX_DEPTH = 12
MAX_TEXT = 4000


def _scalar(v: Any) -> dict[str, Any]:
    if v is None:
        return {"t": "scalar", "v": "null", "cls": "muted"}
    if isinstance(v, bool):
        return {"t": "scalar", "v": "true" if v else "false", "cls": "num"}
    if isinstance(v, (int, float)):
        return {"t": "scalar", "v": f"{v:.6g}" if isinstance(v, float) else str(v),
                "cls": "num"}
    s = str(v)
    if len(s) > MAX_TEXT:
        s = s[:MAX_TEXT] + f"… ({len(s) - MAX_TEXT} more characters)"
    return {"t": "scalar", "v": s, "cls": "str"}


def _flat(v: Any) -> bool:
    """A scalar, or a short list/dict of scalars: fits one table cell."""
    if isinstance(v, dict):
        return len(v) <= 8 and all(not isinstance(x, (dict, list, tuple)) for x in v.values())
    return not isinstance(v, (list, tuple)) or (
        len(v) <= 8 and all(not isinstance(x, (dict, list, tuple)) for x in v))


def tree(value: Any, depth: int = 0) -> dict[str, Any]:
    """Turn a JSON value into nodes: ``scalar``, ``map``, ``table``, ``list`` or ``empty``."""
    if depth > MAX_DEPTH:
        return _scalar("… (nested too deep to show)")
    if isinstance(value, dict):
        if not value:
            return {"t": "empty", "v": "{}"}
        items = list(value.items())
        return {"t": "map", "items": [(str(k), tree(v, depth + 1)) for k, v in
                                      items[:MAX_ITEMS]],
                "more": max(0, len(items) - MAX_ITEMS)}
    if isinstance(value, (list, tuple)):
        if not value:
            return {"t": "empty", "v": "[]"}
        shown = list(value[:MAX_ITEMS])
        more = max(0, len(value) - MAX_ITEMS)
        if all(isinstance(x, dict) and x and all(_flat(v) for v in x.values())
               for x in shown):
            cols = list(dict.fromkeys(k for x in shown for k in x))
            if len(cols) <= 12:
                rows = [[_cell(x.get(c)) for c in cols] for x in shown]
                return {"t": "table", "cols": [str(c) for c in cols], "rows": rows,
                        "more": more}
        if all(not isinstance(x, (dict, list, tuple)) for x in shown) and len(shown) <= 20:
            return {"t": "scalar", "v": ", ".join(_scalar(x)["v"] for x in shown),
                    "cls": "str"}
        return {"t": "list", "items": [tree(x, depth + 1) for x in shown], "more": more}
    return _scalar(value)


def _cell(v: Any) -> dict[str, Any]:
    if isinstance(v, dict):
        return {"t": "scalar", "v": ", ".join(f"{k}: {_scalar(x)['v']}" for k, x in v.items()),
                "cls": "str"}
    if isinstance(v, (list, tuple)):
        return {"t": "scalar", "v": ", ".join(_scalar(x)["v"] for x in v), "cls": "str"}
    return _scalar(v) if v is not None else {"t": "scalar", "v": "", "cls": "muted"}
