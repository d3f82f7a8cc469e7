"""The changed-agent health check: did the agent become noisier after the meter?

``run`` makes its decisions from draws taken at different times (the meter first, relations
long after), and a snapshot fixes references from the meter's draws, then calibrates on
later ones. Both assume the agent does not change during the run. This check tests it with
:class:`~agentverity_props.decide.ChangeTest`: the meter's pairs bound the early pair
disagreement; late *trials* (fresh draws of a uniformly random input, made at the end of
``run``) or a snapshot's calibration round (every input's fresh draws) are bet against that
bound. It fires with probability at most its ``alpha`` when the agent did not become
noisier, whatever the inputs' own noise (an input that flips a coin all along counts in the
early and the late rate alike).

Late trials stop early once they cannot plausibly show a change (their mean is nearer the
meter's estimate than its bound after :data:`CHANGE_MIN_TRIALS` trials): a stationary agent
pays ``CHANGE_MIN_TRIALS * CHANGE_TRIAL_DRAWS`` calls. Any stopping rule keeps the
guarantee (the test is an e-process).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import DrawStopped, EvidenceExhausted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ..decide import ChangeTest
    from ..engine import Engine, EvidencePool, Probe

ChangeStatus = Literal["changed", "not detected", "incomplete", "not run", "suppressed"]

#: Fresh draws per late trial (one uniformly random input each); three draws give three
#: pairs, the most change shown per call in simulation (docs/statistics.md).
CHANGE_TRIAL_DRAWS = 3
#: Late trials before the early stop may end the check, and at most.
CHANGE_MIN_TRIALS = 8
CHANGE_MAX_TRIALS = 64


@dataclass(frozen=True)
class ChangeResult:
    """The changed-agent health check (module docstring)."""

    status: ChangeStatus
    alpha: float
    early_bound: float
    early_pairs: int
    early_disagreements: int
    early_calls: int
    late_trials: int
    late_mean: float | None
    e_value: float
    calls: int
    source: str
    first_late_call: int = 0
    fired_call: int = 0
    #: the command measured ("run", "check") and its early phase, for the words printed
    during: str = "run"
    early_phase: str = "the meter"
    #: what the early and late draws score (the meter's pair disagreement unless said)
    scores: str = ""

    @property
    def fired(self) -> bool:
        return self.status == "changed"

    @property
    def estimand(self) -> str:
        if self.scores:
            return self.scores
        return ("theta = mean over the probe set of P(two independent draws of one input "
                "disagree), in the meter's draws (early) against later draws (late); "
                "H0: theta_late <= theta_early")

    def guarantee(self) -> str:
        return (f"P(changed) <= {self.alpha:g} when the agent did not become noisier after "
                f"{self.early_phase} (any mix of noisy and steady inputs); valid under "
                "optional stopping, assuming independent draws given the input")

    def warning(self) -> str:
        """What firing means, and when the change happened ('' unless fired)."""
        if not self.fired:
            return ""
        late = "n/a" if self.late_mean is None else f"{self.late_mean:.3f}"
        end = f"the end of {self.early_phase}"
        when = (f"after call {self.early_calls} ({end}) and by call {self.fired_call}"
                if self.fired_call else f"after call {self.early_calls} ({end})")
        early = (f"The meter's {self.early_pairs} pairs bound its pair disagreement"
                 if not self.scores else f"The {self.early_pairs} draws of "
                 f"{self.early_phase} bound its mismatch rate")
        return (f"the agent changed during the {self.during}: {when}. {early} at "
                f"{self.early_bound:.3f} or less; {self.late_trials} later {self.source} "
                f"show {late} (e-value {self.e_value:.3g} >= 2/{self.alpha:g}). Every "
                f"decision of the {self.during} assumes an agent that does not change while "
                "measured: pin the model version behind the endpoint, then rerun")

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "estimand": self.estimand,
                "guarantee": self.guarantee(), "alpha": self.alpha,
                "early_bound": self.early_bound, "early_pairs": self.early_pairs,
                "early_disagreements": self.early_disagreements,
                "early_calls": self.early_calls, "late_trials": self.late_trials,
                "late_mean": self.late_mean,
                "e_value": self.e_value if math.isfinite(self.e_value) else None,
                "calls": self.calls, "source": self.source,
                "fired_call": self.fired_call, "warning": self.warning()}


def change_result(test: ChangeTest | None, *, alpha: float, early_calls: int, calls: int,
                  source: str, suppressed: bool = False, fired_call: int = 0,
                  cut: bool = False, during: str = "run", early_phase: str = "the meter",
                  scores: str = "") -> ChangeResult:
    """The check's result; ``cut``: its trials were stopped (budget, interrupt, failed draws)
    before it fired or reached its own stop, so it is ``incomplete``, not "not detected".
    ``during``, ``early_phase`` and ``scores`` word it for the command that ran it."""
    if test is None:
        return ChangeResult("suppressed" if suppressed else "not run", alpha, 1.0, 0, 0,
                            early_calls, 0, None, 1.0, calls, source, during=during,
                            early_phase=early_phase, scores=scores)
    status: ChangeStatus = ("changed" if test.fired else "incomplete" if cut else
                            "not detected" if test.trials >= CHANGE_MIN_TRIALS else "not run")
    return ChangeResult(status, test.alpha, test.bound, test.early_pairs,
                        test.early_disagreements, early_calls, test.trials, test.late_mean,
                        test.e_value, calls, source, fired_call=fired_call, during=during,
                        early_phase=early_phase, scores=scores)


def change_settled(test: ChangeTest, early_estimate: float) -> bool:
    """The early stop: enough trials, and their mean nearer the meter's estimate than its
    bound (a change this check could show is not in sight)."""
    if test.trials < CHANGE_MIN_TRIALS or test.late_mean is None:
        return False
    return test.late_mean <= early_estimate + (test.bound - early_estimate) / 2


async def check_change(engine: Engine, probes: Sequence[Probe], pool: EvidencePool,
                       test: ChangeTest, *, layer: str, rng: Any, early_estimate: float,
                       parallel: int = 1, max_trials: int = CHANGE_MAX_TRIALS,
                       offset: int = 0,
                       progress: Callable[[int], None] | None = None) -> tuple[int, int, bool]:
    """Feed ``test`` late trials: each picks an input uniformly at random (from ``rng``,
    before its draws) and draws it :data:`CHANGE_TRIAL_DRAWS` times. A trial with fewer
    than two verdicts is not fed (assumed missing at random). Up to ``parallel`` trials run
    at once and feed ``test`` in planned order. Returns (draws made, ``offset`` plus the
    draws made when the test fired, else 0, whether the trials were cut short): draws, not
    live calls, so that a replay reports the same numbers as the run it replays. Cut short:
    the budget, an interrupt or a failed draw stopped the trials before the test fired or
    reached its own stop (early stop or ``max_trials``). A recording that holds no more draws
    (``assess``) is not a cut: the check simply had no later evidence; with fewer than
    :data:`CHANGE_MIN_TRIALS` trials it is then "not run"."""
    from ..decide import pair_disagreement

    made = 0
    planned = 0
    fired_call = 0
    cut = False
    ended = False
    while planned < max_trials and not test.fired and not change_settled(test, early_estimate):
        width = max(1, min(parallel, max_trials - planned))
        if engine.stopping or not engine.can_afford(width * CHANGE_TRIAL_DRAWS):
            cut = True
            break
        plan = []
        for _ in range(width):
            p = probes[int(rng.integers(len(probes)))]
            plan.append((p, engine.allocate(p, CHANGE_TRIAL_DRAWS)))
        planned += width

        async def trial(p: Probe, idx: list[int]) -> list[str] | None:
            nonlocal made, ended
            keys: list[str] = []
            for i in idx:  # one after another: never two draws of this input at once
                try:
                    obs = await engine.draw(p, i)
                except EvidenceExhausted:
                    ended = True
                    return None
                except DrawStopped:
                    return None
                pool.add(p.fp, i, obs)
                made += 1
                if progress is not None:
                    progress(1)
                k = obs.key(layer)
                if k is not None:
                    keys.append(k)
            return keys

        got = await asyncio.gather(*(trial(p, idx) for p, idx in plan))
        stopped = False
        for keys in got:
            if keys is None:
                stopped = True
                continue
            if len(keys) >= 2 and test.update(pair_disagreement(keys)):
                fired_call = offset + made
                break
        if stopped:
            cut = not test.fired and not ended
            break
    return made, fired_call, cut
