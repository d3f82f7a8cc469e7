"""Exact minimal counterexamples on agents noisy on every call, and their cost in agent calls.

Run from the repository root::

    python benchmarks/shrink_calls.py                 # full run; rewrites the `shrink`
                                                      # section of docs/benchmarks.md
    python benchmarks/shrink_calls.py --quick         # 5 seeds (20 for detection); prints,
                                                      # writes nothing
    python benchmarks/shrink_calls.py --seeds 60 --detection-seeds 400
    python benchmarks/shrink_calls.py --only refund15,refund0 --retries 3
                                                      # a subset; prints, writes nothing

The agents, strategies and the property tests come from ``tests/support/noisy_agents.py``
(shared with the CI tests, so the two cannot drift apart). Each is tested for case
invariance, ``check.invariant(p, p.upper(), name="case")``:

* ``planted``: the gate of tests/stats/test_shrinking.py (30% ``review`` noise on prompts
  containing "help", ``block`` on an upper-case URGENT in a prompt over 40 characters);
* ``text15`` / ``text30``: the same planted bug, with 15% / 30% noise on every call (a
  uniformly random other label among allow/review/block, also when the bug fires);
* ``refund0`` ... ``refund30``: "Please refund $<amount> for my order: <reason>" from
  ``amount=integers(1, 2000)``, ``reason=sampled_from(REASONS)``; approve below $1000,
  escalate from $1000, and the planted bug denies an all-upper-case request from $250;
* ``nobug-*``: the same agents and noise without the bug (the relation truly holds);
* ``triage10``: support tickets from word lists, escalated when they say "urgent" (case
  sensitive: the bug), 10% random escalation on every other call; a detection row.

Designs: ``@agent_property`` (this project); ``plain @given`` (one call on the source and one
on its upper-case form, verdicts asserted equal); ``retry xN`` (QCheck's ``~retries`` /
Hughes & Bolinder: a plain ``@given`` body draws N (source, follow-up) pairs and fails when a
majority disagree, cached per prompt so Hypothesis's replays see one answer). Each seed drives
Hypothesis and the agent's own ``random.Random``; calls are counted by a wrapper around the
agent until the test finished.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import write_section  # noqa: E402

SECTION = "shrink"
MAX_EXAMPLES = 60  # as in tests/stats/test_shrinking.py
#: The @agent_property call budget in every row (its default is 2000; 30%-noise rows need
#: more, and a row that runs out measures the budget, not the decisions).
BUDGET = 5000
OUTCOMES = ("minimum", "planted", "noise", "flaky", "nothing", "error")
AP, PLAIN = "@agent_property", "plain @given"
DEFAULT_RETRIES = (3, 9, 25)


def _na() -> ModuleType:
    """tests/support/noisy_agents.py (imported on first use: it loads Hypothesis)."""
    from tests.support import noisy_agents

    return noisy_agents


# ------------------------------------------------------- earlier helpers, still used by tests


def noisy_everywhere_gate(rng: random.Random) -> Callable[[str], str]:
    """The earlier variant agent (row ``variant``, only with ``--only``): the planted case
    bug, with 30% ``review`` noise (never another label) on every prompt."""
    def gate(prompt: str) -> str:
        if "URGENT" in prompt and len(prompt) > 40:
            return "block"
        if rng.random() < 0.3:
            return "review"
        return "allow"
    return gate


def is_planted(prompt: str) -> bool:
    """Whether the prompt truly violates case invariance (its upper-case form is blocked)."""
    return "URGENT" in prompt.upper() and len(prompt) > 40 and "URGENT" not in prompt


def classify(minimal: str | None, minimum: str) -> str:
    """The outcome of a text-gate run that reported ``minimal``: minimum / planted / noise."""
    if minimal == minimum:
        return "minimum"
    return "planted" if minimal is not None and is_planted(minimal) else "noise"


# ------------------------------------------------------------------ rows and designs


@dataclass(frozen=True)
class Row:
    name: str  # for --only
    label: str  # in the report
    scenario: str  # a key of noisy_agents.SCENARIOS, or "variant"
    q: float  # noise (ignored by the planted and variant agents)
    detection: bool = False  # run on --detection-seeds seeds

    @property
    def bug(self) -> bool:
        return not self.scenario.endswith("no-bug")


ROWS = (
    Row("planted", "planted (test_shrinking)", "planted", 0.3),
    Row("text15", "text, 15% noise everywhere", "text", 0.15),
    Row("text30", "text, 30% noise everywhere", "text", 0.30),
    Row("refund0", "refund, no noise", "refund", 0.0),
    Row("refund5", "refund, 5% noise", "refund", 0.05),
    Row("refund15", "refund, 15% noise", "refund", 0.15),
    Row("refund30", "refund, 30% noise", "refund", 0.30),
    Row("nobug-text15", "no bug: text, 15% noise", "text-no-bug", 0.15),
    Row("nobug-text30", "no bug: text, 30% noise", "text-no-bug", 0.30),
    Row("nobug-refund15", "no bug: refund, 15% noise", "refund-no-bug", 0.15),
    Row("nobug-refund30", "no bug: refund, 30% noise", "refund-no-bug", 0.30),
    Row("nobug-triage10", "no bug: triage, 10% noise", "triage-no-bug", 0.10),
    Row("triage10", "triage detection, 10% noise", "triage", 0.10, detection=True),
)
#: run only when named in --only
EXTRA_ROWS = (Row("variant", "noisy everywhere (earlier variant)", "variant", 0.3),)


def scenario_of(row: Row) -> Any:
    na = _na()
    if row.scenario == "variant":
        return replace(na.TEXT, name="variant",
                       make_agent=lambda q, rng: noisy_everywhere_gate(rng))
    return na.SCENARIOS[row.scenario]


def designs(retries: tuple[int, ...]) -> list[str]:
    return [AP, PLAIN, *(f"retry x{n}" for n in retries)]


def run_one(row: Row, design: str, s: int) -> Any:
    """One seed of one design on one row: an ``noisy_agents.Outcome``."""
    na, sc = _na(), scenario_of(row)
    if design == AP:
        test = na.agent_property_test(sc, s, row.q, max_examples=MAX_EXAMPLES, budget=BUDGET)
    elif design == PLAIN:
        test = na.plain_given_test(sc, s, row.q, max_examples=MAX_EXAMPLES)
    else:
        n = int(design.removeprefix("retry x"))
        test = na.retry_test(sc, s, row.q, n, max_examples=MAX_EXAMPLES)
    return na.run_property(test)


# ------------------------------------------------------------------ goals


Results = dict[tuple[str, str], list[Any]]


def _scaled(k: int, n: int, seeds: int) -> int:
    """The goal "k out of n" at ``seeds`` seeds (the same share, rounded up)."""
    return math.ceil(k * seeds / n - 1e-9)


def _count(results: Results, row: str, kind: str | tuple[str, ...]) -> tuple[int, int] | None:
    runs = results.get((row, AP))
    if runs is None:
        return None
    kinds = (kind,) if isinstance(kind, str) else kind
    return sum(r.kind in kinds for r in runs), len(runs)


def _median_to_minimum(results: Results, row: str) -> float | None:
    runs = [r.calls for r in results.get((row, AP), []) if r.kind == "minimum"]
    return statistics.median(runs) if runs else None


def goals(results: Results) -> list[tuple[str, str, bool | None]]:
    """(goal, measured figure, met / not met / None when its rows were not run)."""
    out: list[tuple[str, str, bool | None]] = []
    spec = [
        ("planted", "minimum", 40, 40, "planted agent: exact minimum"),
        ("text15", "minimum", 38, 40, "text, 15% noise: exact minimum"),
        ("refund15", "minimum", 38, 40, "refund (integer), 15% noise: exact minimum"),
        ("text30", "minimum", 36, 40, "text, 30% noise: exact minimum"),
        ("refund30", "minimum", 36, 40, "refund (integer), 30% noise: exact minimum"),
        *((r.name, "nothing", 40, 40, f"{r.label}: passes")
          for r in ROWS if not r.bug),
        ("triage10", ("minimum", "planted"), 199, 200, "triage detection: caught"),
    ]
    for row, kind, k, n, text in spec:
        got = _count(results, row, kind)
        if got is None:
            out.append((f"{text} >= {k}/{n}", "not run", None))
            continue
        hit, seeds = got
        need = _scaled(k, n, seeds)
        scale = "" if seeds == n else f" (at {seeds} seeds: >= {need})"
        out.append((f"{text} >= {k}/{n}{scale}", f"{hit}/{seeds}", hit >= need))
    m15, m0 = _median_to_minimum(results, "refund15"), _median_to_minimum(results, "refund0")
    text = ("refund: median calls to the exact minimum at 15% noise <= 3x the noise-free "
            "agent's")
    if (("refund15", AP) not in results) or (("refund0", AP) not in results):
        out.append((text, "not run", None))
    elif m15 is None or m0 is None:
        out.append((text, f"15%: {m15 if m15 is not None else 'no exact minimum'}, 0%: "
                          f"{m0 if m0 is not None else 'no exact minimum'}", False))
    else:
        out.append((text, f"{m15:.0f} vs {m0:.0f} ({m15 / m0:.2f}x)", m15 <= 3 * m0))
    return out


# ------------------------------------------------------------------ report


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)"


def _summary(runs: list[Any]) -> str:
    c = Counter(r.kind for r in runs)
    n = len(runs)
    bits = [f"exact minimum {c['minimum']}/{n}"]
    bits += [f"{t} {c[k]}" for k, t in (("planted", "real not minimal"), ("noise", "noise"),
                                         ("flaky", "FlakyFailure"), ("nothing", "nothing"))
             if c[k]]
    return ", ".join(bits + _errors(runs))


def _errors(runs: list[Any]) -> list[str]:
    """``error N (Type k, ...)`` when some runs ended in another exception."""
    types = Counter(r.detail.split(":")[0] for r in runs if r.kind == "error")
    if not types:
        return []
    kinds = ", ".join(f"{t} {k}" for t, k in types.most_common())
    return [f"error {sum(types.values())} ({kinds})"]


def render(results: Results, rows: list[Row], design_names: list[str], *, seeds: int,
           detection_seeds: int, seconds: float) -> str:
    na = _na()
    lines = [
        "## Shrinking: exact minimal counterexamples on noisy agents, and their cost",
        "",
        f"Measured by `python benchmarks/shrink_calls.py` ({seconds / 60:.1f} min on "
        f"{os.cpu_count()} CPU(s), Python {platform.python_version()}), {seeds} seeds per row"
        + (f" ({detection_seeds} on the detection row)" if any(r.detection for r in rows)
           else "")
        + "; each seed drives Hypothesis and the "
        "agent's own `random.Random`. Agents, strategies and tests are those of "
        "`tests/support/noisy_agents.py`, each tested for case invariance "
        "(`check.invariant(p, p.upper())`) with "
        f"`max_examples={MAX_EXAMPLES}` and no database; `@agent_property(budget={BUDGET})`. "
        "*planted*: the gate of "
        "`tests/stats/test_shrinking.py` (30% `review` noise on prompts containing \"help\"). "
        "*text*: the same planted bug (`block` on an upper-case URGENT in a prompt over 40 "
        f"characters) with noise on every call, exact minimum `{na.PLANTED_MINIMUM!r}`. "
        "*refund*: `Please refund $<amount> for my order: <reason>` from "
        f"`amount=integers(1, 2000)` and `reason=sampled_from({len(na.REASONS)} reasons)`, "
        f"approve below ${na.REFUND_THRESHOLD} and escalate from it, and the planted bug "
        f"denies an all-upper-case request from ${na.CASE_BUG_FROM}: exact minimum "
        f"`{na.REFUND_MINIMUM!r}`. Noise q: on every call (also when the bug fires) the "
        "answer is a uniformly random other label with probability q. *no bug*: the same "
        "agents and noise without the bug, so the relation holds and the right outcome is "
        "\"found nothing\". *triage*: support tickets (a greeting and one to three clauses "
        "from word lists), escalated when they say \"urgent\" (case-sensitive: the bug), "
        "else escalated at random on 10% of calls; caught = exact minimum or real violation "
        f"(exact minimum `{na.TRIAGE_MINIMUM!r}`). Designs: *@agent_property* (this project); "
        "*plain @given*: one call on the source and one on its upper-case form, verdicts "
        "asserted equal (same `@settings`, plus the `deadline=None` and no-`explain` "
        "defaults `@agent_property` applies); *retry xN*: every candidate retried N times "
        "in the style of QCheck's `~retries` and Hughes & Bolinder, the body drawing N "
        "(source, follow-up) pairs and failing when a majority disagree, cached per prompt "
        "so that Hypothesis's replays see one answer. Calls are counted by a wrapper around "
        "the agent until the test finished; an `Inconclusive` (agent-call budget spent "
        "without a decision) counts as other error.",
        "",
        "| agent | design | median calls | mean calls | "
        + " | ".join(_na().KIND_TITLES[k] for k in OUTCOMES) + " |",
        "|---|---|---:|---:|" + "---:|" * len(OUTCOMES),
    ]
    for row in rows:
        for design in design_names:
            runs = results[row.name, design]
            n = len(runs)
            counts = Counter(r.kind for r in runs)
            calls = [r.calls for r in runs]
            lines.append(
                f"| {row.label} | {design} | {statistics.median(calls):.0f} | "
                f"{statistics.fmean(calls):.0f} | "
                + " | ".join(_pct(counts[o], n) for o in OUTCOMES) + " |")
    lines += ["", "Goals (for `@agent_property`):", ""]
    for text, measured, met in goals(results):
        verdict = "not run" if met is None else ("**met**" if met else "**not met**")
        lines.append(f"- {text}: {measured}: {verdict}")
    lines += ["", interpretation(results, rows, design_names)]
    return "\n".join(lines)


def interpretation(results: Results, rows: list[Row], design_names: list[str]) -> str:
    """One paragraph read off the numbers (never written by hand)."""
    parts = []
    others = [d for d in design_names if d != AP]
    for row in rows:
        a = results[row.name, AP]
        n = len(a)
        ma = statistics.median(r.calls for r in a)
        if not row.bug:
            passed = ", ".join(
                f"{d} {sum(r.kind == 'nothing' for r in results[row.name, d])}/{n}"
                for d in others)
            failed = ", ".join(f"{t} {c}" for t, c in (
                ("noise reported", sum(r.kind == "noise" for r in a)),
                ("FlakyFailure", sum(r.kind == "flaky" for r in a))) if c)
            failed = ", ".join(x for x in (failed, *_errors(a)) if x)
            parts.append(
                f"On {row.label}, @agent_property passed {sum(r.kind == 'nothing' for r in a)}"
                f"/{n} seeds" + (f" ({failed})" if failed else "")
                + f" at a median of {ma:.0f} calls (passed: {passed}).")
            continue
        if row.detection:
            caught = ", ".join(
                f"{d} {sum(r.caught for r in results[row.name, d])}/{n}" for d in others)
            parts.append(
                f"On {row.label}, @agent_property caught the bug in "
                f"{sum(r.caught for r in a)}/{n} seeds ({_summary(a)}) at a median of "
                f"{ma:.0f} calls ({caught}).")
            continue
        best = max(others, key=lambda d: (
            sum(r.kind == "minimum" for r in results[row.name, d]),
            -statistics.median(r.calls for r in results[row.name, d]))) if others else None
        text = (f"On {row.label}, @agent_property: {_summary(a)}, median {ma:.0f} calls")
        if best is not None and any(r.kind == "minimum" for r in results[row.name, best]):
            b = results[row.name, best]
            mb = statistics.median(r.calls for r in b)
            text += (f"; the other design with the most exact minima, {best}: {_summary(b)}, "
                     f"median {mb:.0f} calls")
        elif best is not None:
            best = None
            text += "; no other design reached the exact minimum"
        if PLAIN in others and best != PLAIN:
            text += f"; plain @given: {_summary(results[row.name, PLAIN])}"
        parts.append(text + ".")
        missed = [r for r in a if r.kind == "nothing"]
        if missed:
            parts.append(
                f"Where @agent_property found nothing the test passed, with a warning in "
                f"{sum(r.warned for r in missed)} of those {len(missed)} runs; in "
                f"{sum(r.fired > 0 for r in missed)} of them the planted bug had fired on a "
                "call, so the flip was seen but not confirmed against the noise.")
    return " ".join(parts)


# ------------------------------------------------------------------ main


def _parse_retries(text: str) -> tuple[int, ...]:
    if text.strip().lower() in ("", "none"):
        return ()
    values = tuple(int(v) for v in text.split(","))
    if any(v < 1 for v in values):
        raise argparse.ArgumentTypeError("--retries takes positive integers, e.g. 3,9,25")
    return values


def select_rows(only: list[str] | None) -> list[Row]:
    if not only:
        return list(ROWS)
    names = [n.strip() for arg in only for n in arg.split(",") if n.strip()]
    known = {r.name: r for r in (*ROWS, *EXTRA_ROWS)}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown row(s) {unknown}; rows: {', '.join(known)}")
    return [known[n] for n in dict.fromkeys(names)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=None, help="seeds per row (default 40)")
    parser.add_argument("--detection-seeds", type=int, default=None,
                        help="seeds of the detection row (default 200)")
    parser.add_argument("--quick", action="store_true",
                        help="5 seeds per row, 20 for detection; print, write nothing")
    parser.add_argument("--only", action="append", metavar="ROWNAME",
                        help="run only these rows (comma-separated or repeated); print, write "
                             "nothing. Rows: " + ", ".join(r.name for r in (*ROWS, *EXTRA_ROWS)))
    parser.add_argument("--retries", type=_parse_retries, default=DEFAULT_RETRIES,
                        help="N of the retry-every-candidate designs (default 3,9,25; "
                             "'none' for no retry design)")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    seeds = args.seeds or (5 if args.quick else 40)
    detection_seeds = args.detection_seeds or (20 if args.quick else 200)
    rows = select_rows(args.only)
    design_names = designs(args.retries)

    t0 = time.perf_counter()
    results: Results = {}
    for row in rows:
        n = detection_seeds if row.detection else seeds
        for design in design_names:
            t = time.perf_counter()
            runs = results[row.name, design] = [run_one(row, design, s) for s in range(n)]
            counts = Counter(r.kind for r in runs)
            print(f"{row.name:15} {design:16} median "
                  f"{statistics.median(r.calls for r in runs):6.0f} calls  {dict(counts)} "
                  f"({time.perf_counter() - t:.1f} s)", flush=True)
            for r in runs:
                if r.kind == "error":
                    print(f"    error: {r.detail}", flush=True)
    section = render(results, rows, design_names, seeds=seeds,
                     detection_seeds=detection_seeds, seconds=time.perf_counter() - t0)
    if args.quick or args.only:
        print(section)
        return 0
    write_section(args.output, SECTION, section)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
