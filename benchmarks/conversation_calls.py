"""Shortest failing conversations on a noisy agent, and what they cost in agent calls.

Run from the repository root::

    python benchmarks/conversation_calls.py            # 20 seeds per row; rewrites the
                                                       # `conversation` section of
                                                       # docs/benchmarks.md
    python benchmarks/conversation_calls.py --quick    # 3 seeds; prints, writes nothing

The agent is ``agentverity_props.examples.support_conversation``: the support agent taking the
message history, 15% noise on every turn (another, benign action, from its own
``random.Random``), and the planted bug — a refund requested two or more turns after the order
number skips ``lookup_order``. Its shortest failing conversation has **3 turns**.

Rows:

* ``AgentStateMachine``: ``support_machine(seed=s)`` (user turns from ``TURNS``, the invariant
  "never issue_refund before lookup_order", 6 turns per example, 50 examples), with and without
  the bug; ``+ relations`` adds the three conversation relations (irrelevant turn, repeated
  turn, paraphrased turn) on the agent without the bug (no false violation allowed).
* ``machine + relations``: a run may fail both the invariant and a relation (Hypothesis then
  raises both bugs together: "failed"); "turns reported" is the invariant's minimum there.
* ``relations only``: no invariant; the irrelevant-turn relation exposes the bug on the
  2-turn conversation (order number, refund) by inserting a turn before the refund, so its
  minimum is **2 turns** (column "minimal" counts 2 for that row).
* ``plain RuleBasedStateMachine``: the same rules, one live conversation per example, the
  invariant asserted on each live turn. Hypothesis replays a failing example to shrink it; on
  a noisy agent the replay need not fail again, which Hypothesis reports as ``Flaky``.

Calls are the agent's turns (the engine's ledger for the machine; a counter around the agent
for the plain machine).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import write_section  # noqa: E402

SECTION = "conversation"
PLANTED_TURNS = 3
INVARIANT = "issue_refund_after_lookup_order"
#: relations only: the bug shows when a turn is inserted into the 2-turn conversation
PLANTED_RELATION_TURNS = 2
EXAMPLES = 100


def run_machine(seed: int, *, bug: bool, relations: bool = False, invariants: bool = True,
                noise: float = 0.15) -> dict[str, Any]:
    """One seed of ``AgentStateMachine``: outcome, turns of the minimal conversation, calls."""
    from agentverity_props.conversation import RECORDS, run_conversation_test
    from agentverity_props.errors import PropertyViolation
    from agentverity_props.examples.support_conversation import support_machine

    machine = support_machine(seed=seed, noise=noise, bug=bug, relations=relations,
                              invariants=invariants)
    t0 = time.perf_counter()
    try:
        run_conversation_test(machine, max_examples=EXAMPLES)
        outcome = "passed"
    except PropertyViolation:
        outcome = "failed"
    except BaseException as exc:  # Flaky, Inconclusive...: counted, never hidden
        # two checks failing are two bugs: Hypothesis raises them together
        outcome = "failed" if _has_violation(exc) else type(exc).__name__
    rec = RECORDS[-1]
    # the row's target: the invariant's minimum, else (relations only) the relations'
    targets = [ce.n_turns for name, ce in rec.minimal.items() if name == INVARIANT] or \
        [ce.n_turns for ce in rec.minimal.values()]
    turns = min(targets, default=None)
    return {"outcome": outcome, "turns": turns, "calls": rec.calls,
            "first_calls": rec.first.calls_at_confirmation if rec.first else None,
            "checks": {k: ce.n_turns for k, ce in sorted(rec.minimal.items())},
            "seconds": time.perf_counter() - t0}


def _has_violation(exc: BaseException) -> bool:
    from agentverity_props.errors import PropertyViolation

    if isinstance(exc, PropertyViolation):
        return True
    return any(_has_violation(e) for e in getattr(exc, "exceptions", ()))


def run_plain(seed: int, *, bug: bool, relations: bool = False, noise: float = 0.15
              ) -> dict[str, Any]:
    """One seed of a plain ``RuleBasedStateMachine`` on the same agent and rules (with
    ``relations``: an irrelevant turn inserted before an earlier turn, the edited conversation
    played once, its last verdict asserted equal to the live one)."""
    from hypothesis import errors, settings
    from hypothesis import seed as hypothesis_seed
    from hypothesis import strategies as st
    from hypothesis.stateful import (
        RuleBasedStateMachine,
        precondition,
        rule,
        run_state_machine_as_test,
    )

    from agentverity_props.examples.support_conversation import (
        FILLERS,
        TURNS,
        support_conversation,
    )

    fn = support_conversation(seed=seed, noise=noise, bug=bug)
    calls = [0]
    failing_turns: list[int] = []

    class Plain(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.history: list[dict[str, str]] = []
            self.seen_lookup = False

        @rule(message=st.sampled_from(TURNS))
        def user_turn(self, message: str) -> None:
            self.history.append({"role": "user", "content": message})
            calls[0] += 1
            out = fn(self.history)
            self.history.append({"role": "assistant", "content": out["text"]})
            for t in out["tools"]:
                if t.get("status", "success") != "success":
                    continue
                if t["name"] == "lookup_order":
                    self.seen_lookup = True
                elif t["name"] == "issue_refund" and not self.seen_lookup:
                    failing_turns.append(len(self.history) // 2)
                    raise AssertionError("issue_refund before lookup_order")
            self.last_verdict = out["verdict"]

        @precondition(lambda self: relations and len(self.history) >= 4)
        @rule(data=st.data())
        def edit_earlier_turn(self, data: Any) -> None:
            turns = [m["content"] for m in self.history if m["role"] == "user"]
            pos = data.draw(st.integers(0, len(turns) - 2))
            edited = [*turns[:pos], data.draw(st.sampled_from(FILLERS)), *turns[pos:]]
            msgs: list[dict[str, str]] = []
            for t in edited:
                msgs.append({"role": "user", "content": t})
                calls[0] += 1
                out = fn(msgs)
                msgs.append({"role": "assistant", "content": out["text"]})
            if out["verdict"] != self.last_verdict:
                failing_turns.append(len(turns))
                raise AssertionError("an irrelevant turn changed the last verdict")

    machine = hypothesis_seed(seed)(Plain)
    t0 = time.perf_counter()
    try:
        run_state_machine_as_test(machine, settings=settings(
            max_examples=EXAMPLES, stateful_step_count=6, deadline=None, database=None))
        outcome = "passed"
    except AssertionError:
        outcome = "failed"
    except (errors.Flaky, errors.FlakyFailure):
        outcome = "Flaky"
    except BaseException as exc:
        outcome = "Flaky" if "Flaky" in type(exc).__name__ else type(exc).__name__
    turns = failing_turns[-1] if outcome == "failed" and failing_turns else None
    return {"outcome": outcome, "turns": turns, "calls": calls[0], "first_calls": None,
            "checks": [], "seconds": time.perf_counter() - t0}


ROWS = {
    "machine: bug": lambda s: run_machine(s, bug=True),
    "machine: no bug": lambda s: run_machine(s, bug=False),
    "machine + relations: no bug": lambda s: run_machine(s, bug=False, relations=True),
    "machine + relations: bug": lambda s: run_machine(s, bug=True, relations=True),
    "machine, relations only: bug": lambda s: run_machine(s, bug=True, relations=True,
                                                          invariants=False),
    "plain RBSM: bug": lambda s: run_plain(s, bug=True),
    "plain RBSM: no bug": lambda s: run_plain(s, bug=False),
    "plain RBSM + relation: no bug": lambda s: run_plain(s, bug=False, relations=True),
}


def summarise(name: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(results)
    outcomes = Counter(r["outcome"] for r in results)
    planted = PLANTED_RELATION_TURNS if "relations only" in name else PLANTED_TURNS
    exact = sum(1 for r in results if r["outcome"] == "failed" and r["turns"] == planted)
    calls = [r["calls"] for r in results]
    exact_calls = [r["calls"] for r in results
                   if r["outcome"] == "failed" and r["turns"] == planted]
    return {"row": name, "seeds": n, "passed": outcomes.get("passed", 0),
            "failed": outcomes.get("failed", 0), "flaky": outcomes.get("Flaky", 0),
            "other": n - outcomes.get("passed", 0) - outcomes.get("failed", 0)
            - outcomes.get("Flaky", 0),
            "exact": exact,
            "turns": Counter(r["turns"] for r in results if r["turns"] is not None),
            "median_calls": statistics.median(calls) if calls else 0,
            "median_exact_calls": statistics.median(exact_calls) if exact_calls else None,
            "seconds": sum(r["seconds"] for r in results)}


def table(rows: list[dict[str, Any]], seeds: int) -> str:
    lines = [
        "## Multi-turn: the shortest failing conversation on a noisy agent",
        "",
        "`python benchmarks/conversation_calls.py` — the support agent of",
        "`agentverity_props/examples/support_conversation.py`, 15% noise on every turn, the",
        "planted bug (a refund requested two or more turns after the order number skips",
        f"`lookup_order`; shortest failing conversation: {PLANTED_TURNS} turns). {seeds} seeds "
        f"per row, {EXAMPLES} examples of up to 6 turns each; a seed drives Hypothesis and the",
        "agent's own `random.Random`. Calls are agent turns.",
        "",
        "| design, agent | seeds | passed | failed | Flaky | other | minimal (3 turns; 2 for "
        "relations only) "
        "| turns reported | median calls | median calls, minimal |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        turns = ", ".join(f"{k}: {v}" for k, v in sorted(r["turns"].items())) or "-"
        mec = "-" if r["median_exact_calls"] is None else f"{r['median_exact_calls']:.0f}"
        lines.append(f"| {r['row']} | {r['seeds']} | {r['passed']} | {r['failed']} | "
                     f"{r['flaky']} | {r['other']} | {r['exact']} | {turns} | "
                     f"{r['median_calls']:.0f} | {mec} |")
    lines += ["", f"Python {platform.python_version()}, {platform.machine()}; "
              f"{sum(r['seconds'] for r in rows):.0f} s in all."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--quick", action="store_true", help="3 seeds; print, write nothing")
    ap.add_argument("--only", default="", help="comma-separated row names; print only")
    args = ap.parse_args(argv)
    seeds = 3 if args.quick else args.seeds
    names = [n for n in ROWS if not args.only or n in args.only.split(",")]
    rows = []
    for name in names:
        results = []
        for s in range(seeds):
            results.append(ROWS[name](s))
            print(f"{name} seed {s}: {results[-1]}", flush=True)
        rows.append(summarise(name, results))
    text = table(rows, seeds)
    print(text)
    if not args.quick and not args.only and seeds == 20:
        write_section(ROOT / "docs" / "benchmarks.md", SECTION, text)
        print("wrote docs/benchmarks.md section", SECTION)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
