import os
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# compiled bytecode: the suite starts several hundred Python subprocesses (the CLI, inner
# pytest sessions, documented commands), each importing the package; with bytecode not
# written (PYTHONDONTWRITEBYTECODE, as on many CI machines) every one of them compiled the
# same modules again. They share one compiled copy instead, kept outside the source trees
# (PYTHONPYCACHEPREFIX), so no __pycache__ appears in the checkout or the scratch copies.
_PYCACHE = os.environ.get("PYTHONPYCACHEPREFIX") or str(
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "agentverity-props-tests" / "pycache")
os.environ["PYTHONPYCACHEPREFIX"] = _PYCACHE
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.pycache_prefix = _PYCACHE
sys.dont_write_bytecode = False

# every result the code under test writes (in this process and in the CLI subprocesses the
# tests start, which inherit the environment) is validated against its kind's model
# (agentverity_props.results): a producer whose JSON drifts from the published schema fails
os.environ.setdefault("AGENTVERITY_PROPS_VALIDATE_RESULTS", "1")

# on a GitHub runner every command would print annotations and append to the job summary
# (cli/_ci.py): the suite's own CLI runs behave the same everywhere; the tests of those
# outputs set the variables themselves
for _name in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
    os.environ.pop(_name, None)


@pytest.fixture(autouse=True)
def _inner_sessions_are_their_own(request: pytest.FixtureRequest) -> None:
    """A pytest started by a test (pytester) must not inherit this session's xdist worker
    identity when the suite itself runs under pytest-xdist: a serial inner run would take
    itself for a worker of a session that is not its own."""
    if "pytester" in request.fixturenames:
        mp = request.getfixturevalue("monkeypatch")
        for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
                     "PYTEST_XDIST_TESTRUNUID"):
            mp.delenv(name, raising=False)


def pytest_configure(config: pytest.Config) -> None:
    """``--dist loadfile`` (README's command 2) hands the test files out in collection order,
    not largest-first by number of tests (pytest-xdist's default reorder): that default sent
    the subprocess-heavy files of tests/e2e and tests/faults (a few slow tests each) last, so
    one worker often ran a long file alone at the end. In collection order they come first,
    and the many small unit files and the package's doctests fill the end evenly."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
