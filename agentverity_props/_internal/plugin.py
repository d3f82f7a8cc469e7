"""The one channel from the pytest plugin to the library: the plugin's options for the test
running now.

The plugin (``agentverity_props_pytest.py``) sets them around each test call with
``running_test``; ``@agent_property`` reads them with ``plugin_options`` (the budget, alpha,
epsilon, tolerance and store the command line or ini file gave, and ``test``, the node id
that names the test's own draws in the store). The settings among them reach a test's config
one way only, :func:`plugin_config`: through the config's own constructor, which validates
and resolves each setting once (the plugin refuses a bad option at start-up by building a
config the same way). Nothing else crosses between the two: the
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
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

C = TypeVar("C")

__all__ = ["PLUGIN_SETTINGS", "plugin_config", "plugin_options", "running_test"]

_OPTIONS: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "agentverity_plugin_options", default=None)


#: the plugin's options that are settings of a test's config (``PropertyConfig`` fields, or
#: ``EngineConfig`` fields applied over its ``engine``); ``profile`` also drops the test's
#: own ``beta`` (the profile's per-candidate false-pass rate replaces it)
PLUGIN_SETTINGS = ("budget", "alpha", "epsilon", "tolerance", "profile")


def plugin_config(config: C, options: Mapping[str, Any]) -> C:
    """``config`` with the plugin's settings in ``options`` (those not None) applied over it
    by ``config.with_fields`` (the config's constructor validates and resolves them); the
    other options (store, test) are not settings of the config.

    >>> from agentverity_props.property import PropertyConfig
    >>> plugin_config(PropertyConfig(), {"tolerance": 0.2, "budget": 50}).engine.budget
    50
    >>> plugin_config(PropertyConfig(beta=0.02), {"profile": "thorough"}).candidate_beta
    0.002
    """
    given = {k: options[k] for k in PLUGIN_SETTINGS if options.get(k) is not None}
    if "profile" in given:
        given["beta"] = None
    return config.with_fields(**given) if given else config  # type: ignore[attr-defined]


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
