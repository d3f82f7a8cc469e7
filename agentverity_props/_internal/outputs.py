"""Where an output file may go: checked before any work starts, and again when written.

A report, snapshot or enlarged probe set replaces its destination by an atomic rename. That
rename would put a regular file where a device (``/dev/null``), a FIFO or the probe set
itself was, so such destinations are refused. A symlink is followed on purpose: the file it
points to is replaced and the link stays (a ``latest.json -> runs/42.json`` link keeps
working). Writability is probed by creating (and removing) a temporary file in the target's
folder, so an unwritable destination is found before the first agent call, not after it;
every message names the path as the user wrote it, never the temporary file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import BadInput

__all__ = ["check_output", "output_target"]

_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFSOCK: "a socket",
          stat.S_IFDIR: "a directory"}


def output_target(path: str | os.PathLike[str], *, option: str = "the output") -> Path:
    """The file a write to ``path`` replaces: ``path`` with symlinks followed.

    Raises:
        BadInput: the destination is a device, FIFO, socket or directory, or a symlink
            loop; the message names ``path`` as given.
    """
    given = os.fspath(path)
    real = Path(os.path.realpath(given))
    try:
        st = real.stat()
    except FileNotFoundError:
        return real
    except OSError as exc:  # ELOOP, EACCES on a parent...
        raise BadInput(f"cannot write {option} {given}: {exc.strerror or exc}",
                       "pass the path of a regular file") from None
    kind = _KINDS.get(stat.S_IFMT(st.st_mode))
    if kind is not None:
        raise BadInput(f"{option} {given} is {kind}, not a regular file; writing there would "
                       "replace it", "pass the path of a regular file (or '-' for stdout)")
    return real


def _same(a: Path, b: str) -> bool:
    try:
        return a.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path: str, *, option: str, inputs: Iterable[str] = ()) -> None:
    """Refuse, before any work, an output that cannot or must not be written.

    ``inputs`` are the other paths on the command line (``--inputs``, ``--store``, the
    agent's file...): writing the report over one of them would lose it.

    Raises:
        BadInput: a device/FIFO/directory, the same file as an input, or a folder where no
            file can be created; one line naming ``path`` and the fix.
    """
    if path in ("", "-"):
        return
    target = output_target(path, option=option)
    for other in inputs:
        if _same(target, other):
            raise BadInput(f"{option} {path} is the same file as the input {other}; the "
                           "report would overwrite it", f"give {option} another path")
    folder = target.parent
    probe_in = folder
    while not probe_in.exists() and probe_in != probe_in.parent:
        probe_in = probe_in.parent  # the folders will be created: the first existing decides
    if not probe_in.is_dir():
        raise BadInput(f"cannot write {option} {path}: {probe_in} is not a directory",
                       "pass a path inside an existing directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".agentverity-props-probe.", dir=probe_in)
    except OSError as exc:
        raise BadInput(f"cannot write {option} {path}: {exc.strerror or exc} in {probe_in}",
                       "pick a writable directory, or fix its permissions") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)
