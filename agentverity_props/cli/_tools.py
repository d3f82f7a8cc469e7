"""``agentverity-props tools``: did the agent really call its tools? (from OTel spans)."""

from __future__ import annotations

import click

from ._ci import FORMATS, annotations_option, publish
from ._common import write_output
from ._options import progress_option, progress_ticker


@click.command("tools")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False),
              help="Case file (YAML; revefi-agent-test's format is accepted unchanged).")
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default="text",
              show_default=True, help="Report format.")
@click.option("--output", "-o", default=None, help="Write the report here (default stdout).")
@click.option("--runs", type=click.IntRange(1, 10_000), default=None,
              help="Maximum calls per case (overrides runs: in the file).")
@click.option("--otlp-port", type=click.IntRange(0, 65535), default=None,
              help="Port of the OTLP/HTTP receiver on 127.0.0.1 (0 = any free port).")
@click.option("--span-timeout", type=click.FloatRange(0, 3600, min_open=True), default=None,
              help="Seconds to wait for a call's spans after it answers.")
@click.option("--budget", type=click.IntRange(1), default=None,
              help="Hard cap on agent calls for the whole file (retries included).")
@click.option("--embedder", type=click.Choice(["auto", "minilm", "lexical"]), default=None,
              help="Similarity embedder for baseline_answer (default: the file's, else auto).")
@annotations_option
@progress_option
def tools(*, config_path: str, fmt: str, output: str | None, runs: int | None,
          otlp_port: int | None, span_timeout: float | None, budget: int | None,
          embedder: str | None, progress: bool, annotations: str) -> int:
    """Assert that agents called the tools they should, from OpenTelemetry spans.

    Exit 0 when every case passes, 1 when any case fails, 2 on a configuration error or
    when evidence is incomplete (a case whose calls all failed, or an undecided pass rate).
    """
    from ..tools import RunOptions, load_suite, render, run_suite

    loaded = load_suite(config_path)
    bar, tick = progress_ticker(progress, budget if budget is not None
                                else loaded.suite.config.budget)
    with bar:
        report = run_suite(loaded, options=RunOptions(runs=runs, otlp_port=otlp_port,
                                                      span_timeout_s=span_timeout,
                                                      budget=budget, embedder=embedder,
                                                      progress=tick))
    from ..adapters import redact
    if fmt == "markdown":  # escaping could split a secret: redact the values first
        from ..report import render as render_result
        from ._ci import _redacted
        text = render_result(_redacted(report.to_dict(), loaded.secrets), "markdown")
    else:
        text = redact(render(report, fmt), loaded.secrets)
    write_output(text, output)
    publish(report.to_dict(), annotations=annotations, fmt=fmt, output=output,
            keep_inputs=True, secrets=loaded.secrets)
    for note in report.notes:
        if note.startswith("interrupted"):
            click.echo(note, err=True)
    if output not in (None, "-") and fmt != "text":
        # a file got the machine-readable report: keep a short human summary on stderr
        k = report.counts()
        click.echo(f"{k['pass']} passed, {k['fail']} failed, {k['error']} errors, "
                   f"{k['inconclusive']} inconclusive -> {output}", err=True)
    return report.exit_code
