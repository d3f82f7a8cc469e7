"""pytest plugin for agentverity-props (registered through the ``pytest11`` entry point).

Kept outside the package and free of heavy imports: collection never pays for numpy, scipy
or Strands. Around each test call it hands the test's options to the library through the
package's one light channel (``agentverity_props._internal.plugin``, which loads only the
package's lazy ``__init__``); the rest of the package is imported only inside hooks that need
it, and only when an ``@agent_property`` or conversation test actually ran.

Works under pytest-xdist the way pytest's junitxml and Hypothesis's statistics do: each
test's runs travel on its test report (``report.__dict__``, serialised by xdist to the
controller); the controller alone aggregates them, prints the terminal section and writes
the report files. Session state lives in ``config.stash``. Workers of one session share a
folder (created by the controller, handed over in ``workerinput``) holding the provider
pause (a 429's ``Retry-After`` on one worker pauses all) and the runs so far (read by the
``agentverity_ledger`` fixture); with ``--agentverity-max-calls-in-flight N`` they also share
a folder of N call slots, which bounds the agent calls in flight of the whole session.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

OPT_BUDGET = "--agentverity-budget"
OPT_EPSILON = "--agentverity-epsilon"
OPT_ALPHA = "--agentverity-alpha"
OPT_TOLERANCE = "--agentverity-tolerance"
OPT_PROFILE = "--agentverity-profile"
OPT_STORE = "--agentverity-store"
OPT_MODE = "--agentverity-store-mode"
OPT_REPORT = "--agentverity-report"
OPT_CONV_REPORT = "--agentverity-conversation-report"
OPT_CONV_INPUTS = "--agentverity-conversation-inputs"
OPT_MAX_IN_FLIGHT = "--agentverity-max-calls-in-flight"

#: each option's ini twin (``[pytest] agentverity_budget = 500``); the command line wins
INI_NAMES: dict[str, str] = {opt: opt[2:].replace("-", "_") for opt in (
    OPT_BUDGET, OPT_EPSILON, OPT_ALPHA, OPT_TOLERANCE, OPT_PROFILE, OPT_STORE, OPT_MODE,
    OPT_REPORT, OPT_CONV_REPORT, OPT_CONV_INPUTS, OPT_MAX_IN_FLIGHT)}

_MODES = ("off", "record", "replay", "auto")
#: where a test's runs travel on its report (a plain-JSON list; xdist serialises it)
REPORT_KEY = "_agentverity_runs"
#: the workerinput key of the session folder shared by the controller and its workers
SESSION_DIR_KEY = "agentverity_session_dir"
#: ``agentverity_props.engine.PAUSE_FILE_ENV``, spelled out: configure imports no engine
PAUSE_FILE_ENV = "AGENTVERITY_PROPS_PAUSE_FILE"
#: the workerinput key of the folder of the session's shared call slots
SLOT_DIR_KEY = "agentverity_slot_dir"
#: ``agentverity_props.engine.SLOT_DIR_ENV`` and ``MAX_IN_FLIGHT_ENV``, spelled out
SLOT_DIR_ENV = "AGENTVERITY_PROPS_SLOT_DIR"
MAX_IN_FLIGHT_ENV = "AGENTVERITY_PROPS_MAX_CALLS_IN_FLIGHT"

#: the public modules whose ``records()`` list this process's runs (docs/api.md); read only
#: once a test imported them, so a session with no agent test never imports the package
_PROPERTY_MODULE = "agentverity_props.property"
_CONVERSATION_MODULE = "agentverity_props.conversation"


@dataclass
class _Session:
    """The plugin's state for one pytest session (``config.stash``)."""

    options: dict[str, Any]
    include_inputs: bool = False
    #: every run reported so far, in arrival order: {"kind", "nodeid", "index", "data", ...}
    runs: list[dict[str, Any]] = field(default_factory=list)
    session_dir: Path | None = None
    owns_dir: bool = False
    #: the folder of the shared call slots (--agentverity-max-calls-in-flight), else None
    slot_dir: Path | None = None
    owns_slot_dir: bool = False
    env_before: dict[str, str | None] = field(default_factory=dict)


_SESSION = pytest.StashKey[_Session]()
_N_BEFORE = pytest.StashKey[tuple[int, int]]()


