"""Command group with lazily imported subcommands (``--help`` stays fast)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

# name -> "module:attribute" of a click.Command; each command lives in its own module.
COMMANDS: dict[str, tuple[str, str]] = {
    "assess": ("._assess", "assess_cmd"),
    "bench": ("._bench", "bench_cmd"),
    "boundary": ("._boundary", "boundary_cmd"),
    "check": ("._snapshot", "check_cmd"),
    "compare": ("._bench", "compare_cmd"),
    "snapshot": ("._snapshot", "snapshot_cmd"),
    "demo": ("._demo", "demo_cmd"),
    "enlarge": ("._enlarge", "enlarge_cmd"),
    "plan": ("._plan", "plan_cmd"),
    "report": ("._report", "report_cmd"),
    "run": ("._run", "run_cmd"),
    "store": ("._store", "store_cmd"),
    "tools": ("._tools", "tools"),
}


class _LazyGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        # the library's messages name settings as the command line does (--budget N)
        from .._internal.settings import speaking
        with speaking("cli"):
            return super().invoke(ctx)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target
        cmd: click.Command = getattr(importlib.import_module(module, __package__), attr)
        from ._common import guard_outputs
        return guard_outputs(cmd)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agentverity-props")
def cli() -> None:
    """Test non-deterministic LLM agents: meter, blindness, relations, counterexamples."""


def main(argv: list[str] | None = None) -> Any:
    from ._common import run_cli
    _hypothesis_storage_outside_cwd()
    return run_cli(cli, argv if argv is not None else sys.argv[1:])


def _hypothesis_storage_outside_cwd() -> None:
    """The CLI draws with Hypothesis (no example database), but Hypothesis still caches the
    constants it reads from source files under ``./.hypothesis``: a command run from a
    repository would leave that directory behind. The CLI keeps it in the user's cache
    instead, unless ``HYPOTHESIS_STORAGE_DIRECTORY`` says where."""
    import os

    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from pathlib import Path

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(Path(base) / "agentverity-props"
                                                     / "hypothesis")
