"""The main job, by its command's name: ``run`` and ``plan``.

* :func:`run` — meter, then blindness, then the dependence check, every relation decided by
  :mod:`agentverity_props.relations`, and the changed-agent trials, all through one engine
  and one evidence pool (the diagnoses are :mod:`agentverity_props.diagnose`'s);
* :func:`plan` — the calls a ``run`` will need, simulated before any call on a synthetic
  offline agent;
* :func:`measure` — the meter alone, on its own engine;
* :func:`route_breakdown` — the per-route breakdown of a run's verdicts.

(Named ``runner``, not ``run``: a subpackage named like the top-level function ``run``
would be set as the package's attribute ``run`` when first imported.)

Names load lazily (PEP 562): numpy only once something runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._internal.lazy import lazy_exports

_EXPORTS = {
    "plan": "._plan",
    "TokensPerCall": "._plan_tokens", "NoiseEstimate": "._plan_tokens",
    "RunConfig": "._run", "RunResult": "._run", "arun": "._run", "measure": "._run",
    "run": "._run", "budget_note": "._run",
    "parse_required_verdicts": "._routes",
    "route_breakdown": "._routes",
}

# the public names (docs/api.md): the entry points ``measure``, ``run`` and ``plan`` (also at
# the top level), the run's config and result, and the plan's token figures; the other
# imports above are this folder's interface to the rest of the package, not a promise to users
__all__ = [
    "RunConfig",
    "RunResult",
    "TokensPerCall",
    "arun",
    "measure",
    "plan",
    "run",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())


if TYPE_CHECKING:  # pragma: no cover
    from ._plan import plan
    from ._plan_tokens import NoiseEstimate, TokensPerCall
    from ._routes import parse_required_verdicts, route_breakdown
    from ._run import RunConfig, RunResult, arun, budget_note, measure, run
