"""``agentverity-props boundary``: where the verdict changes between two inputs."""

from __future__ import annotations

from typing import Any

import click

from ._common import write_output
from ._options import engine_config, engine_options, load_agent_ref

#: the call budget when --budget is not given
DEFAULT_BUDGET = 120


@click.command("boundary")
@click.option("--agent", "agent_ref", required=True, metavar="REF")
@click.option("--from", "a", required=True, metavar="TEXT",
              help="An input with one verdict (e.g. one of your probes).")
@click.option("--to", "b", required=True, metavar="TEXT",
              help="An input with another verdict (e.g. an input enlarge added).")
@click.option("--resolution", type=click.FloatRange(0.0001, 0.49), default=0.01,
              show_default=True, help="How close a numeric crossing is bisected, relative "
              "to the value (0.01: within 1%).")
@click.option("--alpha", type=click.FloatRange(0.0001, 0.49), default=0.05, show_default=True,
              help="Error rate of a 'located' claim.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None)
@engine_options
def boundary_cmd(agent_ref: str, a: str, b: str, resolution: float, alpha: float, fmt: str,
                 output: str | None, **eng: Any) -> int:
    """Bisect the edit path from --from to --to to the adjacent pair whose verdicts differ.

    Takes the engine options of every command (--budget, default 120 here). Exit 0 when the
    crossing is located (the adjacent pair confirmed beyond the agent's noise at --alpha), 1
    when the two inputs get the same verdict or the crossing stays undecided (a stochastic
    region), 2 on bad input or incomplete evidence (budget, failed calls).
    """
    from .._internal.shown import visible
    from ..errors import BadInput
    from ..report import dumps
    from ..strategies import locate_boundary

    for name, value in (("--from", a), ("--to", b)):
        if not value.strip():
            raise BadInput(f"{name} is empty", "give the text of an input")
    if a == b:
        raise BadInput("--from and --to are the same text", "give two inputs that the agent "
                       "answers differently")
    agent: Any = load_agent_ref(agent_ref)
    conf = engine_config({**eng, "budget": eng["budget"] or DEFAULT_BUDGET})
    loc = locate_boundary(agent, a, b, alpha=alpha, resolution=resolution, engine=conf,
                          seed=eng["seed"])
    d = loc.to_dict()
    if fmt == "json":
        write_output(dumps(d), output)
    else:
        lines = [f"boundary: {visible(loc.describe())} ({loc.calls} agent calls, "
                 f"{loc.steps} step(s))"]
        if loc.status in ("located", "undecided"):
            lines += [f"  {visible(str(loc.low_verdict))}: {visible(loc.low)!r}",
                      f"  {visible(str(loc.high_verdict))}: {visible(loc.high)!r}"]
        if loc.reason:
            lines.append(f"  {visible(loc.reason)}")
        if loc.status == "located":
            lines.append(f"  located: the two verdicts differ beyond the agent's noise "
                         f"(error <= {alpha:g}); each bisection step errs with probability "
                         f"<= {loc.step_error:g} at up to 15% noise per call")
        write_output("\n".join(lines) + "\n", output)
    return {"located": 0, "undecided": 1, "no-crossing": 1}.get(loc.status, 2)
