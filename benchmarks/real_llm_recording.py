"""Recorded evidence of a real sampled LLM, assessed with no agent call: SmolLM2-135M-Instruct
as a moderation gate (``benchmarks/_smollm_gate.py``, temperature 0.8), ten prompts and their
upper-cased forms, 24 answers each (480 draws), recorded in the JSONL format of
docs/assess.md (``{"input", "output": "{\\"label\\": ...}", "order"}``), then ``assess
--jsonl`` with a custom ``upper`` relation (``str.upper``), defaults (alpha 0.05, tolerance
0.1).

Two gates per seed: *clean* (the gate normalises the prompt before the model sees it, so the
relation holds by construction: only the model's sampling noise separates a prompt and its
upper-cased form) and *bug* (the planted "shouting filter" of ``_smollm_gate``: a prompt
whose letters are mostly upper case is answered ``block`` without the model on half its
calls). The draws of a recording are made in an interleaved order (prompt and upper form
alternate) and the file's 'order' field says it. Each recording is written to
``--keep DIR`` when given (``examples/recorded/smollm2_upper*.jsonl`` are seed 1's).

Needs the optional real-model environment of ``benchmarks/_smollm_gate.py``:

    /work/llm/venv/bin/python benchmarks/real_llm_recording.py [--seeds 1] [--write] [--keep DIR]

``--assess-only DIR`` re-assesses recordings this script kept in DIR (no model needed: any
environment with the package), e.g. after a change to ``assess``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _docs import write_section  # noqa: E402
from _smollm_gate import PROMPTS, SmolGate, load_model  # noqa: E402  (no torch at import)

from agentverity_props.assess import assess, load_jsonl  # noqa: E402
from agentverity_props.observation import by_key  # noqa: E402
from agentverity_props.relations import Relation  # noqa: E402

UPPER = Relation("upper", "invariant", str.upper)
#: seven everyday prompts and three harmful-sounding ones
CHOSEN = (*PROMPTS[:7], *PROMPTS[-3:])
DRAWS = 24


def record(gate: SmolGate) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    order = 0
    for _ in range(DRAWS):
        for p in CHOSEN:
            for text in (p, p.upper()):
                label = gate(text)["verdict"]
                rows.append({"input": text, "output": json.dumps({"label": label}),
                             "order": order})
                order += 1
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--keep", type=Path, default=None)
    ap.add_argument("--assess-only", type=Path, default=None)
    args = ap.parse_args()
    tok, model = (None, None) if args.assess_only else load_model()
    t0 = time.time()
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, args.seeds + 1):
            for variant in ("clean", "bug"):
                name = f"smollm2_upper{'_bug' if variant == 'bug' else ''}"
                name += f"_seed{seed}.jsonl" if seed > 1 else ".jsonl"
                if args.assess_only:
                    path = args.assess_only / name
                    rows = path.read_text().splitlines()
                    rec_s = float("nan")
                else:
                    gate = SmolGate(tok, model, seed=7_000_001 * seed + (variant == "bug"),
                                    bug=variant == "bug")
                    t = time.time()
                    rows = record(gate)  # type: ignore[assignment]
                    rec_s = time.time() - t
                    path = (args.keep or Path(tmp)) / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
                r = assess(load_jsonl(path, extractor=by_key("label")), [UPPER])
                rel = r.relations[0]
                e = rel.effect or {}
                lines.append(
                    f"| {seed} | {variant} | {rel.status} | {e.get('estimate', 0):+.3f} "
                    f"[{e.get('lower', 0):+.3f}, {e.get('upper', 0):+.3f}] | "
                    f"{rel.calibrated_violations} | {int(r.ledger['replayed'])} of {len(rows)} | "
                    f"{int(r.ledger['calls'])} | {int(r.exit_code)} | "
                    + (f"{rec_s / len(rows):.2f} |" if rec_s == rec_s else "n/a |"))
                print(lines[-1], flush=True)
    minutes = (time.time() - t0) / 60
    body = "\n".join([
        "## A real LLM's recording, assessed with no call",
        "",
        f"Measured by `python benchmarks/real_llm_recording.py --seeds {args.seeds}"
        + (f" --assess-only {args.assess_only}`: the recordings of an earlier run of the "
           "script (kept in the repository), re-assessed on the current code"
           if args.assess_only else f"` ({minutes:.0f} min, on 2 shared CPU cores)")
        + ": SmolLM2-135M-Instruct at temperature 0.8 "
        "as a moderation gate (`benchmarks/_smollm_gate.py`), ten prompts and their "
        "upper-cased forms, 24 answers each (480 draws) recorded as JSONL, then `assess "
        "--jsonl` with a custom `upper` relation at the defaults (alpha 0.05, tolerance 0.1). "
        "*clean*: the relation holds by construction (the gate normalises the prompt before "
        "the model sees it); *bug*: a mostly upper-case prompt is answered `block` without "
        "the model on half its calls. The effect is the pooled excess disagreement with its "
        "bounds (fixed sample: every recorded draw); *confirmed* the inputs confirmed "
        "violating on their own. The seconds are the recording's, per model call (n/a when "
        "re-assessed).",
        "",
        "| seed | gate | status | effect [bounds] | confirmed | draws read | live calls | "
        "exit | s per recorded call |",
        "|---|---|---|---|---|---|---|---|---|",
        *lines])
    if args.write:
        write_section(ROOT / "docs" / "benchmarks.md", "real-llm-recording", body)
    else:
        print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
