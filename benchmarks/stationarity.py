"""A changed agent: how often ``run`` names it (and exits non-zero), how often ``snapshot``
refuses it, what the changed-agent check costs a steady agent, and whether a meter call over
draws that lost their verdict carries the incompleteness beside it.

Agents (own seeded ``random.Random`` each, counting their own calls): a two-label gate on 20
inputs (half "attack plan i" -> block, half "hello friend i" -> allow), noise-free for its
first 80 calls and then answering the other label on 30% of calls on every input (a model
swapped at call 80); the same gate with noise ramping from 0 to 30% over its first 300 calls;
steady gates (no noise; uneven noise: 4 inputs flip a coin, 4 flip 5% of the time, the rest
never). One worker, alpha = 0.05 (the change check at alpha/8). Rates with 95%
Clopper-Pearson intervals.

    python benchmarks/stationarity.py [--reps 100] [--output docs/benchmarks.md]
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

from agentverity_props import by_key, create_snapshot, from_callable, measure, run  # noqa: E402
from agentverity_props.decide import clopper_pearson  # noqa: E402
from agentverity_props.runner import RunConfig  # noqa: E402
from benchmarks._docs import write_section  # noqa: E402

INPUTS = [f"attack plan {i}" for i in range(10)] + [f"hello friend {i}" for i in range(10)]


def gate(seed: int, noise: Callable[[int, str], float]) -> Callable[[str], str]:
    """The gate; ``noise(call, prompt)`` is the chance that this call flips its label."""
    rng, calls = random.Random(seed), [0]

    def agent(prompt: str) -> str:
        calls[0] += 1
        label = "block" if "attack" in prompt.lower() else "allow"
        if rng.random() < noise(calls[0], prompt):
            return "allow" if label == "block" else "block"
        return label
    return agent


def swap(call: int, prompt: str) -> float:
    return 0.3 if call > 80 else 0.0


def ramp(call: int, prompt: str) -> float:
    return 0.3 * min(call, 300) / 300


def steady(call: int, prompt: str) -> float:
    return 0.0


def uneven(call: int, prompt: str) -> float:
    i = int(prompt.rsplit(" ", 1)[1])
    return 0.5 if i < 2 else 0.05 if i < 4 else 0.0


def rate(k: int, n: int) -> str:
    lo, hi = clopper_pearson(k, n, alpha=0.05)
    return f"{k}/{n} = {k / n:.0%} [{lo:.0%}, {hi:.0%}]"


def run_row(name: str, noise: Callable[[int, str], float], reps: int,
            relations: bool) -> str:
    fired = nonzero = det = 0
    calls = change_calls = 0
    for s in range(reps):
        r = run(from_callable(gate(s, noise), identity="sim"), INPUTS,
                None if relations else [], config=RunConfig(seed=s, max_workers=1))
        fired += bool(r.change and r.change.fired)
        nonzero += int(r.exit_code) != 0
        det += r.meter.call == "verdict-deterministic"
        calls += int(r.ledger["calls"])
        change_calls += r.phase_calls.get("stationarity", 0)
    return (f"| `run`{' (relations)' if relations else ' --no-relations'}: {name} | "
            f"{rate(fired, reps)} | {rate(nonzero, reps)} | {rate(det, reps)} | "
            f"{calls / reps:.0f} ({change_calls / reps:.0f}) |")


def snapshot_row(name: str, noise: Callable[[int, str], float], reps: int) -> str:
    refused = admitted = 0
    calls = change_calls = 0
    for s in range(reps):
        res = create_snapshot(gate(s, noise), INPUTS, accept_reference=True,
                              config=RunConfig(seed=s, max_workers=1))
        refused += any(x.rule == "unchanged-agent" for x in res.refusals)
        admitted += res.admitted
        calls += res.document["calls"]["total"]
        change_calls += res.document["calls"].get("change", 0)
    return (f"| `snapshot --accept-reference`: {name} | {rate(refused, reps)} | "
            f"admitted {rate(admitted, reps)} | – | {calls / reps:.0f} "
            f"({change_calls / reps:.0f}) |")


def check_row(name: str, noise: Callable[[int, str], float], reps: int) -> str:
    """Snapshot a steady gate, then ``check`` an agent whose noise follows ``noise`` from
    the check's first call (``call`` counts the check's calls)."""
    from agentverity_props import compare_snapshot

    changed = drift = nonzero = admitted = 0
    calls = change_calls = 0
    for s in range(reps):
        res = create_snapshot(gate(s, steady), INPUTS, accept_reference=True,
                              config=RunConfig(seed=s, max_workers=1))
        if not res.admitted:
            continue
        admitted += 1
        chk = compare_snapshot(gate(10_000 + s, noise), INPUTS, res.document,
                               config=RunConfig(seed=s, max_workers=1))
        changed += chk.status == "changed"
        drift += chk.status == "drift"
        nonzero += chk.exit_code != 0
        calls += int(chk.calls["total"])
        change_calls += int(chk.calls.get("change", 0))
    n = max(admitted, 1)
    return (f"| `check`: {name} | changed {rate(changed, n)} (drift {drift}) | "
            f"{rate(nonzero, n)} | – | {calls / n:.0f} ({change_calls / n:.0f}) |")


def check_swap(call: int, prompt: str) -> float:
    return 0.3 if call > 40 else 0.0  # a clean check's screen ends near call 43


def screen_swap(call: int, prompt: str) -> float:
    return 0.3 if call > 20 else 0.0  # inside the screen


def drifted(call: int, prompt: str) -> float:
    return 1.0 if prompt == "attack plan 3" else 0.0


def missing_row(reps: int) -> str:
    det = beside = 0
    for s in range(reps):
        rng = random.Random(s)

        def agent(prompt: str, rng: random.Random = rng) -> dict[str, Any]:
            label = "block" if "attack" in prompt else "allow"
            if rng.random() < 0.053:  # pair disagreement ~0.10
                label = "allow" if label == "block" else "block"
            if label == "block" and rng.random() < 0.9:
                return {"text": "an answer the parser cannot read"}
            return {"verdict": label}

        m = measure(from_callable(agent), INPUTS, seed=s, max_workers=1,
                    extractor=by_key("verdict"))
        d = m.call == "verdict-deterministic"
        det += d
        beside += d and m.call_text.startswith("verdict-deterministic (incomplete: ") \
            and m.guarantee().startswith("incomplete: ")
    return (f"| `measure()`: 90% of 'block' answers without a verdict, true pair "
            f"disagreement ~0.10 | 'verdict-deterministic' {rate(det, reps)} | with "
            f"'incomplete: N draws without a verdict' beside it: {beside}/{det} | – | – |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--output", type=Path, default=None,
                    help="docs/benchmarks.md: fill its 'stationarity' (and "
                         "'stationarity-check') section")
    ap.add_argument("--part", choices=("all", "run", "check"), default="all",
                    help="run/snapshot/measure rows, the check's rows, or both")
    args = ap.parse_args(argv)
    n = args.reps
    if args.part in ("all", "check"):
        _check_part(n, args.output)
    if args.part == "check":
        return 0
    rows = ["| scenario | change check fires / snapshot refused (`unchanged-agent`) | "
            "exit != 0 / admitted | 'verdict-deterministic' | mean calls (the check's) |",
            "|---|---|---|---|---|"]
    t0 = time.time()
    plan: list[Callable[[], str]] = [
        lambda: run_row("swap at call 80 (0 -> 30% noise)", swap, n, False),
        lambda: run_row("swap at call 80 (0 -> 30% noise)", swap, max(n // 5, 1), True),
        lambda: run_row("ramp 0 -> 30% noise over 300 calls", ramp, n, False),
        lambda: run_row("ramp 0 -> 30% noise over 300 calls", ramp, max(n // 5, 1), True),
        lambda: run_row("steady, noise-free", steady, n, False),
        lambda: run_row("steady, uneven noise (2 coin flips, 2 at 5%)", uneven, n, False),
        lambda: run_row("steady, noise-free", steady, max(n // 5, 1), True),
        lambda: snapshot_row("swap at call 80 (0 -> 30% noise)", swap, n),
        lambda: snapshot_row("steady, noise-free", steady, n),
        lambda: missing_row(n),
    ]
    for make in plan:
        rows.append(make())
        print(rows[-1], f"[{time.time() - t0:.0f}s]", flush=True)
    minutes = (time.time() - t0) / 60
    body = "\n".join([
        "## A changed agent (the changed-agent check)",
        "",
        f"Measured by `python benchmarks/stationarity.py --reps {n}` ({minutes:.1f} min). "
        f"{n} seeded runs per row ({max(n // 5, 1)} for the rows with relations); 20 inputs, "
        "one worker, alpha = 0.05 (the check at alpha/8). See the script's docstring for "
        "the agents. In the rows with relations the gate's literal keyword match breaks "
        "under the typo relation (a real violation, exit 1 on the steady agent too): there "
        "\"exit != 0\" is not the change check's alone.",
        "",
        *rows])
    if args.output is not None:
        write_section(args.output, "stationarity", body)
    else:
        print(body)
    return 0


def _check_part(n: int, output: Path | None) -> None:
    t0 = time.time()
    rows = ["| scenario | status `changed` (drift) | exit != 0 | – | mean calls (the change "
            "trials') |", "|---|---|---|---|---|"]
    for name, noise in (
            ("swap at the check's call 40, the end of its screen (0 -> 30% noise)", check_swap),
            ("swap at the check's call 20, inside its screen (0 -> 30% noise)", screen_swap),
            ("drifted before the check (one input flipped), steady", drifted),
            ("steady, noise-free", steady)):
        rows.append(check_row(name, noise, n))
        print(rows[-1], f"[{time.time() - t0:.0f}s]", flush=True)
    body = "\n".join([
        "## A changed agent during a `check`",
        "",
        f"Measured by `python benchmarks/stationarity.py --part check --reps {n}` "
        f"({(time.time() - t0) / 60:.1f} min). Each row: {n} snapshots of the steady gate "
        "(20 inputs, one worker, alpha 0.05), then `check` of an agent whose noise follows "
        "the scenario from the check's first call (the change trials at alpha/8). A swap "
        "inside the screen makes the screen reject re-admission and the stability meter "
        "call the agent stochastic: not admissible (exit 2), not named as a change.",
        "",
        *rows])
    if output is not None:
        write_section(output, "stationarity-check", body)
    else:
        print(body)


if __name__ == "__main__":
    raise SystemExit(main())
