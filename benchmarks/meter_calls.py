"""Calls to a meter decision: this meter vs agentverity 0.25.5 vs a fixed-sample Wilson design.

Run from the repository root::

    python benchmarks/meter_calls.py              # full run (a few minutes); rewrites the
                                                  # `meter` section of docs/benchmarks.md and
                                                  # docs/img/meter_calls.png
    python benchmarks/meter_calls.py --quick      # smoke run: few reps, prints, writes nothing
    python benchmarks/meter_calls.py --reps 400 --av-reps 200

Every method meters the same simulated agents: 20 distinct inputs; each call returns the
verdict ``review`` with probability ``p`` and ``allow`` otherwise, drawn from that input's own
``random.Random`` (seeded by repetition and input), with ``p = (1 - sqrt(1 - 2d)) / 2`` so two
calls of one input disagree with probability exactly ``d``. Calls are counted inside the agent.

Methods, at epsilon 0.05 and alpha 0.05:

* this meter: ``agentverity_props.measure(from_callable(agent), inputs, epsilon=0.05,
  max_workers=1, seed=rep)`` (and ``max_workers=4``);
* agentverity 0.25.5, driven through its own Python API exactly as its CLI ``run
  --no-relations`` does (``run(from_callable(agent), inputs, relations=[],
  config=RunConfig(epsilon=0.05, sequential=...))``), in a throwaway virtual environment
  (``--venv``, default /tmp/agentverity-bench-venv) created here with ``pip install
  agentverity==0.25.5``; never a dependency of this project;
* a fixed-sample Wilson design: the smallest number of pairs at which zero flips certify
  (two-sided 95% Wilson upper bound < epsilon: 73 pairs, 146 calls), pairs taken round-robin
  over the inputs, called by the Wilson interval at that fixed n;
* Wald's SPRT (p0 = epsilon/2, p1 = 2 epsilon): exact expected calls, the efficiency reference.

An error is what the meter's guarantee bounds: ``verdict-stochastic`` when d <= epsilon/2,
``verdict-deterministic`` when d >= 2 epsilon.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Standard library only at import time: this file also runs as the agentverity worker inside
# the throwaway virtual environment, where neither this project nor numpy is installed.
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _docs import write_section  # noqa: E402

EPSILON = 0.05
ALPHA = 0.05
GRID = (0.0, 0.01, 0.025, 0.10, 0.20, 0.50)
N_INPUTS = 20
INPUTS = tuple(f"ticket {i}: please check order #{1000 + 7 * i}" for i in range(N_INPUTS))
AGENTVERITY = "agentverity==0.25.5"
DEFAULT_VENV = Path("/tmp/agentverity-bench-venv")
SECTION = "meter"
METHODS = ("ours", "ours4", "av", "avseq", "wilson")
LABELS = {"ours": "this meter", "ours4": "this meter, max_workers=4",
          "av": "agentverity default", "avseq": "agentverity --sequential",
          "wilson": "fixed-sample Wilson"}
HALF_TARGET = 0.5
WALD_TARGET = 1.3


# ------------------------------------------------------------------ the simulated agent


def minority_share(d: float) -> float:
    """P(minority verdict) of a binary agent whose two calls disagree with probability d.

    >>> round(2 * minority_share(0.1) * (1 - minority_share(0.1)), 12)
    0.1
    """
    if not 0.0 <= d <= 0.5:
        raise ValueError(f"pair disagreement {d} must be in [0, 0.5] for a binary verdict")
    return (1.0 - math.sqrt(1.0 - 2.0 * d)) / 2.0


class SimAgent:
    """A binary gate with pair disagreement ``d`` on every input; counts its own calls.

    Each input draws from its own ``random.Random`` seeded by (seed, d, input), so the
    agent never touches global random state and a repetition is reproducible in any process.
    """

    def __init__(self, d: float, seed: int) -> None:
        self.p = minority_share(d)
        self.key = f"{seed}|{d!r}"
        self.calls = 0
        self._rngs: dict[str, random.Random] = {}
        self._lock = threading.Lock()  # max_workers > 1 calls from several threads

    def __call__(self, prompt: str) -> dict[str, str]:
        with self._lock:
            self.calls += 1
            rng = self._rngs.get(prompt)
            if rng is None:
                rng = self._rngs[prompt] = random.Random(f"{self.key}|{prompt}")
            verdict = "review" if rng.random() < self.p else "allow"
        return {"text": verdict, "verdict": verdict}


def normalise_call(call: str) -> str:
    """Map each tool's labels onto deterministic / stochastic / undecided."""
    if call.endswith("deterministic"):
        return "deterministic"
    if call.endswith("stochastic"):
        return "stochastic"
    return "undecided"


