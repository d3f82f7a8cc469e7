"""The package's import graph: no cycle between folders, and no folder reaching into another's
private modules or names (a folder is used through its ``__init__``; the shared plumbing in
``_internal/`` excepted). Lazy imports inside functions count too."""

from __future__ import annotations

import ast
import functools
import importlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PKG_DIR = ROOT / "agentverity_props"
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
    package = module if path.stem == "__init__" else module.rsplit(".", 1)[0]
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
            if target == PKG:  # ``from .. import results``: the folder itself
                out.extend((f"{PKG}.{a.name}", [], node.lineno) for a in node.names)
            elif target.startswith(PKG + "."):
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


def _init_bindings(path: Path) -> dict[str, int]:
    """Names a folder's ``__init__`` imports from its own modules (eagerly, or through a lazy
    ``_EXPORTS`` table) -> line."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for a in node.names:
                out[a.asname or a.name] = node.lineno
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(getattr(t, "id", "") == "_EXPORTS" for t in targets) and isinstance(
                    node.value, ast.Dict):
                for key in node.value.keys:
                    if isinstance(key, ast.Constant):
                        out[key.value] = node.lineno
    return out


@functools.cache
def _outside_uses() -> list[tuple[Path, list[tuple[str, list[str], int]], str, set[str]]]:
    """For every file of the package, the plugin, tests, benchmarks and examples: its
    imports, its text and its string constants (read once)."""
    others = [*_files(), PKG_DIR / "__init__.pyi", ROOT / "agentverity_props_pytest.py",
              *(p for d in ("tests", "benchmarks", "examples") for p in (ROOT / d).rglob("*.py"))]
    out = []
    for path in others:
        src = path.read_text(encoding="utf-8")
        tree = ast.parse(src)
        strings = {n.value for n in ast.walk(tree)
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        if path.is_relative_to(PKG_DIR):
            imports = _imports(path)
        else:
            imports = [(n.module or "", [a.name for a in n.names], n.lineno)
                       for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and not n.level]
        out.append((path, imports, src, strings))
    return out


def _names_used_from(folder: str) -> set[str]:
    """Every name read from ``agentverity_props.<folder>`` itself (not its modules) by code
    outside the folder: imported, spelled out as ``agentverity_props.<folder>.name`` (tests
    patch attributes), or named by a string in the package (a registry that names its model
    by string)."""
    target = f"{PKG}.{folder}"
    used: set[str] = set()
    for path, imports, src, strings in _outside_uses():
        if path.is_relative_to(PKG_DIR / folder):
            continue
        for module, names, _ in imports:
            if module == target:
                used.update(names)
        used.update(re.findall(rf"\b{re.escape(target)}\.(\w+)", src))
        if path.is_relative_to(PKG_DIR):
            used.update(strings)
    return used


def test_a_folders_init_imports_only_its_public_names_and_what_others_use() -> None:
    """A folder's ``__init__`` re-exports its public names (``__all__``, docs/api.md) and,
    beyond them, the names other folders use: its interface to the rest of the package. An
    import there that neither lists nor anyone uses is dead (ruff's unused-import rule is
    off in ``__init__`` files for this reason: this test replaces it)."""
    unused = []
    for init in sorted(PKG_DIR.glob("*/__init__.py")):
        folder = init.parent.name
        public = set(getattr(importlib.import_module(f"{PKG}.{folder}"), "__all__", []))
        used = _names_used_from(folder) | public
        for name, line in _init_bindings(init).items():
            if name not in used:
                unused.append(f"agentverity_props/{folder}/__init__.py:{line} {name}")
    assert unused == []


# -- the floors: the picture in docs/architecture.md is the rule ------------------------------

ARCHITECTURE = ROOT / "docs" / "architecture.md"
PLUGIN = ROOT / "agentverity_props_pytest.py"


def _floors() -> list[set[str]]:
    """The layer picture of docs/architecture.md (its first code block), top floor first: each
    line starting in column 0 is a floor, its folders before the first run of two spaces,
    separated by ``·`` (``cli/``, ``errors``, ``agentverity_props_pytest.py``)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    picture = text.split("```\n", 2)[1]
    floors = []
    for line in picture.splitlines():
        if line and not line[0].isspace():
            left = re.split(r"\s{2,}", line, maxsplit=1)[0]
            floors.append({part.strip().removesuffix("/").removesuffix(".py")
                           for part in left.split("·")})
    return floors


