"""Moving draws between stores: merge, export to a portable file, read that file back.

A merge never loses a draw and never overwrites one. Each runner namespace of a source is
copied as a whole: a draw already in the destination with the same observation is the same
draw (merging twice changes nothing); if any draw of a namespace collides with a different
observation there (two machines that both wrote the default namespace ``""`` and numbered
from 0), that namespace is copied under a new name, ``NAME~2`` (then ``~3``...), so both
sets of draws survive and replay pools them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import BadInput
from ..observation import Observation
from ._store import StoreRow, encode

if TYPE_CHECKING:
    from ._backend import StoreBackend

__all__ = ["MergeReport", "export_store", "merge_stores", "read_jsonl"]

FORMAT = "agentverity-props-store"
VERSION = 1
_FIX = "export it again with `agentverity-props store export`"


@dataclass
class MergeReport:
    """What a merge did: draws copied, draws already there, namespaces renamed."""

    copied: int = 0
    already: int = 0
    renamed: dict[str, str] = field(default_factory=dict)

    def line(self) -> str:
        text = f"{self.copied} draw(s) copied, {self.already} already there"
        if self.renamed:
            moves = ", ".join(f"{old or '(default)'!s} -> {new}"
                              for old, new in sorted(self.renamed.items()))
            text += f"; colliding runner namespaces copied under new names: {moves}"
        return text


def merge_stores(dest: StoreBackend, sources: Iterable[StoreBackend]) -> MergeReport:
    """Copy every draw of ``sources`` into ``dest`` (see the module docstring)."""
    if dest.read_only:
        raise BadInput(f"store {dest.location} is read only", "merge into a SQLite path or a "
                       "redis:// URL")
    report = MergeReport()
    for source in sources:
        by_ns: dict[str, list[StoreRow]] = {}
        for row in source.rows():
            by_ns.setdefault(row.namespace, []).append(row)
        for ns, rows in sorted(by_ns.items()):
            target = ns
            k = 1
            while _collides(dest, target, rows):
                k += 1
                target = f"{ns}~{k}"
            if target != ns:
                report.renamed[ns] = target
            for row in rows:
                if dest.put(row.key, row.observation, namespace=target):
                    report.copied += 1
                else:
                    report.already += 1
    return report


def _collides(dest: StoreBackend, ns: str, rows: list[StoreRow]) -> bool:
    for row in rows:
        there = dest.get(row.key, namespace=ns)
        if there is not None and encode(there) != encode(row.observation):
            return True
    return False


def export_store(source: StoreBackend, out: str | os.PathLike[str]) -> int:
    """Write every draw of ``source`` to ``out``: JSON Lines if it ends in ``.jsonl``, else a
    new SQLite store. Returns the number of draws. An existing ``out`` is refused."""
    out = Path(out)
    if out.exists() or out.is_symlink():
        raise BadInput(f"{out} already exists", "pick a new file name, or merge into it with "
                       "`agentverity-props store merge`")
    if out.suffix == ".jsonl":
        from .._internal.atomic import atomic_write_bytes

        rows = list(source.rows())
        atomic_write_bytes(out, _jsonl_lines(rows))
        return len(rows)
    from ._store import Store

    with Store(out) as dest:
        merge_stores(dest, [source])
        return dest.count()


def _jsonl_lines(rows: list[StoreRow]) -> Iterator[str]:
    yield json.dumps({"format": FORMAT, "version": VERSION, "draws": len(rows)}) + "\n"
    for r in rows:
        head = json.dumps({"namespace": r.namespace, "agent": r.agent, "fp": r.fp,
                           "extractor": r.extractor, "index": r.draw_index, "ok": r.ok},
                          separators=(",", ":"))
        # the observation is spliced in as stored: raw kept, no second encoding
        yield f'{head[:-1]},"observation":{encode(r.observation)}}}\n'


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[StoreRow]:
    """The draws of a JSON Lines export; a malformed line is a one-line BadInput."""
    path = Path(path)
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"store {path} cannot be read: {exc.strerror or exc}",
                       "check the path (replay needs an existing export)") from None
    with fh:
        try:
            head = json.loads(fh.readline() or "null")
        except (ValueError, UnicodeDecodeError):
            head = None
        if not isinstance(head, dict) or head.get("format") != FORMAT:
            raise BadInput(f"{path} is not an agentverity-props store export (line 1)", _FIX)
        if head.get("version") != VERSION:
            raise BadInput(f"{path} is store export version {head.get('version')!r}; this "
                           f"agentverity-props reads version {VERSION}",
                           "upgrade agentverity-props or export again")
        for n, line in enumerate(fh, start=2):
            if line.strip():
                yield _row(path, n, line)


def _row(path: Path, n: int, line: str) -> StoreRow:
    try:
        d: Any = json.loads(line)
        obs = Observation.from_dict(d["observation"])
        row = StoreRow(d["agent"], d["fp"], d["extractor"], d["index"], obs.error is None,
                       obs, d["namespace"])
        if not all(isinstance(v, str) for v in (row.agent, row.fp, row.extractor,
                                                row.namespace)) \
                or row.draw_index.__class__ is not int or row.draw_index < 0:
            raise TypeError("a field has the wrong type")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path} line {n} is not a stored draw ({type(exc).__name__}: "
                       f"{str(exc)[:80]})", _FIX) from None
    return row
