"""enlarge's evidence: each added input's verdict confirmed by a sequential test, and the
shares of the probe sets from the blindness test ``run`` uses.

**A find.** A candidate whose first draw is a minority verdict ``v`` is *tested*: fresh draws
(the selecting draw is left out, so the choice of ``v`` does not bias the test) feed Wald's
SPRT (:class:`~agentverity_props.decide.BernoulliSPRT`) of ``P(draw = v) <= 1/2`` (``v`` is not
the input's majority verdict) against ``P(draw = v) >= 0.9``. It is added only when the
likelihood ratio reaches ``1 / alpha_find``; it is dropped as soon as the ratio falls to
:data:`FUTILITY` (one fresh draw other than ``v``) or after :data:`MAX_FIND_DRAWS` fresh draws.
The ``j``-th candidate tested gets ``alpha_find = a / (j (j + 1))`` of the finds' share ``a``
of ``alpha`` (:func:`~agentverity_props.decide.find_alpha`), so the chance that *any* added
input is truly of a majority verdict is at most ``a``, however long the search.

**A set's blindness.** :func:`set_blindness` calls
:func:`~agentverity_props.decide.blindness_call` exactly as ``run`` does: one draw per
input as the mixture sample, every draw per input for the census bound. For an added input
both use only its fresh draws (the selecting draw was chosen for its verdict).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..decide import modal

__all__ = [
    "FUTILITY",
    "MAX_FIND_DRAWS",
    "BoundaryPair",
    "FindTest",
    "Verifier",
    "blindness_dict",
    "set_blindness",
]

#: the tested rates: ``P(draw = v) <= FIND_NULL`` (not the input's majority verdict) against
#: ``P(draw = v) >= FIND_ALTERNATIVE`` (an agent right nine times in ten)
FIND_NULL = 0.5
FIND_ALTERNATIVE = 0.9
#: the likelihood ratio at which a candidate is dropped (one fresh draw other than ``v``
#: takes it to 0.2)
FUTILITY = 0.25
#: fresh draws after which an undecided candidate is dropped (a graded input)
MAX_FIND_DRAWS = 40


@dataclass
class FindTest:
    """One candidate's confirmation: its minority verdict and the fresh draws so far."""

    text: str
    verdict: str
    alpha: float
    draws: list[str | None] = field(default_factory=list)
    status: str = "testing"  # confirmed, dropped, undecided
    _rule: Any = None

    def __post_init__(self) -> None:
        from ..decide import BernoulliSPRT
        self._rule = BernoulliSPRT(FIND_NULL, FIND_ALTERNATIVE, alpha=self.alpha,
                                   beta=FUTILITY)

    def update(self, key: str | None) -> None:
        if self.status != "testing":
            return
        self.draws.append(key)
        d = self._rule.update(key == self.verdict)
        if d is not None:
            self.status = "confirmed" if d.call == "high" else "dropped"
        elif len(self.draws) >= MAX_FIND_DRAWS:
            self.status = "undecided"

    def needed(self) -> int:
        """Fresh draws that agree with ``v`` still needed to confirm (at least 1)."""
        r = self._rule
        return max(1, math.ceil((r._upper - r.llr) / r._llr1))

    @property
    def e_value(self) -> float:
        return math.exp(min(self._rule.llr, 700.0))

    def evidence(self) -> dict[str, Any]:
        """The test's evidence, JSON-ready (kept with the added input)."""
        agree = sum(k == self.verdict for k in self.draws)
        return {"test": f"sprt P(v) <= {FIND_NULL:g} vs >= {FIND_ALTERNATIVE:g}",
                "verdict": self.verdict, "status": self.status, "draws": len(self.draws),
                "agreeing": agree, "e_value": self.e_value, "threshold": 1.0 / self.alpha,
                "alpha": self.alpha}


