"""Versioned JSON for every result kind; the ``schema`` key always comes first."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import BadInput

__all__ = ["VALIDATE_ENV", "dumps", "iter_dumps", "read_json"]

def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


#: list items in a result beyond which its deep parts are written one item per line
_LARGE_ITEMS = 20_000


def dumps(result: dict[str, Any], *, written: bool = True) -> str:
    """Pretty JSON with ``schema`` first and non-finite floats as null.

    A large result (a 100,000-input run has 800,000 relation outcomes) is indented to four
    levels only, each deeper value on one line: the same JSON, written by the C encoder
    (``indent`` forces Python's pure-Python encoder, ~10x slower and holding every token of
    the output in a list at once). :func:`iter_dumps` gives the same text in pieces.
    """
    return "".join(iter_dumps(result, written=written))


def iter_dumps(result: dict[str, Any], *, written: bool = True) -> Iterator[str]:
    """:func:`dumps` in pieces, for writing a large result without ever holding its text.

    ``written=False`` for a display of a result (the HTML page's raw JSON): only a result
    being written as a file is validated under :data:`VALIDATE_ENV`."""
    ordered = {"schema": result.get("schema"),
               **{k: v for k, v in result.items() if k != "schema"}}
    small = _items(ordered, 4) <= _LARGE_ITEMS
    if small and written and os.environ.get(VALIDATE_ENV):
        _validate_written(ordered)
    if small:
        yield json.dumps(_clean(ordered), indent=2, ensure_ascii=False) + "\n"
        return
    yield from _shallow(ordered, 0)  # cleans value by value: no copy of the whole result
    yield "\n"


#: set (to anything) to validate every result written against its kind's model: the test
#: suite sets it, so a producer whose JSON drifts from the published schema fails its tests
VALIDATE_ENV = "AGENTVERITY_PROPS_VALIDATE_RESULTS"


def _validate_written(result: dict[str, Any]) -> None:
    from pydantic import ValidationError

    from ._registry import document_for
    model = document_for(str(result.get("schema")))
    if model is None or result.get("schema") != model.SCHEMA:
        return  # not a result (a store export, a dict of the caller's own)
    try:
        model.model_validate(_clean(result))
    except ValidationError as exc:
        raise AssertionError(f"{model.SCHEMA} result does not fit its model "
                             f"(agentverity_props.results.{model.__name__}): {exc}") from None


def _items(obj: Any, depth: int) -> int:
    """How many list items the first ``depth`` levels of ``obj`` hold (a cheap size)."""
    if depth == 0:
        return 0
    if isinstance(obj, dict):
        return sum(_items(v, depth - 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return len(obj) + sum(_items(v, depth - 1) for v in obj)
    return 0


def _value(obj: Any) -> str:
    """One value on one line. The C encoder alone, unless a non-finite float (or a key JSON
    does not take as it is) needs :func:`_clean`: a 100,000-input run has 800,000 outcomes
    here, and walking each in Python first cost most of the time its report took to write."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError):
        return json.dumps(_clean(obj), ensure_ascii=False)


def _shallow(obj: Any, level: int) -> Iterator[str]:
    if level >= 4 or not isinstance(obj, (dict, list, tuple)) or not obj:
        yield _value(obj)
        return
    pad, inner = "  " * level, "  " * (level + 1)
    items = obj.items() if isinstance(obj, dict) else ((None, v) for v in obj)
    yield "{" if isinstance(obj, dict) else "["
    for i, (k, v) in enumerate(items):
        yield ("," if i else "") + "\n" + inner
        if k is not None:
            yield json.dumps(str(k), ensure_ascii=False) + ": "
        yield from _shallow(v, level + 1)
    yield "\n" + pad + ("}" if isinstance(obj, dict) else "]")


def read_json(path: str | Path) -> Any:
    """The JSON value of a saved result file; a one-line BadInput when it is not JSON."""
    p = Path(path)
    from .._internal.files import read_file_bytes
    raw = read_file_bytes(p, what="result file")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(f"{p} is not UTF-8 text", "pass a JSON file written by agentverity-props"
                       ) from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{p} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                       f"{exc.msg})", "pass a JSON file written by agentverity-props") from None
    except (ValueError, RecursionError):  # a 10,000-digit integer, or nesting too deep
        from .._internal.files import loads_json
        data = loads_json(raw, where=str(p), fix="pass a JSON file written by agentverity-props")
    return data
