"""``agentverity-props demo``: a whole analysis of a shipped offline example agent."""

from __future__ import annotations

import importlib.util
from typing import Any

import click

from ._common import write_output
from ._options import progress_option

DEMOS = {
    "moderation": ("agentverity_props.examples.moderation:buggy_agent", "moderation.txt",
                   "a Strands content-moderation gate (offline model, real tools) with a "
                   "planted case bug"),
    "support": ("agentverity_props.examples.support:agent", "support.txt",
                "a Strands support agent routing requests to tools"),
    "plain": ("agentverity_props.examples.plain:gate", "moderation.txt",
              "a plain-callable moderation gate"),
}


@click.command("demo")
@click.option("--agent", "which", type=click.Choice(sorted(DEMOS)), default="moderation",
              show_default=True, help="Which shipped example agent to analyse.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "junit", "markdown"]),
              default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None)
@progress_option
def demo_cmd(which: str, fmt: str, output: str | None, progress: bool) -> int:
    """Run meter, blindness and relations on an offline example agent (no network, seconds).

    The exit code is the run's (the planted bug makes the moderation demo exit 1).
    """
    from importlib import resources

    from ..runner import RunConfig
    from ._options import load_agent_ref
    from ._run import execute_run, render

    if which != "plain" and importlib.util.find_spec("strands") is None:
        click.echo("strands-agents is not installed (pip install 'agentverity-props[strands]'); "
                   "using the plain-callable gate instead", err=True)
        which = "plain"
    ref, inputs_file, what = DEMOS[which]
    text = resources.files("agentverity_props.examples").joinpath(inputs_file).read_text(
        encoding="utf-8")
    inputs = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    agent = load_agent_ref(ref)
    if fmt == "text":
        # one name for the agent: the identity the report below prints
        click.echo(f"Demo: {what}\n      agent {agent.identity}, {len(inputs)} shipped "
                   "probe inputs, offline\n", err=True)
    # one call at a time: the offline example agents share one seeded generator, so the
    # demo's numbers (calls included) are the same on every run and every machine
    config = RunConfig(include_inputs=True, max_workers=1)
    result: Any = execute_run(agent, inputs, None, config, progress=progress)
    write_output(render(result.to_dict(), fmt, output), output)
    if fmt == "text":
        blind = getattr(result, "blindness", None)
        if blind is not None and blind.status in ("blind", "undecided") and blind.share:
            how = "blind" if blind.status == "blind" else "nearly blind"
            click.echo(f"\nThe probe set is {how} ('{blind.modal_verdict}' is "
                       f"{blind.share:.0%} of the verdicts): "
                       "relations on it test little. enlarge learns new inputs from these "
                       "probes and finds where the verdict changes:\n  agentverity-props "
                       f"enlarge --agent {ref} --inputs examples/inputs/{inputs_file} -o "
                       "probes.txt", err=True)
        click.echo("\nNext: agentverity-props run --agent YOUR_MODULE:agent --inputs "
                   "prompts.txt   (see README)", err=True)
        if which == "moderation":
            click.echo(planted_note(result.to_dict()), err=True)
    return result.exit_code


def planted_note(d: dict[str, Any]) -> str:
    """What the moderation demo's exit code says about its planted bug (the last line a new
    user reads, so an exit 1 is not mistaken for a failed set-up).

    >>> planted_note({"exit_code": 1, "relations": [{"name": "case", "status": "VIOLATED"}]})
    ... # doctest: +ELLIPSIS
    "Exit 1 is this demo's expected result: its agent has a planted case bug, and the run ..."
    """
    code = d.get("exit_code")
    found = any(r.get("name") == "case" and r.get("status") == "VIOLATED"
                for r in d.get("relations") or [])
    if found and code == 1:
        return ("Exit 1 is this demo's expected result: its agent has a planted case bug, and "
                "the run found it (relation 'case' VIOLATED). A clean agent exits 0.")
    if found:
        return (f"Exit {code}: the run found the planted case bug (relation 'case' VIOLATED) "
                "but its evidence was incomplete or undecided elsewhere (see the report).")
    return (f"Exit {code}: this run did not confirm the demo's planted case bug (relation "
            "'case' is not VIOLATED above); the report says why.")
