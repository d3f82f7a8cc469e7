"""``agentverity-props enlarge``: add inputs that cross decision boundaries to a blind set."""

from __future__ import annotations

import json
from pathlib import Path
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

#: enlarge always spends a bounded budget (the engine options' --budget, else this)
DEFAULT_BUDGET = 600


def _serialise_inputs(inputs: list[str], path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".json":
        return json.dumps(inputs, indent=2, ensure_ascii=False) + "\n"
    if suffix == ".jsonl":
        return "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in inputs)
    if suffix in (".yaml", ".yml"):
        import yaml
        return str(yaml.safe_dump({"inputs": inputs}, allow_unicode=True, sort_keys=False))
    multi = [t for t in inputs if "\n" in t]
    if multi:
        from ..errors import BadInput
        raise BadInput(f"{len(multi)} input(s) contain line breaks and cannot be written one "
                       "per line", "use an --output ending in .json, .jsonl or .yaml")
    return "".join(t + "\n" for t in inputs)


def _chosen_pack(inputs: list[str]) -> tuple[str, str]:
    """``--strategy auto``: the pack chosen from the inputs' words and the line saying so, or
    a one-line refusal."""
    from ..errors import BadInput
    from ..strategies import available_packs, choose_pack
    choice = choose_pack(inputs)
    if choice.name is None:
        raise BadInput(f"cannot tell which strategy pack fits these inputs (word overlap: "
                       f"{choice.describe()})",
                       f"leave out --strategy to learn from your probes, or pass --strategy "
                       f"{'|'.join(available_packs())} or a pack file of your own")
    return choice.name, (f"enlarge: strategy pack {choice.name!r} chosen from the inputs' "
                         f"words ({choice.describe()}); pass --strategy to choose another")


def _load_generator(ref: str) -> Any:
    """``module:function`` or ``path.py:function``: a callable text -> list of variations."""
    from ..adapters import load_object
    from ..errors import BadInput
    obj = load_object(ref, what="generator")
    if not callable(obj):
        raise BadInput(f"--generator {ref}: not callable",
                       "point it at a function text -> list of variations")
    return obj


#: the most added inputs listed by name in the text output (the output file holds all)
ADDED_SHOWN = 20


def _added_lines(res: Any, threshold: float) -> list[str]:
    """What enlarge added, each input with its verdict; and why it added anything to a set
    whose share was already under the threshold."""
    from .._internal.shown import visible
    lines: list[str] = []
    if res.added and (res.blindness_before or {}).get("status") == "ok":
        lines.append(f"  the starting set was already decided not blind (share "
                     f"{res.skew_before:.0%}); inputs were added down to the target "
                     f"{res.target_share:.0%} (the threshold minus a margin) so that a later "
                     "run's interval, not only its point estimate, clears the threshold")
    for text in res.added[:ADDED_SHOWN]:
        lines.append(f"  added: {visible(str(res.verdicts.get(text)))} {visible(text)!r}")
        ev = res.evidence.get(text)
        if ev:
            lines.append(f"         confirmed: {ev['agreeing']}/{ev['draws']} fresh draws "
                         f"agree, e = {ev['e_value']:.3g} >= {ev['threshold']:.3g}")
        origin = res.origins.get(text)
        if origin:
            lines.append(f"         from {visible(origin['parent'])!r}: "
                         f"{visible(origin['describe'])}")
    if len(res.added) > ADDED_SHOWN:
        lines.append(f"  ... and {len(res.added) - ADDED_SHOWN} more (all are in the output)")
    return lines


def _boundary_lines(res: Any) -> list[str]:
    """Each boundary: the crossing edit in the probes' words, or why it was not located."""
    from .._internal.shown import visible
    lines: list[str] = []
    if res.boundaries:
        for b in res.boundaries[:10]:
            if b.get("status") == "located":
                lines.append(f"  boundary: {visible(str(b.get('description', '')))} "
                             f"({b.get('calls', 0)} calls)")
                lines.append(f"         {visible(str(b.get('low_verdict')))} "
                             f"{visible(str(b.get('low')))!r}")
                lines.append(f"      -> {visible(str(b.get('high_verdict')))} "
                             f"{visible(str(b.get('high')))!r}")
            else:
                lines.append(f"  boundary not located between {visible(str(b.get('parent')))!r}"
                             f" and an added input: {visible(str(b.get('status')))} "
                             f"({visible(str(b.get('reason', '')))})")
        return lines
    for p in res.boundary_pairs[:10]:
        lines.append(f"  boundary: {visible(p.source_verdict)} {visible(p.source)!r}\n"
                     f"         -> {visible(p.follow_up_verdict)} {visible(p.follow_up)!r} "
                     f"({visible(str(p.edit.get('name', 'edit')))})")
    return lines


@click.command("enlarge")
@click.option("--agent", "agent_ref", required=True, metavar="REF")
@click.option("--inputs", "inputs_path", required=True, type=click.Path())
@click.option("--strategy", default=None, metavar="PACK",
              help="Search a strategy pack instead of your probes: a shipped name "
                   "(moderation, support_routing, refund_approval), a pack file, or auto "
                   "(the shipped pack whose words the inputs share) (default: learn from "
                   "the inputs themselves).")
@click.option("--lexicon", "lexicon_path", default=None, type=click.Path(), metavar="FILE",
              help="YAML/JSON {class: [values]} the probe grammar may use: where a probe "
                   "holds one value of a class, the others are tried in its place.")
@click.option("--generator", "generator_ref", default=None, metavar="REF",
              help="module:function or file.py:function returning variations of a text; "
                   "kept when they share half the probe's words.")
@click.option("--generator-agent", "generator_agent", default=None, metavar="REF",
              help="Any agent reference (e.g. an LLM you already have), asked for five "
                   "rewrites of each probe, one per line.")
@click.option("--threshold", type=click.FloatRange(0.51, 0.99), default=0.9, show_default=True)
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="Enlarged probe set (.txt one per line, or .json/.jsonl/.yaml).")
@click.option("--report", type=click.Path(dir_okay=False), default=None,
              help="Also write the JSON result (boundary pairs, calls) here.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]),
              default="text", show_default=True, help="Report format on stdout.")
