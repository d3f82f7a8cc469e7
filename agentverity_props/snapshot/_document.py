"""The snapshot file: reading and writing it, and the per-input test plan ``check`` derives
from it.

Its format is the ``SnapshotDocument`` model (``agentverity_props.results``), the one
validator of a snapshot: it names the version written today, migrates a ``snapshot/1`` file
in memory when read (the file itself is left as it was) and refuses a damaged or edited file
with one line naming the first field that is wrong. What the model cannot say — that the
snapshot was admitted, so it holds a reference for every input — is checked here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import BadInput, InvalidArgument
from ..results import SnapshotDocument

__all__ = ["OLD_SCHEMAS", "SCHEMA", "input_note", "input_plan", "load_snapshot",
           "validate_snapshot", "write_snapshot"]

SCHEMA = SnapshotDocument.SCHEMA
OLD_SCHEMAS = tuple(SnapshotDocument.MIGRATIONS)


def write_snapshot(path: str | Path, document: Mapping[str, Any]) -> None:
    """Write a snapshot document atomically (temp file, fsync, rename)."""
    from .._internal.atomic import atomic_write_text
    from ..report import dumps
    if document.get("schema") != SCHEMA:
        raise InvalidArgument(f"not a snapshot document (schema {document.get('schema')!r})")
    atomic_write_text(Path(path), dumps(dict(document)))


def load_snapshot(path: str | Path) -> dict[str, Any]:
    """Read and validate a snapshot file; one-line :class:`BadInput` for anything else."""
    import json

    from .._internal.inputs import read_text_file

    p = Path(path)
    text = read_text_file(p, what="snapshot file")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"snapshot file {p} is not valid JSON (line {exc.lineno}: {exc.msg})",
                       "pass a file written by agentverity-props snapshot") from None
    except (ValueError, RecursionError):  # a 10,000-digit integer, or nesting too deep
        from .._internal.files import loads_json
        doc = loads_json(text, where=f"snapshot file {p}",
                         fix="pass a file written by agentverity-props snapshot")
    return validate_snapshot(doc, where=str(p))


def validate_snapshot(doc: Any, *, where: str = "snapshot") -> dict[str, Any]:
    """Check a loaded snapshot document with its model (a ``snapshot/1`` one is migrated
    first); one-line :class:`BadInput` for anything that is not an admitted snapshot."""
    if not isinstance(doc, dict) or doc.get("schema") not in (SCHEMA, *OLD_SCHEMAS):
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise BadInput(f"{where} is not a snapshot (schema {got!r}, expected {SCHEMA!r})",
                       "create one with agentverity-props snapshot")
    doc = SnapshotDocument.check(doc, where=where, fix="recreate the snapshot")
    if not doc["admission"]["admitted"]:
        raise BadInput(f"{where} was refused when created and holds no reference",
                       "create an admitted snapshot first")
    unset = [i for i, e in enumerate(doc["inputs"]) if not isinstance(e.get("reference"), str)]
    if unset:  # only a refused snapshot has an input without a reference
        raise BadInput(f"{where} is marked admitted but inputs[{unset[0]}] has no reference",
                       "recreate the snapshot")
    return doc


def input_plan(entry: Mapping[str, Any], *, tolerance: float | None,
               alpha_input: float) -> tuple[tuple[int, int] | None, str]:
    """``((k, c) or None, status)`` for one snapshot input: the confirmation plan check uses
    and ``stable``, ``borderline`` (flipped or a calibration mismatch: tested against its own
    recorded rate) or ``untestable`` (no plan: drift on it cannot be confirmed)."""
    from ..decide import drift_plan

    cal = entry.get("calibration") or {}
    a, m = int(cal.get("mismatches", 0)), int(cal.get("draws", 0))
    plan = drift_plan(a=a, m=m, tolerance=tolerance, alpha=alpha_input)
    if plan is None:
        return None, "untestable"
    return plan, "borderline" if (a or entry.get("flipped")) else "stable"


def input_note(entry: Mapping[str, Any], status: str) -> str:
    cal = entry.get("calibration") or {}
    rate = (f"{cal.get('mismatches', 0)} of {cal.get('draws', 0)} calibration draws differed "
            "from the reference") if cal else "no calibration sample"
    if status == "untestable":
        return (f"untestable: {rate}; that rate is too close to 1/2 for drift to be "
                "confirmed — check screens it but never calls it drift")
    if status == "borderline":
        return f"borderline: {rate}; check tests it against that recorded rate"
    return ""
