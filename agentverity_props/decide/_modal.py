"""The modal verdict: one definition, one tie rule, for every decision that reads one.

A reference verdict (the screen's, the local tests', the per-candidate test's, the per-route
breakdown's) is the label most of an input's draws gave; a tie goes to the label seen first
in draw order, which depends on nothing but the draws already made, so a later draw cannot
change which label an earlier decision read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable
from typing import TypeVar

__all__ = ["modal"]

H = TypeVar("H", bound=Hashable)


def modal(keys: Iterable[H]) -> H | None:
    """The most common label of ``keys``; ties to the one seen first; None when empty.

    >>> modal(["b", "a", "a", "b"]), modal(["x"]), modal([])
    ('b', 'x', None)
    """
    counts = Counter(keys)  # insertion order: the first-seen label wins a tie below
    if not counts:
        return None
    return counts.most_common(1)[0][0]
