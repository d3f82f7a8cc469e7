"""The offline, rule-driven Strands model the example agents run on.

Write your own policy to build an offline agent for tests:

    import random
    from strands import Agent, tool
    from examples.offline_model import OfflineModel, call_tool, final, tool_results

    @tool
    def lookup(term: str) -> str:
        '''Look a term up.'''
        return term.upper()

    def policy(messages, tool_specs, rng):
        if not tool_results(messages):          # first turn: call a tool
            return call_tool("lookup", term="hello")
        return final("done")                    # after the tool result: answer

    rng = random.Random(0)                      # shared by every agent the factory builds
    make_agent = lambda: Agent(model=OfflineModel(policy, rng=rng), tools=[lookup],
                               callback_handler=None)
"""

from agentverity_props.examples._offline_model import (
    Action,
    Final,
    OfflineModel,
    Policy,
    ToolUse,
    call_tool,
    final,
    first_user_text,
    last_assistant_text,
    tool_results,
)

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
