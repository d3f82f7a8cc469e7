"""Where the time of ``agentverity-props report run.json --html run.html`` goes.

Run from the repository root::

    python benchmarks/html_report.py            # 5 repeats; rewrites the `html-report`
                                                # section of docs/benchmarks.md
    python benchmarks/html_report.py --quick    # 2 repeats, prints, writes nothing

The result rendered is a real run of the shipped plain gate on its first 15 moderation
inputs (``run(..., relations=builtin_relations())``, written as JSON). Each repeat is a fresh
interpreter (a cold start, as a user's command is), timed two ways: the whole command as a
subprocess (wall time, and CPU time from the child's rusage), and, in another fresh
interpreter, each phase on its own (CPU time by ``time.process_time``): importing the
report package and jinja2, the three run plots (cold, then again warm), and the template;
it also records whether rendering imported matplotlib. CPU time is the figure to compare:
on a shared machine wall time also counts the time other processes held the CPU (the load
average is stated).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import write_section  # noqa: E402

PHASES = r"""
import json, sys, time
t = time.process_time
marks = [("start", t())]
import agentverity_props.report as R
marks.append(("import agentverity_props.report", t()))
import jinja2, markupsafe
marks.append(("import jinja2", t()))
d = R.load_result(sys.argv[1])
marks.append(("read the JSON", t()))
from agentverity_props.report import _html_kinds as K
K.run_context(d)
marks.append(("3 run plots, cold (first figure)", t()))
K.run_context(d)
marks.append(("3 run plots, warm", t()))
R.render_html(d, source="run.json")
marks.append(("whole page, warm (plots + template)", t()))
print(json.dumps({"phases": [(name, marks[i][1] - marks[i - 1][1]) for i, (name, _) in
                             enumerate(marks) if i],
                  "matplotlib": "matplotlib" in sys.modules}))
"""


def make_result(where: Path) -> Path:
    from agentverity_props import builtin_relations, run
    from agentverity_props.examples.plain import gate
    from agentverity_props.runner import RunConfig

    inputs = (ROOT / "examples/inputs/moderation.txt").read_text().splitlines()[:15]
    res = run(gate, inputs, relations=builtin_relations(),
              config=RunConfig(max_workers=1, seed=0))
    out = where / "run.json"
    out.write_text(json.dumps(res.to_dict()))
    return out


def whole_command(result: Path, where: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "agentverity_props", "report", str(result),
                    "--html", str(where / "run.html")], check=True, capture_output=True,
                   cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def phases(result: Path) -> tuple[list[tuple[str, float]], bool]:
    out = json.loads(subprocess.run([sys.executable, "-c", PHASES, str(result)], check=True,
                                    capture_output=True, text=True, cwd=ROOT,
                                    env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout)
    return [(str(n), float(v)) for n, v in out["phases"]], bool(out["matplotlib"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="2 repeats, write nothing")
    args = ap.parse_args()
    reps = 2 if args.quick else args.reps
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        result = make_result(where)
        n_inputs = len(json.loads(result.read_text())["meter"]["per_input"])
        whole = [whole_command(result, where) for _ in range(reps)]
        got = [phases(result) for _ in range(reps)]
        per = [p for p, _ in got]
        mpl = any(m for _, m in got)
    load1 = os.getloadavg()[0]
    names = [n for n, _ in per[0]]
    med = {n: statistics.median(p[i][1] for p in per) for i, n in enumerate(names)}
    wall = statistics.median(w for w, _ in whole)
    cpu = statistics.median(c for _, c in whole)
    lines = [
        "## HTML report time",
        "",
        f"Measured by `python benchmarks/html_report.py` on {os.cpu_count()} CPU(s), Python "
        f"{platform.python_version()} ({platform.python_implementation()}, "
        f"{platform.system()} {platform.machine()}); median of {reps} fresh interpreters. "
        f"1-minute load average {load0:.2f} at the start, {load1:.2f} at the end. The result "
        f"is a run of the shipped plain gate on {n_inputs} inputs with the eight built-in "
        "relations.",
        "",
        f"- `agentverity-props report run.json --html run.html`: **{cpu:.2f} s CPU**, "
        f"{wall:.2f} s wall (wall includes the time other processes held the CPU).",
        "",
        "| phase (one fresh interpreter) | CPU s |",
        "|---|---:|",
        *[f"| {n} | {med[n]:.3f} |" for n in names],
        "",
        "Interpreter start-up and the command line's own imports are the difference between "
        "the whole command and the sum of the phases. Rendering this run report "
        + ("imported matplotlib." if mpl else "imported no matplotlib: its plots are written "
           "as SVG directly (`report/_svg.py`); bench, compare and enlarge reports still use "
           "matplotlib for their grouped-share and line plots."),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        write_section(ROOT / "docs" / "benchmarks.md", "html-report", text)


if __name__ == "__main__":
    main()
