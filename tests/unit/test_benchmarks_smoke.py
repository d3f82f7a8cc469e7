"""The benchmark scripts' pure helpers (the benchmarks themselves are run by hand, not here)."""

from __future__ import annotations

import importlib
import math
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    # the scripts put their own directory (and the repository) on sys.path when imported:
    # restore both sys.path and sys.modules afterwards so nothing leaks into other tests
    names = ("_docs", "meter_calls", "shrink_calls", "pooled_floor")
    saved = list(sys.path)
    sys.path.insert(0, str(BENCH))
    try:
        yield {name: importlib.import_module(name) for name in names}
    finally:
        sys.path[:] = saved
        for name in names:
            sys.modules.pop(name, None)


DOC = """# Benchmarks

<!-- overhead:start -->
## Engine overhead
old overhead
<!-- overhead:end -->

<!-- meter:start -->
old meter
<!-- meter:end -->

trailing prose
"""


def test_replace_section_changes_only_its_own_section(bench):
    new = bench["_docs"].replace_section(DOC, "meter", "new meter\n")
    assert "old meter" not in new
    assert "<!-- meter:start -->\nnew meter\n<!-- meter:end -->\n\ntrailing prose\n" in new
    assert new.startswith(DOC[: DOC.index("<!-- meter:start -->")])
    assert new.count("<!-- meter:start -->") == 1


def test_replace_section_appends_a_missing_section_and_is_idempotent(bench):
    docs = bench["_docs"]
    once = docs.replace_section(DOC, "shrink", "table")
    assert once.startswith(DOC.rstrip("\n"))
    assert once.endswith("trailing prose\n\n<!-- shrink:start -->\ntable\n<!-- shrink:end -->\n")
    assert docs.replace_section(once, "shrink", "table") == once
    assert docs.replace_section("", "x", "y").startswith("# Benchmarks\n\n<!-- x:start -->")


def test_replace_section_refuses_malformed_markers(bench):
    docs = bench["_docs"]
    with pytest.raises(ValueError, match="markers"):
        docs.replace_section("<!-- meter:start -->\nno end\n", "meter", "x")
    with pytest.raises(ValueError, match="markers"):
        docs.replace_section("<!-- meter:end -->\n<!-- meter:start -->\n", "meter", "x")
    with pytest.raises(ValueError, match="must not contain"):
        docs.replace_section(DOC, "meter", "<!-- meter:end -->")


def test_write_section_keeps_the_overhead_section_written_by_overhead_py(bench, tmp_path):
    path = tmp_path / "docs" / "benchmarks.md"
    path.parent.mkdir()
    path.write_text(DOC, encoding="utf-8")
    bench["_docs"].write_section(path, "shrink", "shrink table")
    text = path.read_text(encoding="utf-8")
    assert "## Engine overhead\nold overhead\n<!-- overhead:end -->" in text
    assert "<!-- shrink:start -->\nshrink table\n<!-- shrink:end -->" in text
    assert [p.name for p in path.parent.iterdir()] == ["benchmarks.md"]


@given(d=st.floats(0.0, 0.5))
def test_minority_share_gives_the_requested_pair_disagreement(bench, d):
    p = bench["meter_calls"].minority_share(d)
    assert 0.0 <= p <= 0.5
    assert math.isclose(2 * p * (1 - p), d, abs_tol=1e-12)


def test_simulated_agent_counts_calls_and_is_reproducible(bench):
    mc = bench["meter_calls"]
    a, b = mc.SimAgent(0.2, seed=3), mc.SimAgent(0.2, seed=3)
    seq_a = [a(p)["verdict"] for p in mc.INPUTS for _ in range(5)]
    seq_b = [b(p)["verdict"] for p in mc.INPUTS for _ in range(5)]
    assert seq_a == seq_b
    assert a.calls == 5 * len(mc.INPUTS)
    assert set(seq_a) == {"allow", "review"}
    assert all(mc.SimAgent(0.0, seed=s)("x")["verdict"] == "allow" for s in range(20))


def test_wilson_design_and_error_classification(bench):
    mc = bench["meter_calls"]
    assert mc.wilson_pairs_to_certify(0.05) == 73
    assert mc.wilson_call(0, 73, 0.05) == "deterministic"
    assert mc.wilson_call(0, 72, 0.05) == "undecided"
    assert mc.wilson_call(30, 73, 0.05) == "stochastic"
    errors = {(d, c): mc.is_error(d, c) for d in (0.0, 0.025, 0.05, 0.10)
              for c in ("deterministic", "stochastic", "undecided")}
    assert {k for k, v in errors.items() if v} == {(0.0, "stochastic"), (0.025, "stochastic"),
                                                   (0.10, "deterministic")}
    assert [mc.normalise_call(c) for c in ("verdict-deterministic", "verdict-stochastic",
                                           "undecided (add repeats or inputs)", "undecided")
            ] == ["deterministic", "stochastic", "undecided", "undecided"]


def test_shrink_classification(bench):
    sc = bench["shrink_calls"]
    minimum = "hello hello hello hello hello hello urgent"
    assert sc.classify(minimum, minimum) == "minimum"
    assert sc.classify("hello " * 8 + "urgent", minimum) == "planted"
    assert sc.classify("help", minimum) == "noise"
    gate = sc.noisy_everywhere_gate(random.Random(0))
    assert gate(minimum.upper()) == "block"
    assert {gate("hello") for _ in range(200)} == {"allow", "review"}


def test_relation_effect_agents_map_every_builtin_follow_up_to_its_source():
    """The benchmark's agents answer a follow-up from its source's distribution: every
    built-in transform of every prompt must map back to that prompt."""
    saved = list(sys.path)
    sys.path.insert(0, str(BENCH))
    try:
        rel = importlib.import_module("relation_effects")
        from agentverity_props.relations import builtin_relations
        ps = rel.prompts(40, seed=3)
        agent = rel.Keyed(ps, lambda i, p: 1.0, ["allow"] * len(ps), seed=0)
        for r in builtin_relations():
            for i, p in enumerate(ps):
                assert agent.source_of(r.apply(p)) == i, (r.name, p)
        assert rel.shouted("HOW DO I")
        assert not rel.shouted("how do I")
    finally:
        sys.path[:] = saved
        for name in ("relation_effects", "_docs"):
            sys.modules.pop(name, None)


@given(st.integers(2, 9), st.integers(2, 9), st.randoms(use_true_random=False))
def test_the_pooled_floor_scores_what_the_pooled_test_scores(bench, n, m, rnd):
    # benchmarks/pooled_floor.py's vectorised U-statistics are relations/_pooled.py's
    # exact_scores of the same draws (an invariant relation, a binary verdict)
    import numpy as np

    from agentverity_props.relations import Relation
    from agentverity_props.relations._pooled import exact_scores

    floor = bench["pooled_floor"]
    src = [rnd.random() < 0.7 for _ in range(n)]
    fu = [rnd.random() < 0.7 for _ in range(m)]
    fwd, rev = floor.u_scores(np.asarray([src], dtype=np.int64), np.asarray([fu], dtype=np.int64))
    rel = Relation("same", "invariant", lambda s: s)
    want = exact_scores(rel, ["allow" if x else "block" for x in src],
                        ["allow" if x else "block" for x in fu])
    assert math.isclose(float(fwd[0]), want[0], abs_tol=1e-12)
    assert math.isclose(float(rev[0]), want[1], abs_tol=1e-12)
