"""Health checks: tests that test less than the user thinks (after Hypothesis's ``HealthCheck``).

Blindness
    Estimand: ``pi_max``, the largest share of one verdict when an input is picked uniformly
    from the probe set and drawn once (``pi_v = mean_i P(draw of input i = v)``). The probe set
    is *blind* when ``pi_max >= threshold`` (0.9 by default): relations then pass vacuously,
    because the probes never make the agent change its mind.

    Two bounds, each at ``alpha / 2``, and the first that decides is reported:

    A. *Mixture sample.* The first draw of every meter trial (inputs chosen uniformly at random
       with replacement) is an i.i.d. draw from the mixture, so for each observed verdict an
       anytime-valid confidence sequence (beta-binomial mixture, see
       :class:`~agentverity_props.decide.BetaCS`) bounds ``pi_v``; Bonferroni over the K
       observed verdicts. Best for large probe sets.
    B. *Census.* ``pi_v`` is the mean of the per-input probabilities ``p_iv`` over a finite
       probe set, so simultaneous per-input confidence sequences (at ``alpha / (2 N K)``)
       bound it by averaging; an input never drawn contributes [0, 1]. Best for small probe
       sets, where every input is drawn many times.

    ``blind`` when a lower bound for some verdict reaches the threshold, ``ok`` when every
    verdict's upper bound is below it, else ``undecided``. No extra agent call is made unless
    both are undecided (then ``run`` tops the sample up with single draws on random inputs).

Dependent draws
    Null hypothesis: the draws of one input are independent and identically distributed given
    the input — the assumption of the meter, blindness and relation guarantees. A response
    cache or sticky session (a repeat tends to get the previous answer) and replicas behind a
    round-robin load balancer (answers alternate with the call's position) break it. The
    check makes *spaced blocks* (:func:`check_dependence`): a rotation over inputs, led by
    those already seen to give more than one answer, each drawn twice back to back per turn,
    a turn at least ``SPACING`` calls long — so a cache whose entries live fewer calls makes
    every pair agree and answers every pair afresh — and feeds them to
    :class:`~agentverity_props.decide.DependenceTest`, a test martingale on the mixed pairs
    and answer switches within each block. ``dependent`` when it crosses ``1 / alpha``:
    under the null that happens with probability at most ``alpha``. Otherwise ``not
    detected``; :attr:`DependenceResult.verdict` says whether that rules a cache out.
"""

from __future__ import annotations

import asyncio
import enum
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from .._internal.settings import setting
from ..decide import (
    BLINDNESS_BOUND_SHARE,
    DependenceTest,
    ShareCall,
    blindness_call,
)
from ..errors import DrawStopped, InvalidArgument

if TYPE_CHECKING:
    from ..engine import Engine, EvidencePool, Probe

BlindStatus = Literal["blind", "ok", "undecided", "suppressed"]
DependenceStatus = Literal["dependent", "not detected", "not run", "suppressed"]
#: What other code reads before it relies on independent draws (:attr:`DependenceResult.verdict`).
DependenceVerdict = Literal["detected", "not detected", "not ruled out"]
#: Draws in one block of the back-to-back design that spaced blocks replaced (issue 47): the
#: size its measurements in docs/statistics.md §2b were made at.
BLOCK_SIZE = 24
#: Pairs of back-to-back draws in one spaced block of the dependence check.
PAIRS = 4
#: Calls a turn of the spaced rotation makes at least: a cache whose entries live fewer
#: calls (counted over the whole agent) answers every pair afresh and is seen.
SPACING = 40


class HealthCheck(enum.Enum):
    """Checks that flag a suite which tests less than it seems; suppress by name."""

    blind_probe_set = "blind_probe_set"
    """One verdict dominates the probe set (relations would pass vacuously)."""

    unexercised_relation = "unexercised_relation"
    """A relation's transform left every input unchanged."""

    unstable_verdict = "unstable_verdict"
    """The meter could not call the verdict deterministic or stochastic."""

    dependent_draws = "dependent_draws"
    """Draws of one input are not independent (a response cache, a sticky session, replicas
    taking turns): every error rate the tool states assumes they are."""

    changed_agent = "changed_agent"
    """The agent became noisier after the meter (a model swapped or drifting during the
    run): every decision of the run assumes an agent that does not change while measured."""

    @classmethod
    def all(cls) -> list[HealthCheck]:
        return list(cls)

    @classmethod
    def parse(cls, names: Any) -> frozenset[HealthCheck]:
        out = set()
        for n in names or ():
            if isinstance(n, HealthCheck):
                out.add(n)
                continue
            try:
                out.add(cls(str(n)))
            except ValueError:
                raise InvalidArgument(
                    f"unknown health check {n!r}; use one of "
                    + ", ".join(h.value for h in cls)) from None
        return frozenset(out)


