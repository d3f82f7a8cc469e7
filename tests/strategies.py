"""Hypothesis strategies shared by the tests: result documents built from the result models.

:func:`documents` walks a model of :mod:`agentverity_props.results` (its fields' types and
bounds: ``Literal``, ``Annotated[int, Field(ge=0)]``, nested models, lists, dicts, unions,
optional fields) and builds a JSON dict of that shape; ``overrides`` replace the value of a
field by its dotted path (``"blindness"``, ``"calls.total"``), a function of the random
source, where the model says less than the renderers read (a ``dict[str, Any]``).

Hypothesis draws one seed per document and the walk makes every choice from it: a drawn
choice per field costs ~0.1 ms in Hypothesis's engine, a document has a hundred, and the
tests run a thousand documents per kind in a few seconds (a failure is reported with its
seed and the document; it does not shrink field by field).

The result is schema-valid by construction; the per-kind ``coherent`` functions of the tests
then make the figures that one run ties together agree (a total is the sum of its phases),
as the commands that write them do.
"""

from __future__ import annotations

import functools
import random
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types as at
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo

__all__ = ["FPS", "WORDS", "Override", "build", "documents"]

#: short words: verdicts and labels the renderers print
WORDS = ("allow", "block", "review", "technical")
#: the fingerprints documents name inputs by (few: rows of one document share them)
FPS = tuple("sha256:" + f"{i:x}" * 64 for i in range(1, 7))

Override = Callable[[random.Random], Any]


def _bounds(meta: list[Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in meta:
        if isinstance(m, FieldInfo):
            out.update(_bounds(list(m.metadata)))
        elif isinstance(m, (at.Ge, at.Gt, at.Le, at.Lt)):
            for name in ("ge", "gt", "le", "lt"):
                v = getattr(m, name, None)
                if isinstance(v, (int, float)):
                    out[name] = v
    return out


def _number(tp: type, b: dict[str, float], rng: random.Random) -> int | float:
    if tp is int:
        lo = int(b["ge"]) if "ge" in b else int(b["gt"]) + 1 if "gt" in b else -3
        hi = int(b["le"]) if "le" in b else int(b["lt"]) - 1 if "lt" in b else lo + 60
        # small counts most often (where sums and zero cases bite), a few large ones
        return rng.randint(lo, min(hi, lo + rng.choice((3, 12, 60, 3000))))
    lo = b.get("ge", b.get("gt", -1.0))
    hi = b.get("le", b.get("lt", 1.0 if lo < 1 else lo + 1e5))
    x = rng.choice((lo, hi, rng.uniform(lo, hi), rng.uniform(lo, hi)))
    if ("gt" in b and x <= lo) or ("lt" in b and x >= hi):
        x = (lo + hi) / 2
    return x


def _value(tp: Any, meta: list[Any], path: str, over: dict[str, Override],
           rng: random.Random) -> Any:
    if path in over:
        return over[path](rng)
    origin = get_origin(tp)
    if origin is typing.Annotated:
        base, *more = get_args(tp)
        return _value(base, [*meta, *more], path, over, rng)
    if tp is type(None):
        return None
    if origin is Literal:
        return rng.choice(get_args(tp))
    if origin in (Union, types.UnionType):
        return _value(rng.choice(get_args(tp)), meta, path, over, rng)
    if tp is bool:
        return rng.random() < 0.5
    if tp in (int, float):
        return _number(tp, _bounds(meta), rng)
    if tp is str:
        name = path.rsplit(".", 1)[-1]
        return rng.choice(FPS) if name in ("fp", "follow_up_fp") else rng.choice(WORDS)
    if origin is list:
        (item,) = get_args(tp)
        return [_value(item, [], path + "[]", over, rng) for _ in range(rng.randint(0, 4))]
    if origin is dict:
        key, value = get_args(tp)
        keys = list(get_args(key)) if get_origin(key) is Literal else list(WORDS)
        return {k: _value(value, [], path + "{}", over, rng)
                for k in rng.sample(keys, rng.randint(0, min(3, len(keys))))}
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return build(tp, rng, over, _path=path)
    return {}


def build(model: type[BaseModel], rng: random.Random,
          overrides: dict[str, Override] | None = None, *, _path: str = "") -> dict[str, Any]:
    """One JSON dict of ``model``'s shape (every field present, by its alias), every choice
    made with ``rng``."""
    over = overrides or {}
    out = {}
    for key, tp, meta in _fields(model):
        path = f"{_path}.{key}" if _path else key
        out[key] = _value(tp, meta, path, over, rng)
    return out


@functools.cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, Any, list[Any]], ...]:
    hints = typing.get_type_hints(model, include_extras=True)
    return tuple((info.alias or name, hints[name], list(info.metadata))
                 for name, info in model.model_fields.items())


def documents(model: type[BaseModel], overrides: dict[str, Override] | None = None,
              ) -> st.SearchStrategy[dict[str, Any]]:
    """Documents of ``model``'s shape, one Hypothesis-drawn seed each."""
    return st.integers(0, 2**64 - 1).map(lambda seed: build(model, random.Random(seed),
                                                             overrides))
