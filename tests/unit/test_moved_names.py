"""Folders that name the features (issue 48): the store, the searches and the main job moved
to ``store/``, ``search/`` and ``runner/``; the public names that moved keep their old
spelling one release, with a warning, and no new folder shadows a top-level name."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import agentverity_props
from agentverity_props import store


@pytest.mark.parametrize("name", ["Store", "StoreBackend", "RedisStore", "JsonlStore",
                                  "ReadOnlyStore", "MultiplexedStore"])
def test_a_store_name_read_from_the_engine_warns_and_is_the_stores(name: str) -> None:
    engine = importlib.import_module("agentverity_props.engine")
    with pytest.warns(DeprecationWarning, match="agentverity_props.store"):
        old = getattr(engine, name)
    assert old is getattr(store, name)


def test_an_unknown_engine_name_is_still_an_attribute_error() -> None:
    engine = importlib.import_module("agentverity_props.engine")
    with pytest.raises(AttributeError):
        engine.NoSuchStore  # noqa: B018


def test_the_runner_folder_does_not_shadow_the_top_level_run_and_plan() -> None:
    """Importing ``agentverity_props.runner`` (and its modules) sets the package attribute
    ``runner``, never ``run`` or ``plan``: the top-level functions stay functions, whichever
    is read first."""
    code = ("import agentverity_props.runner._run, agentverity_props.runner._plan, "
            "agentverity_props as a; print(callable(a.run), callable(a.plan), "
            "a.run.__module__, a.plan.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["True", "True", "agentverity_props.runner._run",
                   "agentverity_props.runner._plan"]
    assert callable(agentverity_props.run)
    assert callable(agentverity_props.plan)
