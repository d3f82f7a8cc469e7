"""The price of a guarantee: calls and verdicts of `run` under each profile.

The agents are `relation_effects.py`'s (each answers a prompt from its source's own verdict
distribution, so every built-in relation holds unless a bug is planted): 15% noise with
nothing violated, a deterministic agent with nothing violated, an LLM-like agent (modal shares
0.4-0.97), and a quiet gate on which one input's upper case becomes a coin flip (the per-input
guarantee's case: found by the screen, not by the pooled effect).

    python benchmarks/profiles.py --seeds 5            # table to stdout
    python benchmarks/profiles.py --seeds 5 --write    # into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _docs import write_section
from relation_effects import (
    THREE,
    deterministic_clean,
    llm_like,
    noisy_clean,
    one_of_n,
    prompts,
)

from agentverity_props import from_callable, run
from agentverity_props.relations import select_builtins
from agentverity_props.runner import RunConfig

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "profiles"

PROFILES = ("quick", "standard", "thorough")
#: quick at the tolerance of the other profiles (its own default is 0.2): what quick's
#: sampling alone buys
QUICK_01 = "quick, tolerance 0.1"
#: (agent, inputs, relations (None: every built-in), agent maker, relation tallied ("*":
#: every exercised one), the profiles it runs under)
CASES = [
    ("15% noise, nothing violated, 8 relations", 30, None, noisy_clean, "*",
     ("quick", QUICK_01, "standard", "thorough")),
    # the probe set ten times larger: thorough left out (every edit kind on 300 inputs)
    ("15% noise, nothing violated, 8 relations", 300, None, noisy_clean, "*",
     ("quick", "standard")),
    ("deterministic, nothing violated, 8 relations", 30, None, deterministic_clean, "*",
     PROFILES),
    ("LLM-like (modal shares 0.4-0.97), 3 relations", 27, THREE, llm_like, "*", PROFILES),
    ("quiet gate, one input's upper case -> coin flip", 30, THREE, one_of_n(0.0), "case",
     PROFILES),
]


def run_one(n: int, rels: tuple[str, ...] | None, make, profile: str, seed: int
            ) -> tuple[dict[str, str], int, str]:
    ps = prompts(n, seed)
    name, _, tol = profile.partition(", tolerance ")
    res = run(from_callable(make(ps, seed), identity=f"profiles-{seed}"), ps,
              None if rels is None else select_builtins(list(rels)),
              config=RunConfig(seed=seed, max_workers=4, profile=name,
                               tolerance=float(tol) if tol else None))
    paths = {str((r.effect or {}).get("deterministic_path") or "") for r in res.relations}
    path = "taken" if "taken" in paths else "refused" if any(
        p.startswith("refused") for p in paths) else ""
    return ({r.relation.name: str(r.status) for r in res.relations},
            int(res.ledger.get("calls", 0)), path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.name}")
    args = ap.parse_args(argv)
    lines = ["| agent | profile | HOLDS (all tallied) | VIOLATED | mean calls | max calls | "
             "deterministic path |", "|---|---|---|---|---|---|---|"]
    for name, n, rels, make, expect, profiles in CASES:
        for profile in profiles:
            holds = violated = 0
            calls: list[int] = []
            taken = 0
            for seed in range(args.seeds):
                st, c, path = run_one(n, rels, make, profile, seed)
                vals = [v for v in st.values() if v != "NOT EXERCISED"] if expect == "*" \
                    else [st[expect]]
                holds += all(v == "HOLDS" for v in vals)
                violated += any(v == "VIOLATED" for v in vals)
                calls.append(c)
                taken += path == "taken"
            k = args.seeds
            lines.append(f"| {name} ({n} inputs) | {profile} | {holds / k:.0%} | "
                         f"{violated / k:.0%} | {sum(calls) / k:,.0f} | {max(calls):,} | "
                         f"{taken}/{k} |")
            print(lines[-1], flush=True)
    body = ("## Profiles: the price of a guarantee\n\n" + "\n".join(lines)
            + f"\n\n*{args.seeds} seeds per row, 4 workers, alpha 0.05, tolerance 0.1 "
            "(quick: 0.2, its default, unless the row names one); quick = the pooled "
            "effect only, every epoch a uniform sample of the inputs; standard = every pair "
            "screened at size 0.5 and beta 0.05; both on the deterministic path (one "
            "follow-up draw a pair, audited) when the meter certifies a deterministic "
            "verdict, which finds a coin-flip follow-up with about its flip share (the "
            "quiet gate's row); thorough = every edit kind on every input at beta 0.01, "
            "never on that path: "
            f"`python benchmarks/profiles.py --seeds {args.seeds} --write`.*")
    if args.write:
        write_section(DOC, SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
