"""``agentverity-props snapshot`` and ``check``: regression references.

snapshot: exit 0 admitted (written), 2 refused (each failed rule named) or bad input.
check:    exit 0 clean, 1 drift, 2 not admissible (rule named), incomplete or bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .._internal.settings import setting
from ..diagnose import DEFAULT_ALPHA, DEFAULT_EPSILON, DEFAULT_LAYER
from ._ci import FORMATS, annotations_option, publish
from ._common import use_color, write_output
from ._options import (
    LAYER_CHOICE,
    PRECISION_CHOICE,
    engine_options,
    load_agent_ref,
    progress_option,
    require_verdicts_option,
    required_verdicts,
    run_config,
    session,
)

_FORMATS = click.Choice(list(FORMATS))


@click.command("snapshot")
@click.option("--agent", "agent_ref", required=True, metavar="REF",
              help="module:attr or path/to/file.py:attr.")
@click.option("--inputs", "inputs_path", required=True, type=click.Path(),
              help="Probe set: one prompt per line (.txt), or .json/.jsonl/.yaml list.")
@click.option("--output", "-o", "output", required=True, type=click.Path(dir_okay=False),
              help="The snapshot file (written atomically, only when admitted).")
@click.option("--accept-reference", is_flag=True,
              help="Approve the reference verdicts (without it nothing is written: a preview).")
@click.option("--precision", type=PRECISION_CHOICE, default=None)
@click.option("--epsilon", type=float, default=None,
              help=f"Tolerance on the pair-disagreement rate (default {DEFAULT_EPSILON:g}).")
@click.option("--alpha", type=click.FloatRange(0.0001, 0.49), default=DEFAULT_ALPHA,
              show_default=True)
@click.option("--layer", type=LAYER_CHOICE, default=DEFAULT_LAYER, show_default=True)
@click.option("--calibration-draws", type=click.IntRange(1, 100), default=6, show_default=True,
              help="Fresh draws per input after the references are fixed: the rate check "
                   "tests each input against (more here, fewer confirmation draws later).")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True,
              help="Report format on stdout.")
@require_verdicts_option
@annotations_option
@progress_option
@engine_options
def snapshot_cmd(agent_ref: str, inputs_path: str, output: str, accept_reference: bool,
                 precision: str | None, epsilon: float | None, alpha: float, layer: str,
                 calibration_draws: int, fmt: str, require_verdicts: str | None,
                 progress: bool, annotations: str, **eng: Any) -> int:
    """Record the agent's reference verdicts, if they are worth keeping.

    Refused (exit 2) unless the run is complete, the meter calls the verdict deterministic,
    the probe set is not blind and --accept-reference is given; each failed rule is named.
    Every input then gets --calibration-draws fresh draws: check tests it against that
    recorded rate, so a borderline input is not mistaken for drift.
    """
    from .._internal.inputs import load_inputs
    from ..snapshot import acreate_snapshot

    inputs = load_inputs(inputs_path)
    previous = _previous(output)
    preview = None
    if eng.get("store_path") is None:  # the user's own --store is left alone
        preview = preview_store(output, agent_ref, inputs, eng, epsilon=epsilon,
                                precision=precision, alpha=alpha, layer=layer,
                                calibration_draws=calibration_draws,
                                require_verdicts=require_verdicts)
        eng = {**eng, "store_path": str(preview), "store_mode": None}  # auto: replay, else call
    config = run_config(eng, epsilon=epsilon, precision=precision, alpha=alpha, layer=layer,
                        require_verdicts=required_verdicts(require_verdicts))
    agent = load_agent_ref(agent_ref)
    res = session([agent], config.engine, lambda engines, tick: acreate_snapshot(
        agent, inputs, config=config, accept_reference=accept_reference, output=output,
        engine=engines[0], calibration_draws=calibration_draws, progress=tick),
        progress=progress)
    if preview is not None:
        if res.admitted:
            _drop(preview)
            if res.run.ledger.get("replayed"):
                total = (res.to_dict().get("calls") or {}).get("total")
                click.echo(f"reused the draws of the preview made within the last "
                           f"{PREVIEW_TTL_S // 60} minutes: {total} new call(s)", err=True)
        elif not accept_reference:
            click.echo(f"kept this preview's draws for {PREVIEW_TTL_S // 60} minutes "
                       f"({preview}): the same command with --accept-reference replays them "
                       "instead of calling the agent again", err=True)
    from ..report import render
    d = res.to_dict()
    if fmt != "text":
        text = render(d, fmt)
    else:
        from ..engine import Probe
        # the text report goes to stdout, as run's and check's do, and like them names the
        # references to review by their text, terminal or pipe alike (a reviewer reads
        # prompts, not fingerprints); the snapshot file and --format json keep none
        labels = {Probe.make(t).fp: t for t in inputs}
        routes = res.run.routes.to_dict() if res.run.routes is not None else None
        text = render(d, fmt, color=use_color(None), path=res.path, labels=labels,
                      routes=routes)
    write_output(text, None)
    publish(d, annotations=annotations, fmt=fmt, output=None)
    if previous is not None:
        from ..engine import Probe
        note = bless_note(previous, d, output, labels={Probe.make(t).fp: t for t in inputs},
                          written=res.admitted)
        if note:
            click.echo(note, err=True)
    if not res.admitted and [r.rule for r in res.refusals] == ["accepted"]:
        # the preview the docs ask for: every evidence rule passed, only the approval is
        # missing — a next step, not an error (the exit code stays 2: nothing was written)
        click.echo("preview: every evidence rule passed; nothing was written (exit 2) — "
                   "review the references above, then rerun the same command with "
                   f"{setting('accept_reference')} to write {output}", err=True)
    elif not res.admitted:
        click.echo("error: " + res.refusal_message(), err=True)
    return int(res.exit_code)


def _previous(output: str) -> dict[str, Any] | None:
    """The snapshot already at ``output`` (the one a new snapshot would replace), or None."""
    if not Path(output).is_file():
        return None
    from ..errors import AgentVerityError
    from ..snapshot import load_snapshot
    try:
        return load_snapshot(output)
    except AgentVerityError:
        return None  # not a snapshot: nothing to compare with (it is replaced only if admitted)


#: the most changed references the bless note names (the JSON of both files has them all)
SHOWN_CHANGES = 10


def bless_note(previous: dict[str, Any], d: dict[str, Any], output: str, *,
               labels: dict[str, str], written: bool) -> str:
    """What re-blessing changes: the references that differ from the snapshot at ``output``
    (by input text: the user's own terminal), inputs added and removed. Empty when the
    evidence gave no reference to compare, or nothing changes."""
    from .._internal.fingerprint import short
    from .._internal.shown import visible

    old = {e["fp"]: e.get("reference") for e in previous.get("inputs") or ()}
    new = {e["fp"]: e.get("reference") for e in d.get("inputs") or ()}
    if previous.get("fingerprints") != d.get("fingerprints"):
        return (f"note: {output} was made with other fingerprints (salt); its references "
                "cannot be compared with these")
    changed = [(fp, old[fp], ref) for fp, ref in new.items()
               if fp in old and ref is not None and ref != old[fp]]
    added = [fp for fp in new if fp not in old]
    removed = [fp for fp in old if fp not in new]
    refused = [r["rule"] for r in (d.get("admission") or {}).get("rules") or ()
               if not r.get("passed") and r.get("rule") != "accepted"]
    if refused and not written:
        return (f"note: {output} is unchanged: the evidence does not admit a new reference "
                f"({', '.join(refused)})")
    if not (changed or added or removed):
        return f"note: the references are those of {output}" if written else ""
    lit = d.get("reference_form") == "literal"

    def ref(v: Any) -> str:
        return repr(visible(str(v))) if lit else short(str(v))

    head = ("blessed: changed " if written else "if accepted, this would change ") \
        + f"{len(changed)} reference(s) of {output}"
    rows = [f"  {visible(repr(labels[fp])) if fp in labels else short(fp)}: {ref(a)} -> "
            f"{ref(b)}" for fp, a, b in changed[:SHOWN_CHANGES]]
    if len(changed) > SHOWN_CHANGES:
        rows.append(f"  ... and {len(changed) - SHOWN_CHANGES} more")
    extra = [f"{len(added)} input(s) added"] if added else []
    extra += [f"{len(removed)} removed"] if removed else []
    return "\n".join([head + (f" ({', '.join(extra)})" if extra else "") + ":"
                      if rows else head + (f"; {', '.join(extra)}" if extra else ""), *rows])


#: how long a preview's draws are reused by the accepting run (then called afresh)
PREVIEW_TTL_S = 3600


def preview_store(output: str, agent_ref: str, inputs: list[str], eng: dict[str, Any],
                  **options: Any) -> Path:
    """Where a snapshot preview keeps its draws so that accepting it replays them: a store
    in the user's cache, one per (snapshot path, agent reference, inputs, options), removed
    when a snapshot is written and ignored once older than :data:`PREVIEW_TTL_S`. Without
    it, a preview's calls are spent a second time by the accepting run."""
    import hashlib
    import json
    import os
    import time

    key = json.dumps({"output": os.path.abspath(output), "agent": agent_ref, "inputs": inputs,
                      "options": {k: v for k, v in sorted({**eng, **options}.items())
                                  if k not in ("store_path", "store_mode", "store_runner",
                                               "price", "price_model",
                                               "max_calls_in_flight")}},
                     sort_keys=True, default=str)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = (base / "agentverity-props" / "snapshot-previews"
            / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.sqlite3")
    if path.exists() and time.time() - path.stat().st_mtime > PREVIEW_TTL_S:
        _drop(path)  # an old preview says nothing about the agent today
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _drop(path: Path) -> None:
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        p.unlink(missing_ok=True)


@click.command("check")
@click.option("--agent", "agent_ref", required=True, metavar="REF",
              help="module:attr or path/to/file.py:attr (the new version of the agent).")
@click.option("--inputs", "inputs_path", required=True, type=click.Path(),
              help="The inputs the snapshot was made with.")
@click.option("--snapshot", "snapshot_path", required=True, type=click.Path(),
              help="A snapshot file written by `agentverity-props snapshot`.")
@click.option("--drift-tolerance", "--tolerance", "drift_tolerance",
              type=click.FloatRange(0.001, 0.49), default=None,
              help="Per-input mismatch rate still called noise (default epsilon x 2); drift "
                   "also needs a rate above the input's own recorded one. --tolerance is its "
                   "old name, still accepted.")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the report here (atomically) instead of stdout.")
@click.option("--include-inputs", is_flag=True,
              help="Name inputs by their text in a text report written to a file (on a "
                   "terminal they always are; JSON keeps fingerprints).")
@annotations_option
@progress_option
@engine_options
def check_cmd(agent_ref: str, inputs_path: str, snapshot_path: str,
              drift_tolerance: float | None,
              fmt: str, output: str | None, include_inputs: bool, progress: bool,
              annotations: str, **eng: Any) -> int:
    """Check the agent against a snapshot: re-admit sequentially, then find drift.

    Drift on an input = its reference drawn less often than when the snapshot was made and
    than 1 - drift tolerance; at most alpha of checks of an unchanged agent report any drift.

    Exit codes: 0 clean; 1 drift on at least one input; 2 the evidence is not admissible
    (the failed rule is named), incomplete, or bad input.
    """
    from .._internal.inputs import load_inputs
    from ..snapshot import acompare_snapshot, load_snapshot

    doc = load_snapshot(snapshot_path)
    inputs = load_inputs(inputs_path)
    config = run_config(eng)
    agent = load_agent_ref(agent_ref)
    res = session([agent], config.engine, lambda engines, tick: acompare_snapshot(
        agent, inputs, doc, config=config, drift_tolerance=drift_tolerance, engine=engines[0],
        progress=tick), progress=progress)
    from ..report import render
    d = res.to_dict()
    from ..engine import Probe
    if fmt not in ("text", "markdown"):
        text = render(d, fmt)
    elif fmt == "markdown":  # a summary others read: inputs by text only when asked
        text = render(d, fmt, labels={Probe.make(t).fp: t for t in inputs}
                      if include_inputs else None)
    else:
        on_screen = output in (None, "-")
        labels = ({Probe.make(t).fp: t for t in inputs} if on_screen or include_inputs
                  else None)
        text = render(d, fmt, color=use_color(output), labels=labels)
    write_output(text, output)
    # the job summary names inputs by their text when the user allowed it, as the report does
    publish(d, annotations=annotations, fmt=fmt, output=output,
            labels={Probe.make(t).fp: t for t in inputs} if include_inputs else None)
    return int(res.exit_code)
