"""Names renamed or moved: the old spelling still works for one release, warned.

Keywords renamed to say which quantity they are (:func:`renamed`), and top-level names that
moved to their sub-module (:func:`moved`).

``tolerance`` once named four different limits; each now has its own name (the snapshot
drift limit ``drift_tolerance``, a conversation invariant's ``allowed_rate``...). A caller
that still writes the old keyword gets the same behaviour and a ``DeprecationWarning``
naming the new one; giving both is an error.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import InvalidArgument

__all__ = ["moved", "renamed", "renamed_attribute"]


def renamed(where: str, old: str, new: str, old_value: Any, new_value: Any, *,
            unset: Any = None, stacklevel: int = 3) -> Any:
    """The value of keyword ``new`` of ``where``, taking the deprecated ``old`` when only it
    was given (``unset``: the default meaning "not given")."""
    if old_value is unset:
        return new_value
    if new_value is not unset:
        raise InvalidArgument(f"{where}: give {new}= only ({old}= is its deprecated old name)")
    warnings.warn(f"{where}: {old}= is deprecated, use {new}= (same meaning)",
                  DeprecationWarning, stacklevel=stacklevel)
    return old_value


def moved(package: str, name: str, home: str) -> None:
    """Warn that ``package.name`` moved to ``home`` (a ``DeprecationWarning`` naming the new
    import; the old spelling is kept one release).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     moved("agentverity_props", "RunConfig", "agentverity_props.runner")
    >>> print(w[0].message)  # doctest: +NORMALIZE_WHITESPACE
    agentverity_props.RunConfig has moved: write 'from agentverity_props.runner import
    RunConfig' (the top-level name is removed in the next release)
    """
    warnings.warn(f"{package}.{name} has moved: write 'from {home} import {name}' (the "
                  "top-level name is removed in the next release)", DeprecationWarning,
                  stacklevel=3)  # the user's line (warnings skips the import system's frames)


def renamed_attribute(owner: str, old: str, new: str) -> None:
    """Warn that ``owner.old`` is a deprecated read-only alias of ``owner.new``."""
    warnings.warn(f"{owner}.{old} is deprecated, read {owner}.{new} (the same value)",
                  DeprecationWarning, stacklevel=3)
