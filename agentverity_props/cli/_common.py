"""What every command shares: one-line errors, exit codes, output files."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from .._internal.outcome import Exit

EXIT_OK = Exit.OK
EXIT_INCOMPLETE = Exit.INCOMPLETE

DEBUG_ENV = "AGENTVERITY_PROPS_DEBUG"

#: set by a SIGINT anywhere in a command, and by a ``KeyboardInterrupt`` Python swallowed where
#: it was raised (a garbage-collection callback of a library: ``_quiet_unraisable``): the
#: command must still end as interrupted, before it writes any output file
_INTERRUPTED = threading.Event()


def _on_sigint(signum: int, frame: Any) -> None:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


def _quiet_unraisable(previous: Any) -> Any:
    """An unraisable-exception hook that turns a swallowed ``KeyboardInterrupt`` into the
    command's interrupt.

    Python reports an exception it cannot raise (one from a garbage-collection callback, a
    ``__del__``) through ``sys.unraisablehook``, whose default prints "Exception ignored" and a
    traceback. A ``KeyboardInterrupt`` there comes from a SIGINT (``_on_sigint``, or the
    engine's handler when the user presses Ctrl-C a second time): it is noted in
    ``_INTERRUPTED``, so the command still ends as interrupted, one line and no traceback.
    Anything else goes to the hook that was there.
    """
    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _INTERRUPTED.set()
            return
        previous(unraisable)
    return hook


def run_cli(group: click.Group, argv: list[str]) -> Any:
    """Run the click group; any error becomes one line on stderr and exit code 2.

    ``--debug`` (anywhere on the line) or ``AGENTVERITY_PROPS_DEBUG=1`` shows tracebacks.
    """
    debug = "--debug" in argv or os.environ.get(DEBUG_ENV) == "1"
    argv = [a for a in argv if a != "--debug"]
    _INTERRUPTED.clear()
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, _on_sigint) if main_thread else None
    # the hook is process-wide: set only where the signal handlers are (the main thread)
    previous_unraisable = sys.unraisablehook
    if main_thread:
        sys.unraisablehook = _quiet_unraisable(previous_unraisable)
    try:
        code = group.main(args=argv, prog_name="agentverity-props", standalone_mode=False)
        if _INTERRUPTED.is_set():  # the interrupt was swallowed where it was raised
            raise click.exceptions.Abort
    except click.exceptions.Abort:
        click.echo("error: interrupted", err=True)
        sys.exit(EXIT_INCOMPLETE)
    except click.ClickException as exc:
        # usage errors: click's own one-line message; exit 2 like every bad input
        click.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(EXIT_INCOMPLETE)
    except KeyboardInterrupt:
        click.echo("error: interrupted; finished calls are kept in the store", err=True)
        sys.exit(EXIT_INCOMPLETE)
    except Exception as exc:
        if debug:
            raise
        from ..errors import AgentVerityError
        if isinstance(exc, AgentVerityError):
            msg = str(exc)
        elif isinstance(exc, RecursionError):  # json/yaml on a pathologically nested file
            msg = ("a file given on the command line is nested too deeply to read (JSON/YAML "
                   "nesting beyond the recursion limit) — flatten it, or pass the right file")
        elif isinstance(exc, OSError):
            msg = f"{exc.strerror or exc} ({exc.filename})" if exc.filename else str(exc)
        else:
            msg = (f"internal error {type(exc).__name__}: {exc} — please report it; "
                   "rerun with --debug for the traceback")
        from .._internal.shown import visible
        click.echo("error: " + visible(" ".join(msg.split())[:2000]), err=True)
        sys.exit(EXIT_INCOMPLETE)
    finally:
        sys.unraisablehook = previous_unraisable
        if main_thread:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)


def say_stop(cause: str) -> None:
    """Why the run stopped early, on the user's terminal (stderr)."""
    from .._internal.shown import visible
    click.echo(f"stopped early: {visible(cause)}", err=True)


def use_color(output: str | None) -> bool:
    """Colour codes only for a terminal: never in a file, whatever stdout is."""
    return output in (None, "-") and sys.stdout.isatty()


def write_output(text: str | Iterable[str], output: str | None) -> None:
    """Write ``text`` (or its pieces, ending with a line break) to ``output`` atomically
    (temp file, fsync, rename), or to stdout. Nothing is written once the command was
    interrupted (a SIGINT whose ``KeyboardInterrupt`` was swallowed on its way): the file
    the user had stays as it was."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt
    if output in (None, "-"):
        if not isinstance(text, str):
            for piece in text:
                click.echo(piece, nl=False)
            return
        click.echo(text, nl=not text.endswith("\n"))
        return
    from .._internal.atomic import atomic_write_text
    atomic_write_text(Path(output), text)


#: parameters naming a file a command writes -> the option as the user typed it
OUTPUT_PARAMS = {"output": "--output", "html_out": "--html", "report": "--report"}


def _paths_in(value: Any) -> list[str]:
    """The existing paths a parameter value may name (``file.py:attr`` names ``file.py``)."""
    values = value if isinstance(value, (list, tuple)) else [value]
    out: list[str] = []
    for v in values:
        if not isinstance(v, str) or not v or v == "-":
            continue
        for candidate in (v, v.rsplit(":", 1)[0]):
            if os.path.exists(candidate) and candidate not in out:
                out.append(candidate)
    return out


def check_outputs(params: dict[str, Any]) -> None:
    """Every output a command was given, checked before it reads or calls anything: not a
    device, FIFO or directory, not one of its inputs, and writable (see
    :mod:`agentverity_props._internal.outputs`)."""
    from .._internal.outputs import check_output

    outs = {name: params[name] for name in OUTPUT_PARAMS
            if isinstance(params.get(name), str)}
    if not outs:
        return
    inputs = [p for name, v in params.items() if name not in outs for p in _paths_in(v)]
    for name, path in outs.items():
        others = [v for n, v in outs.items() if n != name and v not in ("-",)]
        check_output(path, option=OUTPUT_PARAMS[name], inputs=[*inputs, *others])


def guard_outputs(cmd: click.Command) -> click.Command:
    """``cmd`` with :func:`check_outputs` run on its parameters before its own code."""
    callback = cmd.callback
    if callback is None or getattr(callback, "_outputs_guarded", False):
        return cmd

    def guarded(*args: Any, **kwargs: Any) -> Any:
        check_outputs(kwargs)
        return callback(*args, **kwargs)

    guarded._outputs_guarded = True  # type: ignore[attr-defined]
    guarded.__doc__ = callback.__doc__
    cmd.callback = guarded
    return cmd
