"""docs/architecture.md describes the code: the claims a test can check cheaply, checked.

Every file, folder, module, class, function and attribute the page names in backticks
exists (a dotted name is resolved by importing it; a call's named parameters are the
callable's); the models, migrations, configuration table, numbers and import lists it gives
are computed from the code and compared. The floors, the import order and each folder's
"Imports:" sentence are ``tests/unit/test_layout.py``'s; what no test checks was checked by
reading (the page's last section says which).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parents[2]
PKG_DIR = ROOT / "agentverity_props"
PKG = "agentverity_props"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: Names the page gives that are not the package's own (another library's, a shell's, a
#: command's or a setting's word), each with what it is.
FOREIGN = {
    "Agent": "a Strands agent",
    "RuleBasedStateMachine": "Hypothesis's state machines",
    "Literal": "typing",
    "TYPE_CHECKING": "typing",
    "None": "Python",
    "with": "Python",
    "flock": "the operating system's file locks",
    "initdb": "PostgreSQL's set-up command",
    "immutable": "a SQLite URI parameter",
    "redis": "the optional extra",
    "mirror": "the family the recipe's test adds",
    "entity_swap": "a relation family (a name in relations/_transforms.py's table)",
    "boundary": "a CLI command",
    "auto": "a store mode", "export": "a store command",
    "AGENTVERITY_PROPS_VALIDATE_RESULTS": "an environment variable",
    "AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT": "an environment variable",
    "AGENTVERITY_PROPS_SLOT_DIR": "an environment variable",
    "XConfig": "any entry point's config class",
    "config.stash": "pytest's per-session store",
}


def _text() -> str:
    return ARCHITECTURE.read_text(encoding="utf-8")


def _prose(text: str) -> str:
    """``text`` without its fenced blocks (a picture, a diff, commands)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _spans(text: str) -> list[str]:
    """Every backtick span of ``text`` outside fenced blocks, whitespace collapsed, once."""
    out: list[str] = []
    for raw in re.findall(r"`([^`]+)`", _prose(text)):
        span = " ".join(raw.split())
        if span not in out:
            out.append(span)
    return out


def _section(title: str) -> str:
    """The body of the page's section whose heading is ``title`` (to the next heading of
    the same or a higher level)."""
    text = _text()
    m = re.search(rf"^(#+) {re.escape(title)}\n", text, re.M)
    assert m, f"docs/architecture.md has no section {title!r}"
    rest = text[m.end():]
    end = re.search(rf"^#{{1,{len(m.group(1))}}} ", rest, re.M)
    return rest[:end.start()] if end else rest


def _paragraph(head: str) -> str:
    """The folder paragraph that starts with ``**`head`**``."""
    para = next((p for p in _text().split("\n\n") if p.startswith(f"**`{head}`**")), None)
    assert para, f"docs/architecture.md has no paragraph on {head}"
    return " ".join(para.split())


@functools.cache
def _definitions() -> dict[str, list[str]]:
    """Every name the package (and the plugin) defines -> the modules defining it: modules,
    classes, functions, assigned names and attributes, parameters."""
    out: dict[str, list[str]] = {}
    for path in [*sorted(PKG_DIR.rglob("*.py")), ROOT / "agentverity_props_pytest.py"]:
        rel = path.relative_to(ROOT).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        module = ".".join(parts)
        names = {path.stem}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for n in ast.walk(target):
                        if isinstance(n, ast.Name):
                            names.add(n.id)
                        elif isinstance(n, ast.Attribute):
                            names.add(n.attr)
        for name in names:
            out.setdefault(name, []).append(module)
    return out


def _resolve(dotted: str) -> Any:
    """The object a dotted name of the page means: ``engine.StoreBackend`` (a folder's
    name), ``agentverity_props.property.records``, ``Ledger.reserve`` (a class the package
    defines once, then its attributes)."""
    head, *rest = dotted.split(".")
    if head == PKG:
        head, *rest = rest
    if (PKG_DIR / head / "__init__.py").exists():
        obj: Any = importlib.import_module(f"{PKG}.{head}")
    else:
        modules = [m for m in _definitions().get(head, []) if m.startswith(PKG)]
        found = [getattr(importlib.import_module(m), head) for m in modules
                 if inspect.isclass(getattr(importlib.import_module(m), head, None))]
        assert len({id(c) for c in found}) == 1, f"{head}: {len(found)} classes of that name"
        obj = found[0]
    for part in rest:
        obj = getattr(obj, part)
    return obj


FILE_SUFFIXES = {"py", "pyi", "toml", "db", "jsonl", "json"}
def _takes(sig: Any, params: list[str], keywords: set[str]) -> bool:
    """``sig`` has every parameter in ``params`` (one of ``keywords`` may go to its
    ``**kwargs``)."""
    missing = set(params) - set(sig)
    var_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.values())
    return not missing or (var_keyword and missing <= keywords)


IDENT = re.compile(r"@?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:\((.*)\))?")