@dataclass(frozen=True)
class BlindnessResult:
    status: BlindStatus
    threshold: float
    alpha: float
    modal_verdict: str | None
    share: float | None
    ci_low: float | None
    ci_high: float | None
    sample: int
    distribution: dict[str, int]
    method: str = "mixture"

    @property
    def estimand(self) -> str:
        return ("pi_max = largest share of one verdict over uniformly drawn inputs "
                "(one draw each)")

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "estimand": self.estimand, "threshold": self.threshold,
                "alpha": self.alpha, "modal_verdict": self.modal_verdict, "share": self.share,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "sample": self.sample,
                "method": self.method, "distribution": dict(self.distribution)}


def blindness_from_keys(keys: list[str], *, threshold: float = 0.9, alpha: float = 0.05,
                        suppressed: bool = False,
                        per_input: list[list[str]] | None = None) -> BlindnessResult:
    """Blindness from an i.i.d. mixture sample ``keys`` and, optionally, ``per_input`` draws
    (:func:`~agentverity_props.decide.blindness_call`); ``suppressed``: the mixture's numbers,
    with the status ``suppressed``."""
    if not (0.5 < threshold < 1.0):
        raise InvalidArgument(f"blindness threshold={threshold!r} must be in (0.5, 1)")
    if suppressed:
        a = (blindness_call(keys, threshold=threshold, alpha=alpha * BLINDNESS_BOUND_SHARE)
             if per_input is not None else blindness_call(keys, threshold=threshold,
                                                          alpha=alpha))
        return _result(a, threshold, status="suppressed")
    return _result(blindness_call(keys, threshold=threshold, alpha=alpha,
                                  per_input=per_input), threshold)


def _result(c: ShareCall[str], threshold: float,
            status: BlindStatus | None = None) -> BlindnessResult:
    return BlindnessResult(cast("BlindStatus", status or c.status), threshold, c.alpha,
                           c.modal, c.share, c.low, c.high, c.sample, dict(c.distribution),
                           method=c.method)


# ---------------------------------------------------------------------- dependent draws

_PATTERN = {"runs": "fewer answer switches than independent draws give (runs of one answer)",
            "alternation": "more answer switches than independent draws give (answers "
                           "alternating)",
            "mixed": "as many blocks with too few answer switches as with too many"}

#: What can make the pattern seen, and what to do: worded from what was seen, never a guess
#: that the agent has a cache or replicas.
_CAUSES = {"runs": "state that makes a repeat of an input likely to get the previous answer "
                   "(a response cache, a sticky session, a conversation kept across calls)",
           "alternation": "state that changes with the call's position (replicas behind a "
                          "round-robin balancer, a counter or a cycle kept across calls)",
           "mixed": "state kept across calls (a cache, a session, replicas, a counter)"}


