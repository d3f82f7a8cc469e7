"""``bench --early-stop sequential``: the calls that decide a task, against a fixed-runs design.

Run from the repository root::

    python benchmarks/bench_calls.py           # rewrites the `bench-calls` section of
                                               # docs/benchmarks.md (under a minute)
    python benchmarks/bench_calls.py --print   # prints the section, writes nothing

Every figure is exact: the distribution of (runs made, passes) is propagated through
:class:`agentverity_props.decide.TaskRule` (``stop_distribution``), the object ``bench``
uses to stop each task, at ``--runs 200``, alpha 0.05 split over the tasks, margin 0.05.

* *fewest possible*: no rule with P(PASS) <= alpha/tasks at pass rate threshold - margin can
  pass a task before ``ceil(ln(alpha/tasks) / ln(threshold - margin))`` clean runs;
* *now* / *SPRT alone*: the runs a deterministic passing agent spends, with the clean-run
  PASS (``clean_pass_runs``) and without it (the rule before this change);
* *fixed runs*: the smallest n (and cut c) of a fixed-size test "PASS iff >= c of n pass"
  with both errors <= alpha/tasks at threshold -/+ margin, which spends n on every task;
* *E[runs]*: the sequential rule's mean runs at a pass rate, and P(UNDECIDED) at the good edge
  (threshold + margin, capped at 1), the price of stopping early.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from _docs import write_section  # noqa: E402

from agentverity_props.decide import TaskRule, stop_distribution  # noqa: E402

SECTION = "bench-calls"
ALPHA, MARGIN, RUNS = 0.05, 0.05, 200
THRESHOLDS = (0.8, 0.9, 0.95, 1.0)
TASKS = (1, 5)


def fixed_design(threshold: float, alpha: float) -> tuple[int, int]:
    """Smallest (n, c): P(>= c of n | threshold - margin) <= alpha and P(< c of n |
    min(1, threshold + margin)) <= alpha."""
    from scipy import stats

    bad, good = threshold - MARGIN, min(1.0, threshold + MARGIN)
    for n in range(1, 100_000):
        for c in range(n + 1):
            if stats.binom.sf(c - 1, n, bad) <= alpha:
                if good >= 1.0 or stats.binom.cdf(c - 1, n, good) <= alpha:
                    return n, c
                break
    raise RuntimeError("no fixed design")


def mean_runs(rule: TaskRule, p: float) -> tuple[float, float]:
    calls, ends = stop_distribution(rule, p)
    return sum(n * prob for (n, _), (prob, _) in ends.items()), calls.get("undecided", 0.0)


def clean_runs(rule: TaskRule) -> int:
    r = rule.clone()
    for n in range(1, RUNS + 1):
        d = r.update(True)
        if d is not None:
            return n
    return RUNS


def table() -> str:
    rows = ["| threshold | tasks | fewest possible | deterministic agent: now | SPRT alone "
            "(before) | fixed runs (n, cut) | E[runs] now at threshold + margin | at "
            "threshold - margin | P(UNDECIDED) at threshold + margin, now / before |",
            "|---:|---:|---:|---:|---:|---|---:|---:|---|"]
    for thr in THRESHOLDS:
        for k in TASKS:
            a = ALPHA / k
            fewest = math.ceil(math.log(a) / math.log(thr - MARGIN) - 1e-12)
            now = TaskRule("sequential", RUNS, thr, a, MARGIN)
            old = TaskRule("sequential", RUNS, thr, a, MARGIN, clean_pass=None)
            n_f, c_f = fixed_design(thr, a)
            good = min(1.0, thr + MARGIN)
            e_good, und = mean_runs(now, good)
            e_bad, _ = mean_runs(now, thr - MARGIN)
            _, und_old = mean_runs(old, good)
            rows.append(f"| {thr:g} | {k} | {fewest} | {clean_runs(now)} | {clean_runs(old)} "
                        f"| {n_f} (>= {c_f}) | {e_good:.1f} | {e_bad:.1f} | {und:.4f} / "
                        f"{und_old:.4f} |")
    return "\n".join(rows)


def section() -> str:
    return f"""## bench --early-stop sequential: the calls that decide a task

Computed exactly by `python benchmarks/bench_calls.py` through the runner's own `TaskRule`
(`--runs {RUNS}`, alpha {ALPHA:g} split over the tasks, margin {MARGIN:g}). A deterministic
passing agent is decided after the "now" runs per task; "fewest possible" is the bound no
rule with the same guarantee can beat; the fixed-runs design spends its n on every task.

{table()}

At threshold 1.0 the SPRT already passes at the fewest possible runs (its PASS is exactly
"n clean runs"): 59 for one task, 90 for five at these settings. Only a larger alpha or a
wider `--margin` lowers it (the bound is ln(alpha/tasks) / ln(threshold - margin)).
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print only, write nothing")
    args = ap.parse_args(argv)
    body = section()
    if args.print:
        print(body)
    else:
        write_section(ROOT / "docs" / "benchmarks.md", SECTION, body)
        print(body)
        print("wrote the bench-calls section of docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
