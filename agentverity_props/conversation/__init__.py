"""Multi-turn properties: conversations as Hypothesis state machines, decided under noise.

``AgentStateMachine`` (or :func:`conversation_machine`) drives user turns drawn from
strategies; after each turn its invariants are decided on the conversation so far, and its
conversation relations (insert an irrelevant turn, repeat one, paraphrase one) on the last
turn's verdict — each by the relation procedure of :mod:`agentverity_props.relations`, with
fresh replays of the conversation through the engine, cached per (conversation, check) so
Hypothesis shrinks to the shortest failing conversation without ever seeing ``Flaky``.

Agents hold conversations through a small session protocol (:class:`Conversational`):
:func:`from_history`, :func:`from_chat`, :func:`from_strands_conversation`; single-call
adapters are refused by :func:`conversational` with a one-line reason; an HTTP agent that
keeps conversations by session id: :func:`from_http_conversation`.
"""

from ._checks import (
    ConversationRelation,
    Invariant,
    TurnContext,
    insert_irrelevant,
    never_before,
    paraphrase_turn,
    repeat_turn,
)
from ._http import from_http_conversation
from ._machine import (
    CONVERSATION_SETTINGS,
    AgentStateMachine,
    conversation_machine,
    machine_config,
    relation_rule,
    run_conversation_test,
)
from ._records import (
    CONVERSATION_SCHEMA,
    RECORDS,
    ConversationConfig,
    ConversationRecord,
    conversation_report,
    records,
)
from ._session import (
    Conversational,
    Session,
    SessionAdapter,
    conversational,
    from_chat,
    from_history,
)
from ._strands import from_strands_conversation

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "CONVERSATION_SETTINGS",
    "AgentStateMachine",
    "ConversationConfig",
    "ConversationRecord",
    "Conversational",
    "Invariant",
    "Session",
    "TurnContext",
    "conversation_machine",
    "conversation_report",
    "from_chat",
    "from_history",
    "from_http_conversation",
    "from_strands_conversation",
    "insert_irrelevant",
    "machine_config",
    "never_before",
    "paraphrase_turn",
    "records",
    "relation_rule",
    "repeat_turn",
    "run_conversation_test",
]
