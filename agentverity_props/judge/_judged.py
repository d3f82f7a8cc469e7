"""A free-text agent graded by a judge, as one agent every procedure can draw from.

:class:`JudgedAgent` is an adapter: one draw of it is **one fresh answer of the agent**
(drawn through the agent's own engine: recorded and replayed under the agent's identity)
and **the judge's consensus label on that answer**. The consensus is the label that leads
every other by ``margin`` of the judge's calls on the *same recorded answer* (at most
``max_calls`` of them), drawn through the judge's own engine, whose probes carry the
fingerprint prefix ``judge:`` (their own namespace in the store).

Answer slots. Draw ``i`` of a prompt takes the agent's answer slot ``i`` (a fresh answer for
every draw: the agent's own noise is never hidden); the judge's calls on an answer are
cached per (prompt, answer text, reference), so an identical answer is never judged twice
and its verdict is one label. The judge's noise therefore reaches the verdicts only where
its consensus is wrong (probability about ``(e / (1 - e)) ** margin`` for a judge wrong on a
share ``e`` of its calls), and the procedures (meter, relations, health checks) call the
agent about as often as with a noise-free judge. Re-grading (another judge, the same store
in mode ``auto``) replays the agent's recorded answers slot by slot and draws only the
judge.

The judge's own noise is measured on the same calls: the first ``margin`` calls on each
answer are always made (no consensus can be reached before), so they are a fixed-size
sample of the judge's disagreement on identical answers (:mod:`._noise`). With ``margin=1``
the run re-judges a sample of recorded answers once more (:meth:`JudgedAgent.rejudge`).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from .._internal.aio import run_sync
from ..adapters import as_adapter
from ..engine import Engine, EngineConfig, Probe
from ..errors import AgentCallError, DrawStopped, ReplayMiss
from ..observation import NoDecision, Observation, VerdictExtractor
from ._judge import Judge

__all__ = ["JUDGE_NAMESPACE", "JudgeRecord", "JudgedAgent", "passthrough_extractor"]

#: the failure kinds of a call (as opposed to an answer with no label)
_CALL_FAILURES = frozenset(("timeout", "error", "rate_limit", "http_5xx", "http_4xx",
                            "bad_output", "budget", "interrupted"))

#: the fingerprint prefix of every judge probe (the judge's own namespace in the store)
JUDGE_NAMESPACE = "judge:"

#: the agent's answers are free text: every answered draw is usable (the judge decides)
_ANSWER = VerdictExtractor("judged-answer", lambda obs: "answered")


def _passthrough(obs: Observation) -> str | NoDecision | None:
    if obs.no_decision is not None:
        return obs.no_decision
    return obs.verdict


def passthrough_extractor() -> VerdictExtractor:
    """The outer engine's extractor over a :class:`JudgedAgent`: its draws already carry the
    judge's label (or the no-decision saying why there is none)."""
    return VerdictExtractor("judged", _passthrough)


@dataclass
class JudgeRecord:
    """The judge's calls on one recorded answer.

    Attributes:
        prompt_fp: the user's prompt's fingerprint.
        votes: the labels in call order (None: the call failed or gave no label).
        label: the consensus (None: no decision).
        fixed: how many of the first votes are a fixed-size sample (no stop could come
            before them): the noise estimate reads only those, and ``extra``.
        extra: labels of later re-judging (after the run): independent of every stop.
    """

    prompt_fp: str
    votes: tuple[str | None, ...]
    label: str | None
    fixed: int
    extra: list[str | None] = field(default_factory=list)

    @property
    def lead(self) -> int:
        """By how many calls the consensus label led the next one."""
        top = Counter(v for v in self.votes if v is not None).most_common(2)
        return (top[0][1] - (top[1][1] if len(top) > 1 else 0)) if top else 0

    def sample(self) -> list[str]:
        """The labels the noise estimate may read (the fixed votes and the re-judged ones)."""
        return [v for v in (*self.votes[:self.fixed], *self.extra) if v is not None]