def test_every_name_the_page_gives_is_the_packages_own() -> None:
    """A name in backticks is defined by the package (a dotted one resolves on import), or
    is listed in ``FOREIGN`` with what it is; ``Name(a, b, c=...)`` lists parameters the
    callable has (one of the callables of that name, for a bare name)."""
    wrong = []
    for span in _spans(_text()):
        m = IDENT.fullmatch(span)
        if not m or span.split(".")[-1] in FILE_SUFFIXES or span.startswith("test_"):
            continue
        name, args = m.groups()
        if name in FOREIGN:
            continue
        if "." in name:
            try:
                objs = [_resolve(name)]
            except (AssertionError, AttributeError, ImportError) as exc:
                wrong.append(f"{span}: {exc}")
                continue
        elif name in _definitions():
            modules = [m for m in _definitions()[name] if m.startswith(PKG)]
            objs = [getattr(importlib.import_module(mod), name, None) for mod in modules]
        else:
            wrong.append(f"{span}: not defined in the package")
            continue
        given = [a.strip() for a in (args or "").split(",")]
        params = [p for p in (a.split("=")[0].strip() for a in given) if p.isidentifier()]
        keywords_given = {a.split("=")[0].strip() for a in given if "=" in a}
        signatures = []
        for obj in objs:
            try:
                signatures.append(inspect.signature(obj).parameters)
            except (TypeError, ValueError):
                continue
        if params and signatures and \
                not any(_takes(s, params, keywords_given) for s in signatures):
            wrong.append(f"{span}: no {name} with the parameters {params}")
    assert wrong == []


def test_every_file_folder_and_test_the_page_names_exists() -> None:
    """Paths are read from the repository root or the package (a bare ``_name.py`` is some
    folder's module), ``file::test`` names a test of that file, a bare ``test_...`` one of
    the suite, and ``folder/Name`` a name the folder exports; ``<kind>`` is a placeholder."""
    wrong = []
    tests = {n.name for p in (ROOT / "tests").rglob("test_*.py")
             for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(n, ast.FunctionDef)}
    for span in _spans(_text()):
        if " " in span or "<" in span or ":" in span.replace("::", "") or "=" in span:
            continue
        if re.fullmatch(r"test_\w+", span):
            if span not in tests:
                wrong.append(f"{span}: no such test")
            continue
        if "/" not in span and not re.fullmatch(r"[\w.]+\.(py|pyi|toml)", span):
            continue
        if re.fullmatch(r"\w+/\d+", span):  # a schema version (run/3)
            continue
        path, _, test = span.partition("::")
        folder, _, name = path.rpartition("/")
        if name and name[0].isupper() and "." not in name:  # relations/RelationDecider
            module = importlib.import_module(f"{PKG}.{folder}")
            if not hasattr(module, name):
                wrong.append(f"{span}: {folder}/ does not export {name}")
            continue
        pattern = path.rstrip("/")
        candidates = [ROOT / pattern, PKG_DIR / pattern, PKG_DIR / f"{pattern}.py"]
        if "/" not in pattern:
            candidates += list(PKG_DIR.glob(f"*/{pattern}"))
        hits = [c for c in candidates if any(c.parent.glob(c.name))]
        if not hits:
            wrong.append(f"{span}: no such file or folder")
        elif test and not re.search(rf"^def {test}\(", hits[0].read_text(encoding="utf-8"),
                                    re.M):
            wrong.append(f"{span}: no test {test} in {path}")
    assert wrong == []


def test_the_result_models_listed_are_the_exported_ones() -> None:
    from agentverity_props import results
    listed = set(re.findall(r"`(\w+Document)`", _paragraph("results/")))
    exported = {n for n in results._EXPORTS if n != "Document"}
    assert listed == exported


def test_the_migrations_listed_are_every_models() -> None:
    """``run/1 → run/2 → run/3``, ``bench/1`` ...: each older version a model migrates, and
    the version a chain ends in is today's."""
    from agentverity_props import results
    para = _paragraph("results/")
    stated = re.search(r"oldest first: (.*?)\)", para)
    assert stated
    chains = [c.split(" → ") for c in re.findall(r"`([^`]+)`", stated.group(1))]
    older = {f"{PKG}.{v}" for chain in chains for v in (chain[:-1] if len(chain) > 1 else chain)}
    models = [getattr(results, n) for n in results._EXPORTS if n != "Document"]
    assert older == {v for m in models for v in m.MIGRATIONS}
    for chain in chains:
        if len(chain) > 1:
            model = next(m for m in models if f"{PKG}.{chain[0]}" in m.MIGRATIONS)
            assert [f"{PKG}.{v}" for v in chain] == [*model.MIGRATIONS, model.SCHEMA]


