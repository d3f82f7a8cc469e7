"""The runner namespace: which runner drew a stored draw (part of every store key)."""

from __future__ import annotations

import os
import re
import socket

from .._internal.settings import setting
from ..errors import InvalidArgument

__all__ = ["RUNNER_ENV", "check_namespace", "runner_namespace"]

#: the environment variable naming this runner's namespace
RUNNER_ENV = "AGENTVERITY_PROPS_RUNNER"
# CI systems whose job ids name a runner: (variable that must be set, format)
_CI_JOBS = (
    ("CI_JOB_ID", "gitlab-{CI_JOB_ID}"),
    ("BUILDKITE_JOB_ID", "buildkite-{BUILDKITE_JOB_ID}"),
    ("CIRCLE_WORKFLOW_JOB_ID", "circleci-{CIRCLE_WORKFLOW_JOB_ID}"),
    # a matrix shares GITHUB_JOB within a run: the runner's host tells its jobs apart
    ("GITHUB_RUN_ID", "github-{GITHUB_RUN_ID}-{GITHUB_RUN_ATTEMPT}-{GITHUB_JOB}-{host}"),
)
_NAME = re.compile(r"[^\x00-\x1f\x7f]{0,120}")
def _name_fix() -> str:
    return f"use up to 120 printable characters, e.g. {setting('runner', 'ci-shard-1')}"


def check_namespace(name: str, what: str = "runner namespace") -> str:
    """``name`` if it can name a namespace, else :class:`InvalidArgument`."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidArgument(f"{what} {str(name)[:40]!r} is not usable; {_name_fix()}")
    return name


def runner_namespace(explicit: str | None = None, *, networked: bool = False) -> str:
    """The runner namespace a store writes to.

    ``explicit`` (``--runner``), else ``$AGENTVERITY_PROPS_RUNNER``, else for a networked store the
    CI job id (GitLab, Buildkite, CircleCI, GitHub Actions) or else the host name; an
    embedded SQLite store, which one machine owns, uses ``""``. The host name rather than
    host and pid: a namespace that changed with every process would make ``auto`` re-runs on
    one machine never find their own draws.

    >>> runner_namespace("shard-1")
    'shard-1'
    """
    if explicit is not None:
        return check_namespace(explicit)
    env = os.environ.get(RUNNER_ENV)
    if env:
        return check_namespace(env, f"${RUNNER_ENV}")
    if not networked:
        return ""
    host = socket.gethostname() or "localhost"
    for var, form in _CI_JOBS:
        if os.environ.get(var):
            values = {k: os.environ.get(k, "") for k in re.findall(r"{(\w+)}", form)}
            values["host"] = host
            return form.format(**values)[:120]
    return host[:120]
