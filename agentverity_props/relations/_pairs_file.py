"""Pairs users bring, read from a file: every follow-up of every input is tested, each text
kept byte for byte (JSON strings are read as they are; nothing is stripped).

Two forms (docs/relations.md, "Pairs you bring"):

* **JSONL**, one input a line: ``{"input": "...", "follow_ups": ["...", ...]}``, with an
  optional ``"relation": "name"`` (default: the file's stem) grouping lines into relations;
* **CheckList tests** as JSON: ``{"format": "agentverity-props.checklist/1", "tests": [
  {"name": ..., "type": "INV" | "DIR", "cases": [{"input": ..., "follow_ups": [...]}]}]}``.
  ``INV`` is an invariant relation; ``DIR`` a monotone one with ``"order"`` (labels from
  lowest to highest; ``"decreasing": true`` when the follow-up must not go up) or a
  directional one with ``"expected"`` (the label every follow-up must get).

A pickle is never loaded: CheckList's own suites are pickles of its classes, so they are
exported to the JSON form with the short script in the docs, run where CheckList is
installed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .._internal.files import loads_json
from .._internal.inputs import read_text_file
from ..errors import BadInput
from ._family import pairs_relation
from ._model import Relation

CHECKLIST_FORMAT = "agentverity-props.checklist/1"


def load_pairs(path: str | Path) -> tuple[list[str], list[Relation]]:
    """The inputs (in first-seen order) and the relations of a pairs file.

    Raises:
        BadInput: one line naming the problem and the fix.
    """
    p = Path(path)
    head = p.read_bytes()[:2] if p.is_file() else b""
    if head[:1] == b"\x80":
        raise BadInput(f"pairs file {p} is a pickle, which is never loaded",
                       "export it to the JSON form (docs/relations.md, 'Pairs you bring')")
    text = read_text_file(p, what="pairs file")
    if p.suffix.lower() == ".jsonl":
        return _jsonl(p, text)
    data = loads_json(text, where=f"pairs file {p}",
                      fix="fix the JSON, or write one JSON object a line in a .jsonl file")
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise BadInput(f"pairs file {p} has no 'tests' list",
                       f'write {{"format": "{CHECKLIST_FORMAT}", "tests": [...]}} or use '
                       "a .jsonl file of {\"input\": ..., \"follow_ups\": [...]} lines")
    return _checklist(p, data)


def _texts(p: Path, where: str, obj: Any) -> tuple[str, list[str]]:
    if not isinstance(obj, dict):
        raise BadInput(f"pairs file {p}, {where}: not an object",
                       'write {"input": "...", "follow_ups": ["...", ...]}')
    src, fus = obj.get("input"), obj.get("follow_ups")
    if not isinstance(src, str) or not src.strip():
        raise BadInput(f"pairs file {p}, {where}: 'input' must be a non-empty string",
                       'write {"input": "...", "follow_ups": ["...", ...]}')
    if not isinstance(fus, list) or not fus or not all(isinstance(f, str) for f in fus):
        raise BadInput(f"pairs file {p}, {where}: 'follow_ups' must be a non-empty list of "
                       "strings", 'write "follow_ups": ["...", ...]')
    return src, fus


def _name(stem: str) -> str:
    return re.sub(r"[^\w:.+-]+", "-", stem).strip("-") or "pairs"


def _jsonl(p: Path, text: str) -> tuple[list[str], list[Relation]]:
    groups: dict[str, dict[str, list[str]]] = {}
    inputs: dict[str, None] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        obj = loads_json(line, where=f"pairs file {p}, line {n}",
                         fix="write one JSON object a line")
        src, fus = _texts(p, f"line {n}", obj)
        rel = obj.get("relation", _name(p.stem))
        if not isinstance(rel, str) or not rel.strip():
            raise BadInput(f"pairs file {p}, line {n}: 'relation' must be a non-empty string",
                           "name the relation, or leave the key out")
        groups.setdefault(rel, {}).setdefault(src, []).extend(fus)
        inputs[src] = None
    if not groups:
        raise BadInput(f"pairs file {p} holds no pairs",
                       'write one {"input": ..., "follow_ups": [...]} a line')
    return list(inputs), [pairs_relation(name, pairs) for name, pairs in groups.items()]


def _checklist(p: Path, data: dict[str, Any]) -> tuple[list[str], list[Relation]]:
    inputs: dict[str, None] = {}
    rels: list[Relation] = []
    for i, t in enumerate(data["tests"]):
        where = f"test {i + 1}"
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise BadInput(f"pairs file {p}, {where}: needs a 'name'",
                           'write {"name": ..., "type": "INV", "cases": [...]}')
        kind, name = t.get("type"), t["name"]
        if kind == "MFT":
            raise BadInput(f"pairs file {p}, test {name!r} is an MFT (an expected label per "
                           "input), which run does not decide",
                           "leave it out here and run it with `agentverity-props bench` "
                           "(docs/bench.md)")
        if kind not in ("INV", "DIR"):
            raise BadInput(f"pairs file {p}, test {name!r}: type {kind!r}",
                           "use INV or DIR")
        cases = t.get("cases")
        if not isinstance(cases, list) or not cases:
            raise BadInput(f"pairs file {p}, test {name!r}: 'cases' must be a non-empty list",
                           'write "cases": [{"input": ..., "follow_ups": [...]}]')
        pairs: dict[str, list[str]] = {}
        for j, case in enumerate(cases):
            src, fus = _texts(p, f"test {name!r}, case {j + 1}", case)
            pairs.setdefault(src, []).extend(fus)
            inputs[src] = None
        desc = f"CheckList {kind} test" + (f" ({t['capability']})"
                                            if isinstance(t.get("capability"), str) else "")
        if kind == "INV":
            rels.append(pairs_relation(name, pairs, description=desc))
        elif isinstance(t.get("order"), list) and all(isinstance(x, str) for x in t["order"]):
            rels.append(pairs_relation(name, pairs, rtype="monotone", order=t["order"],
                                       decreasing=bool(t.get("decreasing")),
                                       description=desc))
        elif isinstance(t.get("expected"), str):
            rels.append(pairs_relation(name, pairs, rtype="directional",
                                       expected=t["expected"], description=desc))
        else:
            raise BadInput(f"pairs file {p}, DIR test {name!r} says neither which way the "
                           "verdict may move nor what it must be",
                           'add "order": [lowest, ..., highest] (and "decreasing": true if '
                           'it must not go up) or "expected": "label"')
    if not rels:
        raise BadInput(f"pairs file {p} holds no tests", "add INV or DIR tests")
    names = [r.name for r in rels]
    if len(set(names)) != len(names):
        raise BadInput(f"pairs file {p} names a test twice", "give each test its own name")
    return list(inputs), rels
