"""Reading and rendering a result through its kind's entry in the registry (``_registry``):
``load_result`` / ``check_result`` (migrate, validate with the model: one line naming the
first bad field), ``render`` (every command's ``--format`` output and ``report``'s),
``render_markdown`` (a kind's Markdown body, framed), ``findings`` (its CI annotations) and
``derived_exit`` (the exit code of the command that wrote a result).

The ``boundary`` command's result is the one dict with no schema (and no kind in the
registry): it is told by its shape, and its Markdown, findings and exit code are named
here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import BadInput
from ._annotations import Finding, boundary_findings
from ._json import dumps, read_json
from ._markdown_kinds import boundary_exit, boundary_lines
from ._md import exit_of, kind_of, tail
from ._registry import kind_for, kind_named

__all__ = ["check_result", "derived_exit", "findings", "load_result", "render",
           "render_markdown"]


def render(result: dict[str, Any], fmt: str, **options: Any) -> str:
    """``result`` (a current-version dict) as ``fmt`` — ``json``, ``text``, ``junit`` or
    ``markdown`` — through its kind's renderer; ``options`` go to a text renderer
    (``color``, ``width``, a kind's own) or to the Markdown one (``html``, ``base``,
    ``labels``). :class:`BadInput` when the kind has no such view."""
    if fmt == "json":
        return dumps(result)
    schema = str(result.get("schema"))
    entry = kind_for(schema)
    if fmt == "markdown" and entry is not None and entry.markdown is not None:
        return render_markdown(result, **{k: v for k, v in options.items()
                                          if k in ("html", "base", "labels")})
    fn = None if entry is None else {"text": entry.text, "junit": entry.junit}.get(fmt)
    if fn is None:
        raise BadInput(f"no {fmt} renderer for {schema} results",
                       "use --html OUT.html or --format json")
    return fn(result, **options) if fmt == "text" else fn(result)


def render_markdown(d: dict[str, Any], *, html: str | None = None, base: str | None = None,
                    labels: dict[str, str] | None = None) -> str:
    """``d`` (a result dict of any kind) as Markdown: its kind's body, then the privacy line
    and the link to ``html``, the HTML report written beside it (relative to ``base``, the
    Markdown file's path, or the working directory); ``labels``: fingerprint -> input text,
    for inputs shown by their text."""
    entry = kind_for(str(d.get("schema")))
    body = entry.markdown if entry is not None else \
        boundary_lines if kind_of(d) == "boundary" else None
    if body is None:
        raise BadInput(f"no markdown renderer for {d.get('schema')!r} results",
                       "use --format json")
    ec = derived_exit(d)
    shown = d if ec is None else {**d, "exit_code": ec}  # the heading shows the derived code
    lines = [*body(shown, labels=labels), *tail(d, html, base, labels)]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def derived_exit(d: dict[str, Any]) -> int | None:
    """The exit code of the command that wrote ``d``: the one it records, else the one its
    kind's registry entry derives (``ResultKind.derive_exit``, for the formats that record
    none), else, for the ``boundary`` command's result, its status's; None when neither
    knows."""
    recorded = exit_of(d)
    if recorded is not None:
        return recorded
    schema = d.get("schema")
    entry = kind_named(schema) if isinstance(schema, str) else None
    if entry is not None:
        return entry.derive_exit(d) if entry.derive_exit is not None else None
    return boundary_exit(d) if kind_of(d) == "boundary" else None


def findings(d: dict[str, Any]) -> list[Finding]:
    """The CI annotations for a result dict of any kind (an empty list when clean)."""
    entry = kind_for(str(d.get("schema")))
    fn = entry.findings if entry is not None else \
        boundary_findings if kind_of(d) == "boundary" else None
    return fn(d) if fn is not None else []


def load_result(path: str | Path) -> dict[str, Any]:
    """Read a saved result as its kind's current version (:func:`check_result`); a one-line
    BadInput for anything that is not one."""
    return check_result(read_json(path), where=str(Path(path)))


def check_result(data: Any, *, where: str = "result") -> dict[str, Any]:
    """A loaded result as its kind's current version, validated by its model: older versions
    are migrated, and a file that is not one gets one :class:`BadInput` line naming the first
    field that is wrong."""
    schema = data.get("schema") if isinstance(data, dict) else None
    entry = kind_for(schema) if isinstance(schema, str) else None
    if entry is None:
        got = schema if isinstance(data, dict) else type(data).__name__
        known = kind_named(schema) if isinstance(schema, str) else None
        if known is not None:  # a kind this version knows, in a version it does not
            raise BadInput(f"{where} is a {known.kind} result of format {got!r}, which this "
                           f"version of agentverity-props does not read (it reads "
                           f"{', '.join(sorted(known.schemas))})",
                           "render it with the agentverity-props version that wrote it, or "
                           "upgrade")
        raise BadInput(f"{where} is not an agentverity-props result (schema {got!r})",
                       "pass a file written with --format json")
    if schema in entry.legacy:
        return data  # an old version read as written: its renderers know its shape
    return entry.model.check(data, where=where,
                             fix="pass an unedited file written by agentverity-props "
                                 "--format json")
