"""pytest plugin for agentverity-props (registered through the ``pytest11`` entry point).

Kept outside the package and free of heavy imports: collection never pays for numpy, scipy
or Strands. The package is imported only inside hooks that need it.
"""

from __future__ import annotations

from typing import Any

OPT_BUDGET = "--agentverity-budget"
OPT_EPSILON = "--agentverity-epsilon"
OPT_ALPHA = "--agentverity-alpha"
OPT_STORE = "--agentverity-store"
OPT_MODE = "--agentverity-store-mode"
OPT_REPORT = "--agentverity-report"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("agentverity", "agentverity-props: property tests of LLM agents")
    group.addoption(OPT_BUDGET, type=int, default=None,
                    help="Agent-call budget per @agent_property test.")
    group.addoption(OPT_EPSILON, type=float, default=None,
                    help="Meter tolerance for @agent_property tests (default 0.05).")
    group.addoption(OPT_ALPHA, type=float, default=None,
                    help="Family-wise error rate per @agent_property test (default 0.05).")
    group.addoption(OPT_STORE, default=None,
                    help="SQLite record/replay store shared by @agent_property tests.")
    group.addoption(OPT_MODE, choices=["off", "record", "replay", "auto"], default=None,
                    help="Store mode (default auto when a store is given).")
    group.addoption(OPT_REPORT, default=None,
                    help="Write confirmed counterexamples as versioned JSON here.")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "agentverity: an agent property test (added by @agent_property)")
