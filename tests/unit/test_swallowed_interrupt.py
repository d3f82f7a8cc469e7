"""A SIGINT whose KeyboardInterrupt is swallowed where it is raised (a library's
garbage-collection callback prints "Exception ignored" and goes on) still ends the command as
interrupted, exit 2, and no output file is written (the user's previous file stays)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from pathlib import Path

import click
import pytest

from agentverity_props.cli._common import run_cli, write_output


def _group(out: Path) -> click.Group:
    @click.group()
    def cli() -> None:
        pass

    @cli.command()
    def work() -> None:
        with contextlib.suppress(KeyboardInterrupt):  # swallowed, as in a gc callback
            os.kill(os.getpid(), signal.SIGINT)
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
