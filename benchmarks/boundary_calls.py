"""Boundary location: how often a threshold or a keyword is located, and at what cost in calls.

Run from the repository root::

    python benchmarks/boundary_calls.py            # full run (40 seeds per row); rewrites
                                                   # the `boundary` section of docs/benchmarks.md
    python benchmarks/boundary_calls.py --quick    # 5 seeds; prints, writes nothing

Agents (offline callables, each with its own ``random.Random``; with probability ``noise`` a
call answers the other label):

* travel cost: ``manager`` above a cost of 2,000, else ``approve``; ``a`` and ``b`` differ in
  the cost only, the two ends drawn per seed from the row's range;
* parcel weight: ``freight`` above 31.5 kg (a decimal threshold), else ``parcel``;
* mixed: the travel agent, with ``a`` and ``b`` differing also in three other words (destination,
  class, purpose) that do not matter;
* graded: the travel agent's cost rule made gradual, as a sampled model's often is:
  P(manager) = 0.05 + 0.9 / (1 + exp(-(cost - 2,000) / 30)) (10% at about 1,915, 90% at about
  2,085); "within 1%" cannot be reached there, so that row reports the pairs bracketing 2,000
  within 20% under "within" instead, and "wrong" a pair not bracketing 2,000;
* keyword: a shipping gate that holds any parcel naming lithium, aerosol or fireworks; ``a`` and
  ``b`` differ in five words, one of them the keyword.

"located" is the share of seeds whose result is ``located``; "within 1%" the share whose pair
brackets the true threshold and whose two values are within 1% of it (for the keyword: whose
crossing edit is the keyword); "wrong" the located pairs that do not bracket it. Calls are
every agent call of the location (both ends, every step, the final confirmation); "bisection"
the calls of the steps alone.
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import cpus, write_section  # noqa: E402

SECTION = "boundary"


def _noisy(rule: Callable[[str], str], labels: tuple[str, str], noise: float,
           seed: int) -> Callable[[str], str]:
    rng = random.Random(seed)

    def agent(prompt: str) -> str:
        v = rule(prompt)
        if rng.random() < noise:
            v = labels[1] if v == labels[0] else labels[0]
        return v
    return agent


def _cost(prompt: str) -> str:
    m = re.search(r"costs? ([\d,]+)", prompt)
    return "manager" if m and int(m.group(1).replace(",", "")) > 2000 else "approve"


def _weight(prompt: str) -> str:
    m = re.search(r"([\d.]+) kg", prompt)
    return "freight" if m and float(m.group(1)) > 31.5 else "parcel"


def _graded(seed: int) -> Callable[[str], str]:
    import math
    rng = random.Random(seed)

    def agent(prompt: str) -> str:
        m = re.search(r"costs? ([\d,]+)", prompt)
        v = int(m.group(1).replace(",", "")) if m else 0
        p = 0.05 + 0.9 / (1 + math.exp(-(v - 2000) / 30))
        return "manager" if rng.random() < p else "approve"
    return agent


def _keyword(prompt: str) -> str:
    return "hold" if re.search(r"\b(lithium|aerosol|fireworks)\b", prompt) else "ship"


def _num(s: str) -> float:
    return float(s.replace(",", "").lstrip("$"))


def scenario(kind: str, lo_range: tuple[float, float], hi_range: tuple[float, float],
             rng: random.Random) -> tuple[Callable[[str], str], str, str, float | str,
                                          tuple[str, str]]:
    lo, hi = rng.uniform(*lo_range), rng.uniform(*hi_range)
    if kind == "weight":
        return (_weight, f"A crate to Leeds weighs {lo:.1f} kg, insured",
                f"A crate to Leeds weighs {hi:.1f} kg, insured", 31.5, ("parcel", "freight"))
    if kind == "mixed":
        return (_cost, f"Trip to Porto in economy for a workshop, costs {int(lo):,} total",
                f"Trip to Vigo in premium for a conference, costs {int(hi):,} total", 2000,
                ("approve", "manager"))
    if kind == "graded":
        return (_cost, f"Trip to Porto, costs {int(lo):,} in total",
                f"Trip to Porto, costs {int(hi):,} in total", 2000, ("approve", "manager"))
    if kind == "keyword":
        return (_keyword, "Send 2 boxes of books and a lamp to Lyon by road",
                "Send 2 boxes of lithium cells and a heater to Bonn by air", "lithium",
                ("ship", "hold"))
    return (_cost, f"Trip to Porto, costs {int(lo):,} in total",
            f"Trip to Porto, costs {int(hi):,} in total", 2000, ("approve", "manager"))


def measure(kind: str, noise: float, lo_range: tuple[float, float],
            hi_range: tuple[float, float], seeds: int) -> dict[str, float]:
    from agentverity_props import locate_boundary

    located = within = wrong = 0
    calls, bisection = [], []
    for seed in range(seeds):
        rule, a, b, truth, labels = scenario(kind, lo_range, hi_range, random.Random(seed))
        agent = _graded(seed) if kind == "graded" else _noisy(rule, labels, noise, seed)
        loc = locate_boundary(agent, a, b, budget=300)
        calls.append(loc.calls)
        bisection.append(sum(s["draws"] for s in loc.step_log))
        if not loc.located:
            continue
        located += 1
        e = loc.edit
        assert e is not None
        if isinstance(truth, str):
            ok = e["after"] == truth
            within += ok
            wrong += rule(loc.low) == rule(loc.high)
        else:
            before, after = _num(e["before"]), _num(e["after"])
            brackets = before <= truth < after
            wrong += not brackets
            share = 0.20 if kind == "graded" else 0.01
            within += brackets and after - before <= share * truth
    q = statistics.quantiles(calls, n=10)[-1] if len(calls) > 1 else calls[0]
    return {"located": located / seeds, "within": within / seeds, "wrong": wrong,
            "median": statistics.median(calls), "p90": q,
            "bisection": statistics.median(bisection)}


ROWS = [
    ("travel cost", "cost", 0.0, (100, 1900), (2100, 8000)),
    ("travel cost", "cost", 0.05, (100, 1900), (2100, 8000)),
    ("travel cost, wide range", "cost", 0.0, (10, 500), (10_000, 1_000_000)),
    ("travel cost, wide range", "cost", 0.05, (10, 500), (10_000, 1_000_000)),
    ("travel cost, 3 other words differ", "mixed", 0.05, (100, 1900), (2100, 8000)),
    ("parcel weight (decimals)", "weight", 0.0, (0.5, 30.0), (33.0, 95.0)),
    ("parcel weight (decimals)", "weight", 0.05, (0.5, 30.0), (33.0, 95.0)),
    ("graded cost (10% → 90% over 1,915–2,085)", "graded", 0.0, (100, 1900), (2100, 8000)),
    ("keyword (5 words differ)", "keyword", 0.0, (0, 0), (0, 0)),
    ("keyword (5 words differ)", "keyword", 0.05, (0, 0), (0, 0)),
]


def _range(kind: str, lo: tuple[float, float], hi: tuple[float, float]) -> str:
    if kind == "keyword":
        return "–"
    f = (lambda x: f"{x:g}") if kind == "weight" else (lambda x: f"{int(x):,}")
    return f"{f(lo[0])}–{f(lo[1])} → {f(hi[0])}–{f(hi[1])}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--quick", action="store_true", help="5 seeds; print, write nothing")
    args = ap.parse_args(argv)
    seeds = 5 if args.quick else args.seeds
    rows = ["| agent | noise | ends (a → b) | located | within 1% (keyword: the word) | wrong "
            "| calls median | calls p90 | bisection calls median |",
            "|---|---|---|---|---|---|---|---|---|"]
    t0 = time.time()
    for name, kind, noise, lo, hi in ROWS:
        m = measure(kind, noise, lo, hi, seeds)
        shown = "graded" if kind == "graded" else f"{noise:.0%}"
        rows.append(f"| {name} | {shown} | {_range(kind, lo, hi)} | {m['located']:.0%} | "
                    f"{m['within']:.0%} | {m['wrong']:.0f} | {m['median']:.0f} | "
                    f"{m['p90']:.0f} | {m['bisection']:.0f} |")
        print(rows[-1], f"[{time.time() - t0:.0f}s]", flush=True)
    body = "\n".join([
        "## Boundary location",
        "",
        "`locate_boundary(agent, a, b)` at its defaults (alpha 0.05, resolution 1%, steps sized "
        "for 10% noise at 2% error, budget 300 here): the share of seeds whose result is "
        "`located`, the share within 1% of the true threshold (for the keyword row: naming the "
        "keyword), located pairs that are wrong, and the agent calls of the whole location "
        "(both ends, every step, the final confirmation) and of the bisection steps alone. "
        "Goal (issue 28): a numeric threshold within 1% in at most 60 calls at 5% noise. The "
        "graded row's \"within\" column is within 20% (a pair confirmed beyond the noise "
        "cannot be narrower than the ramp), and its \"wrong\" counts pairs that lie beside the "
        "ramp's middle (2,000) rather than across it: their edit does change the verdict "
        "distribution beyond the noise (the claim that is decided), but the verdicts they "
        "name are majorities settled at 5% error only.",
        "",
        *rows,
        "",
        f"*{seeds} seeds per row; `python benchmarks/boundary_calls.py --seeds {seeds}`; "
        f"Python {platform.python_version()}, {cpus()} CPUs, {time.time() - t0:.0f} s.*",
    ])
    if args.quick:
        print(body)
    else:
        write_section(ROOT / "docs" / "benchmarks.md", SECTION, body)
        print(f"wrote the {SECTION!r} section of docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
