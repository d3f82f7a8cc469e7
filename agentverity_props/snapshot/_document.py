"""The snapshot file: its schema, validation, migration of older versions, atomic writes,
and the per-input test plan ``check`` derives from it.

``snapshot/2`` (this version) adds each input's calibration counts. A ``snapshot/1`` file is
migrated in memory by :func:`migrate_snapshot` when read (the file itself is left as it was).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import BadInput, InvalidArgument

__all__ = ["OLD_SCHEMAS", "SCHEMA", "input_note", "input_plan", "load_snapshot",
           "validate_snapshot", "write_snapshot"]

SCHEMA = "agentverity_props.snapshot/2"
OLD_SCHEMAS = ("agentverity_props.snapshot/1",)


def write_snapshot(path: str | Path, document: Mapping[str, Any]) -> None:
    """Write a snapshot document atomically (temp file, fsync, rename)."""
    from .._internal.atomic import atomic_write_text
    from ..report import dumps
    if document.get("schema") != SCHEMA:
        raise InvalidArgument(f"not a snapshot document (schema {document.get('schema')!r})")
    atomic_write_text(Path(path), dumps(dict(document)))


_REQUIRED = ("created_at", "agent", "admission", "config", "fingerprints", "inputs", "calls")
_TYPES = {"created_at": str, "agent": str, "admission": dict, "config": dict,
          "fingerprints": dict, "inputs": list, "calls": dict}


def _positive(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < 1e6


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
    """Check a loaded snapshot document (a ``snapshot/1`` one is migrated first)."""
    if isinstance(doc, dict) and doc.get("schema") in OLD_SCHEMAS:
        from ..results import migrate_snapshot
        doc = migrate_snapshot(doc, where=where)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise BadInput(f"{where} is not a snapshot (schema {got!r}, expected {SCHEMA!r})",
                       "create one with agentverity-props snapshot")
    missing = [k for k in _REQUIRED if k not in doc]
    if missing:
        raise BadInput(f"{where} lacks {', '.join(missing)}",
                       "recreate it with agentverity-props snapshot")
    wrong = [k for k, t in _TYPES.items() if not isinstance(doc[k], t)]
    if wrong:  # an edited or damaged file: refuse it here, not with a crash later
        raise BadInput(f"{where}: {', '.join(wrong)} of the wrong type", "recreate the snapshot")
    if not doc["admission"].get("admitted"):
        raise BadInput(f"{where} was refused when created and holds no reference",
                       "create an admitted snapshot first")
    cfg = doc["config"]
    for k in ("epsilon", "alpha", "layer", "indifference", "extractor"):
        if k not in cfg:
            raise BadInput(f"{where}: config lacks {k}", "recreate the snapshot")
    if not all(_positive(cfg[k]) for k in ("epsilon", "alpha", "indifference")) \
            or cfg["layer"] not in ("verdict", "text", "tools") \
            or not isinstance(cfg["extractor"], str) \
            or not isinstance(doc["calls"].get("total", 0), int):
        raise BadInput(f"{where}: config or calls hold invalid values", "recreate the snapshot")
    for i, e in enumerate(doc["inputs"]):
        if not isinstance(e, dict) or not isinstance(e.get("fp"), str) \
                or not isinstance(e.get("reference"), str):
            raise BadInput(f"{where}: inputs[{i}] lacks fp or reference", "recreate the snapshot")
        cal = e.get("calibration")
        if cal is not None and not (
                isinstance(cal, dict) and _count(cal.get("draws"))
                and _count(cal.get("mismatches")) and cal["mismatches"] <= cal["draws"]):
            raise BadInput(f"{where}: inputs[{i}] has an invalid calibration",
                           "recreate the snapshot")
    if doc.get("migrated_from") is not None:
        return doc  # a snapshot/1 file: it never had every field of version 2
    from ..results import SnapshotDocument  # the file format, field by field
    return SnapshotDocument.check(doc, where=where, fix="recreate the snapshot")


def _count(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


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
