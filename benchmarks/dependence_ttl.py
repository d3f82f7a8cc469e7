"""A response cache with a time to live (issue 47): how often the dependence check's spaced
blocks fire, what ``dependence.verdict`` says, and how often the meter's
'verdict-deterministic' comes without the warning, through the real ``run`` (meter and
checks, no relations; 20 inputs, alpha = 0.05, so the check at alpha/8).

Agents (tests/support/noisy_agents.py): ``ttl_cache(agent, T)`` returns the stored answer to
a prompt asked again within T calls (of the whole agent) of the call that filled it, over the
case-invariant text gate with 15% noise or a two-label agent of pair disagreement theta; and
the same agents without the cache. Rates with 95% Clopper-Pearson intervals.

    python benchmarks/dependence_ttl.py [--reps 100] [--output docs/statistics.md]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _docs import write_section  # noqa: E402

from agentverity_props import from_callable, run  # noqa: E402
from agentverity_props.decide import clopper_pearson  # noqa: E402
from agentverity_props.runner import RunConfig  # noqa: E402
from tests.support.noisy_agents import (  # noqa: E402
    binary_noise_agent,
    text_planted_agent,
    ttl_cache,
)

INPUTS = [f"request number {i} about account {i * 7}"
          + (" and it is urgent, please" if i % 2 else "") for i in range(20)]


def scenarios() -> list[tuple[str, int, Callable[[int], Any]]]:
    def gate(s: int) -> Any:
        return text_planted_agent(0.15, random.Random(s), bug=False)

    def binary(theta: float) -> Callable[[int], Any]:
        return lambda s: binary_noise_agent(theta, random.Random(s))

    def cached(base: Callable[[int], Any], ttl: int) -> Callable[[int], Any]:
        return lambda s: ttl_cache(base(s), ttl)

    return [
        ("TTL 30 over the gate (15% noise), 1 worker", 1, cached(gate, 30)),
        ("TTL 30 over the gate, 4 workers", 4, cached(gate, 30)),
        ("TTL 39 over the gate, 1 worker", 1, cached(gate, 39)),
        ("TTL 60 (beyond the spacing) over the gate, 1 worker", 1, cached(gate, 60)),
        ("TTL 30 over theta = 0.10 (= 2 eps), 1 worker", 1, cached(binary(0.10), 30)),
        ("independent: the gate, 1 worker", 1, gate),
        ("independent: theta = 0.10, 1 worker", 1, binary(0.10)),
        ("independent: theta = 0.02, 1 worker", 1, binary(0.02)),
    ]


def _rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n, alpha=0.05)
    return f"{k}/{n} = {k / n:.0%} [{lo:.0%}, {hi:.0%}]"


def row(name: str, workers: int, make: Callable[[int], Any], reps: int) -> str:
    fired = det = bare = calls = 0
    verdicts = {"detected": 0, "not detected": 0, "not ruled out": 0}
    for s in range(reps):
        r = run(from_callable(make(s), identity="sim"), INPUTS, [],
                config=RunConfig(seed=s, max_workers=workers, alpha=0.05))
        dep = r.dependence
        assert dep is not None
        fired += dep.fired
        det += r.meter.call == "verdict-deterministic"
        bare += r.meter.call == "verdict-deterministic" and not dep.fired
        verdicts[dep.verdict] += 1
        calls += dep.calls
    v = " / ".join(str(verdicts[k]) for k in ("detected", "not detected", "not ruled out"))
    return (f"| {name} | {_rate(fired, reps)} | {_rate(det, reps)} | {_rate(bare, reps)} "
            f"| {v} | {calls / reps:.0f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    lines = ["| agent | check fires | 'deterministic' | 'deterministic' without the warning "
             "| verdict: detected / not detected / not ruled out | mean calls of the check |",
             "|---|---|---|---|---|---|"]
    for name, workers, make in scenarios():
        lines.append(row(name, workers, make, args.reps))
        print(lines[-1], flush=True)
    lines += ["", f"*{args.reps} seeded runs per row, `python benchmarks/dependence_ttl.py "
              f"--reps {args.reps}`.*"]
    body = "\n".join(lines) + "\n"
    if args.output is not None:
        write_section(args.output, "ttl-power", body)
    print(f"{time.perf_counter() - t0:.0f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
