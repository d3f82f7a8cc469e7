"""The floor of a pooled HOLDS: the fewest agent calls any test of a relation's pooled effect
needs for every relation of a run to HOLD at tolerance 0.1, against what `run --profile quick
--tolerance 0.1` spends (the profiles table's row "quick, tolerance 0.1"; quick's own default
tolerance is 0.2).

An idealised test, better than any real one: every input gets ``n`` source draws (shared by
the run's relations) and ``m`` follow-up draws per relation; each side's effect estimate is the
mean over the inputs of the exact U-statistics the pooled test scores (forward and reverse,
relations/_pooled.py ``exact_scores``); its standard deviation is KNOWN (the oracle's, not an
estimate), its distribution exactly normal, and it is looked at ONCE, so a HOLDS needs only
``estimate + z_(1-beta) * sd < tolerance`` on both sides. No anytime validity, no variance to
estimate, no skew to guard against: a real test needs more. The agents are
``benchmarks/profiles.py``'s: a binary verdict whose modal share is the same on an input's
source and follow-ups (every relation holds exactly), 0.95, 0.85 or 0.70 on every input, or
drawn per input uniformly from 0.4-0.97 (LLM-like); seven relations stand for the eight
built-in ones (``tool-selection`` is not exercised on a verdict-only agent).

For each design (n, m) the script simulates the run many times and reports the share of runs
in which every relation HOLDS; the floor is the cheapest design reaching 50% and 90%. The calls
of the meter and the health checks (about 240 at 15% noise) come on top.

    python benchmarks/pooled_floor.py                  # table to stdout
    python benchmarks/pooled_floor.py --write          # into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import NormalDist

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _docs import write_section

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "pooled-floor"

TOLERANCE, BETA = 0.1, 0.05
DESIGNS = [(n, m) for n in (4, 6, 8, 10, 12, 16) for m in (2, 3, 4, 5, 6, 7, 8, 10)]


def u_scores(src: np.ndarray, fu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward and reverse U-statistics of binary draws, one per row: ``src`` (rows x n) and
    ``fu`` (rows x m) hold 1 for the modal verdict."""
    n, m = src.shape[1], fu.shape[1]
    ks, kf = src.sum(axis=1), fu.sum(axis=1)
    cross = (ks * (m - kf) + (n - ks) * kf) / (n * m)          # mean [s != f]
    base_s = 2 * ks * (n - ks) / (n * (n - 1))                  # mean over i != i' [s != s']
    base_f = 2 * kf * (m - kf) / (m * (m - 1))
    return cross - base_s, cross - base_f


#: the modal shares the oracle's variances are tabulated at (binary verdicts are symmetric)
GRID = np.round(np.arange(0.40, 1.0001, 0.01), 2)


def variance_table(n: int, m: int, rng: np.random.Generator, reps: int = 20000
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per modal share of ``GRID``: the variance of one input's forward and reverse
    U-statistic (the oracle's: from many simulated inputs)."""
    vf, vr = [], []
    for share in GRID:
        src = (rng.random((reps, n)) < share).astype(np.int64)
        fu = (rng.random((reps, m)) < share).astype(np.int64)
        fwd, rev = u_scores(src, fu)
        vf.append(fwd.var())
        vr.append(rev.var())
    return np.asarray(vf), np.asarray(vr)


def all_hold_share(shares: np.ndarray, n: int, m: int, relations: int,
                   rng: np.random.Generator) -> float:
    """The share of simulated runs (rows of ``shares``: each input's modal share) in which
    every relation HOLDS under the idealised test."""
    runs, inputs = shares.shape
    z = NormalDist().inv_cdf(1 - BETA)
    vf, vr = variance_table(n, m, rng)
    at = np.clip(np.searchsorted(GRID, np.round(np.maximum(shares, 1 - shares), 2)), 0,
                 len(GRID) - 1)
    sd_f = np.sqrt(vf[at].sum(axis=1)) / inputs
    sd_r = np.sqrt(vr[at].sum(axis=1)) / inputs
    ok = np.ones(runs, dtype=bool)
    src = (rng.random((runs, inputs, n)) < shares[..., None]).astype(np.int64)
    for _ in range(relations):
        fu = (rng.random((runs, inputs, m)) < shares[..., None]).astype(np.int64)
        fwd, rev = u_scores(src.reshape(-1, n), fu.reshape(-1, m))
        d_f = fwd.reshape(runs, inputs).mean(axis=1)
        d_r = rev.reshape(runs, inputs).mean(axis=1)
        ok &= (d_f + z * sd_f < TOLERANCE) & (d_r + z * sd_r < TOLERANCE)
    return float(ok.mean())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=4000, help="simulated runs per design")
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.name}")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(20261207)
    cases = [("5% noise, 30 inputs, 7 relations", (0.95, 0.95), 30, 7),
             ("15% noise, 30 inputs, 7 relations", (0.85, 0.85), 30, 7),
             ("30% noise, 30 inputs, 7 relations", (0.70, 0.70), 30, 7),
             ("LLM-like (modal shares 0.4-0.97), 27 inputs, 3 relations", (0.4, 0.97), 27,
              3)]
    lines = ["| agent | cheapest design: all HOLD in >= 50% of runs | calls | cheapest: "
             ">= 90% of runs | calls |", "|---|---|---:|---|---:|"]
    for name, (lo, hi), inputs, rels in cases:
        best: dict[float, tuple[int, tuple[int, int], float]] = {}
        shares = rng.uniform(lo, hi, size=(args.runs, inputs))
        for n, m in DESIGNS:
            calls = inputs * (n + rels * m)
            p = all_hold_share(shares, n, m, rels, rng)
            for goal in (0.5, 0.9):
                if p >= goal and (goal not in best or calls < best[goal][0]):
                    best[goal] = (calls, (n, m), p)
        cells = []
        for goal in (0.5, 0.9):
            if goal in best:
                calls, (n, m), p = best[goal]
                cells += [f"{n} sources, {m} follow-ups a relation an input ({p:.0%})",
                          f"{calls:,}"]
            else:
                cells += ["none of the designs tried", "-"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    note = (f"*The idealised test above (oracle variance, exact normality, one look at beta "
            f"{BETA}, tolerance {TOLERANCE}, both sides of every invariant relation); "
            f"designs: n in 4-16 sources an input, m in 2-10 follow-ups a relation an input; "
            f"{args.runs} simulated runs per design; the meter's and the health checks' calls "
            f"come on top: `python benchmarks/pooled_floor.py --write`.*")
    table = "\n".join(lines)
    print(table)
    print(note)
    if args.write:
        write_section(DOC, SECTION, "## The floor of a pooled HOLDS\n\n" + table + "\n\n" + note)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
