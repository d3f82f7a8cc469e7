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
    "BLOCK_SIZE": "._health",
    "CHANGE_MAX_TRIALS": "._change", "ChangeResult": "._change",
    "change_result": "._change", "change_settled": "._change", "check_change": "._change",
    "BlindnessResult": "._health", "DependenceResult": "._health", "HealthCheck": "._health",
    "blindness_from_keys": "._health", "check_dependence": "._health",
    "dependence_result": "._health",
    "DEFAULT_MAX_CALLS": "._meter", "PRESETS": "._presets", "InputEvidence": "._meter",
    "TOLERANCE_PRESETS": "._presets", "resolve_tolerance": "._presets",
    "MeterConfig": "._meter", "MeterResult": "._meter", "resolve_epsilon": "._meter",
    "run_meter": "._meter",
    "validate_meter_args": "._meter",
    "PlanResult": "._plan", "plan": "._plan", "TokensPerCall": "._plan_tokens",
    "RunConfig": "._run", "RunResult": "._run", "arun": "._run", "measure": "._run",
    "run": "._run", "run_relations": "._run", "budget_note": "._run",
    "RouteMeter": "._routes", "Routes": "._routes", "parse_required_verdicts": "._routes",
    "route_breakdown": "._routes",
}

__all__ = [
    "BLOCK_SIZE",
    "CHANGE_MAX_TRIALS",
    "DEFAULT_MAX_CALLS",
    "PRESETS",
    "TOLERANCE_PRESETS",
    "BlindnessResult",
    "ChangeResult",
    "DependenceResult",
    "HealthCheck",
    "InputEvidence",
    "MeterConfig",
    "MeterResult",
    "PlanResult",
    "RouteMeter",
    "Routes",
    "RunConfig",
    "RunResult",
    "TokensPerCall",
    "arun",
    "blindness_from_keys",
    "budget_note",
    "change_result",
    "change_settled",
    "check_change",
    "check_dependence",
    "dependence_result",
    "measure",
    "parse_required_verdicts",
    "plan",
    "resolve_epsilon",
    "resolve_tolerance",
    "route_breakdown",
    "run",
    "run_meter",
    "run_relations",
    "validate_meter_args",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())


if TYPE_CHECKING:  # pragma: no cover
    from ._change import (
        CHANGE_MAX_TRIALS,
        ChangeResult,
        change_result,
        change_settled,
        check_change,
    )
    from ._health import (
        BLOCK_SIZE,
        BlindnessResult,
        DependenceResult,
        HealthCheck,
        blindness_from_keys,
        check_dependence,
        dependence_result,
    )
    from ._meter import (
        DEFAULT_MAX_CALLS,
        InputEvidence,
        MeterConfig,
        MeterResult,
        resolve_epsilon,
        run_meter,
        validate_meter_args,
    )
    from ._plan import PlanResult, plan
    from ._plan_tokens import TokensPerCall
    from ._presets import PRESETS, TOLERANCE_PRESETS, resolve_tolerance
    from ._routes import RouteMeter, Routes, parse_required_verdicts, route_breakdown
    from ._run import RunConfig, RunResult, arun, budget_note, measure, run, run_relations
