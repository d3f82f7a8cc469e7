"""Agent calls to a minimal counterexample: ``@agent_property`` vs a plain ``@given`` test.

Run from the repository root::

    python benchmarks/shrink_calls.py             # full run (~1-3 minutes); rewrites the
                                                  # `shrink` section of docs/benchmarks.md
    python benchmarks/shrink_calls.py --quick     # 5 seeds; prints, writes nothing
    python benchmarks/shrink_calls.py --seeds 60

The planted agent, strategy and settings are those of tests/stats/test_shrinking.py (imported
from it, so the two cannot drift apart): a gate that answers ``review`` instead of ``allow`` on
30% of calls whose prompt contains "help" (noise, the same for a prompt and its upper-case
form) and ``block`` on an upper-case URGENT in a prompt over 40 characters (the planted case
bug, whose unique shrink-order minimum is ``PLANTED_MINIMUM``). Prompts are n x "hello"
followed by one word.

* Design A, this project: ``@agent_property`` with ``check.invariant(prompt, prompt.upper())``
  exactly as in the test (cached, noise-calibrated decisions with confirmation).
* Design B, plain Hypothesis: the same ``@seed``/``@settings``/``@given``; the test body calls
  the agent once on the prompt and once on its upper-case form and asserts equal verdicts (no
  cache, no confirmation). It also gets ``deadline=None`` and no ``explain`` phase, which
  ``@agent_property`` applies by default, so that only the design differs.

Each seed also seeds the agent's own ``random.Random``. Calls are counted by a wrapper around
the agent, until the test finished (found and shrunk, or gave up). A variant agent that is
noisy on every prompt, not only on "help", is run too (``--no-variant`` skips it).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import write_section  # noqa: E402

SECTION = "shrink"
MAX_EXAMPLES = 60  # as in tests/stats/test_shrinking.py
OUTCOMES = ("minimum", "planted", "noise", "flaky", "nothing", "error")


def _shrinking_fixture() -> tuple[str, Callable[[random.Random], Callable[[str], str]],
                                     SearchStrategy[str]]:
    """PLANTED_MINIMUM, planted_gate and the prompt strategy of the shrinking test."""
    from tests.stats.test_shrinking import PLANTED_MINIMUM, planted_gate, prompts

    return PLANTED_MINIMUM, planted_gate, prompts


def noisy_everywhere_gate(rng: random.Random) -> Callable[[str], str]:
    """The planted case bug, with 30% ``review`` noise on every prompt, not just "help"."""
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


class Counted:
    """Counts the agent's calls (the only cost that matters with a real model)."""

    def __init__(self, fn: Callable[[str], str]) -> None:
        self.fn, self.calls, self.planted_calls = fn, 0, 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        # the upper-case follow-up of a violating prompt: was the bug ever put to the agent?
        self.planted_calls += "URGENT" in prompt and len(prompt) > 40
        return self.fn(prompt)


class Disagreement(AssertionError):
    """Raised by design B's test body; carries the prompt it failed on."""

    def __init__(self, prompt: str, a: str, b: str) -> None:
        super().__init__(f"{a!r} on {prompt!r} but {b!r} on its upper-case form")
        self.prompt = prompt


@dataclass(frozen=True)
class Run:
    calls: int
    outcome: str
    minimal: str | None
    planted_calls: int = 0
    warned: bool = False  # @agent_property's record carried a warning


def classify(minimal: str | None, minimum: str) -> str:
    if minimal == minimum:
        return "minimum"
    return "planted" if minimal is not None and is_planted(minimal) else "noise"


def design_a(s: int, gate_factory: Callable[[random.Random], Callable[[str], str]],
             prompts: SearchStrategy[str], minimum: str) -> Run:
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis.errors import Flaky

    from agentverity_props import agent_property, from_callable
    from agentverity_props._counterexample import RECORDS
    from agentverity_props.errors import PropertyViolation

    agent = Counted(gate_factory(random.Random(s)))

    @agent_property(agent=from_callable(agent, identity=f"bench-planted-{s}"))
    @seed(s)
    @settings(database=None, max_examples=MAX_EXAMPLES, suppress_health_check=list(HealthCheck))
    @given(prompt=prompts)
    def test_case_invariance(check, prompt):
        check.invariant(prompt, prompt.upper(), name="case")

    try:
        test_case_invariance()
    except PropertyViolation:
        rec = RECORDS[-1]
        minimal = rec.minimal.source if rec.minimal else None
        return Run(agent.calls, classify(minimal, minimum), minimal, agent.planted_calls)
    except Flaky:
        return Run(agent.calls, "flaky", None, agent.planted_calls)
    except Exception as exc:
        return Run(agent.calls, "error", f"{type(exc).__name__}: {exc}"[:120], agent.planted_calls)
    return Run(agent.calls, "nothing", None, agent.planted_calls, bool(RECORDS[-1].warnings))


def design_b(s: int, gate_factory: Callable[[random.Random], Callable[[str], str]],
             prompts: SearchStrategy[str], minimum: str) -> Run:
    from hypothesis import HealthCheck, Phase, given, seed, settings
    from hypothesis.errors import Flaky

    agent = Counted(gate_factory(random.Random(s)))
    phases = [p for p in Phase if p is not Phase.explain]

    @seed(s)
    @settings(database=None, max_examples=MAX_EXAMPLES, suppress_health_check=list(HealthCheck),
              deadline=None, phases=phases)
    @given(prompt=prompts)
    def test_case_invariance(prompt):
        a, b = agent(prompt), agent(prompt.upper())
        if a != b:
            raise Disagreement(prompt, a, b)

    try:
        test_case_invariance()
    except Disagreement as exc:
        return Run(agent.calls, classify(exc.prompt, minimum), exc.prompt, agent.planted_calls)
    except Flaky:
        return Run(agent.calls, "flaky", None, agent.planted_calls)
    except Exception as exc:
        return Run(agent.calls, "error", f"{type(exc).__name__}: {exc}"[:120], agent.planted_calls)
    return Run(agent.calls, "nothing", None, agent.planted_calls)


