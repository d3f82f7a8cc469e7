"""``agentverity-props bench`` and ``compare``: YAML benchmarks and paired comparison.

bench:   exit 0 every task passed, 1 a task failed or errored, 2 incomplete, a task
         undecided at the --runs cap (sequential), or bad input.
compare: exit 0 no agent worse than the first (baseline) on pass rate, 1 one is, 2
         incomplete or bad input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..bench import BenchConfig, CompareConfig
from ._ci import FORMATS, annotations_option, publish
from ._common import use_color, write_output
from ._options import (
    default_of,
    engine_config,
    engine_options,
    load_agent_ref,
    progress_option,
    session,
)

_FORMATS = click.Choice(list(FORMATS))


def _render(d: dict[str, Any], fmt: str, to_file: bool) -> str:
    """``d`` (a bench or compare result) in ``fmt``, through the result-kind registry."""
    from ..report import render
    if fmt == "text":
        return render(d, fmt, color=use_color(None) and not to_file)
    return render(d, fmt)


def _phase(tick: Callable[[str, int], None] | None,
           label: str) -> Callable[[int], None] | None:
    """A ``progress(calls)`` callback for one labelled bar (None without a bar)."""
    return None if tick is None else (lambda n: tick(label, n))


@click.command("bench")
@click.option("--agent", "agent_ref", required=True, metavar="REF",
              help="module:attr, path/to/file.py:attr, or an agentverdict agent file.py "
                   "(run_agent(task) -> str).")
@click.option("--benchmark", "benchmark_path", required=True, type=click.Path(),
              help="Benchmark YAML (agentverdict's format is accepted unchanged).")
@click.option("--runs", type=click.IntRange(1, 100_000), default=None,
              help="Runs per task (default: the file's runs, else 1).")
@click.option("--early-stop", type=click.Choice(["exact", "sequential"]),
              default=default_of(BenchConfig, "early_stop"), show_default=True,
              help="exact: stop a task once its full-run verdict is "
              "certain; sequential: anytime-valid pass-rate SPRT per task (error rate "
              "alpha/tasks; a task not decided by --runs is UNDECIDED, exit 2).")
@click.option("--no-early-stop", is_flag=True,
              help="Run every task --runs times (per-task counts as agentverdict's runner).")
@click.option("--alpha", type=click.FloatRange(0.0001, 0.49),
              default=default_of(BenchConfig, "alpha"), show_default=True)
@click.option("--margin", type=click.FloatRange(0.001, 0.49),
              default=default_of(BenchConfig, "margin"), show_default=True,
              help="Sequential mode: indifference zone around the threshold (a wider one "
              "decides in fewer runs; at threshold 1.0 a PASS needs about "
              "ln(tasks/alpha) / -ln(1 - margin) clean runs).")
@click.option("--interval", type=click.Choice(["exact", "wilson"]),
              default=default_of(BenchConfig, "interval"), show_default=True,
              help="Reliability interval: Clopper-Pearson or Wilson.")
@click.option("--include-outputs", is_flag=True, help="Keep prompts and answers in the report.")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the report here (atomically) instead of stdout.")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), default=None,
              metavar="OLD.json", help="A bench --format json result to compare with: per "
              "task, what moved and by how much, changed apart from flaky (descriptive).")
@annotations_option
@progress_option
@engine_options
def bench_cmd(agent_ref: str, benchmark_path: str, runs: int | None, early_stop: str,
              no_early_stop: bool, alpha: float, margin: float, interval: str,
              include_outputs: bool,
              fmt: str, output: str | None, baseline_path: str | None, progress: bool,
              annotations: str, **eng: Any) -> int:
    """Run a YAML benchmark, stopping each task once its pass/fail verdict is decided.

    Exit codes: 0 every task passed; 1 a task failed or errored; 2 incomplete evidence, a
    task undecided at the --runs cap (sequential mode), or a configuration error.
    """
    from ..bench import BenchConfig, arun_benchmark, load_benchmark

    bench = load_benchmark(benchmark_path)
    baseline = load_baseline(baseline_path) if baseline_path else None
    note = runs_override_note(bench, runs)
    config = BenchConfig(runs=runs, early_stop="off" if no_early_stop else early_stop,  # type: ignore[arg-type]
                         alpha=alpha, margin=margin, interval=interval,  # type: ignore[arg-type]
                         include_outputs=include_outputs, engine=engine_config(eng))
    agent = load_agent_ref(agent_ref)
    if note:  # said once the command line is known to be good (an error is one line)
        click.echo(note, err=True)
    res = session([agent], config.engine_config(), lambda engines, tick: arun_benchmark(
        agent, bench, config=config, engine=engines[0], progress=_phase(tick, "bench")),
        progress=progress)
    d = res.to_dict()
    if baseline is not None:
        from ..bench import bench_moves
        d["moved"] = bench_moves(baseline, d, baseline=baseline_path)
    write_output(_render(d, fmt, output is not None), output)
    publish(d, annotations=annotations, fmt=fmt, output=output, keep_inputs=include_outputs)
    return int(res.exit_code)


def load_baseline(path: str) -> dict[str, Any]:
    """A saved bench result to compare with (one line for anything else)."""
    from ..errors import BadInput
    from ..report import load_result
    d = load_result(path)
    if not str(d.get("schema", "")).startswith("agentverity_props.bench/"):
        raise BadInput(f"--baseline {path} is an {d.get('schema')} result, not a bench one",
                       "pass a file written by bench --format json")
    return d


def runs_override_note(bench: Any, runs: int | None) -> str | None:
    """The line saying which runs counts of the file ``--runs`` replaces (None: none).

    The command line wins, as in agentverdict's runner; saying so keeps a task's own
    ``runs: 20`` from being lowered without a word.
    """
    if runs is None:
        return None
    file_runs = bench.model.runs
    own = [(t.id, t.spec.runs) for t in bench.tasks if t.spec.runs not in (None, runs)]
    parts = []
    if file_runs not in (None, runs):
        parts.append(f"the file's runs: {file_runs}")
    if own:
        shown = ", ".join(f"{tid}: {n}" for tid, n in own[:5])
        more = f" and {len(own) - 5} more" if len(own) > 5 else ""
        parts.append(f"{len(own)} task(s)' own runs ({shown}{more})")
    if not parts:
        return None
    from .._internal.shown import visible
    return visible(f"note: --runs {runs} overrides {' and '.join(parts)}; every task runs at "
                   f"most {runs} times (drop --runs to keep the file's counts)")


@click.command("compare")
@click.argument("agent_refs", nargs=-1, required=True, metavar="REF_A REF_B [REF_C ...]")
@click.option("--benchmark", "benchmark_path", required=True, type=click.Path(),
              help="Benchmark YAML; every agent runs the same tasks in the same order.")
@click.option("--max-runs", "--runs", "max_runs", type=click.IntRange(1, 100_000),
              default=default_of(CompareConfig, "max_runs"), show_default=True,
              help="At most this many paired runs of every task (stops "
              "earlier once decided); --runs is accepted as agentverdict spells it.")
@click.option("--min-runs", type=click.IntRange(1, 100_000),
              default=default_of(CompareConfig, "min_runs"), show_default=True)
@click.option("--alpha", type=click.FloatRange(0.0001, 0.49),
              default=default_of(CompareConfig, "alpha"), show_default=True,
              help="Family-wise error rate of every verdict printed (overall and per task).")
@click.option("--margin", type=click.FloatRange(0.001, 0.999),
              default=default_of(CompareConfig, "margin"), show_default=True,
              help="Equivalence margin on the pass rate: two agents are 'equivalent within "
              "the margin' once their mean pass-rate difference is shown inside (-margin, "
              "margin) at alpha (0.1 = ten percentage points).")
@click.option("--latency-margin", type=click.FloatRange(0.0, 10.0),
              default=default_of(CompareConfig, "latency_margin"), show_default=True,
              help="Practical difference for latency: a call wins only "
              "when the other took more than 1 + this times as long (0.1 = 10% slower).")
@click.option("--warmup", type=click.IntRange(0, 100),
              default=default_of(CompareConfig, "warmup"), show_default=True,
              help="Untimed calls per agent before the first paired run (counted in the "
              "budget, not in the statistics).")
@click.option("--include-outputs", is_flag=True, help="Keep answers in the report.")
@click.option("--format", "fmt", type=_FORMATS, default="text", show_default=True)
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="Write the report here (atomically) instead of stdout.")
@annotations_option
@progress_option
@engine_options
def compare_cmd(agent_refs: tuple[str, ...], benchmark_path: str, max_runs: int, min_runs: int,
                alpha: float, margin: float, latency_margin: float, warmup: int,
                include_outputs: bool,
                fmt: str, output: str | None, progress: bool, annotations: str,
                **eng: Any) -> int:
    """Compare agents run by run on the same tasks: A better / B better / equivalent within
    the margin / inconclusive.

    The first agent is the baseline. Within each paired run the agents go in random order
    (--seed); one --alpha covers every verdict printed. Exit codes: 0 no agent is decided
    worse than the first on pass rate; 1 one is (a regression); 2 incomplete evidence or a
    configuration error. --budget caps each agent's calls.
    """
    from ..bench import CompareConfig, acompare_agents, load_benchmark
    from ..errors import BadInput

    if len(agent_refs) < 2:
        raise BadInput("compare needs at least two agents", "pass REF_A REF_B [REF_C ...]")
    if min_runs > max_runs:
        raise BadInput(f"--min-runs {min_runs} exceeds --max-runs {max_runs}",
                       "lower --min-runs or raise --max-runs")
    bench = load_benchmark(benchmark_path)
    config = CompareConfig(max_runs=max_runs, min_runs=min_runs, alpha=alpha, margin=margin,
                           latency_margin=latency_margin, warmup=warmup,
                           include_outputs=include_outputs, engine=engine_config(eng))
    agents = [load_agent_ref(r) for r in agent_refs]
    res = session(agents, config.engine_config(), lambda engines, tick: acompare_agents(
        agents, bench, config=config, refs=agent_refs, engines=engines,
        progress=_phase(tick, "compare")), progress=progress)
    d = res.to_dict()
    write_output(_render(d, fmt, output is not None), output)
    publish(d, annotations=annotations, fmt=fmt, output=output, keep_inputs=include_outputs)
    return int(res.exit_code)
