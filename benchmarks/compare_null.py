"""Identical agents through the real ``compare``: how often is a winner named?

Run from the repository root::

    python benchmarks/compare_null.py              # full run (several minutes); rewrites the
                                                   # `compare-null` section of
                                                   # docs/benchmarks.md
    python benchmarks/compare_null.py --quick      # 20 runs per kind; prints, writes nothing
    python benchmarks/compare_null.py --reps 800

Every run compares two agents that behave identically, each with its own seeded
``random.Random``: a call fails (raises) with probability 0.03, else it answers the right
answer with probability 0.7. How they spend time (the ``kind``):

* ``instant``: return at once (sync, run in the engine's worker threads);
* ``sleeping``: sleep 0.2-2 ms, uniformly at random;
* ``serial``: both agents behind one ``threading.Lock`` around a 0.5 ms sleep (one shared
  serial backend: whichever call comes second waits for the first);
* ``async-serial``: async agents behind one ``asyncio.Lock`` around a 0.5 ms sleep.

The benchmark has 3 tasks; each run is ``compare_agents([a, b], bench,
config=CompareConfig(max_runs=15, alpha=alpha, seed=run))`` with the defaults otherwise (one
warm-up call per agent, latency margin 10%, 4 workers). An error is a run in which any
printed verdict (overall pass rate, error rate or latency, or any per-task verdict) names a
better agent; compare claims this happens in at most alpha of runs.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import cpus, write_section  # noqa: E402

from agentverity_props.decide import clopper_pearson  # noqa: E402
from tests.support.compare_agents import KINDS, identical_pair  # noqa: E402

SECTION = "compare-null"
ALPHAS = (0.05, 0.2)
MAX_RUNS = 15
TASKS = 3


def run(reps: int) -> list[dict[str, Any]]:
    from agentverity_props.bench import CompareConfig, compare_agents, parse_benchmark

    bench = parse_benchmark('version: "1"\nname: identical\ntasks:\n' + "".join(
        f"  - {{id: t{i}, prompt: 'q{i}', evaluation: {{type: exact_match, expected: '4'}}}}\n"
        for i in range(TASKS)))
    rows = []
    for alpha in ALPHAS:
        for kind in KINDS:
            errors = 0
            by_metric = {"pass_rate": 0, "error_rate": 0, "latency": 0, "per task": 0}
            lat_w = lat_l = a_first = items = 0
            t0 = time.perf_counter()
            for rep in range(reps):
                a, b = identical_pair(kind, rep)
                res = compare_agents([a, b], bench, config=CompareConfig(
                    max_runs=MAX_RUNS, alpha=alpha, seed=10_000 + rep))
                won = res.winners
                errors += bool(won)
                for w in won:
                    by_metric["per task" if " task " in w else w.split()[-1]] += 1
                p = res.pairs[0]
                lat_w += p.overall["latency"].wins
                lat_l += p.overall["latency"].losses
                a_first += p.first[0]
                items += sum(p.first)
            lo, hi = clopper_pearson(errors, reps, alpha=0.05)
            rows.append({"alpha": alpha, "kind": kind, "reps": reps, "errors": errors,
                         "lo": lo, "hi": hi, "by_metric": by_metric, "lat_w": lat_w,
                         "lat_l": lat_l, "a_first": a_first / items if items else 0.0,
                         "seconds": time.perf_counter() - t0})
            print(f"alpha {alpha} {kind:13s} {errors}/{reps} [{lo:.3f}, {hi:.3f}] "
                  f"{by_metric} latency wins {lat_w}:{lat_l}", flush=True)
    return rows


def table(rows: list[dict[str, Any]], minutes: float) -> str:
    reps = rows[0]["reps"]
    lines = [
        "## compare: identical agents, how often a winner is named",
        "",
        f"Measured by `python benchmarks/compare_null.py` ({minutes:.1f} min on "
        f"{cpus()} CPU(s), Python {platform.python_version()}). {reps} runs per row of the "
        f"real `compare_agents` on two identically behaving agents (each its own seeded "
        f"`random.Random`: a call fails with probability 0.03, else passes with probability "
        f"0.7), {TASKS} tasks, `--max-runs {MAX_RUNS}`, one warm-up call per agent, latency "
        f"margin 10%, 4 workers. Kinds: `instant`; `sleeping` 0.2-2 ms; `serial` both "
        f"agents behind one threading lock around a 0.5 ms sleep; `async-serial` async "
        f"agents behind one asyncio.Lock. An error is a run in which any printed verdict "
        f"(overall or per task, any metric) names a better agent; compare claims at most "
        f"alpha.",
        "",
        "| alpha | kind | runs with a winner | 95% Clopper-Pearson | pass rate | error rate "
        "| latency | per task | latency wins A:B | A ran first |",
        "|---:|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        m = r["by_metric"]
        lines.append(
            f"| {r['alpha']:g} | {r['kind']} | {r['errors']}/{r['reps']} "
            f"({r['errors'] / r['reps']:.1%}) | [{r['lo']:.1%}, {r['hi']:.1%}] | "
            f"{m['pass_rate']} | {m['error_rate']} | {m['latency']} | {m['per task']} | "
            f"{r['lat_w']}:{r['lat_l']} | {r['a_first']:.1%} |")
    worst = max(rows, key=lambda r: r["hi"] - r["alpha"])
    ok = all(r["errors"] / r["reps"] <= r["alpha"] for r in rows)
    lines += ["", f"- Target: a winner in at most alpha of runs for every kind: "
                  f"**{'met' if ok else 'not met'}** (worst upper bound "
                  f"{worst['hi']:.1%} at alpha {worst['alpha']:g}, {worst['kind']}).",
              "- Metric columns count the verdicts naming a winner (a run can have several)."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400, help="runs per kind and alpha")
    parser.add_argument("--quick", action="store_true", help="20 runs; prints, writes nothing")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    reps = 20 if args.quick else args.reps
    t0 = time.perf_counter()
    rows = run(reps)
    text = table(rows, (time.perf_counter() - t0) / 60)
    print(text)
    if not args.quick:
        write_section(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
