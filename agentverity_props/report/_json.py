"""Versioned JSON for every result kind; the ``schema`` key always comes first."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import BadInput

__all__ = ["VALIDATE_ENV", "check_result", "dumps", "iter_dumps", "load_result"]

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


def dumps(result: dict[str, Any]) -> str:
    """Pretty JSON with ``schema`` first and non-finite floats as null.

    A large result (a 100,000-input run has 800,000 relation outcomes) is indented to four
    levels only, each deeper value on one line: the same JSON, written by the C encoder
    (``indent`` forces Python's pure-Python encoder, ~10x slower and holding every token of
    the output in a list at once). :func:`iter_dumps` gives the same text in pieces.
    """
    return "".join(iter_dumps(result))


def iter_dumps(result: dict[str, Any]) -> Iterator[str]:
    """:func:`dumps` in pieces, for writing a large result without ever holding its text."""
    ordered = {"schema": result.get("schema"),
               **{k: v for k, v in result.items() if k != "schema"}}
    small = _items(ordered, 4) <= _LARGE_ITEMS
    if small and os.environ.get(VALIDATE_ENV):
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

    from ._kinds import kind_for
    entry = kind_for(str(result.get("schema")))
    if entry is None or result.get("schema") != entry.schema:
        return  # not a result (a store export, a dict of the caller's own)
    try:
        entry.model.model_validate(_clean(result))
    except ValidationError as exc:
        raise AssertionError(f"{entry.schema} result does not fit its model "
                             f"(agentverity_props.results.{entry.document}): {exc}") from None


def _items(obj: Any, depth: int) -> int:
    """How many list items the first ``depth`` levels of ``obj`` hold (a cheap size)."""
    if depth == 0:
        return 0
    if isinstance(obj, dict):
        return sum(_items(v, depth - 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return len(obj) + sum(_items(v, depth - 1) for v in obj)
    return 0


def _shallow(obj: Any, level: int) -> Iterator[str]:
    if level >= 4 or not isinstance(obj, (dict, list, tuple)) or not obj:
        yield json.dumps(_clean(obj), ensure_ascii=False)
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


def load_result(path: str | Path) -> dict[str, Any]:
    """Read a saved result; a one-line BadInput for anything that is not one."""
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
    return check_result(data, where=str(p))


def check_result(data: Any, *, where: str = "result") -> dict[str, Any]:
    """A loaded result as its kind's current version, validated by its model: older versions
    are migrated, and a file that is not one gets one :class:`BadInput` line naming the first
    field that is wrong."""
    from ._kinds import kind_for
    schema = data.get("schema") if isinstance(data, dict) else None
    entry = kind_for(schema) if isinstance(schema, str) else None
    if entry is None:
        got = schema if isinstance(data, dict) else type(data).__name__
        raise BadInput(f"{where} is not an agentverity-props result (schema {got!r})",
                       "pass a file written with --format json")
    if schema in entry.legacy:
        return data  # an old version read as written: its renderers know its shape
    model = entry.model
    data = model.migrate(data)
    missing = [k for k in entry.required_keys() if k not in data]
    if missing:
        raise BadInput(f"{where} claims schema {schema!r} but lacks "
                       f"{', '.join(missing[:5])}{' and more' if len(missing) > 5 else ''}",
                       "pass an unedited file written by agentverity-props --format json")
    from pydantic import ValidationError
    try:
        model.model_validate(data)
    except ValidationError as exc:
        raise BadInput(f"{where} claims schema {schema!r} but {_first_error(exc, data)}",
                       "pass an unedited file written by agentverity-props --format json"
                       ) from None
    return data


def _first_error(exc: Any, data: Any) -> str:
    """``relations[0].status: input should be 'HOLDS', ...`` (and how many more)."""
    from .._internal.jsonpath import format_path
    from .._internal.schema_errors import clean_loc
    from .._internal.shown import visible
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc, _ = clean_loc(first["loc"], data, first["type"])
    msg = str(first["msg"])
    msg = msg[:1].lower() + msg[1:]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return visible(f"{format_path(loc)}: {msg}"[:300]) + more
