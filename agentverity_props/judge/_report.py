"""The hooks ``run`` uses: wrap the agent with its judge, calibrate, and the report's
``judge`` section (its noise beside the agent's, its calls as their own phase)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .._internal.settings import setting
from ..engine import EngineConfig
from ..errors import BadInput
from ._judge import as_judge
from ._judged import JudgedAgent, passthrough_extractor

__all__ = ["calibrate_or_refuse", "judge_section", "prepare_judged"]


def prepare_judged(agent: Any, judge: Any, engine: EngineConfig,
                   labels: Any = None) -> tuple[JudgedAgent, EngineConfig]:
    """The judged agent (the agent's and the judge's engines built from ``engine``: their
    store, workers, timeouts and retries) and the outer engine's config (no store of its
    own — the inner engines record and replay —, no timeout or retries — theirs hold —,
    the judge's labels read through)."""
    if isinstance(agent, JudgedAgent):
        judged = agent
    else:
        j = as_judge(judge, labels)
        if j.extractor is None and engine.extractor.config_id != "default":
            j = replace(j, extractor=engine.extractor)  # the user's extractor reads the judge
        judged = JudgedAgent(agent, j, engine)
    outer = replace(engine, store_mode="off", store_path=None,
                    extractor=passthrough_extractor(), timeout_s=None, retries=0)
    return judged, outer


async def calibrate_or_refuse(judged: JudgedAgent) -> Any:
    """Calibrate on the judge's gold file (None without one); below its agreement a judge
    whose action is ``refuse`` stops the run with :class:`BadInput` (exit 2), one line."""
    j = judged.judge
    if j.gold is None:
        return None
    from ._gold import acalibrate, load_gold
    cal = await acalibrate(judged, load_gold(j.gold), min_agreement=j.min_agreement,
                           action=j.on_low_agreement, source=str(j.gold))
    if not cal.passed and cal.action == "refuse":
        raise BadInput(cal.statement(),
                       "improve the judge or its prompt, or accept it with "
                       f"{setting('judge_min_agreement')} or "
                       f"{setting('judge_low_agreement')}")
    return cal


def judge_section(judged: JudgedAgent, *, agent_noise: float | None, calibration: Any,
                  rejudge_calls: int, alpha: float) -> dict[str, Any]:
    """The report's ``judge`` part: who judged, with which labels and consensus, both noises
    and which dominates, the calibration, and the judge's calls, tokens and money (its own
    phase: ``calls`` of the run counts draws of the judged agent)."""
    noise = judged.noise(alpha=alpha)
    led = judged.judge_engine.ledger.to_dict()
    agent_led = judged.agent_engine.ledger.to_dict()
    j = judged.judge
    return {
        "judge": judged.judge_adapter.identity,
        "labels": list(j.labels) if j.labels else None,
        "margin": j.margin if j.margin is not None else noise.margin,
        "adaptive_margin": j.margin is None,
        "consensus_error_target": j.consensus_error if j.margin is None else None,
        "min_votes": j.fixed_votes, "max_calls": j.max_calls,
        "answers_judged": len(judged.records),
        "noise": noise.to_dict(),
        "agent_noise": agent_noise,
        "dominant": noise.dominant(agent_noise) if noise.measured else None,
        "statement": noise.statement(agent_noise),
        "calibration": None if calibration is None else calibration.to_dict(),
        "calls": {"agent": agent_led["calls"], "agent_replayed": agent_led["replayed"],
                  "judge": led["calls"], "judge_replayed": led["replayed"],
                  "rejudge": rejudge_calls},
        "tokens": {"input_tokens": led["input_tokens"], "output_tokens": led["output_tokens"],
                   "total_tokens": led["total_tokens"], "cost_usd": led["cost_usd"]},
    }
