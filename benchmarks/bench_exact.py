"""bench's error rates and estimator bias, computed exactly through the runner's own rule.

Run from the repository root::

    python benchmarks/bench_exact.py           # rewrites the `bench-exact` section of
                                               # docs/statistics.md (a few seconds)
    python benchmarks/bench_exact.py --print   # prints the section, writes nothing

Every figure is an exact probability: the distribution of (runs made, passes) is propagated
through :class:`agentverity_props.decide.TaskRule` (branched with ``clone``), the object
``bench`` uses to stop each task (``stop_distribution``). "Before" is the rule as it was
before issue 13: at the ``--runs`` cap the observed pass rate decided.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from _docs import write_section  # noqa: E402

from agentverity_props.decide import (  # noqa: E402
    TaskRule,
    estimate,
    runs_to_pass,
    stop_distribution,
)

MARGIN, ALPHA = 0.05, 0.05
RUNS = (5, 10, 20, 59, 200)
THRESHOLDS = (0.8, 0.9, 1.0)


class PointEstimateAtCap(TaskRule):
    """The sequential rule before issue 13."""

    def __init__(self, *args, **kw):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kw, final_test=False, clean_pass=None)

    def update(self, passed: bool):  # type: ignore[no-untyped-def]
        d = super().update(passed)
        if d is not None and d[0] == "undecided":
            return ("pass" if self.passes / self.n >= self.threshold else "fail"), "cap"
        return d


def guarantee_table() -> str:
    rows = ["| threshold | --runs | P(PASS) before | P(PASS) now | P(UNDECIDED) at the "
            "good edge | same, without the final test |", "|---|---|---|---|---|---|"]
    for thr in THRESHOLDS:
        for runs in RUNS:
            bad = thr - MARGIN
            good = min(1.0, thr + MARGIN)
            before = stop_distribution(PointEstimateAtCap("sequential", runs, thr, ALPHA,
                                                          MARGIN), bad)[0].get("pass", 0.0)
            rule = TaskRule("sequential", runs, thr, ALPHA, MARGIN)
            now = stop_distribution(rule, bad)[0].get("pass", 0.0)
            und = stop_distribution(rule, good)[0].get("undecided", 0.0)
            sprt = TaskRule("sequential", runs, thr, ALPHA, MARGIN, final_test=False)
            und0 = stop_distribution(sprt, good)[0].get("undecided", 0.0)
            rows.append(f"| {thr:g} | {runs} | {before:.4f} | {now:.4f} | {und:.3f} | "
                        f"{und0:.3f} |")
    return "\n".join(rows)


def bias_table() -> str:
    rows = ["| p | mean passes / runs | mean reliability (pass^1) | mean pass^2 (truth) | "
            "P(pass@2 n/a) |", "|---|---|---|---|---|"]
    for p in (0.9, 0.7):
        rule = TaskRule("exact", 10, 1.0, ALPHA, MARGIN)
        _, ends = stop_distribution(rule, p)
        obs = rel = hat2 = na = 0.0
        for (n, s), (prob, path) in ends.items():
            e = estimate(list(path), rule, [1, 2])
            obs += prob * s / n
            rel += prob * (e.reliability or 0.0)
            hat2 += prob * (e.pass_hat["2"] or 0.0)
            na += prob * (e.pass_at["2"] is None)
        rows.append(f"| {p:g} | {obs:.4f} | {rel:.4f} | {hat2:.4f} ({p * p:.4f}) | {na:.3f} |")
    return "\n".join(rows)


def section() -> str:
    need = runs_to_pass(1.0, ALPHA, MARGIN)
    return f"""#### Exact error rates and bias (`benchmarks/bench_exact.py`)

One task, alpha {ALPHA:g}, margin {MARGIN:g}. P(PASS) is at a true pass rate of threshold −
margin (the edge of "should not pass"; P(PASS) only grows with the pass rate, so this is the
worst case). The last two columns are the price of the guarantee, P(UNDECIDED) at threshold +
margin (capped at 1.0), with the exact final test at the cap and with the SPRT alone. At
threshold 1.0 no PASS is possible before {need} clean runs (ln(1/alpha) / −ln(1 − margin)).

{guarantee_table()}

Threshold 1.0, 10 runs, `--early-stop exact` (a task stops at its first failure): exact means
of what is reported, against the truth p and p².

{bias_table()}
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--print", action="store_true", help="print only, write nothing")
    args = ap.parse_args(argv)
    body = section()
    if args.print:
        print(body)
    else:
        write_section(ROOT / "docs" / "statistics.md", "bench-exact", body)
        print("wrote the bench-exact section of docs/statistics.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
