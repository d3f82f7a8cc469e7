"""A gate whose verdicts flip at random on chosen inputs: the agent of
``tests/stats/test_check_stats.py`` and ``benchmarks/check_drift.py``."""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["INPUTS", "FakeAgent"]

INPUTS = [f"attack plan {i}" for i in range(10)] + [f"hello friend {i}" for i in range(10)]


class FakeAgent:
    """A gate whose verdict on some inputs flips with a given probability (own Generator)."""

    def __init__(self, flip: dict[str, float], seed: int,
                 changed: frozenset[str] = frozenset()) -> None:
        self.flip, self.changed = flip, changed
        self.rng, self.lock = np.random.default_rng([seed, 13]), threading.Lock()

    def __call__(self, prompt: str) -> str:
        base = "block" if "attack" in prompt else "allow"
        if prompt in self.changed:
            base = "allow" if base == "block" else "block"
        with self.lock:
            u = self.rng.random()
        if u < self.flip.get(prompt, 0.0):
            return "allow" if base == "block" else "block"
        return base
