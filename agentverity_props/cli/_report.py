"""``agentverity-props report``: re-render a saved JSON result as HTML, text, JSON, JUnit or
Markdown (linking the HTML report when both are written)."""

from __future__ import annotations

from typing import Any

import click

from ._common import write_output


def rerender(result: dict[str, Any], fmt: str, output: str | None = None, *,
             html: str | None = None) -> str:
    """Render a loaded result dict in ``fmt`` (text, json, junit or markdown) through its
    kind's entry in the registry (``report.RESULT_KINDS``); BadInput if the kind has no such
    view. ``html``: the HTML report written beside it, linked from the Markdown (relative to
    ``output``'s folder)."""
    from ..report import render
    from ._common import use_color
    if fmt == "markdown":
        return render(result, fmt, html=html if html not in (None, "-") else None,
                      base=output if output not in (None, "-") else None)
    # colour only on a terminal, never in a file (``-o out.txt`` run on a terminal)
    return render(result, fmt, color=use_color(output)) if fmt == "text" else \
        render(result, fmt)


@click.command("report")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None,
              metavar="OUT.html", help="Write a standalone HTML report here ('-' = stdout).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "markdown"]),
              default=None,
              help="Also (or instead) re-render as text, JSON, JUnit or Markdown (default "
                   "text when --html is not given); the Markdown links the --html report.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the --format rendering here (atomically) instead of stdout.")
@click.option("--annotations", type=click.Choice(["github", "none"]), default="none",
              show_default=True,
              help="github: one workflow command per finding of the saved result, and its "
                   "Markdown appended to $GITHUB_STEP_SUMMARY (the command that wrote the "
                   "result already did both under GitHub Actions).")
def report_cmd(file: str, html_out: str | None, fmt: str | None, output: str | None,
               annotations: str) -> int:
    """Render a saved result (the --format json output of run, tools, bench, compare, ...).

    The HTML is one file with inline CSS and SVG plots: no script, no network. Exit 0 when
    the report was written (the result's own exit code is shown in the report); 2 when the
    file is not a readable agentverity-props result.
    """
    from ..errors import BadInput
    from ..report import load_result

    result = load_result(file)
    if fmt is None and html_out is None:
        fmt = "text"
    if html_out is not None and fmt is not None and (
            html_out == output or (html_out == "-" and output in (None, "-"))):
        raise BadInput("--html and the --format output both go to the same place",
                       "give --html and --output different paths")
    # render everything before writing anything: a bad --format leaves no half-done output
    from ..errors import AgentVerityError
    try:
        text = rerender(result, fmt, output, html=html_out) if fmt is not None else None
        html = None
        if html_out is not None:
            from ..report import render_html
            html = render_html(result, source=click.format_filename(file))
    except AgentVerityError:
        raise
    except Exception as exc:
        # the schema name matched but a field is missing or of the wrong type (an edited
        # or damaged file): renderers (rich, jinja2) then fail in many ways; the exception
        # type stays in the message, so a renderer bug on a sound file is still visible
        raise BadInput(f"{file} claims schema {result.get('schema')!r} but a field is missing "
                       f"or malformed ({type(exc).__name__}: {str(exc)[:80]})",
                       "pass an unedited file written by agentverity-props --format json"
                       ) from None
    if html_out is not None:
        assert html is not None
        write_output(html, html_out)
        if html_out != "-":
            click.echo(f"wrote {html_out}", err=True)
    if text is not None:
        write_output(text, output)
    from ._ci import publish
    publish(result, annotations=annotations, fmt=fmt or "text", output=output,
            keep_inputs=True)
    return 0
