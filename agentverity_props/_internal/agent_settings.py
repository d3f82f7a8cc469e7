"""Hypothesis settings for agent-priced tests: one policy for ``@agent_property`` and
conversation tests, as registered settings profiles.

Two profiles are registered (once, unless the user registered them first, which is how a
project changes the agent defaults for all its tests):

* ``agentverity``: 25 examples (each costs agent calls), no deadline (agents are slow), no
  ``explain`` phase (it re-runs examples), ``print_blob`` (the reproduce line), and the
  health checks that undecided candidates trip by design (``filter_too_much``,
  ``too_slow``, ``data_too_large``) suppressed;
* ``agentverity-conversation``: the same, with 100 examples: one example is a whole
  conversation, and a bug that needs a particular sequence of turns is rarely met in 25.

The policy: each value of the test's own settings (the user's ``@settings``, else the loaded
profile) that differs from Hypothesis's stock ``default`` profile is the user's choice and
wins; every other value comes from the agent profile. Suppressed health checks are the union
of both. With a record/replay store, the run is also derandomized and reads no example
database unless the user set those (a recording then replays with zero calls).
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["CONVERSATION_PROFILE", "PROFILE", "agent_profile", "agent_settings"]

PROFILE = "agentverity"
CONVERSATION_PROFILE = "agentverity-conversation"

#: the settings the policy fills in from the agent profile where the user set nothing
_POLICY = ("max_examples", "deadline", "phases", "print_blob", "derandomize", "database",
           "stateful_step_count")
_lock = threading.Lock()


def _register() -> None:
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.errors import InvalidArgument

    stock = settings.get_profile("default")
    base: dict[str, Any] = {
        "max_examples": 25, "deadline": None, "print_blob": True,
        "phases": tuple(p for p in stock.phases if p is not Phase.explain),
        "suppress_health_check": (HealthCheck.filter_too_much, HealthCheck.too_slow,
                                  HealthCheck.data_too_large)}
    with _lock:
        for name, extra in ((PROFILE, {}), (CONVERSATION_PROFILE, {"max_examples": 100})):
            try:
                settings.get_profile(name)
            except InvalidArgument:
                # parent: the stock profile, not the loaded one (Hypothesis loads its "ci"
                # profile under CI=true; the agent profile must not inherit it)
                settings.register_profile(name, parent=stock, **{**base, **extra})


def agent_profile(name: str = PROFILE) -> Any:
    """The registered agent profile ``name`` (registered on first use)."""
    from hypothesis import settings

    _register()
    return settings.get_profile(name)


def agent_settings(user: Any | None, *, profile: str = PROFILE, replayable: bool = False,
                   stateful_step_count: int | None = None) -> Any:
    """The settings an agent test runs with: the agent profile under what ``user`` (the
    test's own ``hypothesis.settings``; None: the loaded profile) changed."""
    from hypothesis import settings

    agent = agent_profile(profile)
    stock = settings.get_profile("default")
    if user is None:
        user = settings.get_profile(settings.get_current_profile_name())
    defaults: dict[str, Any] = {name: getattr(agent, name) for name in _POLICY}
    if stateful_step_count is not None:
        defaults["stateful_step_count"] = stateful_step_count
    if replayable:
        defaults.update(derandomize=True, database=None)
    chosen = {name: value for name, value in defaults.items()
              if getattr(user, name) == getattr(stock, name)}
    if "database" in chosen and not replayable:
        chosen.pop("database")  # the loaded default database, as the user would get it
    chosen["suppress_health_check"] = sorted(
        {*user.suppress_health_check, *agent.suppress_health_check}, key=lambda h: h.name)
    return settings(user, **chosen)
