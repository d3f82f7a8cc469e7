"""Atomic file writes: a crash mid-write leaves the previous file intact, and the file has
the permissions a plain ``open(path, "w")`` would give it (the umask's, or the replaced
file's)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
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
        fd, tmp = _temp_file(path)
    except OSError as exc:
        raise BadInput(f"cannot write {given}: {exc.strerror or exc}",
                       "pick a writable directory, or fix its permissions") from None
    try:
        _write_and_rename(fd, tmp, path, data)
    except OSError as exc:
        raise BadInput(f"cannot write {given}: {exc.strerror or exc}",
                       "free some space, or pick another directory") from None


def _temp_file(path: Path) -> tuple[int, str]:
    """A new temporary file beside ``path`` with the permissions ``open(path, "w")`` would
    give it: those of the file it replaces, else ``0o666`` less the umask (0644 under umask
    022). Not :func:`tempfile.mkstemp`, whose 0600 would make every report, snapshot and
    probe file unreadable to the rest of a team or a CI artifact store."""
    try:
        st = os.stat(path)
        keep: int | None = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None
    except OSError:
        keep = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)  # the kernel applies the umask, as open() does
        except FileExistsError:
            continue
        if keep is not None and hasattr(os, "fchmod"):
            # not ours to chmod (another owner's file): it keeps the umask's mode
            with contextlib.suppress(OSError):
                os.fchmod(fd, keep)
        return fd, tmp
    raise FileExistsError(f"no free temporary name beside {path}")


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