def test_the_configuration_table_is_the_code() -> None:
    """Each row of "One configuration shape": the config class lives in the module named,
    beside the result named, and its ``engine`` default is the one stated."""
    from agentverity_props.engine import EngineConfig
    rows = [line for line in _section("One configuration shape").splitlines()
            if line.startswith(("| `", "| benchmarks"))]
    assert len(rows) == 8
    for row in rows:
        _, classes, where, default = (c.strip() for c in row.strip("|").split("|"))
        paths = re.findall(r"`([\w/]+\.py)`", where)
        beside = re.search(r"next to `(\w+)`", where)
        for name, path in zip(re.findall(r"`(\w+)`", classes), paths, strict=True):
            module = importlib.import_module(f"{PKG}.{path[:-3].replace('/', '.')}")
            cls = getattr(module, name)
            assert cls.__module__ == module.__name__, (name, path)
            if beside:
                assert getattr(module, beside.group(1)).__module__ == module.__name__
            want = eval(re.match(r"`([^`]+)`", default).group(1),
                        {"EngineConfig": EngineConfig})
            assert cls().engine == want, (name, cls().engine, want)


def test_the_numbers_the_page_states_are_the_codes() -> None:
    from agentverity_props.store import _redis_quota
    from agentverity_props.store._stores import scope_namespace
    text = " ".join(_text().split())
    lease = re.search(r"A lease lasts (\d+) s \(`store.LEASE_S`\)", text)
    renew = re.search(r"renews its leases every (\d+) s \(`RENEW_S`\)", text)
    poll = re.search(r"polling (\d+) ms to (\d+) ms", text)
    scoped = re.search(r"`ScopedStore`; .*? at most (\d+) characters", text)
    assert lease
    assert renew
    assert poll
    assert scoped
    assert float(lease.group(1)) == _redis_quota.LEASE_S
    assert float(renew.group(1)) == _redis_quota.RENEW_S
    assert float(poll.group(1)) / 1000 == _redis_quota._POLL_FIRST_S
    assert float(poll.group(2)) / 1000 == _redis_quota._POLL_MAX_S
    assert len(scope_namespace("runner", "t" * 500)) == int(scoped.group(1))
    recipes = re.findall(r"^### ", _section("Recipes"), re.M)
    assert re.search(r"The three extensions", _section("Recipes"))
    assert len(recipes) == 3


def test_each_recipe_names_a_test_that_follows_it() -> None:
    body = _section("Recipes")
    for recipe in re.split(r"^### ", body, flags=re.M)[1:]:
        assert re.search(r"^Test: ", recipe, re.M) or "\nTest:\n" in recipe or \
            re.search(r"\. Test:\s*`", recipe), recipe.splitlines()[0]


def test_the_store_protocol_is_the_one_described() -> None:
    """``StoreBackend`` (get, put, the indices of a probe's draws, every row, count, close)."""
    from agentverity_props.store import StoreBackend
    methods = {n for n, v in vars(StoreBackend).items()
               if callable(v) and not n.startswith("_")}
    assert methods == {"get", "put", "indices", "rows", "count", "close"}
    assert "(get, put, the indices of a probe's draws, every row, count, close)" in \
        " ".join(_section("Sharing recordings across runners").split())


def test_every_result_model_forbids_unknown_keys_all_the_way_down() -> None:
    """``extra="forbid"`` all the way down: every pydantic model of ``results/``."""
    from pydantic import BaseModel

    from agentverity_props import results
    for name in results._EXPORTS:
        getattr(results, name)
    models = [obj for path in sorted((PKG_DIR / "results").glob("_*.py"))
              for obj in vars(importlib.import_module(f"{PKG}.results.{path.stem}")).values()
              if inspect.isclass(obj) and issubclass(obj, BaseModel)
              and obj.__module__.startswith(f"{PKG}.results.")]
    assert len(models) > 10
    assert [m.__name__ for m in models if m.model_config.get("extra") != "forbid"] == []


def _package_imports(path: Path) -> set[str]:
    """The package modules ``path`` imports (relative imports resolved, lazy ones too)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            out.add(".".join(base + ([node.module] if node.module else [])))
    return out


def test_the_bottom_floor_imports_what_the_page_says() -> None:
    """``errors`` imports nothing of the package, ``observation`` only ``errors`` and
    ``_internal/``, and ``_internal/`` nothing beyond ``errors``."""
    assert _package_imports(PKG_DIR / "errors.py") == set()
    assert {m.split(".")[1] for m in _package_imports(PKG_DIR / "observation.py")} == \
        {"errors", "_internal"}
    internal = {m.split(".")[1] for p in (PKG_DIR / "_internal").glob("*.py")
                for m in _package_imports(p)} - {"_internal"}
    assert internal == {"errors"}
    assert "Imports: nothing beyond `errors`." in _paragraph("_internal/")


def test_a_setting_is_spelled_as_the_page_shows() -> None:
    """"Settings named in the caller's terms": the three spellings of ``budget``."""
    from agentverity_props._internal.settings import setting, speaking
    text = " ".join(_section("Settings named in the caller's terms").split())
    for edge, shown in (("cli", "--budget N"),
                        ("pytest", "--agentverity-budget N (ini agentverity_budget)"),
                        ("python", "budget=N")):
        assert f"`{shown}`" in text
        with speaking(edge):  # type: ignore[arg-type]
            assert setting("budget") == shown
