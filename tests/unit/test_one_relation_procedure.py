"""One relation procedure: the order of a relation decision's steps (deterministic path,
screen, inputs one by one, pooled effect) is written once, in
``relations/_order.py decide_in_order``; ``run`` and ``@agent_property`` take it with their
own steps. A second copy of the order (a function that calls two of the steps itself) fails
here, as does a step primitive called from anywhere but the step classes."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "agentverity_props"
ORDER = PACKAGE / "relations" / "_order.py"
#: the step primitives of ``run`` (module functions of relations/)
PRIMITIVES = {"screen", "screen_once", "localise"}
#: the steps of the one order (methods of a Steps object)
STEPS = {"deterministic", "screen", "local", "pooled"}


def _functions(tree: ast.AST) -> list[ast.AST]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _own_calls(fn: ast.AST) -> list[ast.Call]:
    """Calls in ``fn``'s body, not in functions nested in it."""
    out: list[ast.Call] = []
    stack = list(getattr(fn, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def order_copies(source: str, where: str) -> list[str]:
    """Functions (other than ``decide_in_order`` in relations/_order.py) that call two or
    more steps of one object, or that call a step primitive outside relations/_order.py."""
    found = []
    for fn in _functions(ast.parse(source)):
        name = getattr(fn, "name", "?")
        by_receiver: dict[str, set[str]] = {}
        for call in _own_calls(fn):
            f = call.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                    and f.attr in STEPS:
                by_receiver.setdefault(f.value.id, set()).add(f.attr)
            if isinstance(f, ast.Name) and f.id in PRIMITIVES and where != "order":
                found.append(f"{name} calls the step primitive {f.id}()")
        for recv, steps in by_receiver.items():
            if len(steps) >= 2 and not (where == "order" and name == "decide_in_order"):
                found.append(f"{name} takes the steps {sorted(steps)} of {recv} itself")
    return found


def test_the_order_is_written_once() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = "order" if path == ORDER else "other"
        for hit in order_copies(path.read_text(encoding="utf-8"), where):
            found.append(f"{path.relative_to(PACKAGE.parent)}: {hit}")
    assert found == [], ("take relations.decide_in_order(steps, ...) instead:\n"
                         + "\n".join(found))


def test_the_scan_finds_a_second_copy() -> None:
    # run_relations as it was before the order was one: it drove the steps itself
    old = '''
async def run_relations(eng, pool, jobs):
    await screen(eng, pool, jobs, beta=0.05)
    await localise(eng, pool, jobs, alpha=0.01)
    await pooled.run()
'''
    assert len(order_copies(old, "other")) == 2
    copy = '''
async def my_order(steps):
    await steps.screen()
    await steps.local(most=None)
    await steps.pooled(max_epochs=None)
'''
    assert order_copies(copy, "other") == [
        "my_order takes the steps ['local', 'pooled', 'screen'] of steps itself"]
    assert order_copies(copy.replace("my_order", "decide_in_order"), "order") == []


def test_run_and_agent_property_both_take_the_one_order() -> None:
    run_src = (PACKAGE / "runner" / "_run.py").read_text(encoding="utf-8")
    prop_src = (PACKAGE / "property" / "_decorator.py").read_text(encoding="utf-8")
    assert "decide_in_order(" in run_src
    assert "decide_in_order(" in prop_src
