"""Large probe sets: seconds and peak memory of ``run`` with relations, and how fast it stops.

Run from the repository root::

    python benchmarks/large_inputs.py                       # 1,000 / 10,000 / 100,000 inputs
    python benchmarks/large_inputs.py --sizes 1000,5000 --no-write

Each row is one real ``agentverity-props run`` in a subprocess (built-in relations, a
deterministic agent, ``--budget 2000``, ``--format json -o``) on N distinct prompts: wall
seconds, seconds per 1,000 inputs, and the child's peak RSS (``ru_maxrss`` from ``wait4``).
Then the same run is sent SIGTERM a few seconds in, and the time until it exits (with its
partial report) is measured. The table goes into the ``large-inputs`` section of
docs/benchmarks.md (see ``_docs.py``).
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _docs import write_section

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "benchmarks.md"
AGENT = f"{ROOT / 'tests' / 'faults' / '_agents.py'}:good"
BUDGET = 2000


def _inputs(folder: Path, n: int) -> Path:
    path = folder / f"inputs-{n}.txt"
    path.write_text("".join(f"prompt number {i} about topic {i % 97}\n" for i in range(n)),
                    encoding="utf-8")
    return path


def _argv(inputs: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "agentverity_props", "run", "--agent", AGENT, "--inputs",
            str(inputs), "--budget", str(BUDGET), "--format", "json", "-o", str(out),
            "--no-progress"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("FAULT_", "AGENTVERITY_PROPS_"))}


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int, int]:
    """(exit code, peak RSS in KiB) of ``proc``, killed after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, int(usage.ru_maxrss)
        if time.monotonic() > deadline:
            proc.kill()
        time.sleep(0.05)


def measure(folder: Path, n: int, timeout: float, term_after: float) -> dict[str, float]:
    inputs = _inputs(folder, n)
    out = folder / f"report-{n}.json"
    t0 = time.monotonic()
    proc = subprocess.Popen(_argv(inputs, out), cwd=ROOT, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    code, rss = _wait(proc, timeout)
    seconds = time.monotonic() - t0
    row = {"n": n, "code": code, "seconds": seconds, "rss_mb": rss / 1024,
           "report_mb": out.stat().st_size / 1e6 if out.exists() else 0.0}
    out.unlink(missing_ok=True)
    proc = subprocess.Popen(_argv(inputs, out), cwd=ROOT, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(min(term_after, seconds / 2))
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    tcode, _ = _wait(proc, timeout)
    row.update(term_s=time.monotonic() - sent, term_code=tcode, term_report=out.exists())
    return row


def render(rows: list[dict[str, float]], wall: float) -> str:
    lines = [
        "## Large probe sets: time, memory and SIGTERM",
        "",
        f"Measured by `python benchmarks/large_inputs.py` on {os.cpu_count()} CPU(s), Python "
        f"{platform.python_version()} ({platform.python_implementation()}, "
        f"{platform.system()} {platform.machine()}) in {wall:.0f} s. Each row is one "
        "`agentverity-props run` of a deterministic agent with the built-in relations, "
        f"`--budget {BUDGET}` and `--format json -o`, on N distinct prompts, in a subprocess: "
        "wall seconds (start, reading, every phase, the JSON report written), seconds per "
        "1,000 inputs, and the peak resident memory of the process. *SIGTERM*: the same run "
        "sent SIGTERM a few seconds in (or halfway, for short runs), seconds until it exited, "
        "its exit code and whether its report was written. Exit 2 everywhere: 2,000 calls "
        "cannot decide the eight relations on every input, so the evidence is incomplete and "
        "the report says which candidates were left undecided; what matters here is that the "
        "run ends, within its budget, and in bounded memory.",
        "",
        "| inputs | exit | seconds | s / 1,000 inputs | peak RSS (MB) | report (MB) | "
        "SIGTERM: seconds to exit | exit | report written |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['code']} | {r['seconds']:.1f} | "
                     f"{r['seconds'] / r['n'] * 1000:.2f} | {r['rss_mb']:.0f} | "
                     f"{r['report_mb']:.1f} | {r['term_s']:.2f} | {r['term_code']} | "
                     f"{'yes' if r['term_report'] else 'no'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000",
                    help="comma-separated probe-set sizes")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    ap.add_argument("--term-after", type=float, default=5.0,
                    help="seconds before SIGTERM in the second run of each size")
    ap.add_argument("--no-write", action="store_true", help="print, do not rewrite the doc")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for n in (int(x) for x in args.sizes.split(",")):
            rows.append(measure(Path(d), n, args.timeout, args.term_after))
            print(rows[-1], flush=True)
    body = render(rows, time.monotonic() - t0)
    if args.no_write:
        print(body)
    else:
        write_section(DOC, "large-inputs", body)
        print(f"wrote the large-inputs section of {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
