"""Relation verdicts under partial and uneven violations: how often `run` says HOLDS / VIOLATED,
and what it costs in agent calls and wall time.

Every agent here keeps its own ``random.Random`` and decides from the *source* a prompt came
from (the nearest probe by character trigrams, so every built-in transform maps back to its
source): a relation holds by construction unless a planted bug says otherwise. Bugs look at
the prompt itself (e.g. "mostly upper case").

    python benchmarks/relation_effects.py --seeds 20            # table to stdout
    python benchmarks/relation_effects.py --seeds 20 --write    # into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _docs import markers, write_section

from agentverity_props import from_callable, run
from agentverity_props.relations import select_builtins
from agentverity_props.runner import RunConfig

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "relation-effects"

WORDS = ["billing", "refund", "account", "password", "order", "delivery", "invoice",
         "shipping", "login", "upgrade", "cancel", "warranty", "address", "payment", "coupon",
         "subscription"]


def prompts(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct everyday prompts (lower case, a few words each)."""
    rng = random.Random(f"prompts:{seed}")
    out: list[str] = []
    while len(out) < n:
        w = rng.sample(WORDS, 3)
        p = f"how do i change the {w[0]} for my {w[1]} and {w[2]} number {len(out)}"
        out.append(p)
    return out


def _grams(text: str) -> set[str]:
    t = " ".join("".join(c for c in text.lower() if c.isalnum() or c == " ").split())
    return {t[i:i + 3] for i in range(max(1, len(t) - 2))}


class Keyed:
    """An agent that answers each prompt from its source's own verdict distribution.

    Args:
        sources: the probe set.
        shares: per source, the probability of its modal verdict (the other verdict
            otherwise); a callable ``(i, prompt) -> share`` may depend on the prompt (a bug).
        modal: per source, its modal verdict.
    """

    def __init__(self, sources: Sequence[str], shares: Callable[[int, str], float],
                 modal: Sequence[str], seed: int) -> None:
        self.sources = list(sources)
        self.grams = [_grams(s) for s in sources]
        self.shares, self.modal = shares, list(modal)
        self.rng = random.Random(f"agent:{seed}")
        self.lock = threading.Lock()
        self.cache: dict[str, int] = {}

    def source_of(self, prompt: str) -> int:
        if prompt not in self.cache:
            g = _grams(prompt)
            self.cache[prompt] = max(range(len(self.sources)),
                                     key=lambda i: len(g & self.grams[i]) / len(g | self.grams[i]))
        return self.cache[prompt]

    def __call__(self, prompt: str) -> str:
        i = self.source_of(prompt)
        share = self.shares(i, prompt)
        with self.lock:
            hit = self.rng.random() < share
        m = self.modal[i]
        return m if hit else ("allow" if m == "block" else "block")


def shouted(prompt: str) -> bool:
    letters = [c for c in prompt if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) / len(letters) > 0.8


@dataclass(frozen=True)
class Scenario:
    name: str
    n_inputs: int
    relations: tuple[str, ...] | None   # None: the eight built-ins
    make: Callable[[list[str], int], Keyed]
    expect: str                          # the relation whose status is tallied
    goal: str
    latency: float = 0.0
    workers: int = 4
    profile: str | None = None           # None: the run's (--profile)


def _modal(n: int, seed: int) -> list[str]:
    rng = random.Random(f"modal:{seed}")
    return ["block" if rng.random() < 0.3 else "allow" for _ in range(n)]


def deterministic_coin_flip(ps: list[str], seed: int) -> Keyed:
    return Keyed(ps, lambda i, p: 0.5 if shouted(p) else 1.0, _modal(len(ps), seed), seed)


def noisy_partial(ps: list[str], seed: int) -> Keyed:
    # 15% noise everywhere; upper case raises the flip rate by 0.3 (to 45%)
    return Keyed(ps, lambda i, p: 0.55 if shouted(p) else 0.85, _modal(len(ps), seed), seed)


def noisy_clean(ps: list[str], seed: int) -> Keyed:
    return Keyed(ps, lambda i, p: 0.85, _modal(len(ps), seed), seed)


def deterministic_clean(ps: list[str], seed: int) -> Keyed:
    return Keyed(ps, lambda i, p: 1.0, _modal(len(ps), seed), seed)


