"""Atomic file writes: a crash mid-write leaves the previous file intact."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes | str | Iterable[str]) -> None:
    """Write ``data`` to a temp file in the same folder, fsync it, then rename over ``path``.

    ``str`` data (or an iterable of ``str`` pieces) is written as UTF-8 through the file
    object: no encoded copy of a report of hundreds of megabytes is made first.

    A symlink is followed (its target is replaced, the link stays); a device, FIFO or
    directory is refused (:func:`~agentverity_props._internal.outputs.output_target`). An
    OSError becomes a one-line BadInput naming ``path``, never the temporary file.
    """
    from ..errors import BadInput
    from .outputs import output_target

    given = path
    path = output_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise BadInput(f"cannot write {given}: {exc.strerror or exc}",
                       "pick a writable directory, or fix its permissions") from None
    try:
        _write_and_rename(fd, tmp, path, data)
    except OSError as exc:
        raise BadInput(f"cannot write {given}: {exc.strerror or exc}",
                       "free some space, or pick another directory") from None


def _write_and_rename(fd: int, tmp: str, path: Path, data: bytes | str | Iterable[str]) -> None:
    try:
        fh: Any = (os.fdopen(fd, "wb") if isinstance(data, bytes)
                   else os.fdopen(fd, "w", encoding="utf-8", newline=""))
        with fh:
            if isinstance(data, (bytes, str)):
                fh.write(data)
            else:
                for piece in data:
                    fh.write(piece)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    try:  # make the rename itself durable
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def atomic_write_text(path: Path, text: str | Iterable[str]) -> None:
    atomic_write_bytes(path, text)
