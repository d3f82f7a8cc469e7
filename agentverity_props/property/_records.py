"""Results of ``@agent_property`` runs: minimal counterexamples and per-test records.

Plain data, read by the pytest plugin (terminal summary, failure sections, the JSON report)
and by the HTML renderer through :func:`counterexample_report`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..diagnose import HealthCheck
    from ..engine import EngineConfig

from .._internal.renamed import renamed_attribute
from .._internal.settings import setting
from ..engine import Configurable
from ..relations import CandidateRecord
from ..results import CounterexampleDocument

COUNTEREXAMPLE_SCHEMA = CounterexampleDocument.SCHEMA

#: ``@agent_property``'s call budget per test when none is given
DEFAULT_PROPERTY_BUDGET = 4000


def _property_engine() -> EngineConfig:
    from ..engine import EngineConfig
    return EngineConfig(budget=DEFAULT_PROPERTY_BUDGET)


@dataclass(frozen=True, kw_only=True)
class PropertyConfig(Configurable):
    """Everything :func:`~agentverity_props.agent_property` can be told (but the agent).

    ``alpha`` is the family-wise false-violation rate of a test, ``beta`` each candidate's
    false-pass rate (default: the ``profile``'s, 0.01 under ``standard``, 0.05 ``quick``,
    0.002 ``thorough``), ``epsilon`` the noise above which the test warns, ``tolerance`` and
    ``holds_error`` the pooled effect a pass allows and the error of a pass,
    ``max_candidates`` the Bonferroni family (default ``max_examples + 200``). How the agent
    is called is the nested ``engine`` (default ``EngineConfig(budget=4000)``): its budget is
    per test, its error policy must stay ``record`` (a failed call is incomplete evidence,
    never a verdict); with no store of its own, the pytest plugin's ``--agentverity-store``
    is used. ``tolerance`` reads back resolved (as given, else 0.1). Every setting is
    validated and resolved here, once: the flat keywords of ``agent_property`` and the
    pytest plugin's options (``--agentverity-alpha``...) are applied with
    :meth:`with_fields`, which rebuilds the config through this constructor.

    >>> from agentverity_props.engine import EngineConfig
    >>> PropertyConfig(engine=EngineConfig(budget=100, retries=0)).engine.retries
    0
    >>> PropertyConfig(beta=0.6)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    agentverity_props.errors.InvalidArgument: PropertyConfig: beta=0.6 must be in (0, 0.5)...
    """

    epsilon: float = 0.05
    alpha: float = 0.05
    beta: float | None = None
    layer: str = "verdict"
    tolerance: float | None = None  # read back resolved: a float
    holds_error: float = 0.05
    max_candidates: int | None = None
    suppress_health_check: Sequence[HealthCheck | str] = ()
    engine: EngineConfig = field(default_factory=_property_engine)
    profile: str | None = None
    #: a judge grading the agent's free-text answers (docs/judges.md): a
    #: :class:`~agentverity_props.judge.Judge` or any agent; its label is the verdict
    judge: Any = None

    @property
    def candidate_beta(self) -> float:
        """``beta`` when given, else the profile's (``standard``: 0.01)."""
        if self.beta is not None:
            return self.beta
        from ..relations import profile as get_profile
        return get_profile(self.profile).candidate_beta

    def __post_init__(self) -> None:
        from ..diagnose import HealthCheck, resolve_tolerance
        from ..engine import EngineConfig
        from ..errors import InvalidArgument
        from ..observation import LAYERS

        def bad(msg: str) -> InvalidArgument:
            return InvalidArgument(f"PropertyConfig: {msg}")

        if not isinstance(self.engine, EngineConfig):
            raise bad(f"engine must be an EngineConfig, got {type(self.engine).__name__}; "
                      "pass engine=EngineConfig(...)")
        from ..relations import profile as get_profile
        try:  # a beta given explicitly wins; else the profile's (standard: 0.01)
            get_profile(self.profile)
        except InvalidArgument as exc:
            raise bad(str(exc)) from None
        for name in ("alpha", "epsilon", "beta", "holds_error"):
            value = getattr(self, name) if name != "beta" else self.candidate_beta
            if not isinstance(value, (int, float)) or not (0.0 < value < 0.5):
                raise bad(f"{name}={value!r} must be in (0, 0.5), e.g. 0.05")
        budget = self.engine.budget
        if budget is not None and budget < 2:
            raise bad(f"budget={budget!r} must be >= 2 or None (no cap)")
        if self.max_candidates is not None and (
                not isinstance(self.max_candidates, int) or self.max_candidates < 1):
            raise bad(f"max_candidates={self.max_candidates!r} must be an int >= 1 or None "
                      "(max_examples + 200)")
        if self.layer not in LAYERS:
            raise bad(f"layer={self.layer!r}; use one of {', '.join(LAYERS)}")
        if self.engine.error_policy != "record":
            raise bad("engine error_policy must be 'record' (a failed call is incomplete "
                      "evidence, never a verdict); drop error_policy='raise'")
        try:  # the tolerance resolved once, here: the property reads ``tolerance``
            object.__setattr__(self, "tolerance", resolve_tolerance(
                self.tolerance, None, get_profile(self.profile).tolerance))
            names = self.suppress_health_check
            checks = HealthCheck.parse((names,) if isinstance(names, str) else names)
            object.__setattr__(self, "suppress_health_check",
                               tuple(sorted(checks, key=lambda h: h.value)))
        except InvalidArgument as exc:
            raise bad(str(exc)) from None

    @property
    def tol(self) -> float:
        """Deprecated: ``tolerance`` (the same value, resolved when the config was made)."""
        renamed_attribute("PropertyConfig", "tol", "tolerance")
        return self.tolerance  # type: ignore[return-value]


