"""Reading files safely: size limits before reading, one-line errors naming file and fix."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BadInput

__all__ = ["MAX_INPUT_BYTES", "MAX_YAML_BYTES", "check_yaml_size", "read_file_bytes"]

MAX_INPUT_BYTES = 50 * 1024 * 1024
#: YAML is parsed by a pure-Python loader (~20 s per MB of small nodes): configuration files
#: (benchmarks, case files, strategy packs, YAML probe sets) are refused above this size
MAX_YAML_BYTES = 4 * 1024 * 1024


def check_yaml_size(path: Path, size: int, *, what: str) -> None:
    if size > MAX_YAML_BYTES:
        raise BadInput(f"{what} {path} is {size / 1_000_000:.1f} MB, over the 4 MB limit for "
                       "YAML files", "split it, or use a .txt/.jsonl file for long probe sets")


def read_file_bytes(path: str | os.PathLike[str], *, what: str, yaml_file: bool = False) -> bytes:
    """The bytes of ``path``, its size checked before reading (4 MB for YAML, else 50 MB).

    Raises:
        BadInput: missing, a directory, too large or unreadable; one line with the fix.
    """
    p = Path(path)
    try:
        size = p.stat().st_size
        if p.is_dir():
            raise BadInput(f"{what} {p} is a directory", "pass the path of a file")
        if size > MAX_INPUT_BYTES:
            raise BadInput(f"{what} {p} is {size // 1_000_000} MB, over the 50 MB limit",
                           "split it into smaller files")
        if yaml_file:
            check_yaml_size(p, size, what=what)
        return p.read_bytes()
    except FileNotFoundError:
        raise BadInput(f"{what} {p} not found", "check the path") from None
    except OSError as exc:
        raise BadInput(f"{what} {p} cannot be read ({exc.strerror or type(exc).__name__})",
                       "check the path and its permissions") from None
