"""The searches over inputs: enlarging a blind probe set, and locating a verdict boundary.

* :func:`enlarge` — when one verdict dominates a probe set, search (edits of the user's own
  probes, learned by :class:`~agentverity_props.strategies.ProbeGrammar`; or a strategy
  pack) for inputs with a minority verdict, each confirmed by a sequential test, and for
  boundary pairs one edit apart;
* :func:`locate_boundary` — between two inputs with different verdicts, bisect the edit path
  to the adjacent pair where the verdict flips, each step decided against the agent's noise.

The Hypothesis strategies they draw from are :mod:`agentverity_props.strategies`'; every
edit, grammar and boundary splits text with one tokenizer (``_internal/words.py``).
"""

from __future__ import annotations

from ._boundary import BoundaryConfig, BoundaryLocation, locate_boundary
from ._enlarge import EnlargeConfig, EnlargeResult, enlarge

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "BoundaryConfig",
    "BoundaryLocation",
    "EnlargeConfig",
    "EnlargeResult",
    "enlarge",
    "locate_boundary",
]
