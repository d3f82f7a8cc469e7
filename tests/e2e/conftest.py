"""Session fixtures of the end-to-end tests."""

from __future__ import annotations

import os

import pytest
from _fresh_venv import Venv, build_setup_venvs


@pytest.fixture(scope="session")
def setup_venvs() -> dict[str, Venv]:
    """``{"setup": README's set-up environment, "later": it plus [html,http,otel]}``, built
    fresh (see _fresh_venv.py); ``AGENTVERITY_PROPS_NO_FRESH_VENV=1`` skips what needs them."""
    if os.environ.get("AGENTVERITY_PROPS_NO_FRESH_VENV") == "1":
        pytest.skip("AGENTVERITY_PROPS_NO_FRESH_VENV=1: no fresh environment is built")
    return build_setup_venvs()
