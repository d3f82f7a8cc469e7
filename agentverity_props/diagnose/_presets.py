"""Precision presets of the meter: a name for an epsilon (no heavy imports: the CLI reads them
to build its choices)."""

from __future__ import annotations

#: precision preset name -> epsilon (the meter's limit on the pair-disagreement rate)
PRESETS: dict[str, float] = {"cheap": 0.10, "balanced": 0.05, "strict": 0.01}

#: the defaults of the analysis settings, in one place: RunConfig / MeterConfig take them as
#: their defaults and the CLI shows them (no layer re-states a default of its own)
DEFAULT_EPSILON = PRESETS["balanced"]
DEFAULT_ALPHA = 0.05
DEFAULT_INDIFFERENCE = 2.0
DEFAULT_LAYER = "verdict"

#: precision preset name -> relation tolerance (the largest excess disagreement a HOLDS allows;
#: the default, balanced, rules out a transform that changes one verdict in ten)
TOLERANCE_PRESETS: dict[str, float] = {"cheap": 0.2, "balanced": 0.1, "strict": 0.05}
DEFAULT_TOLERANCE = TOLERANCE_PRESETS["balanced"]


def resolve_tolerance(tolerance: float | None, precision: str | None,
                      profile_default: float | None = None) -> float:
    """The relation tolerance: explicit, else the precision preset's, else the profile's
    (``quick``: 0.2), else the default."""
    from ..errors import InvalidArgument

    if tolerance is None:
        if precision is None:
            return DEFAULT_TOLERANCE if profile_default is None else profile_default
        if precision not in TOLERANCE_PRESETS:
            raise InvalidArgument(f"unknown precision {precision!r}; use one of "
                                  + ", ".join(TOLERANCE_PRESETS))
        return TOLERANCE_PRESETS[precision]
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) \
            or not (0.0 < tolerance < 1.0):
        from .._internal.settings import setting
        raise InvalidArgument(
            f"{setting('tolerance', repr(tolerance))} must be in (0, 1): it is the excess "
            "share of verdicts a "
            "transform may change and still HOLD (0 would need infinitely many calls; use "
            "e.g. 0.05 for a strict check)")
    return float(tolerance)
