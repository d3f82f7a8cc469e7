"""A moderation gate as a plain function: no Strands, no model, no network.

CLI reference: ``examples/plain_gate.py:gate``; probes: ``examples/inputs/moderation.txt``.

References:
    gate        deterministic: gate(prompt) -> {"verdict": ..., "text": ...}
    noisy_gate  stochastic near the thresholds (own Random(1234), noise 0.15)
    buggy_gate  deterministic, with the planted URGENT bug
    make_gate   make_gate(seed, noise, *, planted_bug=False) builds your own
"""

from agentverity_props.examples.plain import buggy_gate, gate, make_gate, noisy_gate

__all__ = ["buggy_gate", "gate", "make_gate", "noisy_gate"]