@dataclass(frozen=True)
class DependenceResult:
    """The dependent-draws health check (module docstring, "Dependent draws").

    ``inputs`` holds what each input's blocks showed (fingerprint, blocks, switches seen
    and expected under independence, e-value), the input that moved the e-value most first.
    """

    status: DependenceStatus
    alpha: float
    e_value: float
    blocks: int
    informative_blocks: int
    calls: int
    pattern: str
    runs_blocks: int = 0
    alternating_blocks: int = 0
    inputs: tuple[dict[str, Any], ...] = ()
    spaced_blocks: int = 0
    spacing: int | None = None
    reach: float = 1.0

    @property
    def verdict(self) -> DependenceVerdict:
        """Whether draws of one input were found dependent — the one attribute to read
        before relying on independence (for example before using one draw a pair):

        - ``"detected"``: the check fired (false alarm rate <= ``alpha``).
        - ``"not detected"``: it did not fire, its spaced blocks were at least
          ``SPACING`` calls apart, and they held answers varied enough that a cache whose
          entries live fewer than ``spacing`` calls would have made it fire (:attr:`reach`
          >= ``1 / alpha``).
        - ``"not ruled out"``: anything else — suppressed, not run, stopped, or too little
          variety in the answers (an agent that never changed its answer cannot be told from
          one behind a cache). Treat it like ``"detected"`` where a decision needs
          independent draws.
        """
        if self.fired:
            return "detected"
        if (self.status == "not detected" and self.spaced_blocks
                and self.spacing is not None and self.spacing >= SPACING
                and self.reach >= 1 / self.alpha):
            return "not detected"
        return "not ruled out"

    @property
    def estimand(self) -> str:
        return ("H0: the draws of one input are independent and identically distributed given "
                "the input; statistic: answer switches within blocks of back-to-back draws")

    @property
    def fired(self) -> bool:
        return self.status == "dependent"

    def guarantee(self) -> str:
        return (f"P(dependent) <= {self.alpha:g} when the draws are independent given the "
                "input; valid under optional stopping")

    def seen(self) -> str:
        """What the blocks showed: the pattern, the blocks leaning each way, and the inputs
        behind the e-value (fingerprints, never the prompts)."""
        lean = (f"{self.runs_blocks} of {self.informative_blocks} block(s) with more than one "
                f"answer had fewer switches than expected under independence, "
                f"{self.alternating_blocks} more")
        shown = [r for r in self.inputs if r["informative_blocks"]][:3]
        per = "; ".join(f"input {str(r['source'])[:12]}: {r['switches']} switch(es) in "
                        f"{r['blocks']} block(s) where {r['expected_switches']:g} expected, "
                        f"e-value {r['e_value']:.3g}" for r in shown)
        return f"{_PATTERN[self.pattern]}: {lean}" + (f" ({per})" if per else "")

    def warning(self) -> str:
        """What was seen, what firing means for the guarantees, and what to check ('' unless
        fired)."""
        if not self.fired:
            return ""
        return (f"dependent draws: back-to-back draws of one input show "
                f"{self.seen()}; e-value {self.e_value:.3g} >= 1/{self.alpha:g} over "
                f"{self.blocks} block(s). The meter's and relations' error rates assume "
                "independent draws given the input, so a 'verdict-deterministic' call, a "
                "blind probe set and confirmed violations of this run may come from the "
                "order of the calls rather than the inputs. Look for "
                f"{_CAUSES[self.pattern]} and remove it (a response cache: or send a "
                "cache-busting nonce on every call, nonce_field= or nonce_header= of "
                "from_http, nonce_param= of from_callable), then rerun. If the agent keeps no "
                "state between calls (a plain function, its random draws independent of "
                "the call's position), this is a false alarm, which happens with probability "
                f"<= {self.alpha:g}: rerun with another {setting('seed', '')}; a real dependence "
                "fires again")

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "estimand": self.estimand,
                "guarantee": self.guarantee(), "alpha": self.alpha,
                "e_value": self.e_value if math.isfinite(self.e_value) else None,
                "blocks": self.blocks, "informative_blocks": self.informative_blocks,
                "calls": self.calls, "pattern": self.pattern,
                "runs_blocks": self.runs_blocks, "alternating_blocks": self.alternating_blocks,
                "verdict": self.verdict, "spaced_blocks": self.spaced_blocks,
                "spacing": self.spacing,
                "reach": self.reach if math.isfinite(self.reach) else None,
                "inputs": [{**r, "e_value": r["e_value"] if math.isfinite(r["e_value"])
                            else None} for r in self.inputs],
                "warning": self.warning()}


def dependence_result(test: DependenceTest, *, calls: int,
                      suppressed: bool = False) -> DependenceResult:
    status: DependenceStatus = ("suppressed" if suppressed else "dependent" if test.fired
                                else "not detected" if test.blocks else "not run")
    return DependenceResult(status, test.alpha, test.e_value, test.blocks, test.informative,
                            calls, test.pattern, test.sticky_blocks, test.alternating_blocks,
                            tuple(test.sources()), test.spaced_blocks, test.spacing,
                            test.reach)


def block_label(obs: Any, layer: str) -> str:
    """A draw's answer at ``layer``; a failed or verdict-less draw is its own answer."""
    key = obs.key(layer)
    if key is not None:
        return str(key)
    return "!" + (obs.error.kind if obs.error is not None else "no_decision")


def dependence_targets(probes: Sequence[Probe], pool: EvidencePool, layer: str,
                       rng: Any) -> list[Probe]:
    """Inputs ordered by how much they can show: those whose latest draw is off their modal
    answer, then by the share of draws away from it (random order among equals); inputs
    never seen to flip are left out (under independence the order is a function of the past,
    so the test stays valid)."""
    scored = []
    for p in probes:
        keys = [k for k in pool.get(p.fp).keys(layer) if k is not None]
        counts = Counter(keys)
        off = len(keys) - max(counts.values(), default=0)
        if off:
            # an input whose latest draw is off its modal answer first: a cache holding that
            # answer shows a run of it, then a switch, in the very next block
            modal = max(counts.values())
            latest_off = counts[keys[-1]] < modal
            scored.append((-int(latest_off), -off / len(keys), float(rng.random()), p))
    return [t[-1] for t in sorted(scored, key=lambda t: t[:3])]


