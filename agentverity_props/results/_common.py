"""Parts shared by several result kinds."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ._base import Model

__all__ = ["Stationarity"]


class Stationarity(Model):
    """
    The changed-agent health check (docs/statistics.md): the meter's pairs against later draws.
    Absent in files written before it.
    """

    status: Literal["changed", "not detected", "incomplete", "not run", "suppressed"]
    estimand: str
    guarantee: str
    alpha: float
    early_bound: Annotated[float, Field(ge=0.0, le=1.0)]
    early_pairs: Annotated[int, Field(ge=0)]
    early_disagreements: Annotated[int, Field(ge=0)]
    early_calls: Annotated[int, Field(ge=0)]
    late_trials: Annotated[int, Field(ge=0)]
    late_mean: float | None
    e_value: float | None
    calls: Annotated[int, Field(ge=0)]
    source: str
    fired_call: Annotated[int, Field(ge=0)]
    warning: str
