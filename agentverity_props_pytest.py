"""pytest plugin for agentverity-props (registered through the ``pytest11`` entry point).

Kept outside the package and free of heavy imports: collection never pays for numpy, scipy
or Strands. The package is imported only inside hooks that need it, and only when an
``@agent_property`` test actually ran.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

OPT_BUDGET = "--agentverity-budget"
OPT_EPSILON = "--agentverity-epsilon"
OPT_ALPHA = "--agentverity-alpha"
OPT_TOLERANCE = "--agentverity-tolerance"
OPT_STORE = "--agentverity-store"
OPT_MODE = "--agentverity-store-mode"
OPT_REPORT = "--agentverity-report"
OPT_CONV_REPORT = "--agentverity-conversation-report"
OPT_CONV_INPUTS = "--agentverity-conversation-inputs"

#: values read by ``agentverity_props.property._decorator`` at test time (None = not given)
OPTIONS: dict[str, Any] = {}

_PROPERTY_MODULE = "agentverity_props.property._records"
_CONVERSATION_MODULE = "agentverity_props.conversation._records"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("agentverity", "agentverity-props: property tests of LLM agents")
    group.addoption(OPT_BUDGET, type=int, default=None, metavar="N",
                    help="Agent-call budget per @agent_property test.")
    group.addoption(OPT_EPSILON, type=float, default=None, metavar="EPS",
                    help="Noise level above which an agent is reported unstable.")
    group.addoption(OPT_ALPHA, type=float, default=None, metavar="ALPHA",
                    help="Family-wise error rate per @agent_property test (default 0.05).")
    group.addoption(OPT_TOLERANCE, type=float, default=None, metavar="DELTA",
                    help="Largest pooled relation effect (excess share of verdicts changed "
                         "over the generated examples) a pass allows (default 0.1).")
    group.addoption(OPT_STORE, default=None, metavar="PATH",
                    help="SQLite record/replay store shared by @agent_property tests.")
    group.addoption(OPT_MODE, choices=["off", "record", "replay", "auto"], default=None,
                    help="Store mode (default auto when a store is given).")
    group.addoption(OPT_REPORT, default=None, metavar="PATH",
                    help="Write every @agent_property outcome (with minimal counterexamples) "
                         "as versioned JSON here.")
    group.addoption(OPT_CONV_REPORT, default=None, metavar="PATH",
                    help="Write every conversation test (AgentStateMachine) with its minimal "
                         "conversations as versioned JSON here (user turns as fingerprints).")
    group.addoption(OPT_CONV_INPUTS, action="store_true", default=False,
                    help="Keep the user turns' text in the conversation report file.")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "agentverity: an agent property test (added by @agent_property)")
    budget, epsilon, alpha = (config.getoption(OPT_BUDGET), config.getoption(OPT_EPSILON),
                              config.getoption(OPT_ALPHA))
    # refused here, once, as a usage error (exit 4), not as a traceback inside every test
    if budget is not None and budget < 2:
        raise pytest.UsageError(f"{OPT_BUDGET}={budget} must be >= 2 (agent calls per test)")
    if epsilon is not None and not 0.0 < epsilon < 0.5:
        raise pytest.UsageError(f"{OPT_EPSILON}={epsilon} must be in (0, 0.5)")
    if alpha is not None and not 0.0 < alpha < 0.5:
        raise pytest.UsageError(f"{OPT_ALPHA}={alpha} must be in (0, 0.5), e.g. 0.05")
    tolerance = config.getoption(OPT_TOLERANCE)
    if tolerance is not None and not 0.0 < tolerance < 1.0:
        raise pytest.UsageError(f"{OPT_TOLERANCE}={tolerance} must be in (0, 1), e.g. 0.1")
    OPTIONS.clear()
    OPTIONS.update(budget=budget, epsilon=epsilon, alpha=alpha, tolerance=tolerance,
                   store=config.getoption(OPT_STORE), store_mode=config.getoption(OPT_MODE))


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        fn = getattr(item, "function", None)
        if getattr(fn, "_agentverity_property", False):
            item.add_marker("agentverity")


def _records() -> list[Any]:
    mod = sys.modules.get(_PROPERTY_MODULE)
    return list(getattr(mod, "RECORDS", ())) if mod else []


@pytest.fixture
def agentverity_ledger() -> Any:
    """The records of the @agent_property tests run so far in this session (calls, findings).

    Example:
        def test_budget(agentverity_ledger):
            assert sum(r.calls for r in agentverity_ledger.records()) < 10_000
    """
    class _Ledger:
        @staticmethod
        def records() -> list[Any]:
            return _records()

        @staticmethod
        def total_calls() -> int:
            return sum(r.calls for r in _records())

    return _Ledger()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Any:
    item.stash[_N_BEFORE] = len(_records())
    yield


_N_BEFORE = pytest.StashKey[int]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    if call.when != "call" or not getattr(getattr(item, "function", None),
                                          "_agentverity_property", False):
        return
    new = _records()[item.stash.get(_N_BEFORE, 0):]
    report = outcome.get_result()
    for rec in new:
        report.user_properties.append(("agentverity_calls", rec.calls))
        report.user_properties.append(("agentverity_status", rec.status))
        if rec.minimal is not None:
            report.sections.append(("agentverity-props " + (
                "smallest counterexample found" if rec.budget_exhausted
                else "minimal counterexample"),
                                    _format_counterexample(rec)))


def _format_counterexample(rec: Any) -> str:
    m, f = rec.minimal, rec.first
    # a shrink the budget cut short found a smaller failing input, not the minimal one
    word = "smallest" if rec.budget_exhausted else "minimal"
    lines = [f"relation {m.relation!r} ({m.rtype}) — {rec.test}"
             + (" — shrinking cut short by the budget: not known to be minimal"
                if rec.budget_exhausted else ""),
             f"  {word} source:    {m.source!r}",
             f"  {word} follow-up: {m.follow_up!r}",
             f"  verdicts: source {m.source_value!r} -> follow-up {m.follow_up_value!r}"]
    c = m.confirmation
    if c:
        lines.append(f"  evidence: {c.get('follow_up_violations')}/{c.get('follow_up_draws')} "
                     f"follow-up vs {c.get('source_violations')}/{c.get('source_draws')} source "
                     f"re-draws violate; sequential e-value {c.get('e_violation', 0):.3g} >= "
                     f"1/alpha_candidate, alpha_candidate = {c.get('alpha', 0):.3g}: "
                     f"{rec.alpha_split()}")
    if f is not None and f.source != m.source:
        lines.append(f"  first found:       {f.source!r}")
    lines.append(f"  calls: {rec.calls} (shrinking {rec.shrink_calls}; replayed "
                 f"{rec.replayed})")
    lines.append(f"  reproduce: {m.example_literal()}"
                 + (f"; store {rec.store}" if rec.store else ""))
    return "\n".join(lines)


def _conversation_summary(tr: Any, config: Any) -> None:
    """Conversation tests: one line each, and each minimal failing conversation turn by turn
    (its text: this is the user's terminal)."""
    mod = sys.modules.get(_CONVERSATION_MODULE)
    recs = list(getattr(mod, "RECORDS", ())) if mod else []
    if not recs:
        return
    tr.section("agentverity-props conversations")
    tr.write_line(f"{len(recs)} conversation test run(s), {sum(r.calls for r in recs)} agent "
                  "turns called")
    for r in recs:
        tr.write_line(f"  {r.status:<12} {r.test}: {r.calls} turns, {r.examples} examples, "
                      f"{r.candidates} conversations decided, {r.confirmed} confirmed")
        for ce in r.minimal.values():
            tr.write_line(f"    minimal conversation ({ce.kind} {ce.check!r}, {ce.n_turns} "
                          f"turns, {ce.decision.get('follow_up_violations')}/"
                          f"{ce.decision.get('follow_up_draws')} replays violate):")
            for i, t in enumerate(ce.turns, 1):
                tr.write_line(f"      {i}. {t.text!r} -> {t.verdict} "
                              f"[{', '.join(t.tools) or 'no tool'}]")
        if r.minimal and r.blob:
            tr.write_line(f"    reproduce: {r.blob}")
    path = config.getoption(OPT_CONV_REPORT)
    if path:
        from pathlib import Path

        from agentverity_props._internal.atomic import atomic_write_text
        from agentverity_props.conversation import conversation_report
        from agentverity_props.report import dumps
        inputs = bool(config.getoption(OPT_CONV_INPUTS))
        atomic_write_text(Path(path), dumps(conversation_report(recs, include_inputs=inputs)))
        tr.write_line(f"conversation report written to {path}")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    _conversation_summary(terminalreporter, config)
    recs = _records()
    if not recs:
        return
    tr = terminalreporter
    tr.section("agentverity-props")
    total = sum(r.calls for r in recs)
    tr.write_line(f"{len(recs)} agent property test run(s), {total} agent calls "
                  f"({sum(r.replayed for r in recs)} replayed)")
    verbose = config.getoption("verbose") > 0 or len(recs) <= 10
    shown = recs if verbose else [r for r in recs if r.status != "passed"]
    if len(shown) < len(recs):
        tr.write_line(f"  ({len(recs) - len(shown)} passed runs not listed; -v lists them)")
    warned = sum(1 for r in recs if r.warnings)
    for r in shown:
        tr.write_line(f"  {r.status:<12} {r.test}: {r.calls} calls, {r.candidates} candidates,"
                      f" {r.raw_violations} raw flips, {r.confirmed} confirmed")
        for name, e in sorted(r.effects.items()):
            if e.get("estimate") is not None:
                tr.write_line(f"    {name}: effect {e['estimate']:+.3f} "
                              f"[{e['lower']:+.3f}, {e['upper']:+.3f}] vs tolerance "
                              f"{e['tolerance']:g}: {e['status']}")
        for w in r.warnings:
            tr.write_line(f"    warning: {w}")
        if r.minimal is not None:
            tr.write_line(f"    minimal counterexample ({r.minimal.relation}): "
                          f"{r.minimal.source!r}")
    if not verbose and warned:
        tr.write_line(f"  {warned} run(s) with health warnings (-v shows them)")
    path = config.getoption(OPT_REPORT)
    if path:
        import json
        from pathlib import Path

        from agentverity_props._internal.atomic import atomic_write_text
        from agentverity_props.property import counterexample_report
        data = counterexample_report(recs)
        atomic_write_text(Path(path), json.dumps(data, indent=2, default=str) + "\n")
        tr.write_line(f"counterexample report written to {path}")
