"""Dependent draws: how often the dependent-draws check fires, and how often a violation or a
'verdict-deterministic' call is reported without its warning, through the real ``run``.

Agents (tests/support/noisy_agents.py): a response cache (repeat probability 0.8) over the
case-invariant text gate with 15% noise, or over a two-label agent whose pair-disagreement
rate is theta on every input; two gate replicas that differ (one blocks where the other asks
for review) behind a round-robin load balancer; and the same agents without the cache or the
balancer (independent draws). 20 inputs, one worker, alpha = 0.05 (the check at alpha/4).
Rates with 95% Clopper-Pearson intervals.

    python benchmarks/dependence.py [--reps 100] [--output docs/statistics.md]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentverity_props import from_callable, run  # noqa: E402
from agentverity_props.decide import clopper_pearson  # noqa: E402
from agentverity_props.runner import RunConfig  # noqa: E402
from tests.support.noisy_agents import (  # noqa: E402
    binary_noise_agent,
    gate_replicas,
    round_robin,
    sticky,
    text_planted_agent,
)

INPUTS = [f"request number {i} about account {i * 7}"
          + (" and it is urgent, please" if i % 2 else "") for i in range(20)]
BEGIN, END = "<!-- dependence:begin -->", "<!-- dependence:end -->"


def scenarios() -> list[tuple[str, bool, Callable[[int], Any]]]:
    def cache(base: Callable[[int], Any]) -> Callable[[int], Any]:
        return lambda s: sticky(base(s), 0.8, random.Random(s + 10**6))

    def gate(s: int) -> Any:
        return text_planted_agent(0.15, random.Random(s), bug=False)

    def binary(theta: float) -> Callable[[int], Any]:
        return lambda s: binary_noise_agent(theta, random.Random(s))

    def replicas(s: int) -> Any:
        return round_robin(gate_replicas(0.05, random.Random(s)))

    return [
        ("cache 0.8 over the gate (15% noise), relations", True, cache(gate)),
        ("round-robin replicas of the gate, relations", True, replicas),
        ("round-robin replicas of the gate, meter only", False, replicas),
        ("cache 0.8 over theta = 0.10 (= 2 eps), meter only", False, cache(binary(0.10))),
        ("cache 0.8 over theta = 0.20, meter only", False, cache(binary(0.20))),
        ("independent: the gate (15% noise), relations", True, gate),
        ("independent: theta = 0.10, meter only", False, binary(0.10)),
        ("independent: theta = 0.02, meter only", False, binary(0.02)),
    ]


def rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n, alpha=0.05)
    return f"{k}/{n} = {k / n:.0%} [{lo:.0%}, {hi:.0%}]"


def measure(make: Callable[[int], Any], relations: bool, reps: int,
            suppress: bool) -> dict[str, Any]:
    fired = det = viol = bare = 0
    calls = dep_calls = 0
    for s in range(reps):
        cfg = RunConfig(seed=s, max_workers=1, alpha=0.05,
                        suppress_health_check=["dependent_draws"] if suppress else [])
        r = run(from_callable(make(s), identity="sim"), INPUTS, None if relations else [],
                config=cfg)
        f = r.dependence is not None and r.dependence.fired
        d = r.meter.call == "verdict-deterministic"
        v = any(x.status == "VIOLATED" for x in r.relations)
        fired += f
        det += d
        viol += v
        bare += (d or v) and not f
        calls += int(r.ledger["calls"])
        dep_calls += r.phase_calls.get("dependence", 0)
    return {"fired": fired, "det": det, "viol": viol, "bare": bare, "calls": calls / reps,
            "dep_calls": dep_calls / reps}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--output", type=Path, default=None,
                    help="a markdown file holding the dependence markers to fill")
    args = ap.parse_args(argv)
    rows = ["| agent | check fires | 'deterministic' | violation | 'deterministic' or "
            "violation without the warning | mean calls (check's) | check suppressed: "
            "'deterministic' / violation |", "|---|---|---|---|---|---|---|"]
    t0 = time.time()
    for name, rels, make in scenarios():
        on = measure(make, rels, args.reps, suppress=False)
        off = measure(make, rels, args.reps, suppress=True)
        n = args.reps
        rows.append(f"| {name} | {rate(on['fired'], n)} | {rate(on['det'], n)} | "
                    f"{rate(on['viol'], n) if rels else '–'} | {rate(on['bare'], n)} | "
                    f"{on['calls']:.0f} ({on['dep_calls']:.0f}) | {off['det']}/{n} / "
                    f"{str(off['viol']) + '/' + str(n) if rels else '–'} |")
        print(rows[-1], f"[{time.time() - t0:.0f}s]", flush=True)
    table = "\n".join(rows)
    footer = (f"\n\n*{args.reps} seeded runs per row, `python benchmarks/dependence.py "
              f"--reps {args.reps}`.*")
    if args.output is not None:
        text = args.output.read_text()
        if BEGIN not in text or END not in text:
            print(f"{args.output} has no {BEGIN} ... {END} markers", file=sys.stderr)
            return 2
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        args.output.write_text(f"{head}{BEGIN}\n{table}{footer}\n{END}{tail}")
    else:
        print(table + footer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
