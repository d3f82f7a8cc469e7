"""Example: a content-moderation gate, a real Strands agent on the offline model.

Every call runs the real Strands event loop: the model scores the prompt (see
:mod:`agentverity_props.examples._risk`), calls a real ``@tool`` (``flag_content`` when the
prompt hits the lexicon hard enough, ``classify_risk`` otherwise), reads the tool result and
answers ``{"verdict": "allow"|"review"|"block"}``.

Behaviour, by design:

* everyday prompts (risk far from both thresholds) get the same verdict on every draw;
* prompts near a threshold flip between two labels, drawn from the model's own
  ``random.Random`` (``noise=0`` makes the gate fully deterministic);
* ``planted_bug=True`` blocks any prompt over 40 characters containing ``URGENT`` (upper
  case only); the minimal violating input is a 41-character string containing ``URGENT``.

Module-level references for the CLI:

* ``make_agent`` — zero-argument factory returning a fresh ``strands.Agent`` (seed 1234,
  noise 0.15);
* ``agent`` — a ready adapter (``from_strands(make_agent, structured_output_model=
  ModerationVerdict)``), so the verdict is the structured ``verdict`` field;
* ``make_buggy_agent`` / ``buggy_agent`` — the same with the planted bug.

Example:
    >>> adapter = moderation_adapter(seed=0, noise=0.0)
    >>> adapter.invoke("Please share a pancake recipe").verdict
    'allow'
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel
from strands import Agent, tool

from ..adapters import StrandsAdapter, from_strands
from . import _risk
from ._offline_model import Action, OfflineModel, Policy, call_tool, final, first_user_text

__all__ = [
    "SYSTEM_PROMPT",
    "ModerationVerdict",
    "agent",
    "buggy_agent",
    "build_moderation_agent",
    "classify_risk",
    "flag_content",
    "make_agent",
    "make_buggy_agent",
    "moderation_adapter",
    "moderation_factory",
    "moderation_policy",
]

SYSTEM_PROMPT = ("You are a content-moderation gate. Score the user's text, call a tool, "
                 'then answer with {"verdict": "allow" | "review" | "block"}.')


class ModerationVerdict(BaseModel):
    """Structured answer of the moderation gate."""

    verdict: Literal["allow", "review", "block"]


@tool
def classify_risk(score: float) -> str:
    """Map a risk score to a band.

    Args:
        score: risk score computed from the text (0 = harmless).
    """
    if score >= _risk.BLOCK_AT:
        return "high"
    return "medium" if score >= _risk.REVIEW_AT else "low"


@tool
def flag_content(category: str) -> str:
    """Flag the text under a policy category.

    Args:
        category: one of violence, weapons, self_harm, scam, hacking, drugs.
    """
    categories = {c for c, _ in _risk.LEXICON.values()}
    if category not in categories:
        raise ValueError(f"unknown category {category!r}")
    return f"flagged:{category}"


def moderation_policy(*, noise: float = 0.15, planted_bug: bool = False) -> Policy:
    """The gate's rules, as an :class:`OfflineModel` policy."""

    def policy(messages: Sequence[Mapping[str, Any]], tool_specs: Sequence[Mapping[str, Any]],
               rng: random.Random) -> Action:
        prompt = first_user_text(messages)
        r = _risk.risk(prompt)
        offered = {spec["name"] for spec in tool_specs}
        called = any("toolResult" in b for m in messages for b in m.get("content", ()))
        if not called:
            if r.category is not None and r.score >= 1.0 and "flag_content" in offered:
                return call_tool("flag_content", category=r.category)
            if "classify_risk" in offered:
                return call_tool("classify_risk", score=r.score)
        verdict = _risk.verdict_for(r.score, noise=noise, rng=rng)
        if planted_bug and _risk.planted_trigger(prompt):
            verdict = "block"  # the planted bug: upper-case URGENT in a long prompt
        return final(json.dumps({"verdict": verdict}))

    return policy


def build_moderation_agent(*, rng: random.Random, noise: float = 0.15,
                           planted_bug: bool = False) -> Agent:
    """A fresh moderation ``Agent`` drawing from ``rng``."""
    model = OfflineModel(moderation_policy(noise=noise, planted_bug=planted_bug), rng=rng,
                         model_id="offline-moderation")
    return Agent(model=model, tools=[classify_risk, flag_content], system_prompt=SYSTEM_PROMPT,
                 callback_handler=None, retry_strategy=None, name="moderation-gate")


def moderation_factory(*, seed: int = 0, noise: float = 0.15,
                       planted_bug: bool = False) -> Callable[[], Agent]:
    """A zero-argument factory of fresh moderation agents sharing one ``Random(seed)``.

    Sharing the generator is what makes repeated calls independent draws; a new
    ``Random(seed)`` per agent would replay the same draw every time.
    """
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    rng = random.Random(seed)

    def make_agent() -> Agent:
        return build_moderation_agent(rng=rng, noise=noise, planted_bug=planted_bug)

    return make_agent


def moderation_adapter(*, seed: int = 0, noise: float = 0.15, planted_bug: bool = False,
                       structured: bool = True, identity: str | None = None) -> StrandsAdapter:
    """An adapter over fresh moderation agents (structured ``verdict`` unless disabled)."""
    name = identity or (f"strands:examples.moderation(seed={seed},noise={noise},"
                        f"planted_bug={planted_bug},structured={structured})")
    return from_strands(moderation_factory(seed=seed, noise=noise, planted_bug=planted_bug),
                        identity=name,
                        structured_output_model=ModerationVerdict if structured else None)


make_agent = moderation_factory(seed=1234)
agent = from_strands(make_agent, structured_output_model=ModerationVerdict,
                     identity="strands:examples.moderation_gate:agent")
make_buggy_agent = moderation_factory(seed=1234, planted_bug=True)
buggy_agent = from_strands(make_buggy_agent, structured_output_model=ModerationVerdict,
                           identity="strands:examples.moderation_gate:buggy_agent")
