"""``python -m agentverity_props.results [DIR]``: write every kind's JSON Schema into DIR
(default ``docs/schemas``), generated from the models."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from . import DOCUMENTS


def schema_text(doc: type) -> str:
    """The published text of one kind's schema (stable: a test compares it byte for byte)."""
    return json.dumps(doc.json_schema(), indent=2, ensure_ascii=False) + "\n"  # type: ignore[attr-defined]


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/schemas")
    out.mkdir(parents=True, exist_ok=True)
    for doc in DOCUMENTS:
        (out / doc.FILE).write_text(schema_text(doc), encoding="utf-8")
        print(f"wrote {out / doc.FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
