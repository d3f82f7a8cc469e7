"""Example: a moderation gate as a plain Python function (no Strands, no model).

``gate(prompt)`` is deterministic: the same risk score and thresholds as the Strands
moderation example (:mod:`agentverity_props.examples._risk`) with the noise off.
``make_gate(seed, noise)`` builds a stochastic version drawing from its own
``random.Random(seed)``: prompts near a threshold flip, everyday prompts never do.

CLI references: ``examples/plain_gate.py:gate`` (deterministic),
``examples/plain_gate.py:noisy_gate`` and ``examples/plain_gate.py:buggy_gate``.

Example:
    >>> gate("Please share a pancake recipe")
    {'verdict': 'allow', 'text': 'VERDICT: allow'}
    >>> noisy = make_gate(seed=3, noise=0.15)
    >>> noisy("What is a good name for a golden retriever puppy?")["verdict"]
    'allow'
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

from . import _risk

__all__ = ["buggy_gate", "gate", "make_gate", "noisy_gate"]


def _answer(verdict: str) -> dict[str, Any]:
    return {"verdict": verdict, "text": f"VERDICT: {verdict}"}


def gate(prompt: str) -> dict[str, Any]:
    """Deterministic moderation verdict for ``prompt``: ``{"verdict", "text"}``."""
    return _answer(_risk.verdict_for(_risk.risk(prompt).score, noise=0.0, rng=None))


def make_gate(seed: int = 0, noise: float = 0.15, *,
              planted_bug: bool = False) -> Callable[[str], dict[str, Any]]:
    """A moderation gate drawing near-threshold verdicts from its own ``Random(seed)``.

    Args:
        seed: seed of the gate's private generator.
        noise: width of the uncertain band around each threshold (0 = deterministic).
        planted_bug: block prompts over 40 characters containing ``URGENT`` (upper case).
    """
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    rng = random.Random(seed)
    lock = threading.Lock()  # the engine may call from several worker threads

    def noisy_gate(prompt: str) -> dict[str, Any]:
        if planted_bug and _risk.planted_trigger(prompt):
            return _answer("block")
        with lock:
            verdict = _risk.verdict_for(_risk.risk(prompt).score, noise=noise, rng=rng)
        return _answer(verdict)

    noisy_gate.__qualname__ = f"make_gate(seed={seed},noise={noise},planted_bug={planted_bug})"
    return noisy_gate


noisy_gate = make_gate(seed=1234, noise=0.15)
buggy_gate = make_gate(seed=1234, noise=0.0, planted_bug=True)
