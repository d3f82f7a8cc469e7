"""Every split of alpha is read from decide/_alpha.py: no module that assembles decisions
divides an alpha by a number of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentverity_props
from agentverity_props.decide import RELATION_SHARES, RUN_SHARES, relation_alpha_split

ROOT = Path(agentverity_props.__file__).parent
ASSEMBLERS = ["diagnose/_run.py", "diagnose/_health.py", "property/_decorator.py",
              "relations/_pooled.py", "relations/_screen.py"]


def _alpha_name(node: ast.AST) -> bool:
    text = ast.unparse(node)
    return "alpha" in text.lower()


@pytest.mark.parametrize("path", ASSEMBLERS)
def test_no_alpha_split_written_outside_decide_alpha(path: str) -> None:
    tree = ast.parse((ROOT / path).read_text())
    bad = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult))
                and _alpha_name(node.left) and isinstance(node.right, ast.Constant)
                and isinstance(node.right.value, (int, float))):
            bad.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    assert not bad, bad


def test_relation_split_is_a_family() -> None:
    assert sum(RELATION_SHARES.values()) <= 1.0
    for r in (1, 3, 8):
        s = relation_alpha_split(0.05 * RUN_SHARES["relations"], r)
        assert r * s["pooled"] + s["local"] <= 0.05 * RUN_SHARES["relations"] + 1e-15


def test_run_uses_the_relation_split() -> None:
    from agentverity_props import RunConfig, from_callable, run
    from agentverity_props.relations import select_builtins

    res = run(from_callable(lambda p: "allow"), [f"question {i}" for i in range(30)],
              select_builtins(("case", "whitespace")), config=RunConfig(max_workers=1))
    want = relation_alpha_split(0.05 * RUN_SHARES["relations"], 2)["pooled"]
    for r in res.relations:
        assert r.effect is not None
        assert abs(r.effect["alpha"] - want) < 1e-15