def is_error(d: float, call: str, *, epsilon: float = EPSILON) -> bool:
    """The error the meter's guarantee bounds at this d (none inside the indifference zone)."""
    if d <= epsilon / 2:
        return call == "stochastic"
    if d >= 2 * epsilon:
        return call == "deterministic"
    return False


# ------------------------------------------------------------------ fixed-sample Wilson


def wilson_pairs_to_certify(epsilon: float) -> int:
    """Smallest n at which zero flips in n pairs give a Wilson upper bound below epsilon.

    >>> wilson_pairs_to_certify(0.05)
    73
    """
    from agentverity_props.decide import wilson

    n = 1
    while wilson(0, n)[1] >= epsilon:
        n += 1
    return n


def wilson_call(flips: int, n: int, epsilon: float) -> str:
    from agentverity_props.decide import wilson

    lo, hi = wilson(flips, n)
    if lo > epsilon:
        return "stochastic"
    if hi < epsilon:
        return "deterministic"
    return "undecided"


def run_wilson(d: float, reps: int, *, epsilon: float = EPSILON) -> list[tuple[int, str]]:
    n = wilson_pairs_to_certify(epsilon)
    out = []
    for rep in range(reps):
        agent = SimAgent(d, rep)
        flips = 0
        for t in range(n):
            prompt = INPUTS[t % len(INPUTS)]
            flips += agent(prompt)["verdict"] != agent(prompt)["verdict"]
        out.append((agent.calls, wilson_call(flips, n, epsilon)))
    return out


# ------------------------------------------------------------------ this meter


def run_ours(d: float, reps: int, *, workers: int, epsilon: float = EPSILON,
             alpha: float = ALPHA) -> list[tuple[int, str]]:
    sys.path.insert(0, str(ROOT))
    from agentverity_props import from_callable, measure

    out = []
    for rep in range(reps):
        agent = SimAgent(d, rep)
        m = measure(from_callable(agent, identity=f"sim-{d}-{rep}"), list(INPUTS),
                    epsilon=epsilon, alpha=alpha, max_workers=workers, seed=rep)
        out.append((agent.calls, normalise_call(m.call)))
    return out


def wald_calls(d: float, *, epsilon: float = EPSILON, alpha: float = ALPHA) -> float:
    """Exact expected calls (2 per pair) of Wald's SPRT of eps/2 vs 2 eps at disagreement d."""
    sys.path.insert(0, str(ROOT))
    from agentverity_props.decide import sprt_expected_n

    return 2.0 * sprt_expected_n(epsilon / 2, 2 * epsilon, d, alpha=alpha)


def sprt_error(d: float, *, epsilon: float = EPSILON, alpha: float = ALPHA,
               max_n: int = 20000) -> float:
    """Exact probability that the meter's SPRT makes the error at d (no call cap).

    The same dynamic programme as ``sprt_expected_n``: the distribution of the disagreement
    count is propagated pair by pair, and the mass absorbed at the wrong boundary summed.
    NaN inside the indifference zone, where no error is defined.
    """
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from agentverity_props.decide import BernoulliSPRT

    if epsilon / 2 < d < 2 * epsilon:
        return math.nan
    rule = BernoulliSPRT(epsilon / 2, 2 * epsilon, alpha=alpha)
    # the rule's documented boundaries: likelihood ratio of p1 to p0 up to 1/alpha, down to beta
    up, down = math.log(1 / rule.alpha), math.log(rule.beta)
    step1, step0 = math.log(rule.p1 / rule.p0), math.log((1 - rule.p1) / (1 - rule.p0))
    probs, wrong = np.array([1.0]), 0.0
    for n in range(1, max_n + 1):
        nxt = np.zeros(len(probs) + 1)
        nxt[:-1] += probs * (1.0 - d)
        nxt[1:] += probs * d
        k = np.arange(len(nxt))
        llr = k * step1 + (n - k) * step0
        high, low = llr >= up, llr <= down
        wrong += float(nxt[low if d >= 2 * epsilon else high].sum())
        nxt[high | low] = 0.0
        probs = nxt
        if probs.sum() < 1e-12:
            break
    return wrong


