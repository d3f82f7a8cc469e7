"""The one channel from the pytest plugin to the library: the plugin's options for the test
running now.

The plugin (``agentverity_props_pytest.py``) sets them around each test call with
``running_test``; ``@agent_property`` reads them with ``plugin_options`` (the budget, alpha,
epsilon, tolerance and store the command line or ini file gave, and ``test``, the node id
that names the test's own draws in the store). Nothing else crosses between the two: the
plugin learns of a test's runs through the public ``records()`` of ``property`` and
``conversation``. A context variable, so the options are those of the test running in this
context and of no other.

>>> with running_test(None):  # no test of the plugin's runs here
...     plugin_options()
{}
>>> with running_test({"budget": 50, "test": "t.py::test_a"}):
...     plugin_options()["budget"]
50
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

__all__ = ["plugin_options", "running_test"]

_OPTIONS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "agentverity_plugin_options", default=None)


def plugin_options() -> dict[str, Any]:
    """The plugin's options for the test running now: ``{}`` outside a test the plugin runs
    (plain Python, the CLI, or pytest without the plugin)."""
    return dict(_OPTIONS.get() or {})


@contextlib.contextmanager
def running_test(options: dict[str, Any] | None) -> Iterator[None]:
    """Within the block, ``plugin_options()`` is ``options`` (``None``: none)."""
    token = _OPTIONS.set(dict(options) if options is not None else None)
    try:
        yield
    finally:
        _OPTIONS.reset(token)
