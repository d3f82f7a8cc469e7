"""How close ``plan`` comes to the calls of real runs, per noise level.

Run from the repository root::

    python benchmarks/plan_accuracy.py                 # 30 seeds, noise 0.05 / 0.10 / 0.15
    python benchmarks/plan_accuracy.py --seeds 10 --no-write

For each noise ``q``: ``plan`` (``--seeds`` simulated runs) against as many real ``run``\\ s
of the shipped moderation gate (``agentverity_props.examples.plain.gate``) made noisy on
every call by ``tests/stats/_noisy_agents.noisy`` (a share ``q`` of calls flipped to another
label), on the shipped moderation probe set with every built-in relation but ``typo`` (the
gate truly violates it; ``plan`` costs relations that hold). A last row runs the shipped
``noisy_gate`` itself (``make_gate(noise=0.15)``: only inputs near a threshold flip), whose
noise per call is not one number. The table goes into the ``plan-accuracy`` section of
docs/benchmarks.md (see ``_docs.py``).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from _docs import write_section  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
LABELS = ("allow", "review", "block")


def _async(fn):
    async def agent(prompt: str):
        return fn(prompt)
    return agent


def _real(agents, inputs, rels) -> list[int]:
    from agentverity_props import from_callable
    from agentverity_props.diagnose import RunConfig, arun
    from agentverity_props.engine import run_sync

    return [int(run_sync(arun(from_callable(_async(a)), inputs, rels,
                              config=RunConfig())).ledger["calls"]) for a in agents]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--noises", default="0.05,0.10,0.15")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from agentverity_props.diagnose import plan
    from agentverity_props.examples import moderation_inputs, plain
    from agentverity_props.relations import builtin_relations
    from tests.stats._noisy_agents import noisy

    t0 = time.monotonic()
    inputs = moderation_inputs()
    rels = [r for r in builtin_relations() if r.name != "typo"]
    noises = [float(x) for x in args.noises.split(",")]
    p = plan(inputs, rels, noises=noises, seeds=args.seeds, default_noises=False)
    rows = []
    for lv in p.levels:
        q = lv["noise"]
        real = _real([noisy(lambda t: plain.gate(t)["verdict"], LABELS, q, random.Random(s))
                      for s in range(args.seeds)], inputs, rels)
        tot = lv["calls"]["total"]
        rows.append((f"noisy(gate, {q:g})", f"{q:g}", tot["mean"], 2 * tot["se"],
                     f"{tot['low']:.0f}-{tot['high']:.0f}", statistics.fmean(real),
                     2 * statistics.stdev(real) / len(real) ** 0.5,
                     f"{min(real)}-{max(real)}"))
        print(rows[-1], flush=True)
    shipped = _real([plain.make_gate(seed=s, noise=0.15) for s in range(args.seeds)],
                    inputs, rels)
    quiet = plan(inputs, rels, noises=(0.0,), seeds=1, default_noises=False).levels[0]
    quiet_calls = quiet["calls"]["total"]["mean"]
    low = min(p.levels, key=lambda lv: lv["noise"])
    wall = time.monotonic() - t0
    lines = [
        "## plan against real runs",
        "",
        f"Measured by `python benchmarks/plan_accuracy.py` on {os.cpu_count()} CPU(s), Python "
        f"{platform.python_version()} ({platform.python_implementation()}, "
        f"{platform.system()} {platform.machine()}) in {wall:.0f} s. Each row: the total calls "
        f"`plan` expects at noise q (the mean of {args.seeds} simulated runs, ±2 standard "
        f"errors, and the range of single runs) against the mean of {args.seeds} real `run`s "
        "of the moderation gate made noisy on every call (a share q of calls flipped to "
        "another label), on `examples/inputs/moderation.txt` with every built-in relation but "
        "`typo` (which the gate truly violates), `--max-workers 4`. Single runs spread "
        "widely: sequential tests stop at random times.",
        "",
        "| agent | noise | plan: calls | ±2 s.e. | plan: range | real: calls | ±2 s.e. | "
        "real: range | plan / real |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, q, pm, pse, pr, rm, rse, rr in rows:
        lines.append(f"| {name} | {q} | {pm:.0f} | {pse:.0f} | {pr} | {rm:.0f} | {rse:.0f} | "
                     f"{rr} | {pm / rm:.2f} |")
    lines += ["", f"The shipped `noisy_gate` (`make_gate(noise=0.15)`: only the few inputs "
              f"near a threshold flip, the others never) took {statistics.fmean(shipped):.0f} "
              f"calls on average (range {min(shipped)}-{max(shipped)}, {args.seeds} seeds) on "
              f"the same inputs and relations, against {quiet_calls:.0f} planned for a "
              f"noise-free agent and {low['calls']['total']['mean']:.0f} at noise "
              f"{low['noise']:g}: its noise is not one share of every call, and no single "
              "`--noise` describes it."]
    body = "\n".join(lines) + "\n"
    print(body)
    if not args.no_write:
        write_section(DOC, "plan-accuracy", body)


if __name__ == "__main__":
    main()
