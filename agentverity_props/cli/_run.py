"""``agentverity-props run``: meter, blindness, relations; report; exit 0/1/2."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ._common import use_color, write_output
from ._options import (
    analysis_options,
    edits_value,
    engine_options,
    load_agent_ref,
    progress_option,
    report_options,
    require_verdicts_option,
    required_verdicts,
    run_config,
    session,
)

if TYPE_CHECKING:
    from ..runner import RunConfig, RunResult


def load_relations(ref: str | None, no_relations: bool) -> list[Any] | None:
    """None = built-ins; [] = none; a comma list of built-in names; or a module/file ref."""
    from ..errors import BadInput
    if no_relations:
        if ref:
            raise BadInput("--relations and --no-relations both given", "use one of them")
        return []
    if not ref:
        return None
    from ..errors import InvalidArgument
    from ..relations import BUILTIN_NAMES, LABELLED_BUILTIN_NAMES, Relation, select_builtins
    if ":" not in ref and not ref.endswith(".py"):
        names = [n.strip() for n in ref.split(",") if n.strip()]
        unknown = [n for n in names if n.split("=", 1)[0].strip() not in
                   (*BUILTIN_NAMES, *LABELLED_BUILTIN_NAMES)]
        if unknown:
            raise BadInput(f"unknown relation(s) {', '.join(unknown)}",
                           f"use built-ins ({', '.join(BUILTIN_NAMES)}, injection=LABEL, "
                           "obfuscation=LABEL) or module:attr")
        try:
            return select_builtins(names)
        except InvalidArgument as exc:
            raise BadInput(str(exc)) from None
    from ..adapters import load_object
    obj = load_object(ref, what="relations")
    if callable(obj) and not isinstance(obj, Relation):
        obj = obj()
    if isinstance(obj, Relation):
        obj = [obj]
    if not isinstance(obj, (list, tuple)) or not all(isinstance(r, Relation) for r in obj):
        raise BadInput(f"--relations {ref} is not a list of Relation objects",
                       "expose RELATIONS = [Relation(...), ...] or a function returning one")
    return list(obj)


@click.command("run")
@click.option("--agent", "agent_ref", required=True, metavar="REF",
              help="module:attr or path/to/file.py:attr (see docs/agents.md).")
@click.option("--inputs", "inputs_path", default=None, type=click.Path(),
              help="Probe set: one prompt per line (.txt), or .json/.jsonl/.yaml list "
                   "(optional with --pairs).")
@click.option("--pairs", "pairs_path", default=None, type=click.Path(dir_okay=False),
              help="Follow-ups you bring: .jsonl of {\"input\", \"follow_ups\"} lines, or "
                   "CheckList INV/DIR tests as JSON (docs/relations.md); each is a relation, "
                   "its inputs join the probe set.")
@click.option("--confirm-all", is_flag=True,
              help="Test every flagged input of a VIOLATED relation on its own (default: "
                   "stop at the first confirmed ones).")
@click.option("--judge", "judge_ref", default=None, metavar="REF",
              help="An agent grading each free-text answer (same references as --agent); "
                   "its label is the verdict (docs/judges.md).")
@click.option("--judge-labels", default=None, metavar="A,B,...",
              help="The labels the judge may answer; any other answer is a no-decision.")
@click.option("--judge-gold", default=None, type=click.Path(dir_okay=False), metavar="FILE",
              help="Calibrate the judge first on a JSONL/CSV of prompt, answer, label rows.")
@click.option("--judge-min-agreement", default=None, type=click.FloatRange(0, 1),
              help="The least agreement with --judge-gold accepted (point estimate; "
                   "default 0.8).")
@click.option("--judge-low-agreement", default=None, type=click.Choice(["refuse", "warn"]),
              help="Below it: refuse to run (exit 2, the default) or warn and go on.")
@analysis_options
@report_options
@require_verdicts_option
@progress_option
@engine_options
def run_cmd(agent_ref: str, inputs_path: str | None, pairs_path: str | None,
            confirm_all: bool, precision: str | None, epsilon: float | None,
            alpha: float, tolerance: float | None, indifference: float, layer: str,
            relations_ref: str | None,
            no_relations: bool, profile: str | None, edits_per_input: str | None,
            fmt: str, output: str | None, include_inputs: bool,
            suppress_health_check: tuple[str, ...], require_verdicts: str | None,
            progress: bool, annotations: str, judge_ref: str | None = None,
            judge_labels: str | None = None, judge_gold: str | None = None,
            judge_min_agreement: float | None = None,
            judge_low_agreement: str | None = None, **eng: Any) -> int:
    """Meter the verdict, check blindness, test noise-calibrated relations.

    Exit codes: 0 clean; 1 finding (blind probe set, confirmed violation, dependent draws,
    an agent that changed during the run, a required verdict never produced); 2 incomplete or
    undecided evidence, or bad input. Incomplete evidence outranks a finding, which outranks
    an undecided meter.
    """
    from .._internal.inputs import load_inputs

    if inputs_path is None and pairs_path is None:
        from ..errors import BadInput
        raise BadInput("run needs a probe set", "pass --inputs FILE, --pairs FILE or both")
    inputs = load_inputs(inputs_path) if inputs_path is not None else []
    rels = load_relations(relations_ref, no_relations)
    if pairs_path is not None:
        from ..relations import load_pairs
        brought, pair_rels = load_pairs(pairs_path)
        inputs += [t for t in brought if t not in set(inputs)]
        # the pairs are the relations asked for; built-ins only when named with --relations
        rels = pair_rels if relations_ref is None else [*(rels or []), *pair_rels]
    config = run_config(eng, epsilon=epsilon, precision=precision, alpha=alpha,
                        tolerance=tolerance, indifference=indifference, layer=layer,
                        suppress_health_check=suppress_health_check,
                        include_inputs=include_inputs,
                        require_verdicts=required_verdicts(require_verdicts),
                        profile=profile, edits_per_input=edits_value(edits_per_input),
                        confirm_all=confirm_all,
                        **judge_settings(judge_ref, judge_labels, judge_gold,
                                         judge_min_agreement, judge_low_agreement))
    agent = load_agent_ref(agent_ref)
    from ..relations import builtin_relations
    from ..runner import budget_note
    note = budget_note(inputs, builtin_relations() if rels is None else rels, config)
    if note:
        click.echo(f"note: {note}", err=True)
    result = execute_run(agent, inputs, rels, config, progress=progress)
    # the terminal is the user's own screen: name inputs by their text there; files keep
    # fingerprints unless --include-inputs
    on_screen = fmt == "text" and output in (None, "-")
    d = result.to_dict(include_inputs=include_inputs or on_screen)
    code = result.exit_code
    changed = result.change.warning() if result.change is not None else ""
    if changed and not on_screen:  # the report goes to a file: the terminal still hears it
        from .._internal.shown import visible
        click.echo(f"warning: {visible(changed)}", err=True)
    del result  # a large run's outcomes: their memory serves the rendering instead
    if fmt == "json":  # in pieces: a 100,000-input report is never held as one text
        from ..report import iter_dumps
        write_output(iter_dumps(d), output)
    else:
        write_output(render(d, fmt, output), output)
    from ._ci import publish
    publish(d, annotations=annotations, fmt=fmt, output=output, keep_inputs=include_inputs)
    return code


def judge_settings(ref: str | None, labels: str | None, gold: str | None,
                   min_agreement: float | None, low: str | None) -> dict[str, Any]:
    """``judge=`` for :class:`RunConfig` from the ``--judge*`` options ({} without a judge)."""
    from ..errors import BadInput
    if ref is None:
        given = [name for name, v in (("--judge-labels", labels), ("--judge-gold", gold),
                                      ("--judge-min-agreement", min_agreement),
                                      ("--judge-low-agreement", low)) if v is not None]
        if given:
            raise BadInput(f"{', '.join(given)} given without --judge",
                           "add --judge REF (the agent grading the answers)")
        return {}
    from ..errors import InvalidArgument
    from ..judge import Judge, parse_labels
    kw: dict[str, Any] = {"gold": gold}
    if min_agreement is not None:
        kw["min_agreement"] = min_agreement
    if low is not None:
        kw["on_low_agreement"] = low
    try:
        return {"judge": Judge(load_agent_ref(ref), labels=parse_labels(labels), **kw)}
    except InvalidArgument as exc:
        raise BadInput(str(exc)) from None


def execute_run(agent: Any, inputs: list[str], rels: list[Any] | None, config: RunConfig, *,
                progress: bool) -> RunResult:
    """Run with SIGINT/SIGTERM turned into a clean stop and an optional progress bar (the
    report itself says why the run stopped early, if it did)."""
    from ..runner import arun

    if config.judge is not None:  # the run builds the judged agent's engines itself
        return session([], config.engine, lambda engines, tick: arun(
            agent, inputs, rels, config=config, progress=tick),
            progress=progress, report_stop=False)

    return session([agent], config.engine, lambda engines, tick: arun(
        agent, inputs, rels, config=config, engine=engines[0], progress=tick),
        progress=progress, report_stop=False)


def render(d: dict[str, Any], fmt: str, output: str | None = None) -> str:
    """The run result in ``fmt`` (through the result-kind registry); colour only when the
    text goes to a terminal."""
    from ..report import render as render_result
    if fmt == "text":
        return render_result(d, fmt, color=use_color(output))
    return render_result(d, fmt)
