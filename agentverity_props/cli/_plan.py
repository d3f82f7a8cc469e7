"""``agentverity-props plan``: the calls, budget and wall time of a ``run``, before any call."""

from __future__ import annotations

import re
from typing import Any

import click

from ..engine import EngineConfig
from ._common import write_output
from ._options import analysis_options, default_of, edits_value, engine_config
from ._run import load_relations

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*$")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_latency(text: str | None) -> float | None:
    """``2s``, ``500ms``, ``1.5`` (seconds), ``1m`` -> seconds; None stays None."""
    from ..errors import BadInput

    if text is None:
        return None
    m = _DURATION.match(text)
    seconds = float(m.group(1)) * _UNIT_S[m.group(2) or "s"] if m else 0.0
    if not seconds > 0:
        raise BadInput(f"--latency {text!r} is not a positive duration",
                       "give seconds per call, e.g. 2s, 500ms or 1.5")
    return seconds


@click.command("plan")
@click.option("--inputs", "inputs_path", required=True, type=click.Path(),
              help="Probe set, as for run: one prompt per line (.txt), or .json/.jsonl/.yaml.")
@analysis_options
@click.option("--budget", type=click.IntRange(min=1), default=None,
              help="The run's call budget: plan says at which noise it is enough.")
@click.option("--max-workers", type=click.IntRange(1, 256),
              default=default_of(EngineConfig, "max_workers"), show_default=True,
              help="The run's concurrent calls (the wall time divides by it).")
@click.option("--seed", type=int, default=default_of(EngineConfig, "seed"), show_default=True,
              help="The run's seed.")
@click.option("--latency", default=None, metavar="DURATION",
              help="Seconds per agent call (2s, 500ms, 1.5): adds the wall time.")
@click.option("--noise", "noises", type=click.FloatRange(0.0, 0.66), multiple=True,
              help="Pair disagreement to plan for, the figure run prints under its meter "
                   "('over the whole run: pair disagreement 0.081 ... the figure to plan "
                   "with' -> --noise 0.081), besides 0, 0.1 and 0.25 "
                   "(repeatable). The synthetic agent flips each call with probability "
                   "(2 - sqrt(4 - 6 x noise)) / 3, which gives that pair disagreement.")
@click.option("--noise-from", "noise_from", default=None, metavar="STORE|REPORT.json",
              help="Read the noise to plan for from evidence: a run --format json report "
                   "(its whole-run figure; its meter's in reports written before it), or a "
                   "recorded store's repeated draws (warns when it rests on too "
                   "few pairs, and plans at its interval's upper end too).")
@click.option("--seeds", type=click.IntRange(1, 200), default=10, show_default=True,
              help="Simulated runs per noise level (the mean and range are over them).")
@click.option("--modal-share", type=click.FloatRange(0.5, 0.99), default=0.75,
              show_default=True, help="Share of the inputs with the most common verdict.")
@click.option("--tool-calls", is_flag=True,
              help="Cost tools-layer relations as if the agent calls tools.")
@click.option("--tokens-per-call", default=None, metavar="IN,OUT",
              help="Input and output tokens of one agent call (420,12): the plan is priced "
                   "in tokens too.")
@click.option("--tokens-from", default=None, metavar="STORE|REPORT.json",
              help="Measure the tokens per call: the mean over a recorded store's draws, or "
                   "an earlier run/bench/check/enlarge JSON report's totals.")
@click.option("--price", default=None, metavar="IN,OUT|FILE",
              help="Prices per 1,000 input and output tokens (0.15,0.60) or a price file, as "
                   "for run: the plan is priced in money too (needs a tokens-per-call).")
@click.option("--price-model", default=None, metavar="NAME",
              help="The model of --price FILE to use (needed when it lists several).")
@click.option("--judge-error", default=None, type=click.FloatRange(0.0, 0.49),
              metavar="RATE",
              help="Plan for a judge grading the answers (run --judge) that is wrong on this "
                   "share of its calls: a row of its own calls (docs/judges.md).")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]),
              default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the plan here (atomically) instead of stdout.")
def plan_cmd(inputs_path: str, relations_ref: str | None, no_relations: bool,
             profile: str | None, edits_per_input: str | None,
             tolerance: float | None, precision: str | None, epsilon: float | None,
             alpha: float, indifference: float, layer: str,
             suppress_health_check: tuple[str, ...], budget: int | None, max_workers: int,
             seed: int,
             latency: str | None, noises: tuple[float, ...], noise_from: str | None,
             seeds: int, modal_share: float,
             tool_calls: bool, tokens_per_call: str | None, tokens_from: str | None,
             price: str | None, price_model: str | None,
             fmt: str, output: str | None, judge_error: float | None = None) -> int:
    """The calls each phase of `run` will need, at noise 0, 0.1 and 0.25 (and --noise), the
    budget that makes each decision reachable and the wall time, without calling any agent.

    Noise is the pair disagreement, in the unit `run` prints it. The figures come from the
    run pipeline itself, simulated on an offline agent whose every relation holds and whose
    calls are flipped so that two calls of one input disagree that often.
    """
    from .._internal.inputs import load_inputs
    from ..errors import BadInput, InvalidArgument
    from ..runner import RunConfig, TokensPerCall, plan

    latency_s = parse_latency(latency)
    if tokens_per_call is not None and tokens_from is not None:
        raise BadInput("--tokens-per-call and --tokens-from both given", "use one of them")
    if price is not None and tokens_per_call is None and tokens_from is None:
        raise BadInput("--price needs the tokens one call takes",
                       "add --tokens-per-call IN,OUT or --tokens-from STORE|REPORT.json")
    per_call = (TokensPerCall.stated(tokens_per_call) if tokens_per_call is not None
                else TokensPerCall.measured(tokens_from) if tokens_from is not None else None)
    inputs = load_inputs(inputs_path)
    rels = load_relations(relations_ref, no_relations)
    warnings: list[str] = []
    if noise_from is not None:
        from ..runner import NoiseEstimate
        est = NoiseEstimate.read(noise_from)
        noises = (*noises, round(est.estimate, 4))
        if est.thin:
            warnings.append(est.warning())
            noises = (*noises, round(min(est.high, 0.66), 4))
    try:
        config = RunConfig(epsilon=epsilon, precision=precision, alpha=alpha,
                           tolerance=tolerance, indifference=indifference, layer=layer,
                           suppress_health_check=suppress_health_check,
                           profile=profile, edits_per_input=edits_value(edits_per_input),
                           engine=engine_config({"budget": budget, "max_workers": max_workers,
                                                 "seed": seed, "price": price,
                                                 "price_model": price_model}),
                           # the judge's consensus rule is what plan prices: no call is made
                           judge=None if judge_error is None else _planned_judge)
        result = plan(inputs, rels, config=config, noises=noises, seeds=seeds,
                      latency_s=latency_s, modal_share=modal_share, tool_calls=tool_calls,
                      tokens_per_call=per_call,
                      judge_error=0.1 if judge_error is None else judge_error)
    except InvalidArgument as exc:
        raise BadInput(str(exc), "fix the option named") from None
    if warnings:
        from dataclasses import replace
        result = replace(result, warnings=tuple(warnings))
    d: dict[str, Any] = result.to_dict()
    from ..report import render
    write_output(render(d, fmt), output)
    return 0


def _planned_judge(prompt: str) -> str:  # plan never calls it: only its rule is priced
    raise AssertionError("plan called the judge")
