"""``bench``: run every task of a benchmark, stopping each one once its verdict is decided.

A task's question is "does its pass rate reach ``threshold``?" (default 1.0: every run must
pass, agentverdict's rule). Three stopping modes:

``off``
    every task runs ``runs`` times; per-task pass counts equal agentverdict's runner.
``exact`` (default)
    *curtailment*: stop as soon as the remaining runs cannot change the verdict of the full
    ``runs``-run test (pass once ``ceil(threshold * runs)`` runs passed, fail once too many
    failed). The verdict is identical to ``off``; only the calls differ. At threshold 1.0 a
    task fails at its first failing run. The verdict describes the runs made; it claims no
    error rate about the agent's true pass rate.
``sequential``
    :func:`~agentverity_props.decide.pass_rate_rule` (an SPRT on the failure rate) at
    ``alpha / tasks`` per task. Guarantee, at every ``runs`` cap, assuming the runs of a task
    are independent draws with one pass rate ``p``: P(PASS) <= ``alpha / tasks`` when
    ``p <= threshold - margin``, and P(FAIL) <= ``alpha / tasks`` when
    ``p >= threshold + margin``; so over the whole benchmark P(any wrong PASS or FAIL) <=
    ``alpha``. At the cap an exact final test spends the error the SPRT left unspent
    (:func:`~agentverity_props.decide.cap_cuts`: PASS only with so many passes that, with
    the SPRT's own PASS calls,
    P(PASS) stays <= ``alpha / tasks`` at ``threshold - margin``; FAIL likewise); a task
    neither reaches is UNDECIDED (exit 2), never decided on its point estimate.
    :func:`~agentverity_props.decide.runs_to_pass` is the run by which all-passing runs PASS
    (59 at threshold 1.0,
    margin 0.05, alpha 0.05, one task; no PASS is possible earlier at threshold 1.0).

Every agent call goes through the :class:`~agentverity_props.engine.Engine`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._internal.fingerprint import fingerprint, salt_from_env
from .._internal.outcome import StopReason, TaskStatus
from ..decide import TaskRule, bonferroni
from ..errors import BudgetExhausted, Interrupted, InvalidArgument
from ..observation import Observation
from ._evaluators import EvaluatorError
from ._load import Benchmark, Task
from ._results import AttemptRecord, BenchConfig, BenchResult, TaskResult

if TYPE_CHECKING:
    from ..engine import Engine, Probe


__all__ = ["BenchConfig", "arun_benchmark", "attempt", "run_benchmark"]

MAX_OUTPUT_CHARS = 2000


# ------------------------------------------------------------------ one attempt


async def attempt(eng: Engine, task: Task, probe: Probe, index: int, *,
                  include_outputs: bool = False) -> AttemptRecord:
    """One run of ``task`` through ``eng`` at draw ``index``, evaluated.

    Raises:
        BudgetExhausted, Interrupted: no call was made.
    """
    obs: Observation = await eng.draw(probe, index)
    usage = obs.usage
    tokens = None
    cost = None
    if usage is not None:
        tokens = usage.total_tokens
        if tokens is None and (usage.input_tokens is not None or usage.output_tokens is not None):
            tokens = (usage.input_tokens or 0) + (usage.output_tokens or 0)
        cost = usage.cost_usd
    base: dict[str, Any] = {"index": index, "latency_s": obs.latency_s, "tokens": tokens,
                            "cost_usd": cost}
    if obs.error is not None:
        return AttemptRecord(status=TaskStatus.ERROR, output_fp=None, output=None,
                             message=f"agent call failed ({obs.error.kind}): "
                                     f"{obs.error.message}"[:500], ok=False, **base)
    out_fp = fingerprint(obs.text, salt_from_env())
    output = obs.text[:MAX_OUTPUT_CHARS] if include_outputs else None
    try:
        results = [ev.check(obs, include_outputs) for ev in task.evaluators]
    except EvaluatorError as exc:
        return AttemptRecord(status=TaskStatus.ERROR, output_fp=out_fp, output=output,
                             message=str(exc)[:500], ok=True, **base)
    failed = [msg for ok, msg in results if not ok]
    if failed:
        return AttemptRecord(status=TaskStatus.FAIL, output_fp=out_fp, output=output,
                             message="; ".join(failed)[:500], ok=True, **base)
    return AttemptRecord(status=TaskStatus.PASS, output_fp=out_fp, output=output,
                         message=None, ok=True, **base)


# ------------------------------------------------------------------ one task


async def _run_task(eng: Engine, task: Task, probe: Probe, indices: list[int],
                    config: BenchConfig, alpha_task: float,
                    progress: Callable[[int], None] | None) -> TaskResult:
    rule = TaskRule(config.early_stop, task.runs, task.threshold, alpha_task, config.margin)
    attempts: list[AttemptRecord] = []
    decision: tuple[str, str] | None = None
    stop = ""
    for idx in indices:
        try:
            rec = await attempt(eng, task, probe, idx, include_outputs=config.include_outputs)
        except BudgetExhausted:
            stop = StopReason.BUDGET
            break
        except Interrupted:
            stop = StopReason.INTERRUPTED
            break
        attempts.append(rec)
        if progress is not None:
            progress(1)
        decision = rule.update(rec.status == "PASS")
        if decision is not None:
            break
    return TaskResult.build(task, attempts, decision=decision, stop_reason=stop,
                            config=config, include_prompt=config.include_outputs,
                            rule=TaskRule(config.early_stop, task.runs, task.threshold,
                                          alpha_task, config.margin))


# ------------------------------------------------------------------ the whole benchmark


async def arun_benchmark(agent: Any, benchmark: Benchmark, *, config: BenchConfig | None = None,
                         engine: Engine | None = None,
                         progress: Callable[[int], None] | None = None) -> BenchResult:
    """Async core of :func:`run_benchmark`."""
    from ..engine import Engine, Probe

    config = config or BenchConfig()
    if not isinstance(benchmark, Benchmark):
        raise InvalidArgument("benchmark must come from load_benchmark() or parse_benchmark()")
    bench = benchmark.with_runs(config.runs)
    own = engine is None
    eng = engine or Engine(agent, config.engine_config())
    judged0 = _judge_calls(bench)
    try:
        alpha_task = bonferroni(config.alpha, len(bench.tasks))
        # indices reserved up front in task order: record and replay agree even when two
        # tasks share a prompt and run concurrently
        plan = []
        for t in bench.tasks:
            probe = Probe.make(t.prompt)
            plan.append((t, probe, eng.allocate(probe, t.runs)))
        results = await asyncio.gather(*(
            _run_task(eng, t, p, idx, config, alpha_task, progress) for t, p, idx in plan))
        stop = next((r.stop_reason for r in results if r.stop_reason), "")
        if eng.stopping:
            stop = StopReason.INTERRUPTED
        return BenchResult(agent=eng.agent.identity, benchmark=bench, config=config,
                           tasks=tuple(results), ledger=eng.ledger.to_dict(),
                           stop_reason=stop, judge_calls=_judge_calls(bench) - judged0)
    finally:
        if own:
            await eng.aclose()


def run_benchmark(agent: Any, benchmark: Benchmark, *, config: BenchConfig | None = None,
                  progress: Callable[[int], None] | None = None) -> BenchResult:
    """Run ``benchmark`` against ``agent``.

    Args:
        agent: an adapter or a callable ``prompt -> str | dict | Observation``.
        benchmark: from :func:`~agentverity_props.bench.load_benchmark`.
        config: a :class:`BenchConfig`.

    Example:
        >>> from agentverity_props.bench import parse_benchmark, run_benchmark
        >>> b = parse_benchmark('''
        ... version: "1"
        ... name: demo
        ... tasks:
        ...   - {id: hi, name: Hi, prompt: "say hi", evaluation: {type: exact_match, expected: hi}}
        ... ''')
        >>> run_benchmark(lambda p: "hi", b).tasks[0].status
        'PASS'
    """
    from ..engine import run_sync
    return run_sync(arun_benchmark(agent, benchmark, config=config, progress=progress))


def _judge_calls(bench: Benchmark) -> int:
    """The calls the benchmark's judge evaluators' judges have made so far (a judge grades
    each identical answer once, through its own engine: not the agent's calls)."""
    return sum(ev.judge_calls() for t in bench.tasks for ev in t.evaluators
               if ev.judge_calls is not None)
