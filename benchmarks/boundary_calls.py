"""Boundary location: how close, how often and at what cost a crossing is located.

Run from the repository root::

    python benchmarks/boundary_calls.py          # 40 seeds a row; rewrites the
                                                 # `boundary` section of docs/benchmarks.md
    python benchmarks/boundary_calls.py --quick  # 8 seeds; prints, writes nothing

Rows: a numeric threshold ("manager" above a limit) between two amounts of a claim, at 0%, 5%
and 10% noise (a flipped verdict, from the agent's own ``random.Random``), over ranges from a
factor 20 to a factor 10,000; a keyword that is one edit among several (a trip's city,
class, purpose and date all change); a keyword inside an inserted clause. "Within 1%" counts
located pairs that bracket the limit within 1% of it; calls include the final confirmation
of the adjacent pair (a relation candidate at alpha 0.05).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import cpus, write_section  # noqa: E402

SECTION = "boundary"


def _amount(p: str) -> float:
    return float(p.split("$")[1].split(maxsplit=1)[0].replace(",", ""))


def _agent(rule: Any, labels: tuple[str, str], noise: float, seed: int) -> Any:
    from agentverity_props import from_callable
    rng = random.Random(seed)

    def call(p: str) -> str:
        v = rule(p)
        if rng.random() < noise:
            v = labels[1] if v == labels[0] else labels[0]
        return v
    return from_callable(call)


def rows(seeds: int) -> list[dict[str, Any]]:
    from agentverity_props.strategies import locate_boundary
    out = []
    for noise in (0.0, 0.05, 0.10):
        for lo, hi, limit in ((450, 9000, 2000), (120, 125000, 2000), (10, 100000, 37500)):
            within, calls, steps = 0, [], []
            for s in range(seeds):
                ag = _agent(lambda p, limit=limit: "manager" if _amount(p) > limit
                            else "approve", ("approve", "manager"), noise, s)
                loc = locate_boundary(ag, f"Claim for ${lo:,} today", f"Claim for ${hi:,} today",
                                      a_verdict="approve", b_verdict="manager", budget=300,
                                      seed=s)
                calls.append(loc.calls)
                steps.append(loc.steps)
                if loc.status == "located":
                    x, y = (_amount(f"${loc.edit[k]}") for k in ("before", "after"))
                    within += x <= limit < y and y - x <= 0.01 * limit + 1
            out.append({"case": f"threshold {limit:,} between ${lo:,} and ${hi:,}",
                        "noise": noise, "ok": within, "seeds": seeds, "calls": calls,
                        "steps": steps})
        for name, a, b, rule, word in (
                ("keyword among 4 edits",
                 "Flight to Oslo in economy for a client visit on May 3",
                 "Train to Paris in business for a sales visit on June 9",
                 lambda p: "manager" if "business" in p else "approve", "business"),
                ("keyword inside an inserted clause", "Two days off next month.",
                 "Two days off next month for a medical appointment on Friday.",
                 lambda p: "manager" if "medical" in p else "approve", "medical")):
            ok, calls, steps = 0, [], []
            for s in range(seeds):
                loc = locate_boundary(_agent(rule, ("approve", "manager"), noise, s), a, b,
                                      a_verdict="approve", b_verdict="manager", budget=300,
                                      seed=s)
                calls.append(loc.calls)
                steps.append(loc.steps)
                ok += loc.status == "located" and word not in loc.low and word in loc.high \
                    and len(loc.high.split()) - len(loc.low.split()) <= 1
            out.append({"case": name, "noise": noise, "ok": ok, "seeds": seeds,
                        "calls": calls, "steps": steps})
    return out


def table(rs: list[dict[str, Any]], minutes: float) -> str:
    lines = [f"Run on {platform.python_implementation()} {platform.python_version()}, "
             f"{cpus()} CPUs, {minutes:.1f} min. Command: `python benchmarks/boundary_calls.py`.",
             "", "| case | noise | located exactly (within 1% / the crossing word) | calls "
             "median | calls p90 | steps median |", "|---|---|---|---|---|---|"]
    for r in rs:
        c = sorted(r["calls"])
        p90 = c[min(len(c) - 1, int(0.9 * len(c)))]
        lines.append(f"| {r['case']} | {r['noise']:.0%} | {r['ok']}/{r['seeds']} | "
                     f"{statistics.median(c):.0f} | {p90} | "
                     f"{statistics.median(r['steps']):.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--quick", action="store_true", help="8 seeds; prints, writes nothing")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    seeds = 8 if args.quick else args.seeds
    t0 = time.perf_counter()
    text = table(rows(seeds), (time.perf_counter() - t0) / 60)
    print(text)
    if not args.quick:
        write_section(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
