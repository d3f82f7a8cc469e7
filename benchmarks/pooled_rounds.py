"""What the pooled test's rounds and epochs cost: the shaped rounds, small later epochs and
scored health-check draws against the rules they replaced, on the same agents and seeds.

Four designs of the pooled epochs (relations/_pooled.py, relations/_rounds.py), everything
else the same:

* **fixed blocks, quarter epochs** (the rule before): a round takes ``b`` sources and ``b``
  follow-ups, ``b`` = 2 / 3 / 4 / 6 by thresholds on the noise (0.02, 0.08, 0.3), with two
  more sources and one follow-up fewer when four or more relations share the round; every
  epoch after the first draws a quarter of ``min(inputs, 64)`` inputs, at least 8;
* **shaped rounds, quarter epochs**: the round's shape priced by relations/_rounds.py;
* **shaped rounds, epochs of 2**: later epochs draw 2 inputs;
* **... and the checks' draws scored** (now): the draws the health checks made after the
  meter (blindness top-up, dependence blocks) are scored by the epochs too; in the three
  designs above only the relation phase's own draws are.

The agents are `relation_effects.py`'s (nothing violated): calls are the unit of cost, and
every row states how many runs had every exercised relation HOLD.

    python benchmarks/pooled_rounds.py --seeds 50            # table to stdout
    python benchmarks/pooled_rounds.py --seeds 200 --write   # into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _docs import write_section
from relation_effects import THREE, llm_like, noisy_clean, prompts

import agentverity_props.relations._pooled as pooled
from agentverity_props import from_callable, run
from agentverity_props.relations import select_builtins
from agentverity_props.runner import RunConfig

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "pooled-rounds"

DESIGNS = ("fixed blocks, quarter epochs", "shaped rounds, quarter epochs",
           "shaped rounds, epochs of 2", "... and the checks' draws scored")
#: (agent, inputs, relations (None: every built-in), agent maker, profile, seeds share)
CASES = [
    ("15% noise, 8 relations", 30, None, noisy_clean, "quick", 1.0),
    ("15% noise, 8 relations", 300, None, noisy_clean, "quick", 0.25),
    ("LLM-like (modal shares 0.4-0.97), 3 relations", 27, THREE, llm_like, "quick", 1.0),
    ("15% noise, 8 relations", 30, None, noisy_clean, "standard", 0.25),
]


def fixed_block(noise: float | None) -> int:
    """The block the rule before took for this pair disagreement."""
    if noise is None or noise < 0.02:
        return 2
    if noise < 0.08:
        return 3
    return 4 if noise < 0.3 else 6


def fixed_round(noise: float | None, relations: int, **_: float) -> tuple[int, int]:
    b = fixed_block(noise)
    if relations < 4 or b < 3:
        return b, b
    return b + 2, b - 1


@contextmanager
def design(name: str) -> Iterator[None]:
    """Patch the pooled test to one design for the runs inside."""
    saved = (pooled.round_sizes, pooled.LATER_EPOCH, pooled.PooledEffects._epoch_inputs,
             pooled.PooledEffects.prepare)
    real_inputs = pooled.PooledEffects._epoch_inputs
    real_prepare = pooled.PooledEffects.prepare

    async def own_draws_only(self: pooled.PooledEffects) -> None:
        self.scorable_from = None  # every draw made before the relation phase unscored
        await real_prepare(self)

    def quarter_epochs(self: pooled.PooledEffects, live: list) -> list:
        if self.epochs == 0:
            return real_inputs(self, live)
        n = max(pooled.MIN_EPOCH, math.ceil(min(len(self.inputs), pooled.SWEEP_MAX) / 4))
        pooled.LATER_EPOCH = n
        try:
            return real_inputs(self, live)
        finally:
            pooled.LATER_EPOCH = saved[1]

    try:
        if name.startswith("fixed"):
            pooled.round_sizes = fixed_round  # type: ignore[assignment]
        if name.endswith("quarter epochs"):
            pooled.PooledEffects._epoch_inputs = quarter_epochs  # type: ignore[method-assign]
        if not name.endswith("scored"):
            pooled.PooledEffects.prepare = own_draws_only  # type: ignore[method-assign]
        yield
    finally:
        (pooled.round_sizes, pooled.LATER_EPOCH, pooled.PooledEffects._epoch_inputs,
         pooled.PooledEffects.prepare) = saved


def run_one(n: int, rels: tuple[str, ...] | None, make: Callable, profile: str,
            seed: int) -> tuple[bool, int]:
    ps = prompts(n, seed)
    res = run(from_callable(make(ps, seed), identity=f"rounds-{seed}"), ps,
              None if rels is None else select_builtins(list(rels)),
              config=RunConfig(seed=seed, max_workers=4, profile=profile))
    st = [str(r.status) for r in res.relations if str(r.status) != "NOT EXERCISED"]
    return all(s == "HOLDS" for s in st), int(res.ledger.get("calls", 0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.name}")
    args = ap.parse_args(argv)
    lines = ["| agent | profile | design | runs | all HOLD | mean calls | p90 | max |",
             "|---|---|---|---:|---:|---:|---:|---:|"]
    for name, n, rels, make, profile, share in CASES:
        seeds = max(10, round(args.seeds * share))
        for d in DESIGNS:
            with design(d):
                out = [run_one(n, rels, make, profile, 1000 + s) for s in range(seeds)]
            calls = sorted(c for _, c in out)
            lines.append(f"| {name} ({n} inputs) | {profile} | {d} | {seeds} | "
                         f"{sum(h for h, _ in out)} | {statistics.mean(calls):,.0f} | "
                         f"{calls[int(0.9 * len(calls))]:,} | {calls[-1]:,} |")
            print(lines[-1], flush=True)
    body = ("## Pooled rounds and epochs: what they cost\n\n" + "\n".join(lines)
            + "\n\n*Seeds 1000 on (the 300-input and standard rows a quarter as many), 4 "
            "workers, each profile at its default tolerance; fixed blocks = 2/3/4/6 draws a "
            "side by thresholds on the noise (four or more relations: two more sources, one "
            "follow-up fewer), quarter epochs = every later epoch a quarter of min(inputs, "
            "64) inputs, at least 8; shaped rounds = relations/_rounds.py; epochs of 2 = "
            "every later epoch 2 inputs; the checks' draws scored = the blindness top-up's and "
            "the dependence blocks' draws scored by the epochs (the meter's never are): "
            f"`python benchmarks/pooled_rounds.py --seeds {args.seeds} --write`.*")
    if args.write:
        write_section(DOC, SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