@annotations_option
@engine_options
@progress_option
def enlarge_cmd(agent_ref: str, inputs_path: str, strategy: str | None,
                lexicon_path: str | None, generator_ref: str | None,
                generator_agent: str | None, threshold: float,
                output: str, report: str | None, fmt: str, progress: bool, annotations: str,
                **eng: Any) -> int:
    """Search for minority-verdict inputs and boundary pairs; write an enlarged probe set.

    Takes the engine options of every command (--budget, default 600 here; --max-workers
    calls at a time; --timeout, --retries, --store, ...).

    Every added input's verdict is confirmed by a sequential test (its evidence is in the
    report), and the sets' shares come from the blindness test ``run`` uses.

    Exit 0 when the enlarged set was decided not blind at the target share (done), 1 when
    it was not (still blind or undecided: the budget or the search ran out first; the
    partial set is still written), 2 on bad input or when agent calls failed (incomplete
    evidence; the set is still written).
    """
    from .._internal.inputs import load_inputs
    from ..report import dumps
    from ..search import enlarge

    inputs = load_inputs(inputs_path)
    strategy, chosen_note, lexicon, generator = _search_sources(
        inputs, strategy, lexicon_path, generator_ref, generator_agent)
    agent: Any = load_agent_ref(agent_ref)
    if chosen_note:  # said once the command line is known to be good (an error is one line)
        click.echo(chosen_note, err=True)
    budget = eng["budget"] if eng["budget"] is not None else DEFAULT_BUDGET
    bar, tick = progress_ticker(progress, budget)
    with bar:
        res = enlarge(agent, inputs, strategy=strategy, budget=budget, threshold=threshold,
                      seed=eng["seed"], max_workers=eng["max_workers"],
                      engine=engine_config(eng), lexicon=lexicon, generator=generator,
                      progress=tick)
    out = Path(output)
    write_output(_serialise_inputs(res.inputs, out), str(out))
    d = res.to_dict()
    if report:
        write_output(dumps(d), report)
    if fmt == "json":
        write_output(dumps(d), None)
    elif fmt == "markdown":
        from ..report import render
        write_output(render(d, "markdown"), None)
    else:
        write_output("\n".join(_text_lines(res, d, strategy, threshold, out)) + "\n", None)
    publish(d, annotations=annotations, fmt=fmt, output=None, keep_inputs=True)
    if not res.complete:
        return 2
    return 0 if res.success else 1


