"""Lazy exports (PEP 562) for package ``__init__`` modules: a name's module is imported the
first time the name is read, so importing a package costs only what is used."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str], public: Sequence[str],
                 namespace: dict[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to the (relative)
    module defining it; a resolved name is cached in ``namespace`` (the package globals).

    >>> ns: dict[str, Any] = {}
    >>> get, names = lazy_exports("json", {"dumps": "json"}, ["dumps"], ns)
    >>> get("dumps")({"a": 1}), names()
    ('{"a": 1}', ['dumps'])
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(public)

    return __getattr__, __dir__