# ------------------------------------------------------------------ report


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)"


def render(results: dict[tuple[str, str], list[Run]], *, seeds: int, seconds: float,
           minimum: str) -> str:
    lines = [
        "## Shrinking: agent calls to a minimal counterexample",
        "",
        f"Measured by `python benchmarks/shrink_calls.py` ({seconds / 60:.1f} min on "
        f"{os.cpu_count()} CPU(s), Python {platform.python_version()}), {seeds} seeds per row "
        "(the seed drives both Hypothesis and the agent's own `random.Random`). The planted "
        "agent, strategy and settings are those of `tests/stats/test_shrinking.py` "
        f"(`max_examples={MAX_EXAMPLES}`, no database): 30% `review` noise on prompts "
        "containing \"help\" (the same for a prompt and its upper-case form, so not a "
        "violation) and `block` on an upper-case URGENT in prompts over 40 characters, whose "
        f"minimal counterexample is `{minimum!r}`. *@agent_property*: cached, "
        "noise-calibrated decisions with confirmation, as in the test. *plain @given*: the "
        "same test calling the agent on the prompt and its upper-case form and asserting "
        "equal verdicts, with no cache and no confirmation (same `@settings`, plus the "
        "`deadline=None` and no-`explain` defaults `@agent_property` applies). The variant "
        "agent has the same planted bug and 30% noise on every prompt. Calls are counted "
        "by a wrapper around the agent until the test finished.",
        "",
        "| agent | design | median calls | mean calls | true minimum | real violation, "
        "not minimal | noise reported as a counterexample | FlakyFailure | found nothing "
        "| other error |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (agent, design), runs in results.items():
        n = len(runs)
        counts = Counter(r.outcome for r in runs)
        calls = [r.calls for r in runs]
        lines.append(
            f"| {agent} | {design} | {statistics.median(calls):.0f} | "
            f"{statistics.fmean(calls):.0f} | "
            + " | ".join(_pct(counts[o], n) for o in OUTCOMES) + " |")
    lines += ["", interpretation(results)]
    return "\n".join(lines)


def interpretation(results: dict[tuple[str, str], list[Run]]) -> str:
    """One paragraph read off the numbers (never written by hand)."""
    parts = []
    for agent in dict.fromkeys(a for a, _ in results):
        a, b = results[agent, "@agent_property"], results[agent, "plain @given"]
        ca = Counter(r.outcome for r in a)
        cb = Counter(r.outcome for r in b)
        ma = statistics.median(r.calls for r in a)
        mb = statistics.median(r.calls for r in b)
        why = (": repeated draws and confirmation are what it pays for a decision that does "
               "not change on replay" if ma > mb else "")
        missed = [r for r in a if r.outcome == "nothing"]
        reached = sum(r.planted_calls > 0 for r in missed)
        warned = sum(r.warned for r in missed)
        parts.append(
            f"On the {agent} agent, @agent_property reached the true minimum in "
            f"{ca['minimum']}/{len(a)} seeds (FlakyFailure {ca['flaky']}, noise reported "
            f"{ca['noise']}, found nothing {ca['nothing']}); plain @given reached it in "
            f"{cb['minimum']}/{len(b)} (FlakyFailure {cb['flaky']}, noise reported "
            f"{cb['noise']}, found nothing {cb['nothing']}). Median calls: @agent_property "
            f"{ma:.0f}, plain @given {mb:.0f} ({ma / mb:.1f}x){why}.")
        if missed:
            parts.append(
                f"Where @agent_property found nothing the test passed, with a warning in "
                f"{warned} of those {len(missed)} runs; in {reached} of them "
                "the agent had been called on a violating input, so the "
                "planted flip was seen but not confirmed against noise at the per-candidate "
                "alpha.")
    return " ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=40, help="seeds per row (default 40)")
    parser.add_argument("--quick", action="store_true", help="5 seeds; print, write nothing")
    parser.add_argument("--no-variant", action="store_true",
                        help="skip the noisy-everywhere variant agent")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    seeds = 5 if args.quick else args.seeds
    minimum, planted_gate, prompts = _shrinking_fixture()
    agents = [("planted (test_shrinking)", planted_gate)]
    if not args.no_variant:
        agents.append(("noisy everywhere (variant)", noisy_everywhere_gate))

    t0 = time.perf_counter()
    results: dict[tuple[str, str], list[Run]] = {}
    for agent_name, factory in agents:
        for design, fn in (("@agent_property", design_a), ("plain @given", design_b)):
            t = time.perf_counter()
            runs = results[agent_name, design] = [fn(s, factory, prompts, minimum)
                                                  for s in range(seeds)]
            counts = Counter(r.outcome for r in runs)
            print(f"{agent_name:26} {design:16} median "
                  f"{statistics.median(r.calls for r in runs):6.0f} calls  {dict(counts)} "
                  f"({time.perf_counter() - t:.1f} s)", flush=True)
            for r in runs:
                if r.outcome == "error":
                    print(f"    error: {r.minimal}", flush=True)
    section = render(results, seeds=seeds, seconds=time.perf_counter() - t0, minimum=minimum)
    if args.quick:
        print(section)
        return 0
    write_section(args.output, SECTION, section)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
