"""Evidence-gated regression references: create a snapshot, check an agent against it.

* :func:`create_snapshot` runs the diagnosis and writes a reference only when the evidence
  allows it (complete, deterministic, not blind, approved);
* :func:`compare_snapshot` re-admits an agent sequentially and confirms drift per input.

``_document`` holds the file format (schema, validation, migration of snapshot/1, the
per-input test plan), ``_create`` the admission rules and calibration, ``_check`` the
re-admission; ``_check`` uses the other two, never the other way round.
"""

from ..results import migrate_snapshot
from ._check import CheckResult, InputCheck, acompare_snapshot, compare_snapshot
from ._create import (
    Refusal,
    SnapshotResult,
    acreate_snapshot,
    create_snapshot,
    reference_form,
)
from ._document import load_snapshot, validate_snapshot, write_snapshot

__all__ = [
    "CheckResult",
    "InputCheck",
    "Refusal",
    "SnapshotResult",
    "acompare_snapshot",
    "acreate_snapshot",
    "compare_snapshot",
    "create_snapshot",
    "load_snapshot",
    "migrate_snapshot",
    "reference_form",
    "validate_snapshot",
    "write_snapshot",
]
