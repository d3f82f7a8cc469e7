"""Lazy exports (PEP 562) for package ``__init__`` modules: a name's module is imported the
first time the name is read, so importing a package costs only what is used."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["lazy_exports", "stub_exports"]


def stub_exports(init_file: str) -> dict[str, str]:
    """``{name: relative module}`` of every ``from .module import name as name`` in the
    ``__init__.pyi`` beside ``init_file``: the stub type checkers read is the one list of a
    package's lazy exports (the convention of scientific Python's ``lazy_loader``), so each
    public name is written once. Names imported from ``._internal`` (``__version__``) are
    left out: the package imports those eagerly.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "__init__.pyi").write_text("from .core import run as run")
    ...     stub_exports(str(Path(d, "__init__.py")))
    {'run': '.core'}
    """
    stub = Path(init_file).with_suffix(".pyi")
    out: dict[str, str] = {}
    for node in ast.parse(stub.read_text(encoding="utf-8")).body:
        if not isinstance(node, ast.ImportFrom) or node.level != 1:
            continue
        module = "." + (node.module or "")
        if module.startswith("._internal"):
            continue
        for alias in node.names:
            if alias.asname != alias.name:  # only ``name as name`` re-exports a name
                raise ImportError(f"{stub}: write the import of {alias.name!r} as "
                                  f"'from {module} import {alias.name} as {alias.name}'")
            out[alias.name] = module
    return out


def lazy_exports(package: str, exports: Mapping[str, str], public: Sequence[str],
                 namespace: dict[str, Any], moved: Mapping[str, str] | None = None
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to the (relative)
    module defining it; a resolved name is cached in ``namespace`` (the package globals).
    ``moved`` maps an old name to its new (absolute) home: it still resolves, with a
    ``DeprecationWarning`` on every read (never cached), and is not listed.

    >>> ns: dict[str, Any] = {}
    >>> get, names = lazy_exports("json", {"dumps": "json"}, ["dumps"], ns)
    >>> get("dumps")({"a": 1}), names()
    ('{"a": 1}', ['dumps'])
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None and moved and name in moved:
            from .renamed import moved as warn_moved
            warn_moved(package, name, moved[name])
            return getattr(importlib.import_module(moved[name]), name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(public)

    return __getattr__, __dir__
