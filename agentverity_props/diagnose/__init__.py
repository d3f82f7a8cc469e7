"""Diagnosis before testing: the meter and the health checks.

* :func:`run_meter` — is the categorical verdict stable enough to test?
* :func:`blindness_from_keys` and :class:`HealthCheck` — does one verdict dominate? Are the
  draws of one input independent (:class:`DependenceResult`)? Did the agent change during
  the run (:func:`check_change`)?

``run`` and ``plan``, which chain these with the relations, live in
:mod:`agentverity_props.runner`.

Names load lazily (PEP 562): the health check is needed at test-collection time, numpy only
once something is measured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._internal.lazy import lazy_exports

_EXPORTS = {
    "PAIRS": "._health", "SPACING": "._health",
    "CHANGE_MAX_TRIALS": "._change", "CHANGE_TRIAL_DRAWS": "._change",
    "ChangeResult": "._change",
    "change_result": "._change", "change_settled": "._change", "check_change": "._change",
    "BlindnessResult": "._health", "DependenceResult": "._health", "HealthCheck": "._health",
    "blindness_from_keys": "._health", "check_dependence": "._health",
    "dependence_result": "._health", "dependence_targets": "._health",
    "DEFAULT_MAX_CALLS": "._meter", "PRESETS": "._presets",
    "resolve_tolerance": "._presets", "DEFAULT_ALPHA": "._presets",
    "DEFAULT_EPSILON": "._presets", "DEFAULT_INDIFFERENCE": "._presets",
    "DEFAULT_LAYER": "._presets", "DEFAULT_TOLERANCE": "._presets",
    "TOLERANCE_PRESETS": "._presets",
    "MeterConfig": "._meter", "MeterResult": "._meter",
    "resolve_epsilon": "._meter", "run_meter": "._meter",
    "validate_meter_args": "._meter",
}

# the public names (docs/api.md): the meter's config and result, the presets, the health
# check and the blindness result (``run``, ``plan`` and ``measure`` with their configs are
# :mod:`agentverity_props.runner`'s); the other imports above are this folder's interface to
# the rest of the package, not a promise to users
__all__ = [
    "PRESETS",
    "BlindnessResult",
    "HealthCheck",
    "MeterConfig",
    "MeterResult",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())


if TYPE_CHECKING:  # pragma: no cover
    from ._change import (
        CHANGE_MAX_TRIALS,
        CHANGE_TRIAL_DRAWS,
        ChangeResult,
        change_result,
        change_settled,
        check_change,
    )
    from ._health import (
        PAIRS,
        SPACING,
        BlindnessResult,
        DependenceResult,
        HealthCheck,
        blindness_from_keys,
        check_dependence,
        dependence_result,
        dependence_targets,
    )
    from ._meter import (
        DEFAULT_MAX_CALLS,
        MeterConfig,
        MeterResult,
        resolve_epsilon,
        run_meter,
        validate_meter_args,
    )
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
