"""YAML benchmarks and paired agent comparison.

- :func:`load_benchmark` reads a benchmark file (agentverdict's format is a subset);
- :func:`run_benchmark` runs it against one agent, stopping each task once its verdict is
  decided, with reliability intervals, pass@k / pass^k, consistency, latency and cost;
- :func:`compare_agents` runs two or more agents on the same tasks in the same order and
  decides "A better / B better / inconclusive" per metric with anytime-valid paired tests.

Example:
    >>> from agentverity_props.bench import parse_benchmark, run_benchmark
    >>> b = parse_benchmark('''
    ... version: "1"
    ... name: demo
    ... tasks:
    ...   - {id: add, name: Add, prompt: "2+2?", evaluation: {type: exact_match, expected: "4"}}
    ... ''')
    >>> int(run_benchmark(lambda p: "4", b).exit_code)
    0
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._internal.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "METRICS": "._compare", "CompareConfig": "._compare_results", "CompareResult": "._compare",
    "acompare_agents": "._compare", "compare_agents": "._compare",
    "CompiledEvaluator": "._evaluators", "EvaluatorError": "._evaluators",
    "Benchmark": "._load", "Task": "._load", "load_benchmark": "._load",
    "parse_benchmark": "._load",
    "clopper_pearson": "._metrics", "pass_at_k": "._metrics", "pass_hat_k": "._metrics",
    "wilson": "._metrics",
    "EVALUATOR_TYPES": "._model", "BenchmarkFile": "._model", "TaskSpec": "._model",
    "json_schema": "._model",
    # the comparison's paired statistics live in decide/ (exported here under their names)
    "PooledSign": "..decide", "difference_interval": "..decide", "runs_needed": "..decide",
    "sign_log_e": "..decide",
    "SCHEMA": "._results", "AttemptRecord": "._results", "BenchResult": "._results",
    "TaskResult": "._results", "TaskStats": "._results",
    "BenchConfig": "._results", "arun_benchmark": "._run", "run_benchmark": "._run",
    "bench_moves": "._moves",
}

__all__ = [
    "EVALUATOR_TYPES",
    "METRICS",
    "SCHEMA",
    "AttemptRecord",
    "BenchConfig",
    "BenchResult",
    "Benchmark",
    "BenchmarkFile",
    "CompareConfig",
    "CompareResult",
    "CompiledEvaluator",
    "EvaluatorError",
    "PooledSign",
    "Task",
    "TaskResult",
    "TaskSpec",
    "TaskStats",
    "acompare_agents",
    "arun_benchmark",
    "bench_moves",
    "clopper_pearson",
    "compare_agents",
    "difference_interval",
    "json_schema",
    "load_benchmark",
    "parse_benchmark",
    "pass_at_k",
    "pass_hat_k",
    "run_benchmark",
    "runs_needed",
    "sign_log_e",
    "wilson",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())


if TYPE_CHECKING:  # pragma: no cover
    from ..decide import PooledSign, difference_interval, runs_needed, sign_log_e
    from ._compare import METRICS, CompareResult, acompare_agents, compare_agents
    from ._compare_results import CompareConfig
    from ._evaluators import CompiledEvaluator, EvaluatorError
    from ._load import Benchmark, Task, load_benchmark, parse_benchmark
    from ._metrics import clopper_pearson, pass_at_k, pass_hat_k, wilson
    from ._model import EVALUATOR_TYPES, BenchmarkFile, TaskSpec, json_schema
    from ._moves import bench_moves
    from ._results import SCHEMA, AttemptRecord, BenchConfig, BenchResult, TaskResult, TaskStats
    from ._run import arun_benchmark, run_benchmark
