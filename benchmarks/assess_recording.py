"""Recorded evidence used whole: ``assess --jsonl`` on recordings of a sampled-model-like
gate, ten prompts and their upper-cased forms, 24 answers each (480 draws), a custom
``upper`` relation. Clean (the upper-cased form answered from the prompt's own label mix,
modal share 0.4-0.97): the relation holds by construction. Planted bug: every upper-cased
form answered ``block``. Recordings from ``examples/recorded/make_sampled.py`` (its
``rows(seed, bug=...)``, own ``random.Random``), seeds 1..reps. No agent is ever called;
"draws read" is how many of the 480 recorded draws the assessment replayed. Shares with 95%
Clopper-Pearson intervals.

    python benchmarks/assess_recording.py [--reps 40] [--output docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentverity_props.assess import assess, load_jsonl  # noqa: E402
from agentverity_props.decide import clopper_pearson  # noqa: E402
from agentverity_props.observation import by_key  # noqa: E402
from agentverity_props.relations import Relation  # noqa: E402
from benchmarks._docs import write_section  # noqa: E402

UPPER = Relation("upper", "invariant", str.upper)


def _maker() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_sampled", ROOT / "examples" / "recorded" / "make_sampled.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(label: str, bug: bool, reps: int, tmp: Path) -> str:
    mk = _maker()
    statuses, reads, live = [], [], 0
    for seed in range(1, reps + 1):
        path = tmp / f"{seed}-{bug}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in mk.rows(seed, bug=bug)))
        r = assess(load_jsonl(path, extractor=by_key("label")), [UPPER])
        statuses.append(str(r.relations[0].status))
        reads.append(int(r.ledger["replayed"]))
        live += int(r.ledger["calls"])
    cells = []
    for st in ("HOLDS", "VIOLATED", "INCOMPLETE"):
        k = statuses.count(st)
        lo, hi = clopper_pearson(k, reps, alpha=0.05)
        cells.append(f"{k}/{reps} [{lo:.2f}, {hi:.2f}]")
    undecided = [n for s, n in zip(statuses, reads, strict=True) if s == "INCOMPLETE"]
    und = f"{min(undecided)}–{max(undecided)}" if undecided else "–"
    return (f"| {label} | {' | '.join(cells)} | {statistics.median(reads):.0f} "
            f"({min(reads)}–{max(reads)}) | {und} | {live} |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--output", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [row("clean (relation holds)", False, args.reps, Path(tmp)),
                row("planted bug (upper-cased form always block)", True, args.reps, Path(tmp))]
    minutes = (time.time() - t0) / 60
    body = "\n".join([
        "## Recorded evidence used whole (assess)",
        "",
        f"Measured by `python benchmarks/assess_recording.py --reps {args.reps}` "
        f"({minutes:.1f} min): `assess` on {args.reps} recordings of each kind, 480 draws "
        "each (ten prompts and their upper-cased forms, 24 answers each, per-prompt label "
        "mixes with modal share 0.4–0.97), a custom `upper` relation, defaults (alpha 0.05, "
        "tolerance 0.1). See the script's docstring.",
        "",
        "| recording | HOLDS | VIOLATED | INCOMPLETE | draws read, median (range) | "
        "draws read when INCOMPLETE | live calls |",
        "|---|---|---|---|---|---|---|",
        *rows])
    if args.output is not None:
        write_section(args.output, "assess-recording", body)
    else:
        print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
