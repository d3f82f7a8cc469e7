"""A SIGINT whose KeyboardInterrupt is swallowed where it is raised (a library's
garbage-collection callback prints "Exception ignored" and goes on) still ends the command as
interrupted, exit 2, and no output file is written (the user's previous file stays)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from agentverity_props.cli._common import run_cli, write_output


def _interrupt_in_a_suppressing_block() -> None:
    with contextlib.suppress(KeyboardInterrupt):  # swallowed, as in a gc callback
        os.kill(os.getpid(), signal.SIGINT)


def _group(out: Path, interrupt: Callable[[], object] = _interrupt_in_a_suppressing_block
           ) -> click.Group:
    """A command that is interrupted by ``interrupt`` and then writes ``out``."""
    @click.group()
    def cli() -> None:
        pass

    @cli.command()
    def work() -> None:
        interrupt()
        write_output("the new set\n", str(out))

    return cli


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers need the main thread")
def test_a_swallowed_interrupt_writes_nothing_and_exits_2(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    out = tmp_path / "enlarged.txt"
    out.write_text("the previous set\n")
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(SystemExit) as exc:
        run_cli(_group(out), ["work"])
    assert exc.value.code == 2
    assert out.read_text() == "the previous set\n"
    assert "error: interrupted" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before  # the handler is given back


class _KillsOnCollect:
    """Sends SIGINT from its finalizer: the handler's KeyboardInterrupt is raised inside
    ``__del__``, where Python cannot raise it and reports it through ``sys.unraisablehook``
    (the way a garbage-collection callback of a library once made a run print a traceback)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                    reason="signal handlers need the main thread")
def test_an_unraisable_interrupt_shows_one_line_and_no_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "enlarged.txt"
    out.write_text("the previous set\n")
    hook = sys.unraisablehook
    with pytest.raises(SystemExit) as exc:
        run_cli(_group(out, _KillsOnCollect), ["work"])  # collected at once
    assert exc.value.code == 2
    assert out.read_text() == "the previous set\n"
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert err == ["error: interrupted"]
    assert sys.unraisablehook is hook  # the hook is given back


def test_other_unraisable_exceptions_still_reach_the_hook_that_was_there() -> None:
    from agentverity_props.cli._common import _INTERRUPTED, _quiet_unraisable
    _INTERRUPTED.clear()
    seen: list[BaseException] = []
    hook = _quiet_unraisable(lambda u: seen.append(u.exc_value))
    err = ValueError("kept")
    hook(types.SimpleNamespace(exc_value=err))
    assert seen == [err]
    assert not _INTERRUPTED.is_set()
    # a KeyboardInterrupt swallowed anywhere (the engine's second-Ctrl-C handler raises one
    # too) is the user's interrupt: dropped from stderr, kept as the command's outcome
    hook(types.SimpleNamespace(exc_value=KeyboardInterrupt()))
    assert seen == [err]
    assert _INTERRUPTED.is_set()
    _INTERRUPTED.clear()
