"""The result file formats: one pydantic model per result kind.

Each ``*Document`` is the whole JSON file a command writes with ``--format json`` (and its
Python result's ``to_dict()``): its fields are the file's keys, the type of its ``schema``
field is the one place the kind's schema name is written (``SCHEMA``, read by the producer),
its JSON Schema is the one published in ``docs/schemas/`` (generated from the model by
``python -m agentverity_props.report``; a test fails when they drift), and loading a saved
file is ``Document.model_validate``, with older versions migrated first by the model's own
``mode="before"`` validator (``Document.MIGRATIONS``). The list of kinds, and which
renderers, exit meanings and title go with each, is the one registry in
``agentverity_props.report`` (``RESULT_KINDS``, which names these classes and imports each
when first used).

Names load lazily (PEP 562): pydantic only when a model is used; the migrations need none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._internal.lazy import lazy_exports

_EXPORTS = {
    "Document": "._base",
    "BenchDocument": "._bench", "BoundaryDocument": "._boundary",
    "CheckDocument": "._check", "CompareDocument": "._compare",
    "ConversationDocument": "._conversation", "CounterexampleDocument": "._counterexample",
    "EnlargeDocument": "._enlarge", "PlanDocument": "._plan", "RunDocument": "._run",
    "SnapshotDocument": "._snapshot", "ToolsDocument": "._tools",
}

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__: list[str] = []

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())

if TYPE_CHECKING:
    from ._base import Document
    from ._bench import BenchDocument
    from ._boundary import BoundaryDocument
    from ._check import CheckDocument
    from ._compare import CompareDocument
    from ._conversation import ConversationDocument
    from ._counterexample import CounterexampleDocument
    from ._enlarge import EnlargeDocument
    from ._plan import PlanDocument
    from ._run import RunDocument
    from ._snapshot import SnapshotDocument
    from ._tools import ToolsDocument