def _channel() -> Any:
    """The package's one channel for the options of the test running now (a light module:
    the package's ``__init__`` loads nothing heavy)."""
    return importlib.import_module("agentverity_props._internal.plugin")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("agentverity", "agentverity-props: property tests of LLM agents")
    helps = {
        OPT_BUDGET: "Agent-call budget per @agent_property test.",
        OPT_EPSILON: "Noise level above which an agent is reported unstable.",
        OPT_ALPHA: "Family-wise error rate per @agent_property test (default 0.05).",
        OPT_TOLERANCE: "Largest pooled relation effect (excess share of verdicts changed "
                       "over the generated examples) a pass allows (default 0.1).",
        OPT_PROFILE: "Profile of every @agent_property test: quick, standard (default), "
                     "thorough or one registered with register_profile (its per-example "
                     "false-pass rate).",
        OPT_STORE: "SQLite record/replay store shared by @agent_property tests.",
        OPT_MODE: "Store mode (default auto when a store is given).",
        OPT_REPORT: "Write every @agent_property outcome (with minimal counterexamples) "
                    "as versioned JSON here.",
        OPT_CONV_REPORT: "Write every conversation test (AgentStateMachine) with its minimal "
                         "conversations as versioned JSON here (user turns as fingerprints).",
        OPT_CONV_INPUTS: "Keep the user turns' text in the conversation report file.",
        OPT_MAX_IN_FLIGHT: "At most N agent calls in flight at once across the whole "
                           "session (every engine of every xdist worker together); "
                           "default: no shared limit.",
    }
    group.addoption(OPT_BUDGET, type=int, default=None, metavar="N", help=helps[OPT_BUDGET])
    group.addoption(OPT_EPSILON, type=float, default=None, metavar="EPS",
                    help=helps[OPT_EPSILON])
    group.addoption(OPT_ALPHA, type=float, default=None, metavar="ALPHA",
                    help=helps[OPT_ALPHA])
    group.addoption(OPT_TOLERANCE, type=float, default=None, metavar="DELTA",
                    help=helps[OPT_TOLERANCE])
    group.addoption(OPT_PROFILE, default=None, metavar="NAME", help=helps[OPT_PROFILE])
    group.addoption(OPT_STORE, default=None, metavar="PATH", help=helps[OPT_STORE])
    group.addoption(OPT_MODE, choices=list(_MODES), default=None, help=helps[OPT_MODE])
    group.addoption(OPT_REPORT, default=None, metavar="PATH", help=helps[OPT_REPORT])
    group.addoption(OPT_CONV_REPORT, default=None, metavar="PATH",
                    help=helps[OPT_CONV_REPORT])
    group.addoption(OPT_CONV_INPUTS, action="store_true", default=None,
                    help=helps[OPT_CONV_INPUTS])
    group.addoption(OPT_MAX_IN_FLIGHT, type=int, default=None, metavar="N",
                    help=helps[OPT_MAX_IN_FLIGHT])
    for opt, ini in INI_NAMES.items():
        parser.addini(ini, f"{helps[opt]} (ini twin of {opt})",
                      type="bool" if opt == OPT_CONV_INPUTS else "string", default=None)


def _option(config: Any, opt: str, kind: type | None = None) -> Any:
    """The command-line value, else its ini twin (parsed as ``kind``), else None."""
    value = config.getoption(opt)
    if value is not None:
        return value
    raw = config.getini(INI_NAMES[opt])
    if raw is None or raw == "":
        return None
    if kind is None or isinstance(raw, bool):
        return raw
    try:
        return kind(str(raw).strip())
    except ValueError:
        raise pytest.UsageError(
            f"ini option {INI_NAMES[opt]} = {raw!r} is not a number: give "
            f"{'an integer' if kind is int else 'a number'}, e.g. {INI_NAMES[opt]} = "
            f"{'500' if kind is int else '0.05'}"
            ) from None


