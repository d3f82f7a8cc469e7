"""Keywords renamed to say which quantity they are: the old spelling still works, warned.

``tolerance`` once named four different limits; each now has its own name (the snapshot
drift limit ``drift_tolerance``, a conversation invariant's ``allowed_rate``...). A caller
that still writes the old keyword gets the same behaviour and a ``DeprecationWarning``
naming the new one; giving both is an error.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import InvalidArgument

__all__ = ["renamed"]


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
