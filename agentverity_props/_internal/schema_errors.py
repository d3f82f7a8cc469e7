"""Pydantic validation errors of a YAML file -> one line with the file line and the fix.

Every loader of a YAML file format (strategy packs, benchmark files, tool case files) turns
a :class:`pydantic.ValidationError` into a :class:`~agentverity_props.errors.BadInput` with
:func:`schema_error`. It

- maps pydantic's locations back to data paths (pydantic inserts union members and
  discriminator tags, ``tasks.0.evaluation.contains.expected``, that are not in the file);
- finds the line in the file (:meth:`YamlDocument.line_of`);
- for an unknown key, lists the keys allowed there, read from the models themselves, and
  the closest one ("did you mean");
- drops the "missing key" error a misspelt key causes, and reports unknown keys first.

A custom error (:class:`pydantic_core.PydanticCustomError`) may carry ``path`` (the data
path it is about) and ``fix`` in its context; a loader may pass ``describe`` to word its
own error kinds.
"""

from __future__ import annotations

import difflib
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..errors import BadInput
from .jsonpath import format_path
from .yaml import YamlDocument

__all__ = ["Issue", "allowed_keys", "clean_loc", "issues", "schema_error"]

Loc = tuple[str | int, ...]
#: ``describe(err, loc)`` -> ``(problem, fix)`` for the error kinds a loader words itself
Describe = Callable[[Mapping[str, Any], Loc], tuple[str, str] | None]

_SHOWN = 3  # errors written out in the compact style; the rest are counted


@dataclass(frozen=True)
class Issue:
    """One validation error, located in the file and worded for a reader."""

    loc: Loc
    line: int
    kind: str
    problem: str
    fix: str | None
    close: str | None = None
    allowed: tuple[str, ...] = ()


# -- locations ---------------------------------------------------------------------------------

def _child(node: Any, part: str | int) -> tuple[bool, Any]:
    if isinstance(node, Mapping) and part in node:
        return True, node[part]
    if isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node):
        return True, node[part]
    return False, None


def clean_loc(loc: Sequence[str | int], data: Any, kind: str) -> tuple[Loc, bool]:
    """Pydantic's ``loc`` as a path in ``data``, and whether the error is about a key.

    A part that is not in the data is a union member or a discriminator tag pydantic put
    there, and is dropped; except the last part of a missing or unknown key, which names
    that key. ``[key]`` (an invalid mapping key) marks a key error.

    >>> data = {"tasks": [{"evaluation": {"type": "contains"}}]}
    >>> clean_loc(("tasks", 0, "evaluation", "contains", "expected"), data, "missing")
    (('tasks', 0, 'evaluation', 'expected'), False)
    >>> clean_loc(("slots", "bad key", "[key]"), {"slots": {"bad key": []}}, "string_type")
    (('slots', 'bad key'), True)
    """
    out: list[str | int] = []
    in_key = False
    node = data
    for i, part in enumerate(loc):
        if part == "[key]":
            in_key = True
            continue
        found, child = _child(node, part)
        if found:
            out.append(part)
            node = child
        elif i == len(loc) - 1 and kind in ("missing", "extra_forbidden"):
            out.append(part)
    return tuple(out), in_key


# -- allowed keys, from the models ---------------------------------------------------------------

