"""The first repeated value of a sequence: the check behind "ids must be unique" in every
file format that names its items (benchmark tasks, tool cases)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TypeVar

__all__ = ["first_repeat"]

H = TypeVar("H", bound=Hashable)


def first_repeat(values: Iterable[H]) -> H | None:
    """The first value seen a second time, or None when every value is distinct.

    >>> first_repeat(["a", "b", "a", "b"]), first_repeat([1, 2, 3])
    ('a', None)
    """
    seen: set[H] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None