class Verifier:
    """Confirms the candidates a search draws a minority verdict on (module doc).

    ``draw`` takes texts and returns one verdict each (None: none usable), one call per text;
    ``width`` is how many draws one round may ask for at most.
    """

    def __init__(self, draw: Callable[[list[str]], list[str | None]], *, alpha: float,
                 width: int, can_afford: Callable[[int], bool]) -> None:
        self.draw, self.alpha, self.width = draw, alpha, max(1, width)  # the finds' share
        self.can_afford = can_afford
        #: candidates tested (a minority first draw), and each one's test
        self.tests: dict[str, FindTest] = {}

    def confirm(self, minority: Sequence[tuple[str, str]]) -> dict[str, FindTest]:
        """Test each ``(text, first verdict)`` until it is confirmed or dropped; returns the
        confirmed ones by text."""
        from ..decide import find_alpha
        tests: list[FindTest] = []
        for text, v in minority:
            if text not in self.tests:  # the j-th candidate tested gets its share of alpha
                self.tests[text] = FindTest(text, v,
                                            find_alpha(self.alpha, len(self.tests) + 1))
            tests.append(self.tests[text])
        live = [t for t in tests if t.status == "testing"]
        while live:
            # one draw each while a candidate may still be noise; once its ratio is above 1,
            # as many as it still needs (up to the width), in one round
            plan: list[FindTest] = []
            for t in live:
                k = 1 if t._rule.llr <= 0 else min(t.needed(), max(1, self.width // len(live)))
                plan.extend([t] * k)
            if not self.can_afford(len(plan)):
                plan = plan[:1] if self.can_afford(1) else []
            if not plan:
                for t in live:
                    t.status = "undecided"
                break
            keys = self.draw([t.text for t in plan])
            if all(k is None for k in keys):
                for t in live:
                    t.status = "undecided"
                break
            for t, key in zip(plan, keys, strict=True):
                t.update(key)
            live = [t for t in live if t.status == "testing"]
        return {t.text: t for t in tests if t.status == "confirmed"}

    def fresh(self, text: str) -> list[str]:
        """The fresh (post-selection) draws of a tested candidate."""
        t = self.tests.get(text)
        return [k for k in t.draws if k is not None] if t is not None else []


def set_blindness(original: Sequence[str], added: Sequence[str], *,
                  draws: Callable[[str], list[str]], first: Callable[[str], str | None],
                  fresh: Callable[[str], list[str]], threshold: float,
                  alpha: float, extra: Sequence[str] = ()) -> Any:
    """The blindness test of ``run`` on a probe set (module doc), a
    :class:`~agentverity_props.decide.ShareCall` (as ``run`` reports it:
    :func:`blindness_dict`). ``extra``: single draws of uniformly picked inputs of the set
    (``run``'s top-up of the mixture sample)."""
    from ..decide import blindness_call

    keys: list[str] = []
    per_input: list[list[str]] = []
    for t in original:
        k = first(t)
        if k is not None:
            keys.append(k)
        per_input.append(draws(t))
    for t in added:
        ks = fresh(t)
        if ks:
            keys.append(ks[0])
        per_input.append(ks)
    keys.extend(extra)
    return blindness_call(keys, threshold=threshold, alpha=alpha, per_input=per_input)


def blindness_dict(c: Any, threshold: float) -> dict[str, Any]:
    """A :class:`~agentverity_props.decide.ShareCall` in the shape ``run`` reports blindness
    (``BlindnessResult.to_dict()``)."""
    return {"status": c.status, "estimand": "pi_max = largest share of one verdict over "
            "uniformly drawn inputs (one draw each)", "threshold": threshold,
            "alpha": c.alpha, "modal_verdict": c.modal, "share": c.share, "ci_low": c.low,
            "ci_high": c.high, "sample": c.sample, "method": c.method,
            "distribution": dict(c.distribution)}


def point_share(verdicts: Sequence[str]) -> tuple[str | None, float]:
    """The modal verdict and its share among ``verdicts``."""
    v = modal(verdicts)
    if v is None:
        return None, float("nan")
    return v, sum(x == v for x in verdicts) / len(verdicts)


@dataclass(frozen=True)
class BoundaryPair:
    """An input and an edit of it on which the verdict differs beyond the agent's noise."""

    source: str
    follow_up: str
    edit: dict[str, Any]
    source_verdict: str
    follow_up_verdict: str
    decision: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "follow_up": self.follow_up, "edit": self.edit,
                "source_verdict": self.source_verdict,
                "follow_up_verdict": self.follow_up_verdict, "decision": self.decision}
