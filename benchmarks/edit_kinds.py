"""A bug confined to one kind of edit: does `run` find it, at the defaults, and name the kind?

A ticket router (30 everyday support prompts, four routes) with one planted bug at a time: `!`
anywhere, a final `?` on a text that was not a question, trailing whitespace, a tab, an
all-upper-case text; each sends the prompt to `technical`. The router's own noise (a random route
on a share of calls) is 0, 10% or 30%. The row tallies the relation the bug belongs to: how often
it ends VIOLATED, and how often the kind that confirmed it is the planted one. The clean router's
rows tally every relation (a false VIOLATED there is an error). Profiles: standard (default).

    python benchmarks/edit_kinds.py --seeds 20            # table to stdout
    python benchmarks/edit_kinds.py --seeds 20 --write    # into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _docs import write_section

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository root

from agentverity_props import from_callable, run
from agentverity_props.relations import builtin_relations
from agentverity_props.runner import RunConfig
from tests.support.routers import BUGS, PROMPTS, router

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "edit-kinds"

def run_one(bug: str | None, noise: float, seed: int) -> dict[str, object]:
    rels = builtin_relations(BUGS[bug][0]) if bug else builtin_relations(
        "whitespace", "punctuation", "case")
    t = time.perf_counter()
    res = run(from_callable(router(bug, noise, seed), identity=f"router-{bug}-{noise}-{seed}"),
              PROMPTS, rels, config=RunConfig(seed=seed, max_workers=1))
    secs = time.perf_counter() - t
    violated = [r for r in res.relations if r.status == "VIOLATED"]
    named = bool(bug) and any(k in BUGS[bug][1] and v["confirmed"]
                              for r in violated for k, v in r.edits_tried().items())
    return {"violated": bool(violated), "named": named, "calls": int(res.ledger["calls"]),
            "secs": secs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.name}")
    args = ap.parse_args(argv)
    lines = ["| bug | relation tallied | noise | VIOLATED | kind named | mean calls | goal |",
             "|---|---|---|---|---|---|---|"]
    for bug in [*BUGS, None]:
        for noise in (0.0, 0.1, 0.3):
            rows = [run_one(bug, noise, s) for s in range(args.seeds)]
            n = len(rows)
            v = sum(bool(r["violated"]) for r in rows) / n
            named = sum(bool(r["named"]) for r in rows) / n
            calls = sum(int(r["calls"]) for r in rows) / n  # type: ignore[call-overload]
            which = f"`{BUGS[bug][0]}`" if bug else "`whitespace`, `punctuation`, `case`"
            goal = "VIOLATED >= 95%, kind named" if bug else "no VIOLATED (<= alpha)"
            kind = f"{named:.0%}" if bug else "–"
            lines.append(f"| {bug or 'none (clean router)'} | {which} | {noise:.0%} | {v:.0%} "
                         f"| {kind} | {calls:,.0f} | {goal} |")
            print(lines[-1], flush=True)
    body = ("## A bug on one kind of edit (relation families)\n\n" + "\n".join(lines)
            + f"\n\n*{args.seeds} seeds per row, 30 inputs, the defaults (profile standard, "
            "alpha 0.05): `python benchmarks/edit_kinds.py --seeds "
            f"{args.seeds} --write`.*")
    if args.write:
        write_section(DOC, SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
