"""agentverity-props: property-based testing for non-deterministic LLM agents.

Measure first, then test:

- :func:`measure` — is the agent's categorical verdict stable enough to test against?
- :func:`run` — meter, blindness health check and noise-calibrated metamorphic relations.
- :func:`agent_property` — relations as Hypothesis properties, shrunk to minimal
  counterexamples.

Names are imported lazily (PEP 562) so ``import agentverity_props`` stays light: numpy,
scipy, Hypothesis and every optional integration load only when first used.
"""

from __future__ import annotations

from ._internal.lazy import lazy_exports, stub_exports
from ._internal.version import __version__

#: name -> the module defining it, read from ``__init__.pyi``: the one list of public names
#: (type checkers read the same stub; docs/api.md describes each name)
_EXPORTS: dict[str, str] = stub_exports(__file__)

__all__ = ["__version__", *sorted(_EXPORTS)]  # noqa: PLE0604 (strings: the stub's names)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())
