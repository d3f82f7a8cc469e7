"""A free-text agent graded by a judge: what the judge's noise costs, in agent calls and in
judge calls, and whether the planted bug is still found.

The shipped simulation (``agentverity_props.examples.judged_qa``): a QA agent on 30 questions
(three phrasings, its own ``random.Random``), with or without the paraphrase bug, graded by a
judge wrong on a share ``error`` of its calls. Rows: a noise-free judge; a judge wrong on 15%
of its calls under the default consensus rule (``margin=None``); the same judge called once
per draw (``margin=1``: its noise left in the verdicts). Each row is run on ``--seeds`` seeds,
clean and buggy agent alike; the table gives the relation's statuses, the agent's calls (mean
over seeds, and as a ratio to the noise-free judge's on the same seeds), the judge's calls and
its estimated per-call error rate (mean, and the largest distance from the true rate).

    python benchmarks/judge_calls.py [--seeds 3] [--output docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentverity_props import run  # noqa: E402
from agentverity_props.examples.judged_qa import (  # noqa: E402
    PARAPHRASE,
    make_judge,
    make_qa_agent,
    qa_inputs,
)
from agentverity_props.judge import Judge  # noqa: E402
from agentverity_props.runner import RunConfig  # noqa: E402
from benchmarks._docs import write_section  # noqa: E402

ROWS = (("noise-free judge", 0.0, None), ("judge wrong on 15%, consensus (default)", 0.15, None),
        ("judge wrong on 15%, one call per draw (margin=1)", 0.15, 1))


def one(seed: int, *, bug: bool, error: float, margin: int | None) -> dict[str, Any]:
    n = [0]
    lock = threading.Lock()
    inner = make_qa_agent(seed, paraphrase_bug=bug)

    def agent(prompt: str) -> str:
        with lock:
            n[0] += 1
        return inner(prompt)

    judge = Judge(make_judge(100 + seed, error=error), labels="correct,incorrect",
                  margin=margin)
    res = run(agent, qa_inputs(30), [PARAPHRASE], config=RunConfig(seed=seed, judge=judge))
    j = res.judge or {}
    return {"status": res.relations[0].status, "agent": n[0],
            "judge": j.get("calls", {}).get("judge", 0),
            "error_rate": (j.get("noise") or {}).get("error_rate")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args()
    seeds = range(args.seeds)
    lines = ["| judge | agent | statuses | agent calls (mean) | x noise-free | judge calls "
             "(mean) | error rate estimated (mean; max miss) |",
             "|---|---|---|---|---|---|---|"]
    base: dict[bool, list[int]] = {}
    for title, error, margin in ROWS:
        for bug in (False, True):
            got = [one(s, bug=bug, error=error, margin=margin) for s in seeds]
            calls = [g["agent"] for g in got]
            if error == 0.0:
                base[bug] = calls
            ratio = max(c / b for c, b in zip(calls, base[bug], strict=True))
            rates = [g["error_rate"] for g in got if g["error_rate"] is not None]
            est = (f"{sum(rates) / len(rates):.3f}; {max(abs(r - error) for r in rates):.3f}"
                   if rates else "-")
            statuses = ", ".join(f"{s} {sum(g['status'] == s for g in got)}/{len(got)}"
                                 for s in sorted({g["status"] for g in got}))
            lines.append(f"| {title} | {'paraphrase bug' if bug else 'clean'} | {statuses} | "
                         f"{sum(calls) / len(calls):.0f} | {ratio:.2f} (max) | "
                         f"{sum(g['judge'] for g in got) / len(got):.0f} | {est} |")
    body = ("## Judges: what the judge's noise costs\n\n"
            f"`python benchmarks/judge_calls.py --seeds {args.seeds}` (docs/judges.md): the "
            "shipped QA agent on 30 questions and the paraphrase relation, graded by the "
            "shipped judge; seeds 0.." f"{args.seeds - 1}.\n\n" + "\n".join(lines) + "\n")
    print(body)
    if args.output is not None:
        write_section(args.output, "judge-calls", body)


if __name__ == "__main__":
    main()