def _folder_edges(*, include_plugin: bool = True) -> dict[str, dict[str, str]]:
    """folder -> {folder it imports: where (file:line)}, every import counted (lazy ones,
    type-only ones); the plugin file as the folder ``agentverity_props_pytest``."""
    edges: dict[str, dict[str, str]] = defaultdict(dict)
    sources = [(p, _folder(_module_of(p))) for p in _files()]
    if include_plugin:
        sources.append((PLUGIN, "agentverity_props_pytest"))
    for path, src in sources:
        if not src:  # the package's own __init__ (lazy exports of every floor)
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if path == PLUGIN:
            imports = [(n.module or "", n.lineno) for n in ast.walk(tree)
                       if isinstance(n, ast.ImportFrom) and (n.module or "").startswith(PKG)]
            imports += [(a.name, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.Import)
                        for a in n.names if a.name.startswith(PKG)]
        else:
            imports = [(target, line) for target, _, line in _imports(path)]
        for target, line in imports:
            dst = _folder(target)
            if dst and dst != src:
                edges[src].setdefault(dst, f"{path.relative_to(ROOT)}:{line}")
    return edges


def test_every_folder_stands_on_one_floor_of_the_picture() -> None:
    floors = _floors()
    placed = [name for floor in floors for name in floor]
    assert len(placed) == len(set(placed)), "a folder drawn on two floors"
    folders = {_folder(_module_of(p)) for p in _files()} - {""}
    assert set(placed) == folders | {"agentverity_props_pytest"}


def test_a_folder_imports_only_from_the_floors_below_it() -> None:
    """Order, not only the absence of cycles: a folder may import from a lower floor only
    (never its own floor's other folders, never one above); the bottom floor (shared
    plumbing and plain data) may import within itself. The plugin file counts too."""
    floors = _floors()
    level = {name: i for i, floor in enumerate(floors) for name in floor}
    bottom = len(floors) - 1
    wrong = []
    for src, targets in sorted(_folder_edges().items()):
        for dst, where in sorted(targets.items()):
            if level[src] == level[dst] == bottom:
                continue
            if level[dst] <= level[src]:
                wrong.append(f"{where}: {src} (floor {level[src]}) imports {dst} "
                             f"(floor {level[dst]})")
    assert wrong == []


def test_the_plugin_reaches_the_package_through_public_folders_only() -> None:
    """The plugin imports a folder's ``__init__`` (or the shared ``_internal``), never a
    ``_``-prefixed module of a folder: its records arrive through ``records()``."""
    tree = ast.parse(PLUGIN.read_text(encoding="utf-8"))
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
               and isinstance(n.value, str) and n.value.startswith(PKG + ".")]
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    for module in [*strings, *modules]:
        parts = module.split(".")
        if parts[0] != PKG or len(parts) < 2 or parts[1] == "_internal":
            continue
        assert not any(p.startswith("_") for p in parts[2:]), module


def test_no_module_of_the_package_reads_the_plugin() -> None:
    """The package never reaches up to the plugin (by import, by ``sys.modules`` or by
    name): the plugin hands over the options of the test running now through
    ``_internal/plugin.py`` alone, the one channel docs/architecture.md names."""
    plugin_module = PLUGIN.stem
    readers = []
    for path in sorted(PKG_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        code = [n for n in ast.walk(tree)
                if (isinstance(n, ast.Constant) and n.value == plugin_module)
                or (isinstance(n, ast.Import) and any(a.name == plugin_module for a in n.names))
                or (isinstance(n, ast.ImportFrom) and n.module == plugin_module)]
        if code:
            readers.append(str(path.relative_to(ROOT)))
    assert readers == []
    channel = ast.parse(PLUGIN.read_text(encoding="utf-8"))
    assert f"{PKG}._internal.plugin" in {n.value for n in ast.walk(channel)
                                          if isinstance(n, ast.Constant)}


def _stated_imports() -> dict[str, set[str]]:
    """Each folder paragraph of docs/architecture.md (``**`name/`**.``) and its sentence
    ``Imports: `a/`, `b/` ...`` -> the folders named there."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    out = {}
    for para in text.split("\n\n"):
        m = re.match(r"\*\*`([\w.]+?)/?`\*\*", para)
        if not m:
            continue
        stated = re.search(r"Imports: (.*?)\.(?:\s|$)", para.replace("\n", " "), re.S)
        assert stated, f"docs/architecture.md: the paragraph on {m.group(1)} has no 'Imports:'"
        out[m.group(1).removesuffix(".py")] = set(re.findall(r"`(\w+)/`", stated.group(1)))
    return out


def test_each_folders_imports_line_is_what_it_imports() -> None:
    """The per-folder "Imports:" sentences of docs/architecture.md name exactly the folders
    each imports (the bottom floor, which every folder may use, left unnamed)."""
    floors = _floors()
    shared = floors[-1]
    edges = _folder_edges()
    stated = _stated_imports()
    folders = {_folder(_module_of(p)) for p in _files()} - {"", "__main__"} - shared
    assert folders <= set(stated), folders - set(stated)
    for folder, names in sorted(stated.items()):
        actual = set(edges.get(folder, {})) - shared
        assert names == actual, (folder, "stated", sorted(names), "imports", sorted(actual))
