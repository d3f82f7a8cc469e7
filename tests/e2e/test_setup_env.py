"""The documented installs leave a consistent environment: ``pip check`` is clean after
README's set-up, after adding ``[html,http,otel]`` to it (docs/tools.md), and in the test
environment (``[dev]``, every extra)."""

from __future__ import annotations

import subprocess
import sys

import pytest

# the fresh environments are built by pip (about a minute): the second job, with the
# documented commands that run in them
pytestmark = [pytest.mark.e2e, pytest.mark.docs]


def test_pip_check_is_clean_in_the_test_environment() -> None:
    got = subprocess.run([sys.executable, "-m", "pip", "check"], capture_output=True,
                         text=True, timeout=120, check=False)
    assert got.returncode == 0, got.stdout + got.stderr


@pytest.mark.parametrize("which", ["setup", "later"])
def test_pip_check_is_clean_after_the_documented_installs(setup_venvs, which: str) -> None:
    got = setup_venvs[which].pip_check
    assert got.returncode == 0, f"{which}: {got.stdout}{got.stderr}"


def test_the_setup_environment_can_render_html(setup_venvs) -> None:
    # README's set-up installs what `report --html` needs; [dev] would hide it if not
    got = subprocess.run([str(setup_venvs["setup"].python), "-c",
                          "import jinja2, matplotlib, strands"], capture_output=True,
                         text=True, timeout=120, check=False)
    assert got.returncode == 0, got.stderr