def one_in_200(ps: list[str], seed: int) -> Keyed:
    # input 0 answers 65/35; its upper-cased form always gets the minority verdict
    modal = _modal(len(ps), seed)
    modal[0] = "block"

    def share(i: int, p: str) -> float:
        if i != 0:
            return 1.0
        return 0.0 if shouted(p) else 0.65

    return Keyed(ps, share, modal, seed)


def one_of_n(noise: float) -> Callable[[list[str], int], Keyed]:
    """A quiet input whose upper-cased form is a coin flip; every other input answers its
    modal verdict with probability ``1 - noise``."""
    def make(ps: list[str], seed: int) -> Keyed:
        def share(i: int, p: str) -> float:
            if i == 0:
                return 0.5 if shouted(p) else 1.0
            return 1.0 - noise
        return Keyed(ps, share, _modal(len(ps), seed), seed)
    return make


def more_decided_one(ps: list[str], seed: int) -> Keyed:
    # input 0 answers its modal verdict 65% of the time; its upper-cased form always does
    def share(i: int, p: str) -> float:
        if i != 0:
            return 1.0
        return 1.0 if shouted(p) else 0.65

    return Keyed(ps, share, _modal(len(ps), seed), seed)


def more_decided_all(ps: list[str], seed: int) -> Keyed:
    # 0.75 -> 1.00 on the modal verdict on every input
    return Keyed(ps, lambda i, p: 1.0 if shouted(p) else 0.75, _modal(len(ps), seed), seed)


def llm_like(ps: list[str], seed: int) -> Keyed:
    rng = random.Random(f"llm:{seed}")
    shares = [rng.uniform(0.4, 0.97) for _ in ps]
    return Keyed(ps, lambda i, p: shares[i], _modal(len(ps), seed), seed)


def uneven(ps: list[str], seed: int) -> Keyed:
    # quiet on most inputs, coin flips on a few (every fifth)
    return Keyed(ps, lambda i, p: 0.5 if i % 5 == 0 else 1.0, _modal(len(ps), seed), seed)


THREE = ("case", "whitespace", "normalisation")
SCENARIOS = [
    Scenario("deterministic gate, upper case -> coin flip", 20, THREE, deterministic_coin_flip,
             "case", "VIOLATED >= 99%"),
    Scenario("15% noise, upper case +0.3 flip rate", 30, THREE, noisy_partial, "case",
             "VIOLATED >= 95%"),
    Scenario("15% noise, nothing violated (8 relations)", 30, None, noisy_clean, "*",
             "0 VIOLATED, HOLDS >= 90%, <= 2,500 calls"),
    Scenario("15% noise, nothing violated, 300 inputs", 300, None, noisy_clean, "*",
             "<= 10.5x the 30-input calls"),
    Scenario("deterministic, nothing violated (8 relations)", 30, None, deterministic_clean,
             "*", "<= 500 calls (the deterministic path)"),
    # the quiet inputs get the meter's certificate: standard takes the deterministic path,
    # which finds a follow-up that differs from its source on part of the draws with about
    # that share (here 0.65: the source's minority verdict is 0.35); thorough screens at
    # size 0.5
    Scenario("one 65/35 input violating among 200 quiet", 201, THREE, one_in_200, "case",
             "VIOLATED ~ 65% (the deterministic path's flip share)"),
    Scenario("one 65/35 input violating among 200 quiet, thorough", 201, THREE, one_in_200,
             "case", "HOLDS <= 1%", profile="thorough"),
    # a quiet gate is certified deterministic: standard takes the deterministic path (one
    # follow-up draw a pair), which finds a coin-flip follow-up with about its flip share;
    # thorough never takes it
    Scenario("quiet gate, one input's upper case -> coin flip", 30, THREE, one_of_n(0.0),
             "case", "VIOLATED ~ 50% (the deterministic path's flip share)"),
    Scenario("quiet gate, one input's upper case -> coin flip", 100, THREE, one_of_n(0.0),
             "case", "VIOLATED ~ 50% (the deterministic path's flip share)"),
    Scenario("quiet gate, one input's upper case -> coin flip", 300, THREE, one_of_n(0.0),
             "case", "VIOLATED ~ 50% (the deterministic path's flip share)"),
    Scenario("quiet gate, one input's upper case -> coin flip, thorough", 30, THREE,
             one_of_n(0.0), "case", "VIOLATED >= 99%", profile="thorough"),
    Scenario("quiet gate, one input's upper case -> coin flip, thorough", 100, THREE,
             one_of_n(0.0), "case", "VIOLATED >= 99%", profile="thorough"),
    Scenario("15% noise elsewhere, one quiet input's upper case -> coin flip", 30, THREE,
             one_of_n(0.15), "case", "VIOLATED >= 90%"),
    Scenario("15% noise elsewhere, one quiet input's upper case -> coin flip", 100, THREE,
             one_of_n(0.15), "case", "VIOLATED >= 90%"),
    # standard's deterministic path again (the follow-up differs from a source draw 35% of
    # the time); thorough screens the pair's reverse side at size 0.5
    Scenario("one 65/35 input made fully decided among 200 quiet", 201, THREE,
             more_decided_one, "case", "VIOLATED ~ 35% (the deterministic path's flip share)"),
    Scenario("one 65/35 input made fully decided among 200 quiet, thorough", 201, THREE,
             more_decided_one, "case", "VIOLATED >= 90%", profile="thorough"),
    Scenario("0.75 -> 1.00 on every input", 30, THREE, more_decided_all, "case",
             "VIOLATED >= 95%"),
    Scenario("LLM-like: modal shares 0.4-0.97, nothing violated", 27, THREE, llm_like, "*",
             "HOLDS >= 90%, 0 VIOLATED, <= 2,000 calls"),
    Scenario("quiet inputs, coin flips on every fifth", 30, THREE, uneven, "*",
             "HOLDS >= 90%, 0 VIOLATED"),
    Scenario("15% noise, 0.2 s per call, 32 workers", 30, None, noisy_clean, "*",
             "wall <= 2x calls x latency / workers", latency=0.2, workers=32),
]