def _members(tp: Any) -> list[Any]:
    """The alternatives of an annotation: Annotated and Optional/Union unwrapped."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _members(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [m for arg in get_args(tp) for m in _members(arg)]
    return [tp]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _fits(model: type[BaseModel], node: Any) -> bool:
    """False when ``node`` gives a Literal-typed field (a discriminator) a value the model
    does not take."""
    if not isinstance(node, Mapping):
        return True
    for name, field in model.model_fields.items():
        literals = [m for m in _members(field.annotation) if get_origin(m) is Literal]
        if literals and name in node and not any(node[name] in get_args(m) for m in literals):
            return False
    return True


def _step(tp: Any, part: str | int) -> list[Any]:
    out = []
    for m in _members(tp):
        origin, args = get_origin(m), get_args(m)
        if _is_model(m):
            if isinstance(part, str) and part in m.model_fields:
                out.append(m.model_fields[part].annotation)
        elif origin in (list, tuple, set, frozenset, Sequence) and isinstance(part, int):
            out.append(args[0] if args else Any)
        elif origin in (dict, Mapping):
            out.append(args[1] if len(args) == 2 else Any)
    return out


def allowed_keys(model: type[BaseModel], parent: Sequence[str | int], data: Any) -> list[str]:
    """The keys the format allows in the mapping at ``parent``, in model order ([] for a
    free-form mapping). Where a union of models is possible, the data picks the member by
    its Literal fields (``type: contains``); if it cannot, the keys they all share.
    """
    candidates: list[Any] = [model]
    node = data
    for part in parent:
        candidates = [t for tp in candidates for t in _step(tp, part)]
        node = _child(node, part)[1]
    models = [m for tp in candidates for m in _members(tp) if _is_model(m)]
    if len(models) > 1:
        models = [m for m in models if _fits(m, node)] or models
    if not models:
        return []
    keys = [f.alias or name for name, f in models[0].model_fields.items()]
    return [k for k in keys if all(k in m.model_fields for m in models[1:])]


# -- wording -----------------------------------------------------------------------------------

_WANT = {"string_type": "a string", "int_type": "an integer", "int_parsing": "an integer",
         "int_from_float": "an integer", "float_type": "a number",
         "float_parsing": "a number", "bool_type": "true or false",
         "bool_parsing": "true or false", "list_type": "a list", "dict_type": "a mapping",
         "model_type": "a mapping", "model_attributes_type": "a mapping"}


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _generic(err: Mapping[str, Any], loc: Loc, allowed: list[str],
             close: str | None) -> tuple[str, str | None]:
    kind = err["type"]
    last = loc[-1] if loc else ""
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        fix = f"did you mean {close!r}? rename it" if close else "remove it"
        if allowed:
            fix += f"; allowed here: {', '.join(allowed)}"
        return f"unknown key {last!r}", fix
    if kind == "missing":
        return f"missing required key {last!r}", f"add {last}:"
    if kind == "union_tag_invalid":
        field = str(ctx.get("discriminator", "type")).strip("'")
        return f"unknown {field} {ctx.get('tag')!r}", f"use one of: {ctx.get('expected_tags')}"
    if kind in _WANT:
        want = _WANT[kind]
        got = f"{type(value).__name__} {value!r}"[:120]
        if kind == "string_type" and not isinstance(value, (dict, list)):
            return (f"must be a string (YAML read {value!r} as {_a(type(value).__name__)}: "
                    "quote it)"[:160], "quote it in YAML (e.g. '42', 'yes')")
        return f"must be {want}, got {got}", f"write {want} here"
    if kind in ("too_short", "string_too_short"):
        return "must not be empty", "add at least one entry"
    if kind in ("greater_than", "greater_than_equal", "less_than_equal", "less_than"):
        return f"{err['msg'].lower()}, got {value!r}"[:160], "change the number"
    if kind == "literal_error":
        return f"{err['msg'].lower()}, got {value!r}"[:200], "use one of the values listed"
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    return msg, ctx.get("fix")


def issues(exc: ValidationError, doc: YamlDocument, model: type[BaseModel], *,
           describe: Describe | None = None) -> list[Issue]:
    """The errors of ``exc``, located in ``doc`` and worded; unknown keys first, then by
    line; a "missing" error that a misspelt key next to it explains is dropped."""
    out: list[Issue] = []
    for err in exc.errors():
        kind = err["type"]
        ctx = err.get("ctx") or {}
        if "path" in ctx:  # a custom error that names its own data path
            loc, in_key = tuple(ctx["path"]), False
        else:
            loc, in_key = clean_loc(err["loc"], doc.data, kind)
        allowed: list[str] = []
        close = None
        if kind == "extra_forbidden":
            allowed = allowed_keys(model, loc[:-1], doc.data)
            hits = difflib.get_close_matches(str(loc[-1]), allowed, n=1) if loc else []
            close = hits[0] if hits else None
        worded = describe(err, loc) if describe is not None else None
        problem, fix = worded if worded is not None else _generic(err, loc, allowed, close)
        line = doc.line_of(loc, key=in_key or kind == "extra_forbidden")
        out.append(Issue(loc, line, kind, problem, fix, close, tuple(allowed)))
    misspelt = {(i.loc[:-1], i.close) for i in out if i.close is not None}
    out = [i for i in out if not (i.kind == "missing" and (i.loc[:-1], i.loc[-1]) in misspelt)]
    out.sort(key=lambda i: (i.kind != "extra_forbidden", i.line))
    return out


def _compact(doc: YamlDocument, issue: Issue) -> str:
    at = doc.at(issue.line)
    if issue.kind == "extra_forbidden":
        hint = f"; did you mean {issue.close!r}?" if issue.close else ""
        allowed = f" (allowed: {', '.join(sorted(issue.allowed))})" if issue.allowed else ""
        return (f"{at}: unknown key {issue.loc[-1]!r} in {format_path(issue.loc[:-1])}"
                f"{hint}{allowed}")
    return f"{at}: {format_path(issue.loc)}: {issue.problem}"


def schema_error(exc: ValidationError, doc: YamlDocument, model: type[BaseModel], *,
                 fix: str, describe: Describe | None = None) -> BadInput:
    """One :class:`BadInput` line for ``exc``, raised while validating ``doc.data`` as
    ``model``; ``fix`` is the file-level advice (where the format is documented).

    In ``doc``'s style: ``"compact"`` writes out up to three errors
    (``b.yaml:8: unknown key 'expcted' in tasks[0].evaluation; did you mean 'expected'?
    (allowed: expected, type)``); ``"spelled"`` writes the first with its own fix
    (``my.yaml: line 7: regions.everyday.tempaltes: unknown key 'tempaltes' — did you mean
    'templates'? rename it; allowed here: weight, templates, slots, expect``). Both count
    the rest.
    """
    found = issues(exc, doc, model, describe=describe)
    first = found[0]
    if doc.style == "spelled":
        more = f" (and {len(found) - 1} more problem(s))" if len(found) > 1 else ""
        return BadInput(f"{doc.at(first.line)}: {format_path(first.loc)}: {first.problem}"
                        f"{more}", first.fix or fix)
    more = f" (and {len(found) - _SHOWN} more)" if len(found) > _SHOWN else ""
    # an error's own fix, when it is the only one (an unknown key's is written out already)
    own = first.fix if len(found) == 1 and first.kind != "extra_forbidden" else None
    return BadInput("; ".join(_compact(doc, i) for i in found[:_SHOWN]) + more,
                    f"{own}; {fix}" if own else fix)
