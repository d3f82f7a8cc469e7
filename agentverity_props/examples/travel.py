"""Example: a travel-request triage agent as a plain function (a domain no pack covers).

``gate(request)`` answers ``approve``; ``manager`` when an amount is above $2,000 or the trip
is in business or first class; ``deny`` for a destination on the restricted list.
``noisy_gate`` answers a random other label 5% of the time, from its own generator.
Probes: ``examples/inputs/travel.txt``, twenty economy trips under $1,500 (all ``approve``: a
blind probe set), which ``agentverity-props enlarge`` learns from.

Example:
    >>> gate("Flight from Boston to Denver on May 2, economy, $640 for a client visit.")
    'approve'
    >>> gate("Flight from Boston to Denver on May 2, economy, $2,640 for a client visit.")
    'manager'
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable

__all__ = ["LIMIT", "RESTRICTED", "gate", "make_gate", "noisy_gate"]

#: amounts above this need a manager
LIMIT = 2000.0
#: destinations that are refused
RESTRICTED = ("pyongyang", "tehran", "damascus", "caracas", "havana", "kabul")
_AMOUNT = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")
_LABELS = ("approve", "manager", "deny")


def gate(request: str) -> str:
    """The triage verdict for ``request`` (deterministic)."""
    low = request.lower()
    if any(place in low for place in RESTRICTED):
        return "deny"
    amounts = [float(a.replace(",", "")) for a in _AMOUNT.findall(request)]
    if (amounts and max(amounts) > LIMIT) or "business" in low or "first class" in low:
        return "manager"
    return "approve"


def make_gate(seed: int = 0, noise: float = 0.05) -> Callable[[str], str]:
    """A gate that answers a random other label with probability ``noise``."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def noisy(request: str) -> str:
        verdict = gate(request)
        with lock:
            if rng.random() < noise:
                verdict = rng.choice([v for v in _LABELS if v != verdict])
        return verdict
    return noisy


noisy_gate = make_gate(seed=2026)
