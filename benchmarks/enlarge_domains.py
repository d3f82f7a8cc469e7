"""enlarge at its defaults on agents from domains no strategy pack covers, against baselines.

Run from the repository root::

    python benchmarks/enlarge_domains.py          # 20 seeds a domain; rewrites the
                                                  # `enlarge-domains` section of
                                                  # docs/benchmarks.md
    python benchmarks/enlarge_domains.py --quick  # 4 seeds; prints, writes nothing

The agents and their blind probe sets of 20 inputs come from ``tests/support/domain_agents.py``
(shared with the CI test, so the two cannot drift apart): ``travel`` (a numeric threshold at
$2,000, a keyword, a list of cities), ``leave`` (a keyword list; 19 of 20 probes ``auto``),
``shipping`` (embargoed countries, a weight threshold), each at 5% noise (a random other
label) from its own ``random.Random``.

Per seed, ``enlarge`` at its defaults (budget 400, ``max_workers=1``). A seed *meets the goal*
when the enlarged set holds at least 3 added inputs of a minority verdict that each share at
least half their words with one original probe, and at least one located boundary pair, within
the 400 calls. "Calls to first" is the calls spent when the first minority input was confirmed
(the 20 baseline calls included), for the default search and two baselines over the same
grammar: ``recombine`` (uniformly random recombination of the probes' own values, clauses and
phrases; deletions) and ``uniform`` (every edit of the grammar drawn uniformly, numbers scaled
and lexicon values included). A baseline run that never finds one counts as its 400 calls.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _docs import cpus, write_section  # noqa: E402

from tests.support.domain_agents import DOMAINS  # noqa: E402

SECTION = "enlarge-domains"
BUDGET = 400


def one(domain: str, seed: int, search: str) -> dict[str, Any]:
    from agentverity_props import from_callable
    from agentverity_props.search import enlarge
    from agentverity_props.strategies._grammar import shared_word_share

    d = DOMAINS[domain]
    probes = d.probes(seed)
    r = enlarge(from_callable(d.agent(seed, noise=0.05)), probes, seed=seed, max_workers=1,
                budget=BUDGET, search=search)
    modal = r.modal_verdict
    in_domain = [a for a in r.added if r.verdicts[a] != modal
                 and max(shared_word_share(a, p) for p in probes) >= 0.5]
    truly = [a for a in in_domain if d.rule(a) != modal]  # minority by the noise-free rule
    located = [b for b in r.boundaries if b.get("status") == "located"]
    return {"minority": len(in_domain), "true_minority": len(truly),
            "pairs": len(r.boundary_pairs), "located": located, "calls": r.calls,
            "first": r.calls_to_first_minority if r.calls_to_first_minority is not None
            else BUDGET,
            "goal": len(in_domain) >= 3 and len(r.boundary_pairs) >= 1 and r.calls <= BUDGET}


def run(seeds: int) -> dict[str, dict[str, list[dict[str, Any]]]]:
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in DOMAINS:
        out[name] = {s: [one(name, seed, s) for seed in range(seeds)]
                     for s in ("guided", "recombine", "uniform")}
    return out


def _med(xs: list[float]) -> str:
    return f"{statistics.median(xs):.0f}"


def table(res: dict[str, dict[str, list[dict[str, Any]]]], seeds: int, minutes: float) -> str:
    lines = [f"Run on {platform.python_implementation()} {platform.python_version()}, "
             f"{cpus()} CPUs, {seeds} seeds a domain, 5% noise, budget {BUDGET}, "
             f"{minutes:.1f} min. Command: `python benchmarks/enlarge_domains.py`.", "",
             "| domain | boundary shape | goal met (≥ 3 in-domain minority, ≥ 1 pair) | "
             "minority added (median) | of them minority by the noise-free rule | "
             "boundary pairs (median) | calls (median) | calls to first: default | "
             "recombine | uniform |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    examples: list[str] = []
    for name, by in res.items():
        g = by["guided"]
        met = sum(r["goal"] for r in g)
        true_share = (sum(r["true_minority"] for r in g) / max(1, sum(r["minority"] for r in g)))
        lines.append(
            f"| {name} | {DOMAINS[name].boundary} | {met}/{len(g)} | "
            f"{_med([r['minority'] for r in g])} | {true_share:.0%} | "
            f"{_med([r['pairs'] for r in g])} | {_med([r['calls'] for r in g])} | "
            f"{_med([r['first'] for r in g])} | {_med([r['first'] for r in by['recombine']])} "
            f"| {_med([r['first'] for r in by['uniform']])} |")
        for r in g:
            if r["located"]:
                b = r["located"][0]
                examples.append(f"- {name}: {b.get('description')} ({b.get('calls')} calls)")
                break
    first = {s: statistics.mean(statistics.median([r["first"] - 20 for r in by[s]])
                                for by in res.values()) for s in ("guided", "recombine",
                                                                 "uniform")}
    lines += ["", "Search calls to the first minority input (after the 20 baseline calls every "
              f"design pays), mean over the domains of the median: default {first['guided']:.1f},"
              f" recombine {first['recombine']:.1f}, uniform {first['uniform']:.1f}; ratio "
              f"default/recombine {first['guided'] / max(first['recombine'], 1e-9):.2f}, "
              f"default/uniform {first['guided'] / max(first['uniform'], 1e-9):.2f}.", "",
              "A located boundary from each domain (seed order, first one):", "", *examples]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="4 seeds; prints, writes nothing")
    parser.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args(argv)
    seeds = 4 if args.quick else args.seeds
    t0 = time.perf_counter()
    res = run(seeds)
    text = table(res, seeds, (time.perf_counter() - t0) / 60)
    print(text)
    if not args.quick:
        write_section(args.output, SECTION, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
