"""check on an unchanged agent: how often drift is reported, with and without the per-input
calibration, through the real ``create_snapshot`` and ``compare_snapshot``.

The agent is a two-label gate on 20 inputs; some inputs flip with a fixed probability (their
own numpy Generator). Each repetition makes a snapshot (alpha 0.05, default settings) and, if
admitted, checks a fresh copy of the same agent twice: against the snapshot as written (each
input tested against its own recorded rate and the tolerance) and against the same snapshot
with its calibration removed (the tolerance-only test of snapshot/1 files). "Not admissible"
counts checks (with the calibration) that end with exit 2: the screen could not re-admit and
the rerun meter did not call the agent deterministic. The last row flips one input for good
(power). Rates over admitted snapshots, 95% Clopper-Pearson.

    python benchmarks/check_drift.py [--reps 400] [--output docs/statistics.md]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentverity_props import compare_snapshot, create_snapshot  # noqa: E402
from agentverity_props.decide import clopper_pearson  # noqa: E402
from agentverity_props.runner import RunConfig  # noqa: E402
from benchmarks._docs import write_section  # noqa: E402
from tests.support.drift_agents import INPUTS, FakeAgent  # noqa: E402

SCENARIOS = [
    ("all inputs clean", {}, frozenset()),
    ("1 of 20 at 50/50", {"attack plan 0": 0.5}, frozenset()),
    ("1 of 20 at 30/70", {"hello friend 4": 0.3}, frozenset()),
    ("1 of 20 at 30/70, another input flipped (power)", {"hello friend 4": 0.3},
     frozenset({"attack plan 3"})),
]


def _rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n, alpha=0.05) if n else (0.0, 1.0)
    return f"{k / max(n, 1):.1%} [{lo:.1%}, {hi:.1%}]"


def run_scenario(flip: dict[str, float], changed: frozenset[str], reps: int) -> dict[str, float]:
    admitted = new = old = snap_calls = check_calls = exit2 = 0
    for s in range(reps):
        cfg = RunConfig(seed=s, alpha=0.05)
        res = create_snapshot(FakeAgent(flip, s), INPUTS, accept_reference=True, config=cfg)
        if not res.admitted:
            continue
        admitted += 1
        snap_calls += res.document["calls"]["total"]
        chk = compare_snapshot(FakeAgent(flip, 10_000 + s, changed), INPUTS, res.document,
                               config=cfg)
        new += chk.status == "drift"
        exit2 += chk.status in ("inadmissible", "incomplete")
        check_calls += chk.calls["total"]
        bare = copy.deepcopy(res.document)
        for e in bare["inputs"]:
            e["calibration"] = None
        bare["calibration"]["source"] = "admission"
        chk = compare_snapshot(FakeAgent(flip, 10_000 + s, changed), INPUTS, bare, config=cfg)
        old += chk.status == "drift"
    return {"reps": reps, "admitted": admitted, "new": new, "old": old, "exit2": exit2,
            "snap_calls": snap_calls / max(admitted, 1),
            "check_calls": check_calls / max(admitted, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--output", type=Path, default=None,
                    help="write the table into this Markdown file (section check-drift)")
    args = ap.parse_args(argv)
    t0 = time.time()
    lines = ["| agent | admitted | drift reported (own rate and tolerance) | drift reported "
             "(tolerance only) | not admissible (exit 2) | snapshot calls | check calls |",
             "|---|---|---|---|---|---|---|"]
    for name, flip, changed in SCENARIOS:
        r = run_scenario(flip, changed, args.reps)
        n = int(r["admitted"])
        lines.append(f"| {name} | {n} of {r['reps']} | {_rate(int(r['new']), n)} | "
                     f"{_rate(int(r['old']), n)} | {_rate(int(r['exit2']), n)} | "
                     f"{r['snap_calls']:.0f} | "
                     f"{r['check_calls']:.0f} |")
        print(lines[-1], flush=True)
    lines.append("")
    lines.append(f"`python benchmarks/check_drift.py --reps {args.reps}` "
                 f"({time.time() - t0:.0f} s). Calls are means over admitted snapshots; check "
                 "calls are those of the check with the calibration.")
    if args.output is not None:
        write_section(args.output, "check-drift", "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
