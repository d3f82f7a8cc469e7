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
    "CompareConfig": "._compare_results", "CompareResult": "._compare",
    "acompare_agents": "._compare", "compare_agents": "._compare",
    "Benchmark": "._load", "load_benchmark": "._load",
    "parse_benchmark": "._load",
    "clopper_pearson": "._metrics", "pass_at_k": "._metrics", "pass_hat_k": "._metrics",
    "wilson": "._metrics",
    "json_schema": "._model",
    # the comparison's paired statistics live in decide/ (exported here under their names)
    "PooledSign": "..decide", "difference_interval": "..decide", "runs_needed": "..decide",
    "sign_log_e": "..decide",
    "SCHEMA": "._results", "BenchResult": "._results",
    "BenchConfig": "._results", "arun_benchmark": "._run", "run_benchmark": "._run",
    "bench_moves": "._moves",
}

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "BenchConfig",
    "BenchResult",
    "Benchmark",
    "CompareConfig",
    "CompareResult",
    "compare_agents",
    "load_benchmark",
    "run_benchmark",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())


if TYPE_CHECKING:  # pragma: no cover
    from ..decide import PooledSign, difference_interval, runs_needed, sign_log_e
    from ._compare import CompareResult, acompare_agents, compare_agents
    from ._compare_results import CompareConfig
    from ._load import Benchmark, load_benchmark, parse_benchmark
    from ._metrics import clopper_pearson, pass_at_k, pass_hat_k, wilson
    from ._model import EVALUATOR_TYPES, BenchmarkFile, TaskSpec, json_schema
    from ._moves import bench_moves
    from ._results import SCHEMA, AttemptRecord, BenchConfig, BenchResult, TaskResult, TaskStats
    from ._run import arun_benchmark, run_benchmark
