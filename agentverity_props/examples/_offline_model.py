"""A rule-driven, offline :class:`strands.models.Model` for examples and tests.

The model never talks to a network. Each turn it asks a *policy* what to do next:

    policy(messages, tool_specs, rng) -> Action

and streams the answer in exactly the event shapes a real provider emits, so the real
Strands event loop runs the real ``@tool`` functions, records ``toolUse``/``toolResult``
blocks in ``agent.messages``, accumulates usage and (when asked) forces structured output.

Randomness comes only from the ``random.Random`` the model is given: Hypothesis reseeds the
global ``random`` module for every example, so a fake relying on it would be secretly
deterministic. Share one ``Random`` between the fresh models a factory builds, or every call
would replay the same draw.

Example:
    >>> import random
    >>> from strands import Agent
    >>> def policy(messages, tool_specs, rng):
    ...     return final("VERDICT: allow")
    >>> agent = Agent(model=OfflineModel(policy, rng=random.Random(0)), callback_handler=None)
    >>> str(agent("hello")).strip()
    'VERDICT: allow'
"""

from __future__ import annotations

import itertools
import json
import random
import re
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel
from strands.models import Model

__all__ = [
    "Action",
    "Final",
    "OfflineModel",
    "Policy",
    "ToolUse",
    "call_tool",
    "final",
    "first_user_text",
    "last_assistant_text",
    "tool_results",
]

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class ToolUse:
    """Ask the agent to run the tool ``name`` with ``arguments`` (stop reason ``tool_use``)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Final:
    """Answer with ``text`` and end the turn (stop reason ``end_turn``)."""

    text: str


Action = ToolUse | Final
Policy = Callable[[Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any]], random.Random], Action]


def call_tool(name: str, **arguments: Any) -> ToolUse:
    """Action: call tool ``name`` with keyword ``arguments``."""
    return ToolUse(name, dict(arguments))


def final(text: str) -> Final:
    """Action: final answer ``text``."""
    return Final(text)


# ------------------------------------------------------------------ message helpers


def first_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the first user message: the prompt the agent was invoked with."""
    for message in messages:
        if message.get("role") == "user":
            texts = [b["text"] for b in message.get("content", ()) if "text" in b]
            if texts:
                return "".join(texts)
    return ""


def last_assistant_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the most recent assistant message that has any text."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            texts = [b["text"] for b in message.get("content", ()) if "text" in b]
            if texts:
                return "".join(texts)
    return ""


def tool_results(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, str]]:
    """``(tool name, status, result text)`` for every finished tool call so far, in order."""
    names: dict[str, str] = {}
    out: list[tuple[str, str, str]] = []
    for message in messages:
        for block in message.get("content", ()):
            if "toolUse" in block:
                names[block["toolUse"]["toolUseId"]] = block["toolUse"]["name"]
            elif "toolResult" in block:
                res = block["toolResult"]
                parts = []
                for item in res.get("content", ()):
                    if "text" in item:
                        parts.append(item["text"])
                    elif "json" in item:
                        parts.append(json.dumps(item["json"]))
                out.append((names.get(res["toolUseId"], "?"), res.get("status", "success"),
                            "".join(parts)))
    return out


def _json_object_in(text: str) -> dict[str, Any] | None:
    """The first JSON object embedded in ``text`` (``None`` if there is none)."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _count(text: str) -> int:
    # "Tokens" are words: good enough to make usage non-zero, monotone in length and exact.
    return len(text.split())


def _message_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    total = 0
    for message in messages:
        for block in message.get("content", ()):
            if "text" in block:
                total += _count(block["text"])
            elif "toolUse" in block:
                total += 1 + _count(json.dumps(block["toolUse"].get("input", {})))
            elif "toolResult" in block:
                total += sum(_count(item.get("text", "")) for item in block["toolResult"].get(
                    "content", ()))
    return total


# ------------------------------------------------------------------ the model


class OfflineModel(Model):
    """A Strands model that follows a policy instead of calling a provider.

    Args:
        policy: ``policy(messages, tool_specs, rng) -> ToolUse | Final``; called once per
            model turn with the conversation so far and the tools offered.
        rng: the model's random source (shared between fresh models on purpose).
        seed: used to build ``random.Random(seed)`` when ``rng`` is not given.
        model_id: reported in the config and in telemetry.

    When Strands forces structured output (the policy ended its turn with text while a
    structured output model was requested), the model calls the forced tool with the first
    JSON object found in its own last answer; if there is none it falls back to
    ``{"verdict": <word after "VERDICT:">}`` and then to the policy.
    """

    def __init__(self, policy: Policy, *, rng: random.Random | None = None, seed: int = 0,
                 model_id: str = "offline-rules") -> None:
        if not callable(policy):
            raise TypeError(f"policy must be callable, got {type(policy).__name__}")
        self.policy = policy
        self.rng = rng if rng is not None else random.Random(seed)
        self.config: dict[str, Any] = {"model_id": model_id, "context_window_limit": 128_000}
        # ids come from a counter, not the rng, so tool calls do not shift the random stream
        self._ids = itertools.count(1)

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return dict(self.config)

    def _decide(self, messages: Sequence[Mapping[str, Any]],
                tool_specs: Sequence[Mapping[str, Any]], tool_choice: Any) -> Action:
        forced = None
        if isinstance(tool_choice, Mapping) and "tool" in tool_choice:
            forced = tool_choice["tool"].get("name")
        elif isinstance(tool_choice, Mapping) and "any" in tool_choice and len(tool_specs) == 1:
            forced = tool_specs[0]["name"]
        if forced is not None:
            previous = last_assistant_text(messages)
            args = _json_object_in(previous)
            if args is None:
                m = re.search(r"VERDICT:\s*([A-Za-z_]+)", previous)
                args = {"verdict": m.group(1)} if m else None
            if args is not None:
                return ToolUse(forced, args)
        action = self.policy(messages, tool_specs, self.rng)
        if not isinstance(action, (ToolUse, Final)):
            raise TypeError(f"policy returned {type(action).__name__}; return call_tool(...) "
                            "or final(...)")
        return action

    async def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> AsyncGenerator[Any, None]:
        """Stream one model turn in Bedrock/OpenAI event shapes."""
        t0 = time.perf_counter()
        action = self._decide(messages, tool_specs or [], tool_choice)
        yield {"messageStart": {"role": "assistant"}}
        if isinstance(action, ToolUse):
            payload = json.dumps(dict(action.arguments))
            yield {"contentBlockStart": {"start": {"toolUse": {
                "name": action.name, "toolUseId": f"tooluse_{next(self._ids)}"}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": payload}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
            out_tokens = 1 + _count(payload)
        else:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": action.text}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
            out_tokens = _count(action.text)
        in_tokens = _message_tokens(messages) + (_count(system_prompt) if system_prompt else 0)
        latency_ms = max(1, round((time.perf_counter() - t0) * 1000))
        yield {"metadata": {
            "usage": {"inputTokens": in_tokens, "outputTokens": out_tokens,
                      "totalTokens": in_tokens + out_tokens},
            "metrics": {"latencyMs": latency_ms},
        }}

    async def structured_output(
        self, output_model: type[T], prompt: Any, system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Parse the policy's final answer (a JSON object) into ``output_model``."""
        action = self.policy(prompt, [], self.rng)
        text = action.text if isinstance(action, Final) else json.dumps(dict(action.arguments))
        data = _json_object_in(text)
        if data is None:
            raise ValueError(f"offline policy answered {text[:60]!r}, not a JSON object")
        yield {"output": output_model(**data)}
