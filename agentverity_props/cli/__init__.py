"""The ``agentverity-props`` command line (thin: parse, call the library, render, exit code)."""

from ._main import main

__all__ = ["main"]
