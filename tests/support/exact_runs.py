"""The whole relation procedure of ``run`` on agents whose follow-up sits exactly at the
tolerance (``tests/stats/test_relation_run_exact*.py``): every source is 72/28 and its
upper-cased follow-up a coin flip (forward excess disagreement exactly the tolerance), or the
reverse. Each agent has its own generator."""

from __future__ import annotations

import math
import random

from agentverity_props._internal.aio import run_sync
from agentverity_props.engine import Engine, EngineConfig, EvidencePool, Probe
from agentverity_props.relations import Relation
from agentverity_props.runner._run import run_relations

TOL, ALPHA, BETA = 0.1, 0.05, 0.05
#: P(block) of a source whose shift to a coin flip has excess disagreement exactly TOL.
NOISY_P = 0.5 - math.sqrt(TOL / 2)
CASE = Relation("case", "invariant", str.upper)
#: Calls per run: a HOLDS at the tolerance is a lucky early stop, and a run that reaches the
#: budget is incomplete (never HOLDS), so the cap changes no error, only the test's time.
BUDGET = 2000
RUNS = 100


def one_run(n_inputs: int, src_p: float, fu_p: float, seed: int) -> str:
    """One ``run_relations`` of the case relation: every source P(block) = ``src_p``, its
    upper-cased follow-up ``fu_p``; the relation's status."""
    rng = random.Random(f"exact:{seed}")

    def agent(prompt: str) -> str:
        p = fu_p if prompt.isupper() else src_p
        return "block" if rng.random() < p else "allow"

    inputs = [f"question number {i}" for i in range(n_inputs)]

    async def main() -> str:
        eng = Engine(agent, EngineConfig(budget=BUDGET, max_workers=1))
        try:
            res = await run_relations(eng, [Probe.make(t) for t in inputs], EvidencePool(),
                                      [CASE], alpha=ALPHA / 2, holds_error=BETA, seed=seed,
                                      tolerance=TOL)
        finally:
            await eng.aclose()
        return str(res[0].status)

    return run_sync(main())


def wrong_holds(n_inputs: int, reverse: bool) -> int:
    """HOLDS among ``RUNS`` runs at the tolerance (forward: the follow-up is the coin flip;
    reverse: the source is)."""
    src_p, fu_p = (0.5, NOISY_P) if reverse else (NOISY_P, 0.5)
    return sum(one_run(n_inputs, src_p, fu_p, 1000 * n_inputs + s + 500 * reverse) == "HOLDS"
               for s in range(RUNS))
