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
from ._http import HttpConversation, from_http_conversation
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
    DEFAULT_CONVERSATION_BUDGET,
    RECORDS,
    ConversationConfig,
    ConversationCounterexample,
    ConversationRecord,
    TurnEvidence,
    conversation_report,
)
from ._session import (
    ChatConversation,
    Conversational,
    HistoryConversation,
    Session,
    SessionAdapter,
    conversational,
    from_chat,
    from_history,
)
from ._strands import StrandsConversation, from_strands_conversation

__all__ = [
    "CONVERSATION_SCHEMA",
    "CONVERSATION_SETTINGS",
    "DEFAULT_CONVERSATION_BUDGET",
    "RECORDS",
    "AgentStateMachine",
    "ChatConversation",
    "ConversationConfig",
    "ConversationCounterexample",
    "ConversationRecord",
    "ConversationRelation",
    "Conversational",
    "HistoryConversation",
    "HttpConversation",
    "Invariant",
    "Session",
    "SessionAdapter",
    "StrandsConversation",
    "TurnContext",
    "TurnEvidence",
    "conversation_machine",
    "conversation_report",
    "conversational",
    "from_chat",
    "from_history",
    "from_http_conversation",
    "from_strands_conversation",
    "insert_irrelevant",
    "machine_config",
    "never_before",
    "paraphrase_turn",
    "relation_rule",
    "repeat_turn",
    "run_conversation_test",
]
