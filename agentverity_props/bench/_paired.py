"""The comparison's paired statistics, under the names ``agentverity_props.bench`` exports.

They live in :mod:`agentverity_props.decide` (the sign e-process on discordant items, pooled
over tasks and read at round boundaries; its interval; the runs a verdict still needs).
"""

from __future__ import annotations

from ..decide import PooledSign, difference_interval, runs_needed, sign_log_e

__all__ = ["PooledSign", "difference_interval", "runs_needed", "sign_log_e"]
