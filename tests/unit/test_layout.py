"""The package's import graph: no cycle between folders, and no folder reaching into another's
private modules or names (a folder is used through its ``__init__``; the shared plumbing in
``_internal/`` excepted). Lazy imports inside functions count too."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PKG_DIR = Path(__file__).parents[2] / "agentverity_props"
PKG = "agentverity_props"
#: top-level modules that are plain data every layer may use
SHARED = {"errors", "observation", "_internal", "py"}


def _module_of(path: Path) -> str:
    rel = path.relative_to(PKG_DIR.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (never executed: no runtime edge)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def _imports(path: Path, *, runtime_only: bool = False) -> list[tuple[str, list[str], int]]:
    """(absolute module, imported names, line) for every intra-package import in ``path``
    (lazy ones inside functions included; with ``runtime_only``, not the ones under
    ``if TYPE_CHECKING:``)."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    out = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_nodes(tree) if runtime_only else set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == PKG or target.startswith(PKG + "."):
                out.append((target, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PKG + "."):
                    out.append((a.name, [], node.lineno))
    return out


def _folder(module: str) -> str:
    """The top-level folder (or top-level module) of a dotted module name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _files() -> list[Path]:
    return sorted(PKG_DIR.rglob("*.py"))


def _edges() -> tuple[dict[str, set[str]], list[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    private: list[str] = []
    for path in _files():
        src = _module_of(path)
        src_folder = _folder(src)
        for target, names, line in _imports(path):
            dst_folder = _folder(target)
            if not dst_folder or dst_folder == src_folder:
                continue
            if dst_folder not in SHARED and src_folder:
                graph[src_folder].add(dst_folder)
            if dst_folder == "_internal":
                continue
            where = f"{path.relative_to(PKG_DIR.parent)}:{line}"
            rest = target.split(".")[2:]
            if any(part.startswith("_") for part in rest):
                private.append(f"{where} imports private module {target}")
            for name in names:
                if name.startswith("_") and name != "__version__":
                    private.append(f"{where} imports private name {name} from {target}")
    return graph, private


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles, state, stack = [], {}, []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif not state.get(nxt):
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node)
    return cycles


def test_no_import_cycle_between_folders() -> None:
    graph, _ = _edges()
    assert _cycles(graph) == []


def test_no_folder_reaches_into_another_folders_private_parts() -> None:
    _, private = _edges()
    assert private == []


@pytest.mark.parametrize("runtime_only", [True, False], ids=["runtime", "type-only-included"])
def test_no_import_cycle_between_modules(runtime_only: bool) -> None:
    """Module by module, runtime imports and then the ``if TYPE_CHECKING:`` ones too (a
    package importing its own submodules, and a module importing its parent package, are
    not cycles: the parent is always loaded first)."""
    modules = {_module_of(p): p for p in _files()}
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        for target, names, _ in _imports(path, runtime_only=runtime_only):
            for dst in [target, *(f"{target}.{n}" for n in names)]:
                ancestor = mod.startswith(dst + ".")
                if dst in modules and dst != mod and not ancestor:
                    graph[mod].add(dst)
    assert _cycles(graph) == []


def test_every_feature_has_a_folder() -> None:
    """Feature code lives in folders; the package root holds only plain data and entry
    points."""
    root_modules = sorted(p.stem for p in PKG_DIR.glob("*.py"))
    assert root_modules == ["__init__", "__main__", "errors", "observation"]
