"""Evidence-gated regression references: create a snapshot, check an agent against it.

* :func:`create_snapshot` runs the diagnosis and writes a reference only when the evidence
  allows it (complete, deterministic, not blind, approved);
* :func:`compare_snapshot` re-admits an agent sequentially and confirms drift per input.

``_document`` holds the file format (schema, validation, migration of snapshot/1, the
per-input test plan), ``_create`` the admission rules and calibration, ``_check`` the
re-admission; ``_check`` uses the other two, never the other way round.
"""

from ._check import CheckResult, acompare_snapshot, compare_snapshot
from ._create import SnapshotResult, acreate_snapshot, create_snapshot, reference_form
from ._document import load_snapshot

# the public names (docs/api.md): the two entry points (also at the top level) and their
# results; the other imports above are this folder's interface to the rest of the package
__all__ = ["CheckResult", "SnapshotResult", "compare_snapshot", "create_snapshot"]
