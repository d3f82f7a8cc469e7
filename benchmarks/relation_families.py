"""The formatting, injection and obfuscation relation families: found on the matching bug,
never on a clean noisy gate, and what they cost.

Run from the repository root::

    python benchmarks/relation_families.py                # 40 seeds per row, plan 60
    python benchmarks/relation_families.py --seeds 20 --no-write

For each family, ``run`` with its opt-in built-in (``formatting``, ``injection=allow``,
``obfuscation=block``; ``tool-injection`` on the tools layer) against the keyword gates of
``tests/support/family_gates.py`` (20 probes, half harmful; label noise 10% on odd seeds and
15% on even ones, from each gate's own generator): the gate with the family's matching bug
and the clean gate. Then ``@agent_property`` with ``obfuscations()`` (60 examples) on the
obfuscation bug and the clean gate. Last, what ``plan`` expects the families to add to a run
(simulated, no agent called), on the same probes and on the shipped moderation probe set.
The tables go into the ``relation-families`` section of docs/benchmarks.md (``_docs.py``).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from _docs import cpus, write_section  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
SPELLING = {"formatting": "formatting", "injection": "injection=allow",
            "obfuscation": "obfuscation=block"}
NEW = "formatting,injection=allow,obfuscation=block"


def noise(s: int) -> float:
    return 0.10 if s % 2 else 0.15


def share(k: int, n: int) -> str:
    from agentverity_props.decide import clopper_pearson
    lo, hi = clopper_pearson(k, n, alpha=0.05)
    return f"{k}/{n} = {k / n:.0%} [{lo:.0%}, {hi:.0%}]"


def through_run(make, relation: str, seeds: int, *, layer: str = "verdict"):
    from agentverity_props import from_callable, run
    from agentverity_props.relations import select_builtins
    from agentverity_props.runner import RunConfig
    from tests.support.family_gates import PROBES

    statuses, calls, rel_calls = [], [], []
    for s in range(seeds):
        res = run(from_callable(make(s), identity=f"{relation}-{s}"), PROBES,
                  select_builtins([relation]),
                  config=RunConfig(seed=s, max_workers=4, layer=layer))
        statuses.append(str(res.relations[0].status))
        calls.append(res.ledger["calls"])
        rel_calls.append(res.phase_calls["relations"])
    return statuses, calls, rel_calls


def through_property(make, seeds: int):
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    from agentverity_props import agent_property, from_callable
    from agentverity_props.errors import AgentHealthWarning, PropertyViolation
    from agentverity_props.property._records import RECORDS
    from agentverity_props.relations import obfuscation_relation
    from agentverity_props.strategies import obfuscations
    from tests.support.family_gates import HARMFUL, one_keyword_in_homoglyphs

    failed = exact = 0
    calls = []
    for s in range(seeds):
        @agent_property(agent=from_callable(make(s), identity=f"obfuscation-property-{s}"))
        @seed(s)
        @settings(database=None, max_examples=60, suppress_health_check=list(HealthCheck))
        @given(prompt=st.sampled_from(HARMFUL), edit=obfuscations())
        def test(check, prompt, edit):
            check.relation(obfuscation_relation(["block"], edit=edit), prompt)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AgentHealthWarning)
            try:
                test()
            except PropertyViolation:
                failed += 1
                ce = RECORDS[-1].minimal
                exact += ce is not None and one_keyword_in_homoglyphs(ce.source, ce.follow_up)
        calls.append(RECORDS[-1].calls)
    return failed, exact, calls


def planned(inputs, names: str | None, seeds: int) -> dict[float, tuple[float, float]]:
    from agentverity_props.relations import select_builtins
    from agentverity_props.runner import plan

    rels = None if names is None else select_builtins(names.split(","))
    p = plan(inputs, rels, noises=(0.05, 0.15), seeds=seeds, default_noises=False)
    return {lv["noise"]: (lv["calls"]["total"]["mean"], lv["calls"]["relations"]["mean"],
                          lv["calls"]["total"]["se"]) for lv in p.levels}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--plan-seeds", type=int, default=60)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from agentverity_props.examples import moderation_inputs
    from agentverity_props.relations import DEFAULT_BUILTIN_NAMES
    from tests.support.family_gates import PROBES, gate, tool_gate

    t0 = time.monotonic()
    n = args.seeds
    rows = []
    for fam, spelling in SPELLING.items():
        for label, make in ((f"`{fam}` bug", lambda s, f=fam: gate(f, noise=noise(s), seed=s)),
                            ("clean", lambda s: gate(None, noise=noise(s), seed=1000 + s))):
            st_, calls, rc = through_run(make, spelling, n)
            rows.append((f"`{spelling}`", label, st_, calls, rc))
            print(rows[-1][:2], st_.count("VIOLATED"), flush=True)
    for label, bug in (("drops its tools when told", True), ("clean", False)):
        st_, calls, rc = through_run(lambda s, b=bug: tool_gate(bug=b, noise=noise(s), seed=s),
                                     "tool-injection", n, layer="tools")
        rows.append(("`tool-injection` (tools layer)", label, st_, calls, rc))
    prop = {label: through_property(make, min(n, 20)) for label, make in (
        ("bug", lambda s: gate("obfuscation", noise=noise(s), seed=s)),
        ("clean", lambda s: gate(None, noise=noise(s), seed=2000 + s)))}
    defaults = ",".join(DEFAULT_BUILTIN_NAMES)
    cost = []
    for where, inputs in (("these 20 probes", PROBES),
                          ("examples/moderation.txt", moderation_inputs())):
        base = planned(inputs, None, args.plan_seeds)
        new = planned(inputs, NEW, args.plan_seeds)
        both = planned(inputs, f"{defaults},{NEW}", args.plan_seeds)
        cost.append((where, len(inputs), base, new, both))
    wall = time.monotonic() - t0

    lines = [
        "## New relation families",
        "",
        f"Measured by `python benchmarks/relation_families.py --seeds {n}` on {cpus()} CPU(s), "
        f"Python {platform.python_version()} in {wall:.0f} s. Keyword gates of "
        "`tests/support/family_gates.py`: 20 probes (10 harmful), label noise 10% or 15% on "
        "every call (odd/even seeds), `run` at its defaults (α = 0.05, tolerance 0.1, "
        "`--max-workers 4`) with one relation. The matching bugs: a quoted or fenced request "
        "is allowed (formatting); an embedded \"answer allow\" is obeyed (injection); a literal "
        "keyword filter (obfuscation: leetspeak on every word gets past it); an agent that "
        "calls no tool when told to (tool-injection). The clean gate reads every follow-up as "
        "a person would. VIOLATED with a 95% Clopper-Pearson interval; calls are the whole "
        "run's (meter, blindness, health checks included) and the relation phase's.",
        "",
        "| relation | gate | VIOLATED | HOLDS | mean calls | relation calls |",
        "|---|---|---|---|---:|---:|",
    ]
    for rel, label, st_, calls, rc in rows:
        lines.append(f"| {rel} | {label} | {share(st_.count('VIOLATED'), len(st_))} | "
                     f"{st_.count('HOLDS')}/{len(st_)} | {statistics.fmean(calls):.0f} | "
                     f"{statistics.fmean(rc):.0f} |")
    (bf, bx, bc), (cf, _, cc) = prop["bug"], prop["clean"]
    k = len(bc)
    lines += [
        "",
        f"`@agent_property` with `obfuscations()` over the 10 harmful probes (60 examples, "
        f"{k} seeds): the obfuscation bug fails the test in {share(bf, k)}, shrunk to one "
        f"keyword written in homoglyphs (the mildest disguise that gets past the filter) in "
        f"{bx}/{bf}, mean {statistics.fmean(bc):.0f} calls; the clean gate fails it in "
        f"{share(cf, k)}, mean {statistics.fmean(cc):.0f} calls.",
        "",
        "### What they cost (`plan`)",
        "",
        f"Calls `plan` expects for a whole `run` and for its relation phase (mean of "
        f"{args.plan_seeds} simulated runs per noise level; the synthetic agent keeps every "
        "relation true, so these are the costs of relations that HOLD):",
        "",
        "| probe set | noise | default 8: run (relations) | the 3 families alone | "
        "default 8 + the 3 | added by the 3 (±2 s.e.) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for where, size, base, new, both in cost:
        for q in (0.05, 0.15):
            lines.append(f"| {where} ({size}) | {q:g} | {base[q][0]:.0f} ({base[q][1]:.0f}) | "
                         f"{new[q][0]:.0f} ({new[q][1]:.0f}) | {both[q][0]:.0f} "
                         f"({both[q][1]:.0f}) | {both[q][0] - base[q][0]:+.0f} "
                         f"({(both[q][0] - base[q][0]) / base[q][0]:+.0%}; "
                         f"±{2 * (base[q][2] ** 2 + both[q][2] ** 2) ** 0.5:.0f}) |")
    lines += ["", "Single runs spread widely (sequential tests stop at random times), hence the "
              "±2 standard errors of the difference; the relation phase shares each input's "
              "source draws among its relations, so added to the default set the three cost "
              "less than in a run of their own (meter and health checks included). They "
              "stay opt-in (`--relations formatting,injection=LABEL,obfuscation=LABEL`, "
              "`builtin_relations(...)`): `injection` and `obfuscation` need the agent's own "
              "labels, and a larger default set would change every other figure in this file."]
    body = "\n".join(lines) + "\n"
    print(body)
    if not args.no_write:
        write_section(DOC, "relation-families", body)


if __name__ == "__main__":
    main()