def _search_sources(inputs: list[str], strategy: str | None, lexicon_path: str | None,
                    generator_ref: str | None, generator_agent: str | None
                    ) -> tuple[str | None, str | None, Any, Any]:
    """What the search draws from: ``(strategy, note on an auto-chosen pack, lexicon,
    generator)``, each checked (an unknown pack, a pack with a lexicon or generator, two
    generators) before any agent call."""
    from ..errors import BadInput
    from ..strategies import load_lexicon, load_pack

    chosen_note = None
    if strategy == "auto":
        strategy, chosen_note = _chosen_pack(inputs)
    if strategy is not None:
        if not isinstance(strategy, str) or not strategy:
            raise click.BadParameter("empty strategy")
        if lexicon_path or generator_ref or generator_agent:
            raise BadInput("--lexicon and --generator vary your probes; --strategy searches "
                           "a pack instead", "give one or the other")
        load_pack(strategy)  # one-line error for an unknown pack before any agent call
    lexicon = load_lexicon(lexicon_path) if lexicon_path else None
    if generator_ref and generator_agent:
        raise BadInput("--generator and --generator-agent both given", "give one of them")
    generator = _load_generator(generator_ref) if generator_ref else None
    if generator_agent:
        from ..strategies import variations_from
        generator = variations_from(load_agent_ref(generator_agent))
    return strategy, chosen_note, lexicon, generator


_STATUS_WORDS = {"ok": "decided not blind, but above the target share",
                 "blind": "still decided blind", "undecided": "blindness undecided"}


def _share(blindness: dict[str, Any] | None, point: float) -> str:
    """A share with its interval from the blindness test: ``70% [0.52, 0.86]``."""
    b = blindness or {}
    if b.get("ci_low") is None or b.get("ci_high") is None:
        return f"{point:.0%}"
    return f"{point:.0%} [{b['ci_low']:.2f}, {b['ci_high']:.2f}]"


def _text_lines(res: Any, d: dict[str, Any], strategy: str | None, threshold: float,
                out: Path) -> list[str]:
    """The text report: the shares before and after, what was added, the boundary pairs,
    advice, tokens, the file written, and what was incomplete and why."""
    from .._internal.shown import visible
    from .._internal.tokens import tokens_line

    source = (f"pack {strategy!r}" if strategy is not None else "edits of your probes")
    verdict = ("done: decided not blind" if res.success else
               f"not done: {_STATUS_WORDS.get(res.status, res.status)}")
    lines = [f"enlarge: modal verdict '{res.modal_verdict}' share "
             f"{_share(res.blindness_before, res.skew_before)} -> "
             f"{_share(res.blindness_after, res.skew_after)} (threshold {threshold:g}); added "
             f"{len(res.added)} input(s), {source}; {res.calls} agent calls "
             f"({res.stop_reason}); {verdict}",
             *_added_lines(res, threshold), *_boundary_lines(res),
             *([f"advice: {res.advice}"] if res.advice else []),
             visible(tokens_line(d.get("tokens"))),
             f"wrote {len(res.inputs)} inputs to {out}"]
    if not res.complete:
        led = res.ledger
        kinds = ", ".join(f"{k} x{v}" for k, v in led.get("failure_kinds", {}).items())
        lines.append(f"incomplete: {led.get('failures', 0)} agent call(s) failed ({kinds}); "
                     "their inputs were left out of the shares")
        samples = [m for ms in (led.get("failure_samples") or {}).values() for m in ms]
        cause = res.cause or led.get("stop_cause") or (samples[0] if samples else None)
        if cause:
            lines.append(f"cause: {cause}")
    return lines
