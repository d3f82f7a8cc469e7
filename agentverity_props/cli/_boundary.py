"""``agentverity-props boundary``: the edit between two inputs that flips the verdict."""

from __future__ import annotations

from typing import Any

import click

from ._ci import annotations_option, publish
from ._common import write_output
from ._options import (
    engine_config,
    engine_options,
    load_agent_ref,
    progress_option,
    progress_ticker,
)

#: boundary always spends a bounded budget (the engine options' --budget, else this)
DEFAULT_BUDGET = 120


@click.command("boundary")
@click.option("--agent", "agent_ref", required=True, metavar="REF")
@click.option("--from", "a", required=True, metavar="TEXT",
              help="An input (its verdict is the 'before' side).")
@click.option("--to", "b", required=True, metavar="TEXT",
              help="An input with a different verdict.")
@click.option("--alpha", type=click.FloatRange(0.0001, 0.49), default=0.05, show_default=True,
              help="Error rate of a reported crossing.")
@click.option("--resolution", type=click.FloatRange(0.0, 0.99), default=0.01,
              show_default=True, help="Locate a numeric crossing within this share of its "
              "value (0: to adjacent values).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]),
              default="text", show_default=True)
@annotations_option
@engine_options
@progress_option
def boundary_cmd(agent_ref: str, a: str, b: str, alpha: float, resolution: float, fmt: str,
                 progress: bool, annotations: str, **eng: Any) -> int:
    """Bisect the word-level edit path from --from to --to (numbers as numeric paths) to
    the one edit that flips the agent's verdict, each step decided against the agent's own
    noise and the final pair confirmed at --alpha.

    Takes the engine options of every command (--budget, default 120 here). Exit 0 when the
    crossing is located, 1 when there is none (same verdict at both ends) or it stayed
    undecided, 2 on bad input or incomplete evidence (budget, failed calls).
    """
    from ..errors import BadInput
    from ..report import dumps
    from ..search import locate_boundary

    for name, text in (("--from", a), ("--to", b)):
        if not text.strip():
            raise BadInput(f"{name} is empty", f"give {name} the text of an input")
    if a == b:
        raise BadInput("--from and --to are the same text",
                       "give two inputs with different verdicts")
    agent: Any = load_agent_ref(agent_ref)
    budget = eng["budget"] if eng["budget"] is not None else DEFAULT_BUDGET
    cfg = engine_config({**eng, "budget": budget})
    bar, tick = progress_ticker(progress, budget)
    with bar:
        loc = locate_boundary(agent, a, b, alpha=alpha, resolution=resolution, engine=cfg,
                              progress=tick)
    d = loc.document()
    if fmt == "json":
        write_output(dumps(d), None)
    elif fmt == "markdown":
        from ..report import render_markdown
        write_output(render_markdown(d), None)
    else:
        from .._internal.shown import visible
        lines = [f"boundary: {visible(loc.describe())}"]
        if loc.located:
            lines += [f"  before: {visible(str(loc.low_verdict))} {visible(str(loc.low))!r}",
                      f"  after:  {visible(str(loc.high_verdict))} {visible(str(loc.high))!r}"]
            p = (loc.decision or {}).get("p_value")
            lines.append(f"  confirmed beyond the agent's noise (p = {p:.3g}, alpha "
                         f"{(loc.decision or {}).get('alpha', alpha):.3g})" if p is not None
                         else "  confirmed beyond the agent's noise")
        if loc.graded:
            lines.append(f"  {visible(loc.reason)}")
        lines.append(f"  {loc.steps} steps over {loc.units} edit unit(s), {loc.calls} "
                     f"agent calls, {loc.attempts} confirmation(s)")
        from .._internal.tokens import tokens_line
        lines.append("  " + visible(tokens_line(loc.tokens)))
        write_output("\n".join(lines) + "\n", None)
    publish(d, annotations=annotations, fmt=fmt, output=None, keep_inputs=True)
    return {"located": 0, "no-crossing": 1, "undecided": 1}.get(loc.status, 2)
