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
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python -m agentverity_props.results [DIR]  (default docs/schemas)",
              file=sys.stderr)
        return 2
    out = Path(argv[0] if argv else "docs/schemas")
    from .._internal.atomic import atomic_write_text
    try:
        out.mkdir(parents=True, exist_ok=True)
        for doc in DOCUMENTS:
            atomic_write_text(out / doc.FILE, schema_text(doc))
            print(f"wrote {out / doc.FILE}")
    except OSError as exc:
        print(f"error: cannot write the schemas into {out} ({exc.strerror or exc}) — pass a "
              "folder you can write to", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
