"""SIGINT/SIGTERM as a request to stop cleanly (every command that calls agents)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["stop_on_signals"]


@contextlib.contextmanager
def stop_on_signals(request_stop: Callable[[], None],
                    stopping: Callable[[], bool]) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM call ``request_stop``; a SIGINT once
    ``stopping()`` is true raises ``KeyboardInterrupt`` (the user insists). Outside the main
    thread, where Python allows no signal handlers, this does nothing. The previous handlers
    come back on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if signum == signal.SIGINT and stopping():
            raise KeyboardInterrupt
        request_stop()

    old: dict[signal.Signals, Any] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, handler)
        yield
    finally:
        for sig, previous in old.items():
            signal.signal(sig, signal.SIG_DFL if previous is None else previous)