async def check_dependence(engine: Engine, targets: Sequence[Probe], pool: EvidencePool,
                           test: DependenceTest, *, layer: str, blocks: int,
                           spacers: Sequence[Probe] = (), pairs: int = PAIRS,
                           spacing: int = SPACING,
                           progress: Callable[[int], None] | None = None,
                           parallel: int = 1) -> int:
    """Feed ``test`` spaced blocks on up to ``blocks`` of ``targets`` (cycling over them);
    stops when it fires, the budget ends or a draw is stopped. Returns the calls made.

    A *set* of blocks is a rotation over distinct inputs: the targets, then ``spacers``
    (inputs that need not have flipped) until one turn of the rotation makes at least
    ``spacing`` calls. Each turn draws every input of the rotation twice back to back (a
    pair); ``pairs`` turns make one spaced block per input, so repeats of an input are
    both back to back (within a pair) and far apart (across pairs): a cache whose entries
    live fewer calls than the spacing answers the second draw of a pair from the first and
    every pair afresh, which no ordering of independent draws does systematically. Up to
    ``parallel`` pairs, each of a different input, run at once (the rotation is lengthened
    to keep the spacing). Every input's block, the spacers' too, is fed to ``test`` in
    rotation order once the set is complete, so the test is the same whatever the timing.
    Draws are kept in ``pool``. On a recording (``assess``) the draws are replayed by index,
    not made in this order, so no spacing is claimed (``spacing`` stays None: the verdict is
    never "not detected" there)."""
    made = 0
    done = 0
    first = 0
    per_block = 2 * pairs
    width = max(1, parallel)
    while done < blocks:
        # a finite recording (assess): a block it cannot complete would only use up draws
        targets = [t for t in targets if _can_complete(engine.evidence_left(t), per_block)]
        if not targets or test.fired or engine.stopping:
            break
        n = min(blocks - done, len(targets))
        chosen: dict[str, Probe] = {}
        for i in range(n):
            t = targets[(first + i) % len(targets)]
            chosen.setdefault(t.fp, t)
        need = -(-spacing // 2) + width - 1
        for sp in spacers:
            if len(chosen) >= need:
                break
            if sp.fp not in chosen and _can_complete(engine.evidence_left(sp), per_block):
                chosen.setdefault(sp.fp, sp)
        rotation = list(chosen.values())
        while len(rotation) > 1 and not engine.can_afford(per_block * len(rotation)):
            rotation.pop()  # spacers last: a shorter rotation, a smaller spacing (recorded)
        if not engine.can_afford(per_block * len(rotation)):
            break
        w = min(width, len(rotation))
        # the fewest calls from an input's pair to its next pair (with ``w`` at once, an
        # input's pair may start late in its wave and the next one early in the next)
        gap = 2 * (len(rotation) - w + 1)
        idxs = {p.fp: engine.allocate(p, per_block) for p in rotation}
        labels: dict[str, list[str]] = {p.fp: [] for p in rotation}

        async def pair(probe: Probe, turn: int, idxs: dict[str, list[int]] = idxs,
                       labels: dict[str, list[str]] = labels) -> bool:
            nonlocal made
            for idx in idxs[probe.fp][2 * turn:2 * turn + 2]:
                try:
                    obs = await engine.draw(probe, idx)
                except DrawStopped:
                    return False
                made += 1
                pool.add(probe.fp, idx, obs)
                labels[probe.fp].append(block_label(obs, layer))
                if progress is not None:
                    progress(1)
            return True

        for turn in range(pairs):
            for k in range(0, len(rotation), w):
                ok = await asyncio.gather(*(pair(p, turn) for p in rotation[k:k + w]))
                if not all(ok):
                    return made
        recorded = any(engine.evidence_left(p) is not None for p in rotation)
        for p in rotation:
            test.update(labels[p.fp], source=p.fp, paired=True,
                        spacing=None if recorded else gap)
        done += n
        first += n
    return made


def _can_complete(left: int | None, block_size: int) -> bool:
    """Whether the evidence holds a whole block (None: a live agent, no limit)."""
    return left is None or left >= block_size