def _named(config: Any, opt: str) -> str:
    """The option as the user gave it: on the command line, or as its ini twin."""
    return opt if config.getoption(opt) is not None else f"ini {INI_NAMES[opt]}"


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "agentverity: an agent property test (added by @agent_property)")
    settings = {"budget": _option(config, OPT_BUDGET, int),
                "epsilon": _option(config, OPT_EPSILON, float),
                "alpha": _option(config, OPT_ALPHA, float),
                "tolerance": _option(config, OPT_TOLERANCE, float),
                "profile": _option(config, OPT_PROFILE)}
    max_in_flight = _option(config, OPT_MAX_IN_FLIGHT, int)
    # refused here, once, as a usage error (exit 4), not as a traceback inside every test
    _check_settings(config, settings, max_in_flight)
    mode = _option(config, OPT_MODE)
    if mode is not None and mode not in _MODES:
        raise pytest.UsageError(f"{INI_NAMES[OPT_MODE]} = {mode!r} must be one of "
                                f"{', '.join(_MODES)}")
    state = _Session(options={**settings, "store": _option(config, OPT_STORE),
                              "store_mode": mode},
                     include_inputs=bool(_option(config, OPT_CONV_INPUTS)))
    config.stash[_SESSION] = state
    config.pluginmanager.register(_Collector(config, state), "agentverity-collector")
    worker = getattr(config, "workerinput", None)
    if worker is not None and worker.get(SESSION_DIR_KEY):
        # an xdist worker: the controller's session folder (pause file, runs so far)
        state.session_dir = Path(worker[SESSION_DIR_KEY])
        state.env_before[PAUSE_FILE_ENV] = os.environ.get(PAUSE_FILE_ENV)
        os.environ[PAUSE_FILE_ENV] = str(state.session_dir / "pause.json")
    if max_in_flight is not None:
        _share_slots(state, worker, max_in_flight)


#: each setting option -> the config field it sets (``--agentverity-max-calls-in-flight``
#: is the engine's ``max_calls_in_flight``, shared through the slot folder, not per test)
_SETTING_OPTIONS = {OPT_BUDGET: "budget", OPT_EPSILON: "epsilon", OPT_ALPHA: "alpha",
                    OPT_TOLERANCE: "tolerance", OPT_PROFILE: "profile",
                    OPT_MAX_IN_FLIGHT: "max_calls_in_flight"}


def _check_settings(config: Any, settings: dict[str, Any], max_in_flight: int | None) -> None:
    """Refuse a bad setting option as a usage error naming it. Nothing is checked here: each
    option is applied to a ``PropertyConfig`` the way every test applies it (the package's
    ``plugin_config``), so the config's constructor, the one place a setting is validated
    and resolved, refuses it. The package is imported only when a setting was given."""
    given = {opt: v for opt, v in ((o, settings.get(k) if k != "max_calls_in_flight"
                                    else max_in_flight) for o, k in _SETTING_OPTIONS.items())
             if v is not None}
    if not given:
        return
    from agentverity_props.errors import InvalidArgument
    from agentverity_props.property import PropertyConfig

    for opt, value in given.items():
        key = _SETTING_OPTIONS[opt]
        try:
            if key == "max_calls_in_flight":
                PropertyConfig().with_fields(max_calls_in_flight=value)
            else:
                _channel().plugin_config(PropertyConfig(), {key: value})
        except InvalidArgument as exc:
            reason = str(exc).removeprefix("PropertyConfig: ")
            raise pytest.UsageError(f"{_named(config, opt)}={value} is refused: {reason}"
                                    ) from None


