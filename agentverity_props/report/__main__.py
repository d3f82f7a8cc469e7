"""``python -m agentverity_props.report [DIR]``: write every result kind's JSON Schema into DIR
(default ``docs/schemas``), generated from the models of the registry (``RESULT_KINDS``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from . import _registry


def schema_text(doc: Any) -> str:
    """The published text of one kind's schema (stable: a test compares it byte for byte)."""
    return json.dumps(doc.json_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print("usage: python -m agentverity_props.report [DIR]  (default docs/schemas)",
              file=sys.stderr)
        return 2
    out = Path(argv[0] if argv else "docs/schemas")
    from .._internal.atomic import atomic_write_text
    try:
        out.mkdir(parents=True, exist_ok=True)
        for entry in _registry.RESULT_KINDS:  # looked up now: the table, not a copy
            atomic_write_text(out / entry.model.FILE, schema_text(entry.model))
            print(f"wrote {out / entry.model.FILE}")
    except OSError as exc:
        print(f"error: cannot write the schemas into {out} ({exc.strerror or exc}) — pass a "
              "folder you can write to", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
