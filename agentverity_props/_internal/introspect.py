"""Names and types of user objects, found without importing the libraries they come from."""

from __future__ import annotations

from typing import Any

__all__ = ["has_class", "qualname"]


def qualname(fn: Any) -> str:
    """``module.Qualified.name`` of a function, class or callable object (for messages and
    identities)."""
    mod = getattr(fn, "__module__", None) or "?"
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{mod}.{name}"


def has_class(obj: Any, name: str, package: str) -> bool:
    """True when ``obj`` is an instance (not a class) of a class called ``name`` defined in
    ``package`` or one of its submodules, or of a subclass of one: how an adapter recognises
    a framework's object without importing the framework.

    >>> class Agent: ...
    >>> Agent.__module__ = "strands.agent.agent"
    >>> has_class(Agent(), "Agent", "strands"), has_class(Agent, "Agent", "strands")
    (True, False)
    >>> has_class(Agent(), "Agent", "strand")
    False
    """
    if isinstance(obj, type):
        return False
    return any(cls.__name__ == name and (cls.__module__ == package
                                         or cls.__module__.startswith(package + "."))
               for cls in type(obj).__mro__)
