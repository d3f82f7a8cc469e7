"""--price, --price-model, --tokens-per-call, --tokens-from and --max-calls-in-flight: bad
input is one line on stderr, exit 2, nothing written; good input reaches the report."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import agent_ref, assert_one_line_error, invoke, write_inputs


def test_bad_prices_and_token_sources_are_one_line_each(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "in.txt")
    two = tmp_path / "two.yaml"
    two.write_text("a: {input_per_1k: 1, output_per_1k: 2}\nb: {input_per_1k: 1, "
                   "output_per_1k: 2}\n")
    neg = tmp_path / "neg.json"
    neg.write_text(json.dumps({"m": {"input_per_1k": -1, "output_per_1k": 2}}))
    out = tmp_path / "out.json"
    run = ["run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--no-progress",
           "--budget", "20", "-o", str(out)]
    plan = ["plan", "--inputs", str(inputs), "--seeds", "1"]
    cases = {
        "inline half": [*run, "--price", "0.1"],
        "not a file": [*run, "--price", str(tmp_path / "missing.yaml")],
        "several models": [*run, "--price", str(two)],
        "unknown model": [*run, "--price", str(two), "--price-model", "c"],
        "negative": [*run, "--price", str(neg)],
        "model alone": [*run, "--price-model", "a"],
        "no slot": [*run, "--max-calls-in-flight", "0"],
        "plan price alone": [*plan, "--price", "1,2"],
        "plan bad pair": [*plan, "--tokens-per-call", "12"],
        "plan both": [*plan, "--tokens-per-call", "1,2", "--tokens-from", str(neg)],
        "plan no tokens in file": [*plan, "--tokens-from", str(neg)],
        "plan no store": [*plan, "--tokens-from", str(tmp_path / "none.db")],
    }
    for what, argv in cases.items():
        code, _, err = invoke(argv)
        assert_one_line_error(code, err, what)
        assert not out.exists(), what


def test_a_price_reaches_the_report(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "in.txt")
    code, out, err = invoke(["run", "--agent", agent_ref("good"), "--inputs", str(inputs),
                             "--no-progress", "--budget", "20", "--price", "0.15,0.6",
                             "--format", "json"])
    assert code in (0, 1, 2), err
    tok = json.loads(out)["tokens"]
    assert tok["price"]["input_per_1k"] == 0.15
    assert tok["reported"] is False  # a plain function reports no usage: said, not 0
    assert tok["total"] is None
