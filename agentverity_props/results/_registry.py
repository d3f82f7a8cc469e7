"""Every result kind's current model, and the model that reads a given schema name."""

from __future__ import annotations

from ._base import Document
from ._bench import BenchDocument
from ._check import CheckDocument
from ._compare import CompareDocument
from ._conversation import ConversationDocument
from ._counterexample import CounterexampleDocument
from ._enlarge import EnlargeDocument
from ._plan import PlanDocument
from ._run import RunDocument
from ._snapshot import SnapshotDocument
from ._tools import ToolsDocument

__all__ = ["DOCUMENTS", "document_for"]

#: every result kind's current model (one per kind; the order of docs/reports.md)
DOCUMENTS: tuple[type[Document], ...] = (
    RunDocument, CounterexampleDocument, ConversationDocument, BenchDocument, CompareDocument,
    SnapshotDocument, CheckDocument, PlanDocument, ToolsDocument, EnlargeDocument)

_BY_SCHEMA = {name: doc for doc in DOCUMENTS for name in (doc.SCHEMA, *doc.MIGRATIONS)}


def document_for(schema: str) -> type[Document] | None:
    """The model that reads files of ``schema`` (its current version, or an older one its
    migrations turn into the current one); None for a name no model reads."""
    return _BY_SCHEMA.get(schema)
