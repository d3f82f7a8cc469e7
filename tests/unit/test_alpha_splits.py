"""Every split of alpha is read from decide/_alpha.py: no module that assembles decisions
divides an alpha by a number of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentverity_props
from agentverity_props.decide import RELATION_SHARES, RUN_SHARES, relation_alpha_split

ROOT = Path(agentverity_props.__file__).parent
#: every module that decides or states a guarantee; decide/ itself is where splits live
MODULES = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
                 if p.relative_to(ROOT).parts[0] != "decide")
#: where an alpha is turned into a confidence level (``1 - alpha``, ``1 - alpha / 2`` for a
#: two-sided interval) or an e-value threshold (``1 / alpha``), not split
CONVERSIONS = {("bench/_metrics.py", "alpha / 2")}


def _alpha_name(node: ast.AST) -> bool:
    return "alpha" in ast.unparse(node).lower()


def _confidence(node: ast.AST) -> bool:
    """``1 - alpha``: a confidence level, not a share of an alpha."""
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)
            and isinstance(node.left, ast.Constant))


def _share_constant(node: ast.AST) -> bool:
    """A share read from decide/_alpha.py (``RUN_SHARES["relations"]``, ``CHANGE_SHARE``)."""
    return "SHARE" in ast.unparse(node)


def splits(path: str) -> list[str]:
    """Every place in ``path`` that divides an alpha, or multiplies one by anything but a
    share read from decide/_alpha.py."""
    bad = []
    for node in ast.walk(ast.parse((ROOT / path).read_text())):
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult))):
            continue
        sides = (node.left, node.right)
        alpha = [s for s in sides if _alpha_name(s) and not _confidence(s)]
        if not alpha or (path, ast.unparse(node)) in CONVERSIONS:
            continue
        if isinstance(node.op, ast.Div) and not _alpha_name(node.left):
            continue  # 1 / alpha: an e-value threshold
        if isinstance(node.op, ast.Mult) and any(_share_constant(s) for s in sides):
            continue
        bad.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return bad


@pytest.mark.parametrize("path", MODULES)
def test_no_alpha_split_written_outside_decide_alpha(path: str) -> None:
    assert not splits(path), splits(path)


def test_the_check_finds_a_split_written_by_hand(tmp_path: Path) -> None:
    # the scan itself can fail: a module that divides an alpha by its inputs is caught
    (tmp_path / "m.py").write_text("def f(alpha, n, c):\n"
                                   "    return alpha / n, c.alpha * 0.5, 1 / alpha, 1 - alpha\n")
    globals()["ROOT"], saved = tmp_path, ROOT
    try:
        assert [b.split(": ")[1] for b in splits("m.py")] == ["alpha / n", "c.alpha * 0.5"]
    finally:
        globals()["ROOT"] = saved


def test_relation_split_is_a_family() -> None:
    assert sum(RELATION_SHARES.values()) <= 1.0
    for r in (1, 3, 8):
        s = relation_alpha_split(0.05 * RUN_SHARES["relations"], r)
        assert r * s["pooled"] + s["local"] <= 0.05 * RUN_SHARES["relations"] + 1e-15


def test_run_uses_the_relation_split() -> None:
    from agentverity_props import from_callable, run
    from agentverity_props.relations import select_builtins
    from agentverity_props.runner import RunConfig

    res = run(from_callable(lambda p: "allow"), [f"question {i}" for i in range(30)],
              select_builtins(("case", "whitespace")), config=RunConfig(max_workers=1))
    want = relation_alpha_split(0.05 * RUN_SHARES["relations"], 2)["pooled"]
    for r in res.relations:
        assert r.effect is not None
        assert abs(r.effect["alpha"] - want) < 1e-15
