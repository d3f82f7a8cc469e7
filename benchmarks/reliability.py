"""Run the reliability suite (tests/faults) and write docs/reliability.md from that run.

Run from the repository root::

    python benchmarks/reliability.py              # runs tests/faults, rewrites the doc
    python benchmarks/reliability.py --no-write   # runs and prints the counts only

Each fault test appends JSON lines of counts (cases tried, calls, rows checked...) to the
file named by ``AGENTVERITY_PROPS_COUNTS``; this script sets it, runs pytest with a JUnit
XML report for the outcomes, then writes every guarantee, the tests that check it, their
outcome and the counts of this run. Known gaps are the strict-xfail tests, with their
reasons. The exit code is pytest's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reliability.md"

# guarantee id (as the tests record it) -> (title, statement, test file)
GUARANTEES: dict[str, tuple[str, str, str]] = {
    "agent-faults": (
        "Faulty Python agents",
        "An agent that raises, hangs past `--timeout` (sync, or async and never returning), "
        "returns `None` or `bytes`, or answers outside a closed label set (including a 10 MB "
        "answer) does not stop the tool: the command ends, the evidence is marked incomplete "
        "(`complete: false`, exit 2), the report names the failing inputs by fingerprint and "
        "says why (failure kind and message), and the store keeps every answered call. A sync "
        "agent that never returns holds its worker slots for good (a thread cannot be "
        "killed), yet SIGTERM still ends the run with its partial report. "
        "Covered for `run` (JSON and text), `snapshot` (refused, rule `complete`), `check` "
        "(status `incomplete`), `enlarge` (`complete: false`, exit 2, the set still written), "
        "`bench` and `compare` (an ERROR run is graded as agentverdict does and makes the "
        "evidence incomplete: exit 2).",
        "tests/faults/test_agent_faults.py"),
    "kill-9-agent": (
        "An agent that kills its own process",
        "`os.kill(os.getpid(), SIGKILL)` inside a call: every call that finished before is in "
        "the store (exactly, with one worker; with four, at most one answer per worker may "
        "still be on its way to the store), `PRAGMA integrity_check` is ok, no row exists "
        "for a call that never answered, and no half-written report is left.",
        "tests/faults/test_agent_faults.py"),
    "http-faults": (
        "Faulty HTTP agents",
        "Against a real server on 127.0.0.1: connection reset, 429 with `Retry-After` (no "
        "request at all reaches the service before it ends), bursts of 500s, answers slower "
        "than the timeout, malformed JSON, a service that dies mid-run (connection refused "
        "afterwards) and one that was never there. Each run ends with exit 2, the ledger "
        "counts exactly one request per attempt, names each failure's kind and message, and "
        "the store holds exactly the answers the service gave. `tools` against a failing "
        "service: exit 2, the report carries the HTTP status.",
        "tests/faults/test_http_faults.py"),
    "interrupts": (
        "SIGINT and SIGTERM mid-run",
        "`run`, `bench` and `check` stop starting calls, let the call in flight finish, and "
        "write the report (`--output`) marked incomplete (`stop_reason: interrupted`, ledger "
        "`interrupted: true`), exit 2; the store passes `integrity_check` and holds every "
        "answered call, the one in flight included. `enlarge` keeps no partial set: SIGINT "
        "gives exit 2, one line `error: interrupted`, and the previous output file intact.",
        "tests/faults/test_interrupts.py"),
    "kill-9-write": (
        "kill -9 during a write",
        "A report (`--output`) and a snapshot file are written atomically: killed halfway "
        "through the bytes, after the fsync, or just before the rename, the previous file is "
        "intact byte for byte. The store killed at random moments while draws are being "
        "committed always reopens (also through the product's `Store`), passes "
        "`integrity_check`, and keeps every previously committed draw unchanged.",
        "tests/faults/test_interrupts.py"),
    "cli-fuzz": (
        "Fuzzed input files through the real CLI",
        "Hypothesis-generated files for every command that reads one (`run`/`enlarge` "
        "`--inputs` in .txt/.json/.jsonl/.yaml, `enlarge --strategy`, `bench`/`compare` "
        "`--benchmark`, `tools --config`, `check --snapshot`, `report` on each result kind): "
        "random bytes and text, truncations, a wrong-typed value or a dropped key anywhere, "
        "non-UTF-8 bytes, deep nesting, empty and 20 MB files. Never a traceback or an "
        "internal error: a file that cannot be used gives exit 2 and exactly one stderr line "
        "`error: ...`; `report` renders a still-valid result. Run in-process (click group + "
        "`run_cli`) for volume and as real subprocesses per command.",
        "tests/faults/test_cli_fuzz.py"),
    "budget": (
        "The call budget is a hard cap",
        "A Hypothesis property over budget, `max_workers` (1-8), retries (0-3), retryable "
        "and fatal failures, missing verdicts, flips, up to eight relations and the inputs: "
        "the agent's own invocation count never exceeds the budget and equals the ledger's. "
        "The same through `@agent_property` with confirmation and shrinking.",
        "tests/faults/test_budget_property.py"),
    "privacy": (
        "Nothing leaked",
        "A secret (an `Authorization` header, `${VAR}` in a case file, an `api_key`) and a "
        "raw prompt, both echoed back by the agent in its answers and its errors, reach no "
        "JSON, HTML, JUnit or text report, no stdout/stderr and no store file of `run`, "
        "`tools`, `bench`, `compare`, `snapshot`, `check` or `report`, unless the user opts in "
        "(`--include-inputs` / `--include-outputs`, which keep the prompt and never the "
        "secret). With `AGENTVERITY_PROPS_SALT` set every fingerprint (reports, store, bench "
        "prompts and answers) is HMAC-SHA-256 and differs from the unsalted one. The OTLP "
        "receiver (standalone and the one `tools` opens) listens on 127.0.0.1 only and "
        "answers 413 to oversized bodies and gzip bombs, 400 to malformed payloads.",
        "tests/faults/test_privacy.py"),
    "hostile-secrets": (
        "Hostile services: a secret echoed across the cut of an error snippet",
        "A 401 whose body echoes the `Authorization` header (a bearer token, or an `sk-` "
        "key) so that it straddles character 200 of the body, then a key of the service's "
        "own: the snippet is redacted before it is cut (credentials known from headers and "
        "`${VAR}` values, and anything shaped like a bearer token, an `sk-` key or an "
        "`Authorization`/`api_key`/`token`/`secret`/`password` value), so no 8-character "
        "fragment of either secret is in the text, JSON, JUnit or HTML report, the terminal "
        "or the store.",
        "tests/faults/test_hostile_http.py"),
    "hostile-http": (
        "Hostile services: endless and oversized answers",
        "An endless chunked body and 10 MB answers: the HTTP adapter streams each body and "
        "stops reading past `max_response_bytes` (default 4 MiB), the call fails with kind "
        "`too_large`, the run ends with exit 2, and the peak memory of the process stays far "
        "below 1.5 GB.",
        "tests/faults/test_hostile_http.py"),
    "hostile-otlp": (
        "Hostile OTLP payloads",
        "JSON nested 200,000 deep and a truncated gzip body get 400 from the receiver "
        "(standalone and the one `tools` opens), which then accepts a sound payload; no "
        "traceback reaches the terminal.",
        "tests/faults/test_hostile_http.py"),
    "hostile-files": (
        "Hostile input files",
        "A YAML alias bomb (\"billion laughs\", under 600 bytes) for every YAML reader, "
        "`/dev/zero` as a probe set (the size limit counts the bytes actually read), a "
        "10,000-digit integer in JSON, JSONL, YAML, a snapshot or a result, a result that has "
        "only its `schema` (`report --html` writes nothing), and a store with damaged pages "
        "(refused before any agent call): each is one line `error: ...` naming the file and "
        "the fix, exit 2, at once.",
        "tests/faults/test_hostile.py"),
    "hostile-outputs": (
        "Hostile output paths",
        "`-o` (and `--html`, `--report`) onto a device node, a FIFO, the `--inputs` file "
        "(directly or through a symlink), the agent's own `.py` file, the result being "
        "re-rendered, a path under a regular file or an unwritable folder: one line naming the "
        "path as given (never the temporary file), exit 2, no agent call made, no file "
        "changed. A symlink to a regular file is followed: its target is replaced, the link "
        "stays.",
        "tests/faults/test_hostile.py"),
    "hostile-markup": (
        "Hostile content shown as data",
        "Answers and prompts holding `[/INST]`, `[/]`, `[link=...]`, `[red]general`, an "
        "`ESC ] 0;` title sequence, NUL and U+202E: `run` (text and JSON), `snapshot` and "
        "`report` finish without an internal error; the text report shows each verdict "
        "literally (no markup, no colour change, no terminal hyperlink even when coloured), "
        "and no escape, NUL or bidi character reaches the terminal (they are written out as "
        "`\\x1b`, `\\u202e`).",
        "tests/faults/test_hostile.py"),
    "hostile-scale": (
        "Large probe sets and signals",
        "SIGTERM early (meter) or late (relations) in a 100,000-input run with relations: the "
        "run starts no call after the signal is handled, writes its partial report marked "
        "interrupted and exits 2 within the 30 s hang bound (the seconds below include "
        "rendering and writing a report of about 300 MB, most of the time after a late "
        "signal); a 2,000-input run with `--budget 300` ends once the budget is spent, "
        "with exactly as many agent calls as the ledger counts. Time and memory per 1,000 "
        "inputs are in docs/benchmarks.md (`benchmarks/large_inputs.py`).",
        "tests/faults/test_hostile.py"),
    "store-xdist": (
        "The store under pytest-xdist",
        "Eight tests in two xdist worker processes (`pytest -n 2`) record into one store at "
        "once, sharing some draws: no row lost, no key stored twice, every test was served "
        "the row the store kept, and a replay serves each draw exactly once in index order, "
        "then a `ReplayMiss` (never a draw twice, never a live call).",
        "tests/faults/test_store_xdist.py"),
    "quota-redis": (
        "One provider quota across runners (Redis)",
        "Two separate runner processes (real CLI runs) on one Redis namespace with "
        "`--max-calls-in-flight 3` never have more than 3 requests at once at a loopback "
        "provider that counts them (without the option the same runs exceed 3); a process "
        "holding slots and killed with SIGKILL frees them within the 10 s lease, while a live "
        "holder keeps them past it; a 429 with `Retry-After` on one runner pauses the other's "
        "calls; a wait for a slot cancelled mid-poll leaves no lease behind.",
        "tests/faults/test_quota_redis.py"),
}


NOT_COVERED = [
    "- A prompt an agent echoes in its error message becomes `<prompt>` when it appears "
    "verbatim; a truncated, escaped or reformatted echo is not recognised.",
    "- Draws without a verdict are reported by count and kind (`no_decision`), not with "
    "their reason (\"unknown label\"); the snapshot report gives failed draws by count and "
    "kind, without the messages `run` and `check` carry in their ledger.",
    "- Interrupts are exercised on `run`, `bench`, `check` (SIGINT/SIGTERM), `enlarge` "
    "(SIGINT) and `tools` (SIGINT/SIGTERM, a known gap above); `snapshot` and `compare` "
    "install the same engine handlers as `run` but are not interrupted by a test. SIGTERM "
    "on `enlarge` ends it with the default handler (no message; the previous output file is "
    "intact because every write is atomic).",
    "- `demo` runs only shipped agents: no fault can be planted in it.",
    "- SIGTERM is honoured at the next draw (calls already started finish), and the run then "
    "still renders and writes its partial report: on a 100,000-input run that takes 5 to 25 "
    "s on 2 shared cores, not the one second aimed at; building the relation candidates of "
    "such a run (about 10 s) does not look at the signal until it is done.",
    "- `max_response_bytes` is an argument of `from_http` (and its conversation variant); "
    "`tools` case files do not set it, so their services get the 4 MiB default.",
    "- Secrets are recognised by value (headers, `${VAR}` values, `api_key`) and by shape in "
    "messages; a credential of another shape that a service invents and echoes in an "
    "*answer* text is kept as the answer.",
]


def run_suite(counts: Path, junit: Path, extra: list[str]) -> tuple[int, float]:
    env = {**os.environ, "AGENTVERITY_PROPS_COUNTS": str(counts)}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "tests/faults", "-q",
                           "-p", "no:cacheprovider", f"--junitxml={junit}", *extra],
                          cwd=ROOT, env=env, check=False)
    return proc.returncode, time.perf_counter() - t0


def outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """``file::test`` -> (outcome, xfail reason or failure message)."""
    out: dict[str, tuple[str, str]] = {}
    if not junit.exists():
        return out
    for case in ET.parse(junit).getroot().iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "")
        key = f"{cls.replace('.', '/')}.py::{name}"
        outcome, why = "passed", ""
        for child in case:
            if child.tag == "skipped":
                msg = child.get("message", "")
                outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
                why = msg.removeprefix("xfail-reason: ").removeprefix("reason: ")
            elif child.tag in ("failure", "error"):
                outcome, why = child.tag, (child.get("message") or "")[:300]
        out[key] = (outcome, why)
    return out


def read_counts(path: Path) -> dict[str, list[dict[str, Any]]]:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                by[row.pop("guarantee")].append(row)
    return by


def _fmt_counts(row: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in row.items() if k != "test")


def render(counts: dict[str, list[dict[str, Any]]], results: dict[str, tuple[str, str]],
           rc: int, seconds: float) -> str:
    tally: dict[str, int] = defaultdict(int)
    for outcome, _ in results.values():
        tally[outcome] += 1
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Reliability: what holds under faults, bad input and interrupts",
        "",
        "Each guarantee below is checked by the tests named under it (`tests/faults/`, run "
        "with the rest of the suite). The counts are those of the last run of "
        "`python benchmarks/reliability.py`, which rewrites this file.",
        "",
        f"Last run: {when} · Python {platform.python_version()} · {os.cpu_count()} cores · "
        f"{seconds:.0f} s · " + ", ".join(f"{v} {k}" for k, v in sorted(tally.items()))
        + f" · pytest exit {rc}",
        "",
    ]
    recorded = {r["test"]: gid for gid, rows in counts.items() for r in rows}
    first_of_file: dict[str, str] = {}
    for gid, (_, _, test_file) in GUARANTEES.items():
        first_of_file.setdefault(test_file, gid)
    for gid, (title, statement, test_file) in GUARANTEES.items():
        lines += [f"## {title}", "", statement, "", f"Checked by `{test_file}`:", "",
                  "| test | outcome | counts from the last run |", "|---|---|---|"]
        rows = counts.get(gid, [])
        tests = {r["test"] for r in rows}
        if first_of_file[test_file] == gid:  # tests that record nothing belong here
            tests |= {t for t, (o, _) in results.items() if t.startswith(test_file)
                      and t not in recorded and o != "xfailed"}
        for t in sorted(tests):
            outcome = results.get(t, ("not run", ""))[0]
            detail = "<br>".join(_fmt_counts(r) for r in rows if r["test"] == t) or "-"
            lines.append(f"| `{t.split('::', 1)[1]}` | {outcome} | {detail} |")
        if not tests:
            lines.append("| - | not run | - |")
        lines.append("")
    gaps: dict[str, list[str]] = defaultdict(list)
    for k, (o, why) in sorted(results.items()):
        if o == "xfailed":
            gaps[why].append(k.split("::", 1)[1])
    lines += ["## Known gaps (strict xfail: each turns into a failure once fixed)", ""]
    if gaps:
        lines += [f"- {why} ({', '.join(f'`{t}`' for t in tests)})"
                  for why, tests in gaps.items()]
    else:
        lines.append("None.")
    failed = [(k, why) for k, (o, why) in sorted(results.items()) if o in ("failure", "error")]
    if failed:
        lines += ["", "## Failing in the last run", ""] + [f"- `{k}`: {w}" for k, w in failed]
    lines += ["", "## Not covered, or covered only in part", "", *NOT_COVERED, ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-write", action="store_true", help="print, do not rewrite the doc")
    args, extra = ap.parse_known_args(argv)
    with tempfile.TemporaryDirectory() as d:
        counts_file, junit = Path(d) / "counts.jsonl", Path(d) / "junit.xml"
        rc, seconds = run_suite(counts_file, junit, extra)
        counts = read_counts(counts_file)
        results = outcomes(junit)
    doc = render(counts, results, rc, seconds)
    if args.no_write:
        print(doc)
    else:
        DOC.write_text(doc, encoding="utf-8")
        print(f"wrote {DOC.relative_to(ROOT)} ({len(results)} tests, pytest exit {rc})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
