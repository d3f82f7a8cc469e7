"""``UNSET``: the default of a keyword that was not given.

An entry point that takes both ``config=`` and flat keywords (``measure``, ``enlarge``,
``agent_property``, ...) defaults each keyword to ``UNSET``, so a keyword given explicitly
overrides the config and one left out takes the config's value
(:func:`agentverity_props.engine.configured`). It lives here, with no dependency, so that a
module can use it in a signature without importing the engine.

>>> UNSET, UNSET is type(UNSET)()
(<from config>, True)
"""

from __future__ import annotations

from typing import Any

__all__ = ["UNSET"]


class _Unset:
    """The default of a keyword that was not given (its value then comes from ``config=``)."""

    _instance: _Unset | None = None

    def __new__(cls) -> _Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<from config>"

    def __reduce__(self) -> str:
        return "UNSET"


#: The default of an entry point's flat keywords: "not given, take it from ``config=``".
#: Typed ``Any`` so that ``budget: int | None = UNSET`` type-checks.
UNSET: Any = _Unset()