# ------------------------------------------------------------------ agentverity, in its venv


def ensure_agentverity(venv: Path) -> Path:
    """The python of a throwaway venv holding agentverity 0.25.5 (created if needed)."""
    py = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    want = AGENTVERITY.split("==")[1]
    probe = [str(py), "-c", "import agentverity, sys; sys.stdout.write(agentverity.__version__)"]
    if py.exists():
        got = subprocess.run(probe, capture_output=True, text=True, check=False)
        if got.returncode == 0 and got.stdout.strip() == want:
            return py
    print(f"creating {venv} with {AGENTVERITY} (benchmark only) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    AGENTVERITY], check=True)
    got = subprocess.run(probe, capture_output=True, text=True, check=True)
    if got.stdout.strip() != want:
        raise RuntimeError(f"{venv} holds agentverity {got.stdout.strip()}, not {want}")
    return py


def start_agentverity(py: Path, grid: tuple[float, ...], reps: int,
                      epsilon: float) -> subprocess.Popen[str]:
    spec = json.dumps({"grid": list(grid), "reps": reps, "epsilon": epsilon})
    return subprocess.Popen([str(py), str(Path(__file__).resolve()), "--agentverity-worker",
                             spec], stdout=subprocess.PIPE, text=True, cwd=ROOT)


def agentverity_worker(spec_json: str) -> int:
    """Runs inside the throwaway venv: one JSON line per agentverity run on stdout."""
    from agentverity import RunConfig, from_callable, run

    spec = json.loads(spec_json)
    for d in spec["grid"]:
        for mode in ("av", "avseq"):
            for rep in range(spec["reps"]):
                agent = SimAgent(d, rep)
                # what `agentverity run --agent ... --no-relations [--sequential]` does
                res = run(from_callable(agent), list(INPUTS), relations=[],
                          config=RunConfig(epsilon=spec["epsilon"], sequential=mode == "avseq"))
                assert res.meter is not None
                print(json.dumps({"d": d, "method": mode, "rep": rep, "calls": agent.calls,
                                  "call": res.meter.call, "pairs": res.meter.pair_trials,
                                  "k": res.config.k}), flush=True)
    return 0


def collect_agentverity(proc: subprocess.Popen[str]) -> dict[tuple[float, str], list[Any]]:
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"agentverity worker failed with exit code {proc.returncode}")
    runs: dict[tuple[float, str], list[Any]] = {}
    for line in out.splitlines():
        r = json.loads(line)
        runs.setdefault((r["d"], r["method"]), []).append(
            (r["calls"], normalise_call(r["call"])))
    return runs


# ------------------------------------------------------------------ summary and report


@dataclass(frozen=True)
class Summary:
    reps: int
    median: float
    mean: float
    error: float
    undecided: float


def summarise(d: float, runs: list[tuple[int, str]]) -> Summary:
    calls = [c for c, _ in runs]
    return Summary(reps=len(runs), median=statistics.median(calls),
                   mean=statistics.fmean(calls),
                   error=sum(is_error(d, call) for _, call in runs) / len(runs),
                   undecided=sum(call == "undecided" for _, call in runs) / len(runs))


