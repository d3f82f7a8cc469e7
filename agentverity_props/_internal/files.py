"""Reading files safely: size limits on the bytes actually read, one-line errors naming file
and fix, and JSON parsed with bounded integers and nesting."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from ..errors import BadInput

__all__ = ["MAX_INPUT_BYTES", "MAX_JSON_INT_DIGITS", "MAX_YAML_BYTES", "bounded_int",
           "check_yaml_size", "loads_json", "read_file_bytes"]

MAX_INPUT_BYTES = 50 * 1024 * 1024
#: YAML is parsed by a pure-Python loader (~20 s per MB of small nodes): configuration files
#: (benchmarks, case files, strategy packs, YAML probe sets) are refused above this size
MAX_YAML_BYTES = 4 * 1024 * 1024
#: no count, budget or seed needs more digits; Python refuses to convert beyond 4300 anyway
MAX_JSON_INT_DIGITS = 100


def check_yaml_size(path: Path, size: int, *, what: str) -> None:
    if size > MAX_YAML_BYTES:
        raise BadInput(f"{what} {path} is {size / 1_000_000:.1f} MB, over the 4 MB limit for "
                       "YAML files", "split it, or use a .txt/.jsonl file for long probe sets")


def read_file_bytes(path: str | os.PathLike[str], *, what: str, yaml_file: bool = False) -> bytes:
    """The bytes of ``path``, at most 4 MB for YAML, else 50 MB.

    The limit is enforced on the bytes actually read, not on ``st_size``: a device
    (``/dev/zero``), a FIFO or a process substitution reports size 0 and may never end.

    Raises:
        BadInput: missing, a directory, too large or unreadable; one line with the fix.
    """
    p = Path(path)
    limit = MAX_YAML_BYTES if yaml_file else MAX_INPUT_BYTES
    try:
        if p.is_dir():
            raise BadInput(f"{what} {p} is a directory", "pass the path of a file")
        with open(p, "rb") as fh:
            st = os.fstat(fh.fileno())
            size = st.st_size if stat.S_ISREG(st.st_mode) else 0
            if size > MAX_INPUT_BYTES:
                raise BadInput(f"{what} {p} is {size // 1_000_000} MB, over the 50 MB limit",
                               "split it into smaller files")
            if yaml_file:
                check_yaml_size(p, size, what=what)
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise BadInput(f"{what} {p} not found", "check the path") from None
    except IsADirectoryError:
        raise BadInput(f"{what} {p} is a directory", "pass the path of a file") from None
    except OSError as exc:
        raise BadInput(f"{what} {p} cannot be read ({exc.strerror or type(exc).__name__})",
                       "check the path and its permissions") from None
    if len(data) > limit:
        mb = limit // (1024 * 1024)
        raise BadInput(f"{what} {p} gives more than {mb} MB (a device or an endless stream?)",
                       f"pass a regular file under {mb} MB")
    return data


def bounded_int(text: str) -> int:
    """``parse_int`` for ``json.loads``: a ValueError past :data:`MAX_JSON_INT_DIGITS`."""
    if len(text.lstrip("-")) > MAX_JSON_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits (the limit is "
                         f"{MAX_JSON_INT_DIGITS})")
    return int(text)


def loads_json(text: str | bytes, *, where: str, fix: str) -> Any:
    """``json.loads`` whose every failure is one :class:`BadInput` naming ``where``.

    Integers longer than :data:`MAX_JSON_INT_DIGITS` digits and nesting beyond the
    recursion limit are refused (both would otherwise escape as ValueError/RecursionError).
    """
    try:
        return json.loads(text, parse_int=bounded_int)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{where} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                       f"{exc.msg})", fix) from None
    except RecursionError:
        raise BadInput(f"{where} is nested too deeply to read", fix) from None
    except ValueError as exc:  # a bounded integer, or a number Python cannot convert
        raise BadInput(f"{where} is not usable JSON ({exc})", fix) from None
