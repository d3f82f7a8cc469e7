"""What a command does for the CI it runs in: annotations and the job summary.

Under GitHub Actions (``GITHUB_ACTIONS=true``, or ``--annotations github`` anywhere) every
command that writes a result prints one workflow command per finding (``::error`` for a
finding, ``::warning`` for evidence that decided nothing); whenever ``GITHUB_STEP_SUMMARY``
names a file it appends the result's Markdown to it (the job summary). ``--annotations none``
turns both off. Both carry only what the result file carries: no prompt unless the command
was asked to keep them (``--include-inputs``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

__all__ = ["FORMATS", "annotations_option", "publish"]

#: the report formats every command that writes a result offers
FORMATS = ("text", "json", "junit", "markdown")

SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
#: annotations printed per command (GitHub keeps 10 errors and 10 warnings per step, 50 per
#: job): past it, one more warning says how many were left out
MOST_ANNOTATIONS = 30


def annotations_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--annotations auto|github|none`` (auto: github when ``GITHUB_ACTIONS=true``)."""
    return click.option(
        "--annotations", type=click.Choice(["auto", "github", "none"]), default="auto",
        show_default=True,
        help="CI annotations, one per finding: github = workflow commands (::error / "
             "::warning); auto = github when GITHUB_ACTIONS=true. Unless none, the Markdown "
             "report is appended to $GITHUB_STEP_SUMMARY when it is set.")(f)


def _mode(annotations: str) -> str:
    if annotations == "auto":
        return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "none"
    return annotations


def _private(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` without the input texts a run keeps for the user's own screen."""
    out = dict(d)
    for key in ("inputs", "follow_ups"):
        if isinstance(out.get(key), dict):
            out[key] = None
    return out


def _redacted(value: Any, secrets: Any) -> Any:
    from ..adapters import redact
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {k: _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v, secrets) for v in value]
    return value


def publish(d: dict[str, Any], *, annotations: str, fmt: str = "text",
            output: str | None = None, keep_inputs: bool = False,
            secrets: Any = None, labels: dict[str, str] | None = None) -> None:
    """Annotations and the job summary for result ``d`` (see the module docstring).
    ``labels`` (fingerprint -> input text, given only when the user allowed inputs in
    reports: ``--include-inputs``) names the job summary's inputs by their text.

    The workflow commands go to stdout, where GitHub documents them, unless stdout carries a
    JSON, JUnit or Markdown report; then to stderr, which the runner reads for commands too.
    """
    if annotations == "none":
        return
    from ..report import findings, github_commands, render_markdown

    shown = d if keep_inputs else _private(d)
    if secrets:  # values of ${VAR} a case file expanded: never shown
        shown = _redacted(shown, secrets)
    items = findings(shown)
    if labels:  # the user allowed inputs in reports: annotations name them by their text
        from ..report import Finding
        items = [Finding(f.level, _named(f.title, labels), _named(f.message, labels))
                 for f in items]
    if len(items) > MOST_ANNOTATIONS:  # GitHub shows a few per step: the rest are noise
        from ..report import Finding
        more = len(items) - MOST_ANNOTATIONS + 1
        items = [*items[:MOST_ANNOTATIONS - 1],
                 Finding("warning", f"{more} more findings",
                         "see the job summary or the JSON result for every one")]
    lines = github_commands(items) if _mode(annotations) == "github" else []
    to_stdout = fmt == "text" or output not in (None, "-")
    for line in lines:
        click.echo(line, err=not to_stdout)
    summary = os.environ.get(SUMMARY_ENV)
    if not summary:
        return
    if output not in (None, "-") and fmt == "markdown" and \
            os.path.abspath(str(output)) == os.path.abspath(summary):
        return  # the report itself was written there
    try:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(render_markdown(shown, labels=labels) + "\n")
    except OSError as exc:
        click.echo(f"warning: could not append the job summary to ${SUMMARY_ENV} "
                   f"({exc.strerror or exc})", err=True)



def _named(text: str, labels: dict[str, str]) -> str:
    """``text`` with each input's short fingerprint followed by the input's text."""
    from .._internal.fingerprint import short
    for fp, label in labels.items():
        s = short(fp)
        if s in text:
            text = text.replace(s, f"{s} {label[:60]!r}")
    return text
