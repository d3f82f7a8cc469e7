"""A provider pause shared by every process of a session (pytest-xdist workers).

One engine already pauses all of its own calls when a service answers 429 with
``Retry-After``. N pytest-xdist workers are N processes, each with its own engines, so without
a shared record the other workers keep calling a provider that asked everybody to wait. The
shared record is one small JSON file, ``{"paused_until": <unix time>}``:

* a writer takes an exclusive ``fcntl`` lock on a sibling ``.lock`` file, reads the current
  value, and atomically replaces the file with the later of the two times (a pause is never
  shortened by a later, shorter ``Retry-After``);
* a reader never locks: the file is replaced whole (``os.replace``), so a read sees the old
  or the new value, never half of one; it re-reads only when the file's ``mtime`` changed.

Wall-clock time is used in the file (processes do not share a monotonic clock); the engine
turns it back into its own monotonic deadline. A missing, unreadable or corrupt file is no
pause, never an error: the pause only ever makes callers wait longer, so losing it costs at
worst one more 429.

The pytest plugin sets :data:`PAUSE_FILE_ENV` for the session (the controller creates the
file's folder and hands it to its workers); any other program may set it too, to share one
pause between its processes.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from pathlib import Path

__all__ = ["PAUSE_FILE_ENV", "SharedPause", "shared_pause_from_env"]

#: environment variable naming the shared pause file (set by the pytest plugin)
PAUSE_FILE_ENV = "AGENTVERITY_PROPS_PAUSE_FILE"

#: a Retry-After beyond this is not believed for the shared file (one day)
_MAX_PAUSE_S = 86_400.0


class SharedPause:
    """A "paused until" time in a file, shared by processes.

    Example:
        >>> import tempfile, pathlib
        >>> p = SharedPause(pathlib.Path(tempfile.mkdtemp()) / "pause.json")
        >>> p.remaining()
        0.0
        >>> p.extend(30.0)
        >>> 29.0 < p.remaining() <= 30.0
        True
    """

    __slots__ = ("_cached", "_mtime", "path")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._mtime: int | None = None
        self._cached = 0.0

    def until(self) -> float:
        """The unix time until which callers should wait (0.0: no pause)."""
        try:
            mtime = os.stat(self.path).st_mtime_ns
        except OSError:
            return 0.0
        if mtime != self._mtime:
            self._cached = self._read()
            self._mtime = mtime
        return self._cached

    def remaining(self, now: float | None = None) -> float:
        """Seconds left of the shared pause (0.0 when none)."""
        left = self.until() - (time.time() if now is None else now)
        return left if left > 0 else 0.0

    def extend(self, seconds: float) -> None:
        """Every process pauses at least ``seconds`` from now (a longer pause is kept)."""
        if not seconds > 0:
            return
        until = time.time() + min(float(seconds), _MAX_PAUSE_S)
        try:
            import fcntl

            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
                try:
                    current = self._read()
                    if until <= current:
                        return
                    tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
                    tmp.write_text(json.dumps({"paused_until": until}), encoding="utf-8")
                    os.replace(tmp, self.path)
                finally:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        except (OSError, ImportError):
            # no shared folder (removed, read-only) or no fcntl: each process keeps its own
            # pause, as without a session
            return

    def _read(self) -> float:
        with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
            value = json.loads(self.path.read_text(encoding="utf-8")).get("paused_until")
            if isinstance(value, (int, float)) and math.isfinite(value):
                return float(value)
        return 0.0


def shared_pause_from_env() -> SharedPause | None:
    """The session's shared pause when :data:`PAUSE_FILE_ENV` names one, else None."""
    path = os.environ.get(PAUSE_FILE_ENV)
    return SharedPause(path) if path else None