PROFILE = "standard"


def run_one(sc: Scenario, seed: int) -> dict[str, object]:
    ps = prompts(sc.n_inputs, seed)
    agent = sc.make(ps, seed)
    fn: Callable[[str], str] = agent
    if sc.latency:
        def fn(p: str, agent: Keyed = agent) -> str:
            time.sleep(sc.latency)
            return agent(p)
    rels = None if sc.relations is None else select_builtins(sc.relations)
    t = time.perf_counter()
    res = run(from_callable(fn, identity=f"{sc.name}-{seed}"), ps, rels,
              config=RunConfig(seed=seed, max_workers=sc.workers,
                               profile=sc.profile or PROFILE))
    secs = time.perf_counter() - t
    statuses = {r.relation.name: str(r.status) for r in res.relations}
    return {"statuses": statuses, "calls": int(res.ledger.get("calls", 0)), "secs": secs,
            "exit": int(res.exit_code)}


def tally(sc: Scenario, rows: list[dict[str, object]]) -> dict[str, float]:
    n = len(rows)
    out = {"holds": 0.0, "violated": 0.0, "undecided": 0.0}
    for r in rows:
        st = r["statuses"]
        assert isinstance(st, dict)
        vals = [v for v in st.values() if v != "NOT EXERCISED"] if sc.expect == "*" \
            else [st[sc.expect]]
        if any(v == "VIOLATED" for v in vals):
            out["violated"] += 1
        elif vals and all(v == "HOLDS" for v in vals):
            out["holds"] += 1
        else:
            out["undecided"] += 1
    return {k: v / n for k, v in out.items()}


PROPERTY_SCENARIOS = [
    ("deterministic gate, upper case -> coin flip", deterministic_coin_flip, "fails >= 99%"),
    ("15% noise, upper case +0.3 flip rate", noisy_partial, "fails >= 95%"),
    ("15% noise, nothing violated", noisy_clean, "passes, never Inconclusive"),
    ("LLM-like: modal shares 0.4-0.97", llm_like, "passes, never Inconclusive"),
]


def property_one(make: Callable[[list[str], int], Keyed], seed: int) -> tuple[str, int]:
    """One ``@agent_property`` test (case invariance over 30 prompts, the defaults): its
    outcome (failed / passed / inconclusive / error) and its calls."""
    from hypothesis import given, settings
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    from agentverity_props import agent_property
    from agentverity_props.errors import Inconclusive, PropertyViolation
    from agentverity_props.property._records import RECORDS

    ps = prompts(30, seed)
    agent = make(ps, seed)

    @agent_property(agent=from_callable(agent, identity=f"prop-{seed}"))
    @hseed(seed)
    @settings(database=None)
    @given(prompt=st.sampled_from(ps))
    def test_case(check: object, prompt: str) -> None:
        check.invariant(prompt, prompt.upper(), name="case")  # type: ignore[attr-defined]

    try:
        test_case()
        out = "passed"
    except PropertyViolation:
        out = "failed"
    except Inconclusive:
        out = "inconclusive"
    except BaseException as exc:  # a benchmark row, never a crash
        out = "failed" if "Violation" in type(exc).__name__ else f"error {type(exc).__name__}"
    return out, RECORDS[-1].calls if RECORDS else 0