@dataclass
class Counterexample:
    """A confirmed violation, as reported (raw inputs: the user's own test fails on them)."""

    test: str
    relation: str
    rtype: str
    source: str
    follow_up: str
    source_value: str | None
    follow_up_value: str | None
    confirmation: dict[str, Any]
    kwargs: dict[str, Any]
    calls_at_confirmation: int

    def evidence(self, alpha_candidate: float) -> str:
        """What decided the confirmation, in the words of the failure's exception: the
        deciding e-process, its counts and the threshold it crossed
        (:func:`~agentverity_props.decide.account`)."""
        from ..decide import account
        return account({"alpha": alpha_candidate, **self.confirmation}).sentence()

    def example_literal(self) -> str:
        if not self.kwargs:
            return "@example(...)  # arguments not recoverable"
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        hint = ("  # from agentverity_props.strategies import Perturbation"
                if "Perturbation(" in args else "")
        return f"@example({args}){hint}"

    def to_dict(self) -> dict[str, Any]:
        return {"relation": self.relation, "rtype": self.rtype, "source": self.source,
                "follow_up": self.follow_up, "source_value": self.source_value,
                "follow_up_value": self.follow_up_value, "confirmation": self.confirmation,
                "example": self.example_literal(),
                "calls_at_confirmation": self.calls_at_confirmation}


@dataclass(kw_only=True)
class PropertyRecord(CandidateRecord):
    """What one ``@agent_property`` test run spent and found (read by the pytest plugin)."""

    first: Counterexample | None = None
    minimal: Counterexample | None = None
    #: per relation: the pooled effect over the examples generated (estimate, bounds, status)
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    store: str | None = None
    status: str = "passed"

    def alpha_split(self) -> str:
        """What ``alpha_candidate`` is, in words (failure messages print it)."""
        return (f"the test's alpha {self.alpha:g}, half of it for the examples tested one by "
                f"one (the other half for the pooled effect), split over the at most "
                f"{self.max_candidates} candidates the test may decide (max_examples + 200, or "
                "max_candidates=), so that all of them together are wrong with probability "
                f"<= {self.alpha:g}")

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.counters(),
            "minimal": self.minimal.to_dict() if self.minimal else None,
            "shrink_complete": not self.budget_exhausted,
            "first": self.first.to_dict() if self.first else None,
            "reproduce": self.reproduce(), "effects": dict(self.effects),
            "privacy": "the minimal and first inputs are kept verbatim: the user's own test "
                       "fails on them",
        }

    def reproduce(self) -> dict[str, Any]:
        ce = self.minimal
        return {
            "example": ce.example_literal() if ce else None,
            "seed": self.seed,
            "store": self.store,
            "hint": ("add the @example(...) line above @given to pin the case; rerun with "
                     f"{setting('store')} {setting('replay')} to re-use the recorded "
                     "draws") if ce else None,
        }


def counterexample_report(records: Sequence[PropertyRecord]) -> dict[str, Any]:
    """The versioned JSON document of property-test outcomes and minimal counterexamples."""
    return {"schema": COUNTEREXAMPLE_SCHEMA, "tests": [r.to_dict() for r in records]}


#: records of every @agent_property test run in this process (the pytest plugin reads them)
RECORDS: list[PropertyRecord] = []
_RECORDS_LOCK = threading.Lock()


def records() -> list[PropertyRecord]:
    """A copy of the records of every ``@agent_property`` test run in this process so far,
    oldest first.

    The pytest plugin's channel: it reads ``records()`` before and after each test (when
    the package has been imported at all) and reports the new ones. A new record is only
    ever appended, so ``records()[n:]`` is what ran since a call that returned ``n``.
    """
    with _RECORDS_LOCK:
        return list(RECORDS)
