"""Offline example agents, shipped with the package so ``agentverity-props demo`` works anywhere.

* :mod:`.moderation` — content-moderation gate, a real Strands agent (extra ``strands``);
* :mod:`.support` — support agent routing requests to four tools (extra ``strands``);
* :mod:`.plain` — the moderation gate as a plain function (no extra needed);
* :mod:`.judged_qa` — a free-text QA agent and a simulated judge (docs/judges.md; no extra);
* :mod:`._offline_model` — the rule-driven Strands ``Model`` both agents run on.

Importing this package imports nothing optional; the Strands examples import Strands when
their own module is imported.
"""

from __future__ import annotations

from importlib import resources

__all__ = ["moderation_inputs", "support_inputs"]


def _lines(name: str) -> list[str]:
    text = resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def moderation_inputs() -> list[str]:
    """The example probe prompts for the moderation gate (everyday text plus a few borderline)."""
    return _lines("moderation.txt")


def support_inputs() -> list[str]:
    """The example probe requests for the support agent."""
    return _lines("support.txt")