def _share_slots(state: _Session, worker: Any, size: int) -> None:
    """Every engine of the session takes one of ``size`` slots in one folder around each
    live call: the controller (or a serial run) makes the folder, its workers inherit it."""
    given = worker.get(SLOT_DIR_KEY) if worker is not None else None
    if given:
        state.slot_dir = Path(given)
    else:
        state.slot_dir = Path(tempfile.mkdtemp(prefix="agentverity-slots-"))
        state.owns_slot_dir = True
    for name, value in ((SLOT_DIR_ENV, str(state.slot_dir)), (MAX_IN_FLIGHT_ENV, str(size))):
        state.env_before.setdefault(name, os.environ.get(name))
        os.environ[name] = value


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist, on the controller, before a worker starts: hand it the session folder."""
    state = node.config.stash.get(_SESSION, None)
    if state is None:
        return
    if state.session_dir is None:
        state.session_dir = Path(tempfile.mkdtemp(prefix="agentverity-session-"))
        state.owns_dir = True
    node.workerinput[SESSION_DIR_KEY] = str(state.session_dir)
    if state.slot_dir is not None:
        node.workerinput[SLOT_DIR_KEY] = str(state.slot_dir)


def pytest_unconfigure(config: Any) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None:
        return
    collector = config.pluginmanager.get_plugin("agentverity-collector")
    if collector is not None:
        config.pluginmanager.unregister(collector)
    for name, value in state.env_before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    import shutil
    if state.owns_dir and state.session_dir is not None:
        shutil.rmtree(state.session_dir, ignore_errors=True)
    if state.owns_slot_dir and state.slot_dir is not None:
        shutil.rmtree(state.slot_dir, ignore_errors=True)


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for item in items:
        fn = getattr(item, "function", None)
        if getattr(fn, "_agentverity_property", False):
            item.add_marker("agentverity")


def _live(module: str) -> list[Any]:
    """``module.records()`` if a test has imported ``module``, else no record."""
    mod = sys.modules.get(module)
    return mod.records() if mod is not None else []


def _is_worker(config: Any) -> bool:
    return hasattr(config, "workerinput")


def _plain(data: Any) -> Any:
    """Plain JSON values only (xdist's serialiser and the ledger file take nothing else)."""
    return json.loads(json.dumps(data, default=str))


def _payloads(item: Any, props: list[Any], convs: list[Any], include_inputs: bool
              ) -> list[dict[str, Any]]:
    """One record type for both kinds of test: what a run spent and found, as JSON."""
    # this session's own worker id (not the environment, which a pytest started from inside
    # an xdist worker inherits from the outer session)
    worker = (getattr(item.config, "workerinput", None) or {}).get("workerid")
    with _speaking_pytest():  # a record's hints name the plugin's options
        return _plain(_records_payload(item, props, convs, include_inputs, worker))


def _records_payload(item: Any, props: list[Any], convs: list[Any], include_inputs: bool,
                     worker: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for rec in props:
        out.append({"kind": "property", "nodeid": item.nodeid, "index": len(out),
                    "worker": worker, "data": rec.to_dict()})
    for rec in convs:
        # the terminal shows the minimal conversations' text (the user's own terminal);
        # the report file keeps it only with --agentverity-conversation-inputs
        out.append({"kind": "conversation", "nodeid": item.nodeid, "index": len(out),
                    "worker": worker,
                    "data": rec.to_dict(include_inputs=include_inputs),
                    "turn_texts": [[t.text for t in ce.turns] for ce in rec.minimal.values()]})
    return out


@pytest.fixture
def agentverity_ledger(request: Any) -> Any:
    """The runs of the @agent_property tests run so far in this session (calls, findings),
    on every xdist worker together.

    Each record reads like the ``tests`` entries of the ``--agentverity-report`` file
    (``r.test``, ``r.status``, ``r.calls``, ...).

    Example:
        def test_budget(agentverity_ledger):
            assert sum(r.calls for r in agentverity_ledger.records()) < 10_000
    """
    config = request.config

    class _Ledger:
        @staticmethod
        def runs(kind: str | None = None) -> list[Any]:
            return [_ledger_entry(r) for r in _session_runs(config)
                    if kind is None or r["kind"] == kind]

        @staticmethod
        def records() -> list[Any]:
            return _Ledger.runs("property")

        @staticmethod
        def conversation_records() -> list[Any]:
            return _Ledger.runs("conversation")

        @staticmethod
        def total_calls() -> int:
            return sum(r.calls for r in _Ledger.records())

    return _Ledger()


def _ledger_entry(run: dict[str, Any]) -> Any:
    """A run as the ledger shows it: the fields of its report entry as attributes (as the
    live records had them: ``r.minimal.source``, ``r.seed``, ``r.effects[name]``), plus
    ``kind``, ``nodeid`` and ``worker``."""
    data = dict(run["data"])
    if run["kind"] == "property":
        for key in ("minimal", "first"):
            if data.get(key) is not None:
                data[key] = SimpleNamespace(**data[key])
    else:
        data["minimal"] = [SimpleNamespace(**ce) for ce in data.get("minimal") or ()]
    reproduce = data.get("reproduce") or {}
    data.setdefault("seed", reproduce.get("seed"))
    data.setdefault("store", reproduce.get("store"))
    return SimpleNamespace(**data, kind=run["kind"], nodeid=run["nodeid"],
                           worker=run.get("worker"))


def _session_runs(config: Any) -> list[dict[str, Any]]:
    """Runs of the whole session: this process's, or (xdist) every worker's, from the
    shared folder."""
    state = config.stash[_SESSION]
    if state.session_dir is None:
        return list(state.runs)
    path = state.session_dir / "runs.jsonl"
    runs = []
    with contextlib.suppress(OSError):
        for line in path.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError):
                runs.append(json.loads(line))
    return runs


def _append_shared(state: _Session, payloads: list[dict[str, Any]]) -> None:
    if state.session_dir is None or not payloads:
        return
    import fcntl
    text = "".join(json.dumps(p) + "\n" for p in payloads)
    with contextlib.suppress(OSError), \
            open(state.session_dir / "runs.jsonl", "a", encoding="utf-8") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            fh.write(text)
            fh.flush()
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Any:
    state = item.config.stash.get(_SESSION, None)
    item.stash[_N_BEFORE] = (len(_live(_PROPERTY_MODULE)), len(_live(_CONVERSATION_MODULE)))
    # the node id names the test's own draws in the store (parametrized cases apart)
    with _channel().running_test({**state.options, "test": item.nodeid}
                                 if state is not None else None):
        yield


def _speaking_pytest() -> Any:
    """The library's messages name settings as pytest does (``--agentverity-budget N``, ini
    ``agentverity_budget``) inside the block: around what the plugin configures
    (``@agent_property`` speaks pytest itself while the plugin runs it). The package is
    imported only when a test already imported it."""
    if "agentverity_props" not in sys.modules:
        return contextlib.nullcontext()
    settings = importlib.import_module("agentverity_props._internal.settings")
    return settings.speaking("pytest")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    if call.when != "call" or _N_BEFORE not in item.stash:
        return
    n_prop, n_conv = item.stash[_N_BEFORE]
    props, convs = _live(_PROPERTY_MODULE)[n_prop:], _live(_CONVERSATION_MODULE)[n_conv:]
    if not props and not convs:
        return
    state = item.config.stash.get(_SESSION, None)
    report = outcome.get_result()
    report.__dict__[REPORT_KEY] = _payloads(item, props, convs,
                                            bool(state and state.include_inputs))
    for rec in props:
        report.user_properties.append(("agentverity_calls", rec.calls))
        report.user_properties.append(("agentverity_status", rec.status))
        if rec.minimal is not None:
            report.sections.append(("agentverity-props " + (
                "smallest counterexample found" if rec.budget_exhausted
                else "minimal counterexample"),
                                    _format_counterexample(rec)))


class _Collector:
    """Registered per session: collects the runs every test report carries (in each
    process; on the xdist controller they arrive from the workers)."""

    def __init__(self, config: Any, state: _Session) -> None:
        self.config = config
        self.state = state

    def pytest_runtest_logreport(self, report: Any) -> None:
        runs = report.__dict__.get(REPORT_KEY)
        if not runs or getattr(report, "when", None) != "call":
            return
        self.state.runs.extend(runs)
        if _is_worker(self.config):
            _append_shared(self.state, runs)


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
        # the exception's account, word for word: one decision, one e-value, one threshold
        lines.append(f"  evidence: {m.evidence(rec.alpha_candidate)}; "
                     f"alpha_candidate = {rec.alpha_candidate:.3g}: {rec.alpha_split()}")
    if f is not None and f.source != m.source:
        lines.append(f"  first found:       {f.source!r}")
        if len(m.source) > len(f.source):  # what "minimal" means, where it would surprise
            lines.append(f"  ({word} in the strategy's shrink order: the earliest templates, "
                         "slot values and smallest choices that still fail, not the shortest "
                         "text)")
    lines.append(f"  calls: {rec.calls} (shrinking {rec.shrink_calls}; replayed "
                 f"{rec.replayed})")
    lines.append(f"  reproduce: {m.example_literal()}"
                 + (f"; store {rec.store}" if rec.store else ""))
    return "\n".join(lines)


def _sorted_runs(runs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """The runs of one kind in a fixed order (node id, then order within the test): a serial
    run and any xdist split of it list them alike."""
    return sorted((r for r in runs if r["kind"] == kind),
                  key=lambda r: (r["nodeid"], r["index"]))


def _conversation_summary(tr: Any, runs: list[dict[str, Any]]) -> None:
    """Conversation tests: one line each, and each minimal failing conversation turn by turn
    (its text: this is the user's terminal)."""
    if not runs:
        return
    tr.section("agentverity-props conversations")
    tr.write_line(f"{len(runs)} conversation test run(s), "
                  f"{sum(r['data']['calls'] for r in runs)} agent turns called")
    for run in runs:
        r = run["data"]
        tr.write_line(f"  {r['status']:<12} {r['test']}: {r['calls']} turns, {r['examples']} "
                      f"examples, {r['candidates']} conversations decided, {r['confirmed']} "
                      "confirmed")
        for ce, texts in zip(r["minimal"], run.get("turn_texts") or [], strict=False):
            d = ce.get("decision") or {}
            tr.write_line(f"    minimal conversation ({ce['kind']} {ce['check']!r}, "
                          f"{ce['n_turns']} turns, {d.get('follow_up_violations')}/"
                          f"{d.get('follow_up_draws')} replays violate):")
            for i, (t, text) in enumerate(zip(ce["turns"], texts, strict=False), 1):
                tr.write_line(f"      {i}. {text!r} -> {t['verdict']} "
                              f"[{', '.join(t['tools']) or 'no tool'}]")
        blob = (r.get("reproduce") or {}).get("blob")
        if r["minimal"] and blob:
            tr.write_line(f"    reproduce: {blob}")


def _property_summary(tr: Any, runs: list[dict[str, Any]], verbose: bool) -> None:
    if not runs:
        return
    recs = [r["data"] for r in runs]
    tr.section("agentverity-props")
    tr.write_line(f"{len(recs)} agent property test run(s), {sum(r['calls'] for r in recs)} "
                  f"agent calls ({sum(r['replayed'] for r in recs)} replayed)")
    verbose = verbose or len(recs) <= 10
    shown = recs if verbose else [r for r in recs if r["status"] != "passed"]
    if len(shown) < len(recs):
        tr.write_line(f"  ({len(recs) - len(shown)} passed runs not listed; -v lists them)")
    warned = sum(1 for r in recs if r["warnings"])
    for r in shown:
        tr.write_line(f"  {r['status']:<12} {r['test']}: {_tally(r)}")
        for name, e in sorted(r["effects"].items()):
            if e.get("estimate") is not None:
                tr.write_line(f"    {name}: effect {e['estimate']:+.3f} "
                              f"[{e['lower']:+.3f}, {e['upper']:+.3f}] vs tolerance "
                              f"{e['tolerance']:g}: {e['status']}")
        for w in r["warnings"]:
            tr.write_line(f"    warning: {w}")
        if r["minimal"] is not None:
            tr.write_line(f"    minimal counterexample ({r['minimal']['relation']}): "
                          f"{r['minimal']['source']!r}")
    if not verbose and warned:
        tr.write_line(f"  {warned} run(s) with health warnings (-v shows them)")


def write_report(path: str | os.PathLike[str], kind: str, runs: list[dict[str, Any]], *,
                 include_inputs: bool = False) -> None:
    """The one JSON writer of the plugin: the versioned document of the property runs
    (the ``counterexample`` kind) or of the conversation runs
    (the ``conversation`` kind), from the runs the reports carried."""
    from agentverity_props._internal.atomic import atomic_write_text
    from agentverity_props.report import dumps

    tests = [r["data"] for r in _sorted_runs(runs, kind)]
    if kind == "property":
        from agentverity_props.property import COUNTEREXAMPLE_SCHEMA
        doc: dict[str, Any] = {"schema": COUNTEREXAMPLE_SCHEMA, "tests": tests}
    else:
        from agentverity_props.conversation import CONVERSATION_SCHEMA
        doc = {"schema": CONVERSATION_SCHEMA, "include_inputs": include_inputs,
               "tests": tests}
    atomic_write_text(Path(path), dumps(doc))


def _tally(r: dict[str, Any]) -> str:
    """One test's counts, each from the record the section prints below: candidates
    decided, confirmed (with the confirming draws of the counterexample shown), and the
    screen's first-draw flips, named as such (noise included, not evidence)."""
    ce = r.get("minimal") or r.get("first") or {}
    c = ce.get("confirmation") or {}
    evidence = ""
    if r["confirmed"] and c.get("follow_up_draws"):
        evidence = (f" ({'minimal' if r.get('minimal') else 'first'}: "
                    f"{c.get('follow_up_violations')}/{c.get('follow_up_draws')} follow-up "
                    f"draws violate)")
    return (f"{r['calls']} calls, {r['candidates']} candidate(s): {r['confirmed']} "
            f"confirmed{evidence}, {r['undecided']} undecided; {r['raw_violations']} "
            f"flipped on their first draw (noise included)")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    state = config.stash.get(_SESSION, None)
    if state is None or _is_worker(config):  # the controller alone reports and writes
        return
    tr = terminalreporter
    conv = _sorted_runs(state.runs, "conversation")
    _conversation_summary(tr, conv)
    path = _option(config, OPT_CONV_REPORT)
    if path and conv:
        write_report(path, "conversation", conv, include_inputs=state.include_inputs)
        tr.write_line(f"conversation report written to {path}")
    props = _sorted_runs(state.runs, "property")
    _property_summary(tr, props, config.getoption("verbose") > 0)
    path = _option(config, OPT_REPORT)
    if path and props:
        write_report(path, "property", props)
        tr.write_line(f"counterexample report written to {path}")