def verdicts(table: dict[tuple[float, str], Summary], wald: dict[float, float],
             grid: tuple[float, ...]) -> dict[str, Any]:
    """The three targets, computed from the table."""
    ratios = [table[d, "ours"].median / table[d, "av"].median for d in grid]
    ratios_seq = [table[d, "ours"].median / table[d, "avseq"].median for d in grid]
    outside = [d for d in grid if d < EPSILON / 2 or d > 2 * EPSILON]
    wald_ratio = {d: table[d, "ours"].mean / wald[d] for d in grid}
    worst_err = {m: max(table[d, m].error for d in grid) for m in ("ours", "ours4")}
    return {
        "half": statistics.fmean(ratios), "half_seq": statistics.fmean(ratios_seq),
        "half_ok": statistics.fmean(ratios) <= HALF_TARGET,
        "worst_err": worst_err, "err_ok": all(v <= ALPHA for v in worst_err.values()),
        "outside": outside, "wald_ratio": wald_ratio,
        "wald_worst": max(wald_ratio[d] for d in outside) if outside else math.nan,
        "wald_ok": all(wald_ratio[d] <= WALD_TARGET for d in outside),
    }


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _num(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def render(table: dict[tuple[float, str], Summary], wald: dict[float, float],
           exact: dict[float, float], grid: tuple[float, ...], *, seconds: float,
           plot_rel: str | None) -> str:
    v = verdicts(table, wald, grid)
    reps = {m: table[grid[0], m].reps for m in METHODS}
    k = wilson_pairs_to_certify(EPSILON)
    half_width = 1.96 * math.sqrt(ALPHA * (1 - ALPHA) / reps["ours"])
    ok = {True: "**met**", False: "**missed**"}
    lines = [
        "## Meter: calls to a decision",
        "",
        f"Measured by `python benchmarks/meter_calls.py` ({seconds / 60:.1f} min on "
        f"{os.cpu_count()} CPU(s), Python {platform.python_version()}). epsilon {EPSILON}, "
        f"alpha {ALPHA}. Simulated binary agents on {N_INPUTS} inputs: each call answers "
        "`review` with probability p = (1 - sqrt(1 - 2d)) / 2 (else `allow`) from the input's "
        "own seeded `random.Random`, so two calls of an input disagree with probability d; "
        "calls are counted inside the agent. Repetitions per point: "
        + ", ".join(f"{LABELS[m]} {reps[m]}" for m in METHODS) + ". "
        f"agentverity 0.25.5 runs in a throwaway venv through its Python API as its CLI "
        f"`run --no-relations [--sequential]` does (auto-sized k); the fixed-sample Wilson "
        f"design takes {k} pairs ({2 * k} calls, the fewest at which zero flips certify), "
        "round-robin over the inputs. Wald E[N]: exact expected calls of the SPRT of "
        f"{EPSILON / 2:g} vs {2 * EPSILON:g} (2 calls per pair), without a call cap; this "
        "meter stops at 600 calls (`undecided`).",
        "",
        "Median agent calls to a decision (undecided runs count what they spent):",
        "",
        "| d | this meter | max_workers=4 | agentverity default | agentverity --sequential "
        "| fixed Wilson | Wald E[N] calls | this meter mean / Wald |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for d in grid:
        row = [f"{d:g}"] + [_num(table[d, m].median) for m in METHODS]
        row += [f"{wald[d]:.1f}", f"{v['wald_ratio'][d]:.2f}"]
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        "Error rate / undecided rate. An error is `verdict-stochastic` at d <= epsilon/2 and "
        "`verdict-deterministic` at d >= 2 epsilon (what the meter guarantees at most alpha "
        "for). The last column is the exact error probability of the SPRT the meter runs "
        f"(computed, not simulated; no call cap): with {reps['ours']} repetitions an observed "
        f"rate near alpha is within about +-{100 * half_width:.1f} points of the true one "
        "(95%).",
        "",
        "| d | error | this meter | max_workers=4 | agentverity default "
        "| agentverity --sequential | fixed Wilson | the meter's SPRT, exact error |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for d in grid:
        what = "stochastic" if d <= EPSILON / 2 else "deterministic"
        cells = [f"{_pct(table[d, m].error)} / {_pct(table[d, m].undecided)}" for m in METHODS]
        lines.append(f"| {d:g} | called {what} | " + " | ".join(cells)
                     + f" | {100 * exact[d]:.2f}% |")
    outside = ", ".join(f"{d:g}" for d in v["outside"])
    und = {m: max((table[d, m].undecided, d) for d in grid) for m in METHODS}
    lines += [
        "",
        f"- Calls: the mean over the grid of (this meter's median / agentverity default's "
        f"median) is **{v['half']:.2f}** (target <= {HALF_TARGET}: {ok[v['half_ok']]}); "
        f"against agentverity --sequential it is {v['half_seq']:.2f}.",
        f"- Errors: the worst error rate of this meter over the grid is "
        f"{_pct(v['worst_err']['ours'])} (max_workers=4: {_pct(v['worst_err']['ours4'])}); "
        f"target <= alpha = {_pct(ALPHA)} at every point: {ok[v['err_ok']]}.",
        "- Undecided: " + "; ".join(
            f"{LABELS[m]} up to {_pct(und[m][0])} (d = {und[m][1]:g})" for m in METHODS) + ".",
        f"- Efficiency: outside [epsilon/2, 2 epsilon] (d = {outside}) this meter's mean calls "
        f"are at most **{v['wald_worst']:.2f}x** Wald's E[N] (target <= {WALD_TARGET}x: "
        f"{ok[v['wald_ok']]}).",
    ]
    if plot_rel:
        lines += ["", f"![Median calls to a decision against d]({plot_rel})"]
    return "\n".join(lines)


def plot(table: dict[tuple[float, str], Summary], wald: dict[float, float],
         grid: tuple[float, ...], path: Path) -> None:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = list(range(len(grid)))  # d = 0 has no place on a log axis: evenly spaced, labelled
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    styles = {"ours": ("o-", "C0"), "ours4": ("o:", "C0"), "av": ("s-", "C3"),
              "avseq": ("s--", "C1"), "wilson": ("^-", "C2")}
    for m in METHODS:
        fmt, colour = styles[m]
        ax.plot(xs, [table[d, m].median for d in grid], fmt, color=colour, label=LABELS[m])
    ax.plot(xs, [wald[d] for d in grid], "k--", lw=1, label="Wald SPRT E[N] (a mean)")
    zone = [i for i, d in enumerate(grid) if EPSILON / 2 <= d <= 2 * EPSILON]
    if zone:
        ax.axvspan(min(zone) - 0.15, max(zone) + 0.15, color="0.9", zorder=0,
                   label=f"[eps/2, 2 eps], eps={EPSILON:g}")
    ax.set_yscale("log")
    ax.set_yticks([10, 20, 50, 100, 200], ["10", "20", "50", "100", "200"])
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_ylim(8, 260)
    ax.set_xticks(xs, [f"{d:g}" for d in grid])
    ax.set_xlabel("true pair disagreement d")
    ax.set_ylabel("median agent calls to a decision")
    ax.set_title("Calls to a meter decision (20 inputs)")
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


# ------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--agentverity-worker"]:
        return agentverity_worker(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=200,
                        help="repetitions per point for this meter and Wilson (default 200)")
    parser.add_argument("--av-reps", type=int, default=100,
                        help="repetitions per point for each agentverity mode (default 100)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run (20/10 reps, 3 points); print, write nothing")
    parser.add_argument("--venv", type=Path, default=DEFAULT_VENV,
                        help="throwaway venv for agentverity 0.25.5 (created if missing)")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "meter_calls.png")
    args = parser.parse_args(argv)
    grid = (0.0, 0.10, 0.50) if args.quick else GRID
    reps, av_reps = (20, 10) if args.quick else (args.reps, args.av_reps)

    t0 = time.perf_counter()
    py = ensure_agentverity(args.venv)
    # agentverity runs in its own process meanwhile: two cores, two workloads
    proc = start_agentverity(py, grid, av_reps, EPSILON)
    runs: dict[tuple[float, str], list[Any]] = {}
    for d in grid:
        for m, fn in (("ours", lambda d=d: run_ours(d, reps, workers=1)),
                      ("ours4", lambda d=d: run_ours(d, reps, workers=4)),
                      ("wilson", lambda d=d: run_wilson(d, reps))):
            t = time.perf_counter()
            runs[d, m] = fn()
            s = summarise(d, runs[d, m])
            print(f"d={d:<6g} {m:7} median {s.median:6.1f} calls, error {s.error:.3f}, "
                  f"undecided {s.undecided:.3f} ({time.perf_counter() - t:.1f} s)", flush=True)
    print("waiting for agentverity ...", flush=True)
    runs.update(collect_agentverity(proc))
    table = {key: summarise(key[0], r) for key, r in runs.items()}
    for d in grid:
        for m in ("av", "avseq"):
            s = table[d, m]
            print(f"d={d:<6g} {m:7} median {s.median:6.1f} calls, error {s.error:.3f}, "
                  f"undecided {s.undecided:.3f}", flush=True)
    wald = {d: wald_calls(d) for d in grid}
    exact = {d: sprt_error(d) for d in grid}
    seconds = time.perf_counter() - t0
    if args.quick:
        print(render(table, wald, exact, grid, seconds=seconds, plot_rel=None))
        return 0
    plot(table, wald, grid, args.plot)
    rel = os.path.relpath(args.plot, args.output.parent).replace(os.sep, "/")
    write_section(args.output, SECTION, render(table, wald, exact, grid, seconds=seconds,
                                               plot_rel=rel))
    print(f"wrote {args.output} and {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
