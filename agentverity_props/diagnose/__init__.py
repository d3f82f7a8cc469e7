"""Diagnosis before testing: the meter, the blindness health check, and ``run``.

* :func:`measure` / :func:`run_meter` — is the categorical verdict stable enough to test?
* :func:`blindness_from_keys` and :class:`HealthCheck` — does one verdict dominate? Are the
  draws of one input independent (:class:`DependenceResult`)?
* :func:`plan` — the calls a ``run`` will need, simulated before any call.
* :func:`run` — meter, then blindness, then every relation decided by
  :mod:`agentverity_props.relations`, all through one engine.

Names load lazily (PEP 562): the health check is needed at test-collection time, numpy only
once something is measured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._internal.lazy import lazy_exports

_EXPORTS = {
    "PAIRS": "._health", "SPACING": "._health",
    "ChangeResult": "._change",
    "change_result": "._change", "change_settled": "._change", "check_change": "._change",
    "BlindnessResult": "._health", "HealthCheck": "._health",
    "blindness_from_keys": "._health", "check_dependence": "._health",
    "dependence_result": "._health", "dependence_targets": "._health",
    "DEFAULT_MAX_CALLS": "._meter", "PRESETS": "._presets",
    "resolve_tolerance": "._presets", "DEFAULT_ALPHA": "._presets",
    "DEFAULT_EPSILON": "._presets", "DEFAULT_INDIFFERENCE": "._presets",
    "DEFAULT_LAYER": "._presets", "DEFAULT_TOLERANCE": "._presets",
    "TOLERANCE_PRESETS": "._presets",
    "MeterConfig": "._meter", "MeterResult": "._meter",
    "run_meter": "._meter",
    "plan": "._plan",
    "TokensPerCall": "._plan_tokens", "NoiseEstimate": "._plan_tokens",
    "RunConfig": "._run", "RunResult": "._run", "arun": "._run", "measure": "._run",
    "run": "._run", "budget_note": "._run",
    "parse_required_verdicts": "._routes",
    "route_breakdown": "._routes",
}

# the public names (docs/api.md): the entry points ``measure``, ``run`` and ``plan`` (also at
# the top level), their configs and results; the other imports above are this folder's
# interface to the rest of the package, not a promise to users
__all__ = [
    "PRESETS",
    "BlindnessResult",
    "HealthCheck",
    "MeterConfig",
    "MeterResult",
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
    from ._change import ChangeResult, change_result, change_settled, check_change
    from ._health import (
        PAIRS,
        SPACING,
        BlindnessResult,
        HealthCheck,
        blindness_from_keys,
        check_dependence,
        dependence_result,
        dependence_targets,
    )
    from ._meter import DEFAULT_MAX_CALLS, MeterConfig, MeterResult, run_meter
    from ._plan import plan
    from ._plan_tokens import NoiseEstimate, TokensPerCall
    from ._presets import (
        DEFAULT_ALPHA,
        DEFAULT_EPSILON,
        DEFAULT_INDIFFERENCE,
        DEFAULT_LAYER,
        DEFAULT_TOLERANCE,
        PRESETS,
        TOLERANCE_PRESETS,
        resolve_tolerance,
    )
    from ._routes import parse_required_verdicts, route_breakdown
    from ._run import RunConfig, RunResult, arun, budget_note, measure, run