def property_table(seeds: int) -> list[str]:
    lines = ["| `@agent_property` (case invariance, 30 prompts, defaults) | fails | passes | "
             "Inconclusive | mean calls | goal |", "|---|---|---|---|---|---|"]
    for name, make, goal in PROPERTY_SCENARIOS:
        rows = [property_one(make, s) for s in range(seeds)]
        n = len(rows)
        f = sum(r[0] == "failed" for r in rows) / n
        p = sum(r[0] == "passed" for r in rows) / n
        i = sum(r[0] == "inconclusive" for r in rows) / n
        calls = sum(r[1] for r in rows) / n
        lines.append(f"| {name} | {f:.0%} | {p:.0%} | {i:.0%} | {calls:,.0f} | {goal} |")
        print(lines[-1], flush=True)
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--only", default="", help="run the scenarios whose name contains this")
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.name}")
    ap.add_argument("--properties-only", action="store_true",
                    help="run only the @agent_property table and, with --write, replace just "
                    "that table (and its seed count) in the section")
    ap.add_argument("--profile", default="standard", help="the run's profile (quick, "
                    "standard, thorough)")
    args = ap.parse_args(argv)
    global PROFILE
    PROFILE = args.profile
    if args.properties_only:
        plines = property_table(args.seeds)
        if args.write:
            start, end = markers(SECTION)
            text = DOC.read_text(encoding="utf-8")
            body = text[text.index(start) + len(start):text.index(end)].strip("\n")
            head = body.index("| `@agent_property`")
            tail = body.index("\n\n", head)
            note = "\n\n*`@agent_property` table: re-run alone"
            body = body[:head] + "\n".join(plines) + body[tail:].split(note)[0]
            body += (f"{note}, {args.seeds} seeds per row: `python benchmarks/"
                     f"relation_effects.py --properties-only --seeds {args.seeds} --write`.*")
            write_section(DOC, SECTION, body)
        return 0
    lines = ["| scenario | relations tallied | HOLDS | VIOLATED | neither | mean calls | "
             "max calls | mean seconds | goal |", "|---|---|---|---|---|---|---|---|---|"]
    for sc in SCENARIOS:
        if args.only and args.only not in f"{sc.name} ({sc.n_inputs} inputs)":
            continue
        seeds = args.seeds if not sc.latency else max(2, args.seeds // 5)
        rows = [run_one(sc, s) for s in range(seeds)]
        t = tally(sc, rows)
        calls = [int(r["calls"]) for r in rows]  # type: ignore[call-overload]
        secs = [float(r["secs"]) for r in rows]  # type: ignore[arg-type]
        which = "every exercised" if sc.expect == "*" else f"`{sc.expect}`"
        extra = ""
        if sc.latency:
            ideal = sum(calls) / len(calls) * sc.latency / sc.workers
            extra = f" (ideal {ideal:.1f} s: {sum(secs) / len(secs) / ideal:.2f}x)"
        lines.append(f"| {sc.name} ({sc.n_inputs} inputs) | {which} | {t['holds']:.0%} | "
                     f"{t['violated']:.0%} | {t['undecided']:.0%} | "
                     f"{sum(calls) / len(calls):,.0f} | {max(calls):,} | "
                     f"{sum(secs) / len(secs):.1f}{extra} | {sc.goal} |")
        print(lines[-1], flush=True)
    plines = [] if args.only else property_table(args.seeds)
    body = "\n".join(lines) + ("\n\n" + "\n".join(plines) if plines else "") + (
        f"\n\n*{args.seeds} seeds per row (latency row: {max(2, args.seeds // 5)}), defaults "
        "(tolerance 0.1, alpha 0.05, HOLDS error 0.05): "
        f"`python benchmarks/relation_effects.py --seeds {args.seeds} --write`.*")
    if args.write:
        write_section(DOC, SECTION, body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