class JudgedAgent:
    """The agent graded by ``judge``: an adapter every procedure draws from unchanged.

    Args:
        agent: the agent under test (anything ``as_adapter`` accepts).
        judge: a :class:`~agentverity_props.judge.Judge` (or an agent, wrapped as one).
        engine: how both are called (their store, workers, timeouts, retries); the judge
            gets its own budget (``Judge.budget``) and never stops early on no-decisions.

    Close it (:meth:`close`, or ``with``) to close the two inner engines.
    """

    is_async = True

    def __init__(self, agent: Any, judge: Any, engine: EngineConfig | None = None) -> None:
        from ._judge import as_judge
        self.judge: Judge = as_judge(judge)
        self.inner = as_adapter(agent)
        self.judge_adapter = as_adapter(self.judge.agent)
        cfg = engine or EngineConfig()
        self.identity = f"{self.inner.identity} judged by {self.judge_adapter.identity}"
        self.agent_engine = Engine(self.inner, replace(cfg, extractor=_ANSWER, budget=None))
        try:
            self.judge_engine = Engine(self.judge_adapter, replace(
                cfg, extractor=self.judge.label_extractor(), budget=self.judge.budget,
                fail_fast=None))
        except BaseException:
            self.agent_engine.close()
            raise
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str, str | None], tuple[str | None, str | None]] = {}
        #: (prompt, answer, reference) -> the judge's calls on it, in the order judged
        #: (with ``margin=1``, one entry per grading: ``(prompt, answer, reference, n)``)
        self._records: dict[tuple[Any, ...], JudgeRecord] = {}
        self._seq = itertools.count()
        self._lead: int | None = None
        self._since_bound = 0

    # -- one draw -----------------------------------------------------------------------------

    async def ainvoke(self, prompt: str) -> Observation:
        probe = Probe.make(prompt)
        eng = self.agent_engine
        index = eng.allocate(probe, 1)[0]
        answer = await eng.draw(probe, index)
        if answer.error is not None:
            raise AgentCallError(f"the agent's answer failed: {answer.error.message}",
                                 kind=answer.error.kind, retryable=False)
        label, why = await self.grade(prompt, answer.text, probe_fp=probe.fp)
        raw = {"answer": answer.text, "judge_label": label}
        return Observation(text=answer.text, verdict=label, tools=answer.tools, raw=raw,
                           latency_s=answer.latency_s, usage=answer.usage,
                           no_decision=None if why is None else NoDecision(why))

    async def grade(self, prompt: str, answer: str, *, probe_fp: str | None = None,
                    reference: str | None = None, use_reference: bool = True
                    ) -> tuple[str | None, str | None]:
        """The judge's consensus label on ``answer`` to ``prompt`` (cached per identical
        answer), or (None, why there is none)."""
        ref = reference if reference is not None or not use_reference else \
            self.judge.reference(prompt)
        key = (prompt, answer, ref)
        # one call per draw (margin=1) is never cached: a cached single call would pin its
        # error on every later draw of the same answer (a bias, not noise)
        judge = self.judge
        once = judge.margin == 1
        with self._lock:
            hit = None if once else self._cache.get(key)
            record_key: tuple[Any, ...] = (*key, next(self._seq)) if once else key
        if hit is not None:
            return hit
        jprobe = self.judge_probe(prompt, answer, ref)
        votes: list[str | None] = []
        failures: list[str] = []
        counts: Counter[str] = Counter()
        fixed = judge.fixed_votes
        while True:
            index = self.judge_engine.allocate(jprobe, 1)[0]
            try:
                obs = await self.judge_engine.draw(jprobe, index)
            except ReplayMiss:
                # replaying a recording whose consensus stopped earlier (the adaptive lead
                # read the noise of answers graded in another order): its recorded votes
                if not counts or len(votes) < fixed:
                    raise
                break
            if obs.error is not None:
                failures.append(f"{obs.error.kind}: {obs.error.message}")
                votes.append(None)
            elif obs.no_decision is not None or obs.verdict is None:
                failures.append(obs.no_decision.reason if obs.no_decision else "no label")
                votes.append(None)
            else:
                votes.append(obs.verdict)
                counts[obs.verdict] += 1
            if len(votes) >= judge.max_calls:
                break
            if len(votes) < fixed:
                continue
            top = counts.most_common(2)
            lead = (top[0][1] - (top[1][1] if len(top) > 1 else 0)) if top else 0
            if lead and lead >= self.needed_lead():
                break
            if len(failures) == len(votes):
                break  # the judge gives no label at all on this answer: stop asking
        if not counts:
            if all(f.split(":", 1)[0] in _CALL_FAILURES for f in failures):
                raise AgentCallError(f"the judge failed on every call ({failures[-1]})",
                                     kind="judge_error", retryable=False)
            result: tuple[str | None, str | None] = (
                None, f"the judge gave no label ({failures[-1] if failures else 'no call'})")
        else:
            top = counts.most_common(2)
            if len(top) > 1 and top[0][1] == top[1][1]:
                split = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                result = (None, f"the judge split evenly on this answer ({split} of "
                                f"{len(votes)} calls)")
            else:
                result = (top[0][0], None)
        with self._lock:
            if record_key not in self._records:
                self._records[record_key] = JudgeRecord(probe_fp or Probe.make(prompt).fp,
                                                 tuple(votes), result[0],
                                                 min(fixed, len(votes)))
                self._since_bound += 1
            if not once:
                self._cache[key] = result
        return result

    def needed_lead(self) -> int:
        """The lead one verdict needs now: ``margin``, or (adaptive) the least lead whose
        consensus is wrong with probability at most ``consensus_error`` at the upper bound
        of the judge's error rate measured so far (0.25 before 10 answers)."""
        judge = self.judge
        if judge.margin is not None:
            return judge.margin
        with self._lock:
            stale = self._since_bound >= 10 or self._lead is None
        if stale:
            noise = self.noise()
            e_hi = noise.error_interval[1] if noise.answers >= 10 else 0.25
            from ._noise import lead_for
            lead = lead_for(e_hi, judge.consensus_error)
            with self._lock:
                self._lead, self._since_bound = lead, 0
        return self._lead or 1

    def judge_probe(self, prompt: str, answer: str, reference: str | None) -> Probe:
        """The judge's probe for ``answer``: its prompt, fingerprinted in the judge's own
        namespace (``judge:sha256:...``)."""
        text = self.judge.prompt_for(prompt, answer, reference)
        return Probe(text, JUDGE_NAMESPACE + Probe.make(text).fp)

    @property
    def records(self) -> list[JudgeRecord]:
        """The judge's calls on each answer it graded, in order."""
        with self._lock:
            return list(self._records.values())

    async def rejudge(self, n: int, *, seed: int = 0) -> int:
        """Judge ``n`` recorded answers (a seeded sample) once more, never calling the
        agent: the new label joins the answer's noise sample. Returns the judge calls made."""
        import random
        with self._lock:
            keys = list(self._records)
        rng = random.Random(seed)
        sample = rng.sample(keys, min(n, len(keys)))
        sem = asyncio.Semaphore(max(1, self.judge_engine.config.max_workers))

        async def one(key: tuple[Any, ...]) -> None:
            async with sem:
                jprobe = self.judge_probe(*key[:3])
                index = self.judge_engine.allocate(jprobe, 1)[0]
                try:
                    obs = await self.judge_engine.draw(jprobe, index)
                except (ReplayMiss, DrawStopped):  # not recorded, or no budget: no new label
                    return
                with self._lock:
                    self._records[key].extra.append(obs.verdict if obs.decided else None)

        calls = self.judge_engine.ledger.calls
        await asyncio.gather(*(one(k) for k in sample))
        return self.judge_engine.ledger.calls - calls

    async def measure_noise(self, *, seed: int = 0, rounds: int = 3) -> int:
        """Re-judge recorded answers (up to ``noise_sample`` a round, at most ``rounds``
        rounds) until the judge's error-rate interval is at most ``noise_target`` wide on
        each side. Returns the judge calls made."""
        calls = 0
        for r in range(rounds):
            noise = self.noise()
            lo, hi = noise.error_interval
            if noise.answers and (hi - lo) / 2 <= self.judge.noise_target:
                break
            if not self.judge.noise_sample:
                break
            made = await self.rejudge(self.judge.noise_sample, seed=seed + r)
            calls += made
            if not made:
                break
        return calls

    # -- what it cost, what it measured -----------------------------------------------------

    @property
    def agent_calls(self) -> int:
        """Live calls of the agent under test."""
        return self.agent_engine.ledger.calls

    @property
    def judge_calls(self) -> int:
        """Live calls of the judge."""
        return self.judge_engine.ledger.calls

    def noise(self, *, alpha: float = 0.05) -> Any:
        """The judge's disagreement on identical answers (:class:`JudgeNoise`)."""
        from ._noise import judge_noise
        with self._lock:
            samples = [rec.sample() for rec in self._records.values()]
            leads = [rec.lead for rec in self._records.values() if rec.label is not None]
            lead = self._lead
        margin = self.judge.margin if self.judge.margin is not None else lead
        return judge_noise(samples, labels=self.judge.labels, alpha=alpha, margin=margin,
                           leads=leads)

    def invoke(self, prompt: str) -> Observation:
        return run_sync(self.ainvoke(prompt))

    def close(self) -> None:
        """Close the agent's and the judge's engines (idempotent)."""
        self.agent_engine.close()
        self.judge_engine.close()

    def __enter__(self) -> JudgedAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"JudgedAgent({self.identity})"
