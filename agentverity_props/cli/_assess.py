"""``agentverity-props assess``: run's diagnoses on recorded evidence, no agent call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..engine import EngineConfig
from ._common import write_output
from ._options import (
    analysis_options,
    default_of,
    edits_value,
    engine_config,
    report_options,
)

if TYPE_CHECKING:
    from ..assess import Recording

@click.command("assess")
@click.option("--promptfoo", "promptfoo_path", type=click.Path(dir_okay=False), default=None,
              help="A promptfoo JSON export (promptfoo eval -o results.json).")
@click.option("--jsonl", "jsonl_path", type=click.Path(dir_okay=False), default=None,
              help="One recorded draw per line (docs/schemas/assess-jsonl.schema.json).")
@click.option("--store", "store_path", type=click.Path(dir_okay=False), default=None,
              help="This project's record store (with --inputs, the probe set it recorded).")
@click.option("--inputs", "inputs_path", type=click.Path(), default=None,
              help="With --store: the probe set (the store keeps fingerprints only).")
@click.option("--provider", default=None, help="promptfoo: the provider to assess (id or "
              "label), required when the export holds several.")
@click.option("--prompt-id", default=None, help="promptfoo: the prompt to assess (promptId, "
              "label or promptIdx), required when the export holds several.")
@click.option("--agent-id", default=None, help="--store: the agent whose draws to assess "
              "(when the store holds several); --jsonl: the name the report gives the agent.")
@click.option("--file-order", is_flag=True, help="--jsonl without 'order': the lines are in "
              "the order the calls were made.")
@click.option("--verdict-key", default=None,
              help="Verdict = this key of a JSON answer (dotted path), as in run.")
@click.option("--verdict-regex", default=None,
              help="Verdict = group 1 of this regex searched in the answer text, as in run.")
@analysis_options
@report_options
@click.option("--seed", type=int, default=default_of(EngineConfig, "seed"), show_default=True,
              help="Seed of the input sampling (as run's: same seed, same draws).")
@click.option("--max-workers", type=click.IntRange(1, 256),
              default=default_of(EngineConfig, "max_workers"), show_default=True,
              help="run's --max-workers: sets the meter's waves, so that assessing a store "
                   "run recorded replays the draws run made.")
def assess_cmd(promptfoo_path: str | None, jsonl_path: str | None, store_path: str | None,
               inputs_path: str | None, provider: str | None, prompt_id: str | None,
               agent_id: str | None, file_order: bool, verdict_key: str | None,
               verdict_regex: str | None, precision: str | None, epsilon: float | None,
               alpha: float, tolerance: float | None, indifference: float, layer: str,
               relations_ref: str | None, no_relations: bool, profile: str | None,
               edits_per_input: str | None, fmt: str, output: str | None,
               include_inputs: bool, suppress_health_check: tuple[str, ...], seed: int,
               max_workers: int, annotations: str) -> int:
    """Meter, blindness, dependence and relations on evidence recorded elsewhere.

    No agent is called (the JSON says calls.live 0). Reports, JSON schema and exit codes are
    run's: 0 clean; 1 finding; 2 incomplete or undecided evidence (a provider error, a
    decision the recording has too few draws for, a requested relation NOT TESTED: no
    recorded follow-up or pair), or bad input. A file's draws are used whole: every relation
    epoch visits every input until the recording runs out.
    """
    from ..errors import BadInput
    from ..runner import RunConfig
    from ._run import load_relations, render

    given = [n for n, v in (("--promptfoo", promptfoo_path), ("--jsonl", jsonl_path),
                            ("--store", store_path)) if v]
    if len(given) != 1:
        raise BadInput("assess needs exactly one source of evidence" + (
            f", got {' and '.join(given)}" if given else ""),
            "pass one of --promptfoo FILE, --jsonl FILE, --store PATH --inputs FILE")
    _check_source_options(given[0], provider=provider, prompt_id=prompt_id,
                          file_order=file_order, inputs_path=inputs_path)
    engine = engine_config({"max_workers": max_workers, "seed": seed,
                            "verdict_key": verdict_key, "verdict_regex": verdict_regex})
    ext = engine.extractor
    rels = load_relations(relations_ref, no_relations)
    config = RunConfig(epsilon=epsilon, precision=precision, alpha=alpha, tolerance=tolerance,
                       indifference=indifference, layer=layer,
                       suppress_health_check=suppress_health_check,
                       include_inputs=include_inputs, engine=engine,
                       profile=profile, edits_per_input=edits_value(edits_per_input))
    recording = _load(promptfoo_path, jsonl_path, store_path, inputs_path, ext,
                      provider=provider, prompt_id=prompt_id, agent_id=agent_id,
                      file_order=file_order, relations=rels)
    from ..assess import assess, evidence_summary, plan_assessment

    plan = plan_assessment(recording, rels, config)
    result = assess(recording, rels, config=config, plan=plan)
    on_screen = fmt == "text" and output in (None, "-")
    d = result.to_dict(include_inputs=include_inputs or on_screen)
    d["ledger"]["evidence"] = evidence_summary(plan, result)
    code = result.exit_code
    if fmt == "json":
        from ..report import iter_dumps
        write_output(iter_dumps(d), output)
    else:  # the text report starts with the evidence (report/_text.py)
        write_output(render(d, fmt, output), output)
    from ._ci import publish
    publish(d, annotations=annotations, fmt=fmt, output=output, keep_inputs=include_inputs)
    return code


def _check_source_options(source: str, *, provider: str | None, prompt_id: str | None,
                          file_order: bool, inputs_path: str | None) -> None:
    from ..errors import BadInput

    wrong = [opt for opt, v, owner in (("--provider", provider, "--promptfoo"),
                                       ("--prompt-id", prompt_id, "--promptfoo"),
                                       ("--file-order", file_order, "--jsonl"),
                                       ("--inputs", inputs_path, "--store"))
             if v and owner != source]
    if wrong:
        raise BadInput(f"{wrong[0]} does not apply to {source}", f"drop {wrong[0]}")
    if source == "--store" and not inputs_path:
        raise BadInput("--store needs --inputs: the store keeps fingerprints, not the inputs",
                       "pass the probe set the draws were recorded with (--inputs FILE)")


def _load(promptfoo_path: str | None, jsonl_path: str | None, store_path: str | None,
          inputs_path: str | None, ext: Any, *, provider: str | None, prompt_id: str | None,
          agent_id: str | None, file_order: bool,
          relations: list[Any] | None = None) -> Recording:
    from ..assess import load_jsonl, load_promptfoo, load_store

    if promptfoo_path:
        if agent_id:
            from ..errors import BadInput
            raise BadInput("--agent-id does not apply to --promptfoo (the provider names it)",
                           "drop --agent-id, or choose the provider with --provider")
        return load_promptfoo(promptfoo_path, extractor=ext, provider=provider,
                                 prompt_id=prompt_id)
    if jsonl_path:
        return load_jsonl(jsonl_path, extractor=ext, file_order=file_order, agent=agent_id)
    from .._internal.inputs import load_inputs
    assert store_path is not None
    assert inputs_path is not None
    return load_store(store_path, load_inputs(inputs_path), extractor_id=ext.config_id,
                      agent=agent_id, relations=relations)
