"""Precision presets of the meter: a name for an epsilon (no heavy imports: the CLI reads them
to build its choices)."""

from __future__ import annotations

#: ``--precision`` name -> epsilon (the meter's tolerance on the pair-disagreement rate)
PRESETS: dict[str, float] = {"cheap": 0.10, "balanced": 0.05, "strict": 0.01}
