"""The per-input screen's cost against its floor, at 0, 5, 15 and 30% noise.

For each noise level (every input answers its modal verdict with probability 1 - noise; the
relation holds on every input):

* *floor*: the expected follow-ups of a sequential probability ratio test that knows the
  agent's noise exactly, clearing one pair against its violation (the follow-up violating on a
  share 0.5 of its draws beyond the source's noise) at beta 0.05, on paired terms:
  ``log(1/beta) / KL(holds || violation)`` (at no noise: a coin flip's quiet clearance);
* *simulated*: the screen's clearing e-process alone on simulated terms (mean follow-ups per
  pair, and the share of pairs its cap leaves not screened);
* *in a run*: ``run`` at the defaults with the profile ``standard`` on 30 inputs and the
  relations ``case``, ``whitespace``, ``punctuation`` (their edit families), the screen's draws
  counted apart from every other phase: follow-up draws per pair, source draws per input
  (shared by the input's relations), and the screen's calls per pair in all.

    python benchmarks/screen_floor.py --seeds 3            # table to stdout
    python benchmarks/screen_floor.py --seeds 3 --write    # into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _docs import write_section
from relation_effects import Keyed, _modal, prompts

from agentverity_props import from_callable, run
from agentverity_props.decide import Clearing
from agentverity_props.relations import register_profile, select_builtins
from agentverity_props.runner import RunConfig

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "screen-floor"
NOISES = (0.0, 0.05, 0.15, 0.30)
SIZE, BETA, CAP = 0.5, 0.05, 24
#: standard without the deterministic path (at 0% noise the meter certifies the agent, and
#: standard would then screen each pair with one draw)
SCREENED = register_profile("standard-screened", parent="standard", deterministic_path=False)


def floor(noise: float) -> float:
    """Expected paired terms of the SPRT between 'holds' and the nearest violation."""
    r = noise
    if r == 0:
        return math.ceil(math.log(1 / BETA) / math.log(2))
    # D = f - x; holds: f, x ~ Bernoulli(r); violation: f ~ Bernoulli(r + SIZE)
    def dist(pf: float) -> dict[int, float]:
        return {1: pf * (1 - r), -1: (1 - pf) * r, 0: pf * r + (1 - pf) * (1 - r)}
    h, v = dist(r), dist(min(1.0, r + SIZE))
    kl = sum(p * math.log(p / v[d]) for d, p in h.items() if p > 0)
    return math.log(1 / BETA) / kl


def simulated(noise: float, runs: int = 2000) -> tuple[float, float]:
    rng = random.Random(f"floor:{noise}")
    pd = 2 * noise * (1 - noise)
    prior = min(0.5, max(0.02, pd))
    ns, capped = [], 0
    for _ in range(runs):
        terms: list[float] = []
        proc = Clearing(SIZE, prior)
        while len(terms) < CAP:
            f = float(rng.random() < noise)
            terms.append(f if noise == 0 else f - float(rng.random() < noise))
            if proc.run(terms).cleared(BETA):
                break
        capped += not proc.cleared(BETA)
        ns.append(len(terms))
    return statistics.mean(ns), capped / runs


def in_a_run(noise: float, seed: int) -> tuple[float, float, float]:
    import agentverity_props.relations._order as order

    ps = prompts(30, seed)
    agent = Keyed(ps, lambda i, p: 1.0 - noise, _modal(len(ps), seed), seed)
    seen: dict[str, float] = {}
    original = order.RunSteps.screen

    async def counted(self: order.RunSteps) -> None:
        before = {c.follow_up.fp: len(self.pool.get(c.follow_up.fp).draws)
                  for j in self.jobs for c in j.candidates}
        src = {c.source.fp: len(self.pool.get(c.source.fp).draws)
               for j in self.jobs for c in j.candidates}
        c0 = self.engine.ledger.calls
        await original(self)
        pairs = [c for j in self.jobs for c in j.candidates if (j.screen or {}).get(id(c))]
        if pairs:
            seen["fu"] = statistics.mean(len(self.pool.get(c.follow_up.fp).draws)
                                         - before[c.follow_up.fp] for c in pairs)
            seen["src"] = statistics.mean(len(self.pool.get(fp).draws) - n
                                          for fp, n in src.items())
            seen["per_pair"] = (self.engine.ledger.calls - c0) / len(pairs)

    order.RunSteps.screen = counted  # type: ignore[method-assign]
    try:
        run(from_callable(agent, identity=f"floor-{noise}-{seed}"), ps,
            select_builtins(["case", "whitespace", "punctuation"]),
            config=RunConfig(seed=seed, max_workers=4, profile=SCREENED))
    finally:
        order.RunSteps.screen = original  # type: ignore[method-assign]
    return seen.get("fu", 0.0), seen.get("src", 0.0), seen.get("per_pair", 0.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.name}")
    args = ap.parse_args(argv)
    lines = ["| noise | floor (SPRT, follow-ups a pair) | simulated: follow-ups a pair | "
             "simulated: not screened | run: follow-ups a pair | run: source draws an input | "
             "run: screen calls a pair |", "|---|---|---|---|---|---|---|"]
    for noise in NOISES:
        fl = floor(noise)
        sim, capped = simulated(noise)
        runs = [in_a_run(noise, s) for s in range(args.seeds)]
        fu, src, per = (statistics.mean(r[k] for r in runs) for k in range(3))
        lines.append(f"| {noise:.0%} | {fl:.1f} | {sim:.1f} | {capped:.1%} | {fu:.1f} | "
                     f"{src:.1f} | {per:.1f} |")
    table = "\n".join(lines)
    note = (f"\n\n*{args.seeds} seeds a row for the runs (30 inputs, `case`, `whitespace`, "
            "`punctuation` with their edit families, 4 workers); 2,000 simulated pairs a row; "
            "size 0.5, beta 0.05, a cap of 24 follow-ups; the runs use `standard` without its "
            "deterministic path (which at 0% noise screens each pair with one draw): "
            "`python benchmarks/screen_floor.py --seeds 3 --write`.*")
    print(table + note)
    if args.write:
        write_section(DOC, SECTION, "## The screen against its floor\n\n" + table + note + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
