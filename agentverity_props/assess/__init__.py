"""Assess recorded evidence without calling any agent.

Teams already run their agents many times in other tools. These readers turn that evidence
into a :class:`Recording` (inputs, each with its draws in call order), and :func:`assess`
runs every diagnosis of ``run`` that needs no new call on it:

* :func:`load_promptfoo` — a promptfoo JSON export (``results.results[]``);
* :func:`load_jsonl` — one JSON object per draw (:class:`JsonlDraw`, schema
  ``docs/schemas/assess-jsonl.schema.json``);
* :func:`load_store` — the project's own record store, with the probe set it was recorded on.

Names load lazily (PEP 562): pydantic only when a JSONL file is read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._internal.lazy import lazy_exports

_EXPORTS = {
    "assess": "._assess",
    "evidence_summary": "._assess", "plan_assessment": "._assess",
    "JsonlDraw": "._jsonl",
    "jsonl_schema": "._jsonl", "load_jsonl": "._jsonl",
    "load_promptfoo": "._promptfoo",
    "RecordedInput": "._recording",
    "Recording": "._recording",
    "load_store": "._store_source",
}

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "Recording",
    "assess",
    "load_jsonl",
    "load_promptfoo",
    "load_store",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())


if TYPE_CHECKING:  # pragma: no cover
    from ._assess import assess, evidence_summary, plan_assessment
    from ._jsonl import JsonlDraw, jsonl_schema, load_jsonl
    from ._promptfoo import load_promptfoo
    from ._recording import RecordedInput, Recording
    from ._store_source import load_store
