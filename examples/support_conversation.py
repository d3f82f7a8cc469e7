"""Support agent as a conversation, with a planted multi-turn bug (see docs/conversations.md).

The agent takes the message history (``from_history``); with ``bug=True`` a refund requested
two or more turns after the order number skips ``lookup_order``. ``noise`` is the per-turn
probability of another (benign) action, from the agent's own ``random.Random``.

References:
    agent        conversational agent: 15% noise, bug planted (seed 0)
    fixed_agent  the same agent without the bug
    TURNS        user turns, simplest first; FILLERS, PARAPHRASES for the relations
"""

from agentverity_props.conversation import from_history
from agentverity_props.examples.support_conversation import (
    FILLERS,
    PARAPHRASES,
    TURNS,
    noisy_support,
    support_conversation,
)

agent = from_history(noisy_support(seed=0, bug=True), identity="examples.support_conversation")
fixed_agent = from_history(noisy_support(seed=0, bug=False),
                           identity="examples.support_conversation.fixed")

__all__ = ["FILLERS", "PARAPHRASES", "TURNS", "agent", "fixed_agent", "noisy_support",
           "support_conversation"]
