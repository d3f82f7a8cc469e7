"""The test suite's own layout: the two CI jobs select by the ``stats`` and ``docs`` markers, so
each marker must sit where its tests are (the simulations; the tests that build README's fresh
environments), and shared helpers live in ``tests/support/``.

What counts as a simulation is read from the source, simply: a module that uses the shared
simulation helpers (``tests.support.sim``'s tolerance, or the fake noisy agents of
``tests.support``) estimates a rate over repetitions. A simulation written without them is
not caught here; ``tests/stats/`` is where such a test belongs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
#: the helpers of tests/support that only a simulation over many repetitions uses
SIMULATION_MODULES = {"tests.support.sim", "tests.support.noisy_agents",
                      "tests.support.family_gates", "tests.support.domain_agents",
                      "tests.support.drift_agents", "tests.support.compare_agents"}
SIMULATION_NAMES = {"sim_tolerance", "detects_double", "simulation_se"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _module_marks(tree: ast.Module) -> set[str]:
    """The marker names of the module-level ``pytestmark`` (one mark or a list of marks)."""
    marks: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            for sub in ast.walk(node.value):
                if (isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute)
                        and sub.value.attr == "mark"):
                    marks.add(sub.attr)
    return marks


def _imports(tree: ast.Module) -> set[str]:
    """Every module imported, as written (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _test_modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("test_*.py"))


@pytest.mark.parametrize("path", _test_modules(TESTS / "stats"), ids=lambda p: p.name)
def test_every_module_under_tests_stats_is_marked_stats(path: Path) -> None:
    assert "stats" in _module_marks(_tree(path)), (
        f"{path.relative_to(ROOT)}: add `pytestmark = pytest.mark.stats` (the fast CI job "
        "deselects it, the full job selects it)")


def test_no_simulation_outside_tests_stats() -> None:
    offenders = []
    for path in _test_modules(TESTS):
        if (TESTS / "stats") in path.parents:
            continue
        tree = _tree(path)
        used = (_imports(tree) & SIMULATION_MODULES) | (
            {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & SIMULATION_NAMES)
        if used:
            offenders.append(f"{path.relative_to(ROOT)} uses {sorted(used)}")
    assert not offenders, ("simulations over repetitions belong in tests/stats/ (marked "
                           f"stats): {offenders}")


def test_the_stats_marker_sits_only_under_tests_stats() -> None:
    """So that one folder says which simulations the full job runs."""
    marked = [str(p.relative_to(ROOT)) for p in _test_modules(TESTS)
              if (TESTS / "stats") not in p.parents and "stats" in _module_marks(_tree(p))]
    assert not marked


def _uses_fresh_environments(tree: ast.Module) -> bool:
    """Asks for the fresh environments README's set-up makes (the ``setup_venvs`` fixture,
    built by pip on first use: about a minute): as a test's argument or by
    ``request.getfixturevalue("setup_venvs")``."""
    for n in ast.walk(tree):
        if isinstance(n, ast.arg) and n.arg == "setup_venvs":
            return True
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr == "getfixturevalue"
                and any(isinstance(a, ast.Constant) and a.value == "setup_venvs"
                        for a in n.args)):
            return True
    return False


def test_the_docs_marker_sits_exactly_on_the_tests_of_fresh_environments() -> None:
    """The fast job (``not stats and not docs``) never builds the fresh environments: every
    module that asks for them is marked ``docs``, and only those are."""
    wrong = []
    for p in _test_modules(TESTS):
        tree = _tree(p)
        if _uses_fresh_environments(tree) != ("docs" in _module_marks(tree)):
            wrong.append(str(p.relative_to(ROOT)))
    assert not wrong, ("mark a module `docs` exactly when it asks for the fresh environments "
                       f"(setup_venvs): {wrong}")


def test_benchmarks_import_no_test_module() -> None:
    """Benchmarks share helpers with the tests through tests/support/ only, and so does
    tests/support/ itself: a benchmark never runs a test module's import-time code."""
    offenders = []
    for path in [*sorted((ROOT / "benchmarks").glob("*.py")),
                 *sorted((TESTS / "support").glob("*.py"))]:
        tree = _tree(path)
        for name in _imports(tree):
            if name.startswith("tests.") and not name.startswith("tests.support"):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
        if '"tests"' in path.read_text(encoding="utf-8"):
            offenders.append(f"{path.relative_to(ROOT)} puts a tests/ folder on sys.path")
    assert not offenders
