"""Run a case file: each case repeated through its own Engine, stopped sequentially.

Every call gets a fresh W3C trace; its tool calls are read from the spans of that trace
(OTLP receiver for ``url:`` cases, the in-process SDK capture for ``agent:`` cases) and
checked with :func:`~agentverity_props.tools.assert_tools`.

Stopping: with ``min_pass_rate: 1`` (the default, and revefi-agent-test's meaning) a case
passes only when every call passes, and stops at the first failing call. Below 1, the
decide module's ``pass_rate_rule`` (an SPRT, valid when checked after every call) stops as
soon as the evidence says pass or fail; if ``runs`` is spent first the case is
``inconclusive``. Calls that fail (connection, HTTP, no spans) are not evidence either way;
three in a row end the case as ``error``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._internal.outcome import CaseStatus
from .._internal.settings import setting
from .._internal.signals import stop_on_signals
from ..errors import BudgetExhausted, Interrupted
from ..observation import Observation
from ._assert import assert_tools
from ._load import LoadedSuite
from ._model import Case, ToolsSuite
from ._results import CaseResult, RunResult, ToolsConfig, ToolsReport

if TYPE_CHECKING:
    from ..engine import EngineConfig

__all__ = ["RunOptions", "run_suite", "run_suite_async"]

_MAX_CONSECUTIVE_ERRORS = 3


@dataclass(frozen=True)
class RunOptions:
    """Command-line overrides of the file's ``config:`` (and of a :class:`ToolsConfig`)."""

    runs: int | None = None
    otlp_port: int | None = None
    span_timeout_s: float | None = None
    budget: int | None = None
    embedder: str | None = None
    #: ``progress(phase, calls)`` after each call (the CLI's bar); phase = "case <name>"
    progress: Callable[[str, int], None] | None = None


def _redact(text: str, secrets: Iterable[str]) -> str:
    from ..adapters import redact
    return redact(text, secrets)


class _Stop:
    """SIGINT/SIGTERM during a suite: the case running stops starting calls (its calls in
    flight finish and are judged), the cases after it are not run, and the report is written
    as incomplete. A second SIGINT raises ``KeyboardInterrupt`` (the user insists)."""

    def __init__(self) -> None:
        self.requested = False
        self.engine: Any = None

    def request(self) -> None:
        self.requested = True
        if self.engine is not None:
            self.engine.request_stop()

    def handlers(self) -> contextlib.AbstractContextManager[None]:
        return stop_on_signals(self.request, lambda: self.requested)


class _Sources:
    """Span sources, started only when a case needs them."""

    def __init__(self, suite: ToolsSuite, opts: RunOptions) -> None:
        self.receiver: Any = None
        self.otlp: Any = None
        #: where in-process (agent:) cases read their tools from
        self.in_process: set[str] = set()
        cfg = suite.config
        if any(c.url is not None for c in suite.cases):
            from ..otel import OTLPReceiver, OTLPReceiverSource
            port = opts.otlp_port if opts.otlp_port is not None else cfg.otlp_port
            self.receiver = OTLPReceiver(port=port, max_bytes=cfg.max_otlp_bytes)
            try:
                self.receiver.start()
            except OSError as exc:
                from ..errors import BadInput
                raise BadInput(f"cannot start the OTLP receiver on 127.0.0.1:{port}: "
                               f"{exc.strerror or exc}",
                               f"pick a free port with {setting('otlp_port', '')} (0 = any free "
                               "port)") from None
            self.otlp = OTLPReceiverSource(self.receiver)

    def describe(self) -> tuple[str, ...]:
        out = []
        if self.receiver is not None:
            out.append(f"otlp-http {self.receiver.endpoint}")
        return tuple(out)

    def close(self) -> None:
        if self.receiver is not None:
            self.receiver.close()


def _adapter(case: Case, suite: ToolsSuite, sources: _Sources, span_wait: float,
             secrets: frozenset[str]) -> tuple[Any, str]:
    cfg = suite.config
    if case.url is not None:
        from ..adapters import from_http
        headers = {**cfg.headers, **case.headers}
        if case.api_key:
            headers["Authorization"] = f"Bearer {case.api_key}"
        body = case.body
        if body is None and case.prompt is None:
            body = {}  # revefi-agent-test posts {} when a case has no body
        response_path = case.response_path if case.response_path is not None \
            else cfg.response_path
        adapter = from_http(case.url, method=case.method, body=body, headers=headers,
                            response_path=response_path,
                            timeout_s=case.timeout_s or cfg.answer_timeout_s,
                            span_source=sources.otlp, span_timeout_s=span_wait,
                            baggage={"agentverity.case": case.name}, secrets=secrets)
        return adapter, adapter.identity
    from ..adapters import load_agent
    from ..otel import TracedAdapter
    assert case.agent is not None
    inner = load_agent(case.agent)
    if getattr(inner, "tool_source", "spans") == "messages":
        # the framework's own messages name each tool and its status (from_langgraph):
        # read them as they are, no spans needed
        sources.in_process.add("the agent framework's own messages")
        return inner, case.agent
    sources.in_process.add("in-process OpenTelemetry SDK")
    exclude: tuple[str, ...] = ()
    name_of = getattr(inner, "_structured_tool_name", None)
    if callable(name_of):
        structured = name_of()
        exclude = (structured,) if structured else ()
    return TracedAdapter(inner, span_timeout_s=span_wait, exclude_tools=exclude), case.agent


def _probe_text(case: Case) -> str:
    if case.prompt is not None:
        return case.prompt
    return json.dumps(case.body if case.body is not None else {}, sort_keys=True,
                      ensure_ascii=False)


def _judge(index: int, obs: Observation, *, case: Case, sim_threshold: float | None,
           embedder: Any, secrets: frozenset[str], trace_id: str | None) -> RunResult:
    if obs.error is not None:
        return RunResult(index=index, status=CaseStatus.ERROR, trace_id=trace_id,
                         latency_s=obs.latency_s, error_kind=obs.error.kind,
                         error=_redact(obs.error.message, secrets)
                         + (f" (after {obs.error.attempts} attempts)"
                            if obs.error.attempts > 1 else ""))
    args = [r for p in case.tool_args for r in p.rules()]
    check = assert_tools(obs, required=case.required_tools, forbidden=case.forbidden_tools,
                         sequence=case.tool_sequence, args=args)
    reasons = list(check.reasons)
    sim = None
    if case.baseline_answer is not None and embedder is not None:
        sim = float(embedder.similarity(obs.text, case.baseline_answer))
        assert sim_threshold is not None
        if sim < sim_threshold:
            reasons.append(f"similarity to baseline {sim:.3f} < {sim_threshold:g} "
                           f"({embedder.name})")
    status = CaseStatus.FAIL if reasons else CaseStatus.PASS
    return RunResult(index=index, status=status, trace_id=trace_id,
                     tools=tuple(t.to_dict() for t in obs.tools), check=check, similarity=sim,
                     latency_s=obs.latency_s, reasons=tuple(reasons))


async def _run_case(case: Case, *, loaded: LoadedSuite, sources: _Sources, opts: RunOptions,
                    embedder: Any, budget_left: int | None, stop: _Stop | None = None,
                    engine: EngineConfig | None = None) -> tuple[CaseResult, int]:
    """Run one case: its calls until the pass-rate rule decides, then its status."""
    from ..decide import pass_rate_rule
    from ..engine import EngineConfig

    suite, secrets = loaded.suite, loaded.secrets
    cfg = suite.config
    max_runs = opts.runs or case.runs or cfg.runs
    threshold = case.min_pass_rate if case.min_pass_rate is not None else cfg.min_pass_rate
    span_wait = opts.span_timeout_s if opts.span_timeout_s is not None else cfg.span_wait_s()
    sim_threshold = None
    if case.baseline_answer is not None:
        sim_threshold = case.min_similarity if case.min_similarity is not None \
            else cfg.min_similarity
    common: dict[str, Any] = {"name": case.name, "max_runs": max_runs, "min_pass_rate": threshold,
              "alpha": cfg.alpha, "similarity_threshold": sim_threshold}
    try:
        adapter, target = _adapter(case, suite, sources, span_wait, secrets)
    except Exception as exc:  # a broken agent reference is this case's error, not the run's
        msg = _redact(str(exc), secrets)
        return CaseResult(target=case.url or case.agent or "?", status=CaseStatus.ERROR, runs=(),
                          decided_by="not run", message=msg, **common), 0
    request_timeout = case.timeout_s or cfg.answer_timeout_s
    if engine is None:  # the file's settings
        config = EngineConfig(max_workers=1, timeout_s=request_timeout + span_wait + 5.0,
                              retries=cfg.retries, budget=budget_left)
    else:
        config = replace(engine, budget=budget_left)
    rule = pass_rate_rule(threshold, alpha=cfg.alpha) if threshold < 1.0 else None
    drawn = await _draw_runs(case, adapter, config, rule, opts=opts, stop=stop,
                             sim_threshold=sim_threshold, embedder=embedder, secrets=secrets,
                             alpha=cfg.alpha, max_runs=max_runs)
    if not drawn.status:
        _settle_case(drawn, rule_free=rule is None, max_runs=max_runs, alpha=cfg.alpha)
    assert drawn.status is not None  # decided while drawing, or settled above
    runs = drawn.runs
    n_ok = sum(r.status != "error" for r in runs)
    interval = drawn.cs.interval() if n_ok else None
    message = drawn.message
    result = CaseResult(target=_redact(target, secrets), status=drawn.status,
                        runs=tuple(runs), decided_by=drawn.decided_by, interval=interval,
                        message=_redact(message, secrets) if message else None, **common)
    return result, drawn.calls


@dataclass
class _CaseRuns:
    """What one case's calls left: its runs, the interval's state, and the status when the
    rule (or a call that failed the case) decided it while drawing."""

    cs: Any
    runs: list[RunResult]
    status: CaseStatus | None = None
    decided_by: str = ""
    message: str | None = None
    cut_short: bool = False  # the call budget ran out
    interrupted: bool = False
    stop_cause: str | None = None  # the engine's own stop (fail_fast), not a signal
    calls: int = 0


async def _draw_runs(case: Case, adapter: Any, config: EngineConfig, rule: Any, *,
                     opts: RunOptions, stop: _Stop | None, sim_threshold: float | None,
                     embedder: Any, secrets: Any, alpha: float, max_runs: int) -> _CaseRuns:
    """The case's calls, judged one by one, until the sequential pass-rate rule decides (a
    failed call decides a ``min_pass_rate`` of 1), ``max_runs`` calls, three failed calls in
    a row, the budget or a stop."""
    from ..decide import BetaCS
    from ..engine import Engine, Probe

    out = _CaseRuns(cs=BetaCS(alpha), runs=[])
    probe = Probe.make(_probe_text(case))
    consecutive_errors = 0
    eng = Engine(adapter, config)
    if stop is not None:
        stop.engine = eng
        if stop.requested:
            eng.request_stop()
    try:
        for i in range(max_runs):
            try:
                obs = await eng.draw(probe)
            except BudgetExhausted as exc:
                out.message = str(exc)
                out.cut_short = True
                break
            except Interrupted:
                out.interrupted = True
                break
            if opts.progress is not None:
                opts.progress(f"case {case.name}", 1)
            trace_id = getattr(adapter, "last_trace_id", None)
            run = _judge(i, obs, case=case, sim_threshold=sim_threshold, embedder=embedder,
                         secrets=secrets, trace_id=trace_id)
            out.runs.append(run)
            if run.status == "error":
                consecutive_errors += 1
                if consecutive_errors >= _MAX_CONSECUTIVE_ERRORS:
                    out.message = f"stopped after {consecutive_errors} failed calls in a row"
                    break
                continue
            consecutive_errors = 0
            passed = run.status == "pass"
            out.cs.update(passed)
            if rule is None:
                if not passed:
                    out.status = CaseStatus.FAIL
                    out.decided_by = f"call {i + 1} failed (min_pass_rate 1)"
                    break
            else:
                d = rule.update(passed)
                if d is not None:
                    out.status = CaseStatus(d.call)
                    out.decided_by = (f"sequential pass-rate test after {d.n} calls "
                                      f"(e-value {d.e_value:.3g}, alpha {alpha:g})")
                    break
        out.calls = eng.ledger.calls
    finally:
        eng.close()
    out.stop_cause = eng.stop_cause
    return out


def _settle_case(drawn: _CaseRuns, *, rule_free: bool, max_runs: int, alpha: float) -> None:
    """The status of a case its calls left undecided: a stop, the budget, no evidence, all
    passed (``min_pass_rate`` 1), failed calls, or undecided (sets status, decided_by and
    message)."""
    runs = drawn.runs
    n_ok = sum(r.status != "error" for r in runs)
    n_err = len(runs) - n_ok
    if drawn.interrupted and drawn.stop_cause:  # the engine's fail_fast, not a signal
        drawn.status = CaseStatus.INCONCLUSIVE if n_ok else CaseStatus.ERROR
        drawn.decided_by = f"the engine stopped after {len(runs)} of {max_runs} calls"
        drawn.message = drawn.stop_cause
    elif drawn.interrupted:
        drawn.status = CaseStatus.INCONCLUSIVE if n_ok else CaseStatus.ERROR
        drawn.decided_by = f"interrupted after {len(runs)} of {max_runs} calls"
        drawn.message = "interrupted (SIGINT/SIGTERM); rerun to finish this case"
    elif drawn.cut_short:
        drawn.status = CaseStatus.ERROR
        drawn.decided_by = f"the call budget ran out after {len(runs)} of {max_runs} calls"
    elif n_ok == 0:
        drawn.status, drawn.decided_by = CaseStatus.ERROR, "no call produced evidence"
        if runs and drawn.message is None:
            drawn.message = runs[-1].error
        elif runs:
            drawn.message = f"{drawn.message}; last: {runs[-1].error}"
    elif rule_free and n_err == 0:
        drawn.status, drawn.decided_by = CaseStatus.PASS, f"all {n_ok} calls passed"
    elif rule_free:
        drawn.status = CaseStatus.ERROR
        drawn.decided_by = f"{n_ok} calls passed, {n_err} failed to run"
        last = next(r.error for r in reversed(runs) if r.status == "error")
        message = drawn.message
        drawn.message = f"{message + '; ' if message else ''}last error: {last}"
    else:
        drawn.status = CaseStatus.INCONCLUSIVE
        drawn.decided_by = (f"undecided after {n_ok} calls: raise runs or lower "
                            f"min_pass_rate (alpha {alpha:g})")


def _merged(options: RunOptions | None, config: ToolsConfig | None) -> RunOptions:
    """``options`` (the explicit overrides) over ``config``: a field set in ``options`` wins."""
    if config is not None and not isinstance(config, ToolsConfig):
        from ..errors import InvalidArgument
        raise InvalidArgument(f"run_suite: config must be a ToolsConfig, got "
                              f"{type(config).__name__}; build one with ToolsConfig(...)")
    opts = options or RunOptions()
    if config is None:
        return opts
    budget = config.engine.budget if config.engine is not None else None
    return RunOptions(
        runs=opts.runs if opts.runs is not None else config.runs,
        otlp_port=opts.otlp_port if opts.otlp_port is not None else config.otlp_port,
        span_timeout_s=(opts.span_timeout_s if opts.span_timeout_s is not None
                        else config.span_timeout_s),
        budget=opts.budget if opts.budget is not None else budget,
        embedder=opts.embedder or config.embedder, progress=opts.progress)


async def run_suite_async(loaded: LoadedSuite, *, options: RunOptions | None = None,
                          config: ToolsConfig | None = None) -> ToolsReport:
    """Run every case of ``loaded`` and return the report.

    ``config`` (a :class:`ToolsConfig`) sets how the file runs, its ``engine`` how every call
    is made; ``options`` are explicit overrides (the command line's) and win over both the
    file and ``config`` where they set a value.
    """
    from ._similarity import get_embedder

    opts = _merged(options, config)
    engine = config.engine if config is not None else None
    suite = loaded.suite
    needs_sim = any(c.baseline_answer is not None for c in suite.cases)
    embedder = get_embedder(opts.embedder or suite.config.embedder) if needs_sim else None
    budget = opts.budget if opts.budget is not None else suite.config.budget
    sources = _Sources(suite, opts)
    results: list[CaseResult] = []
    notes: list[str] = []
    if suite.config.base_url:
        notes.append("config.base_url/api_key (a vendor span API) are accepted but unused: "
                     "spans come from the built-in OTLP receiver")
    stop = _Stop()
    try:
        with stop.handlers():
            total = await _cases(loaded, opts, sources, embedder, budget, stop, results,
                                 engine)
        described = sources.describe()
    finally:
        sources.close()
    if stop.requested:
        notes.append("interrupted: the cases not finished are incomplete; rerun to finish them")
    described = (*described, *sorted(sources.in_process))
    return ToolsReport(config_path=loaded.path, cases=tuple(results),
                       span_sources=described, embedder=embedder.name if embedder else None,
                       calls=total, budget=budget, notes=tuple(notes))


async def _cases(loaded: LoadedSuite, opts: RunOptions, sources: _Sources, embedder: Any,
                 budget: int | None, stop: _Stop, results: list[CaseResult],
                 engine: EngineConfig | None = None) -> int:
    """Run the cases in order into ``results``; the calls spent."""
    suite = loaded.suite
    total = 0
    for case in suite.cases:
        left = None if budget is None else budget - total
        why = ("interrupted before this case started" if stop.requested else
               f"the call budget of {budget} is spent" if left is not None and left <= 0
               else None)
        if why is not None:
            results.append(CaseResult(
                name=case.name, target=_redact(case.url or case.agent or "?", loaded.secrets),
                status=CaseStatus.ERROR, runs=(), max_runs=0, min_pass_rate=1.0,
                alpha=suite.config.alpha, decided_by="not run", message=why))
            continue
        result, calls = await _run_case(case, loaded=loaded, sources=sources, opts=opts,
                                        embedder=embedder, budget_left=left, stop=stop,
                                        engine=engine)
        total += calls
        results.append(result)
    return total


def run_suite(loaded: LoadedSuite, *, options: RunOptions | None = None,
              config: ToolsConfig | None = None) -> ToolsReport:
    """Synchronous :func:`run_suite_async`."""
    from ..engine import run_sync
    return run_sync(run_suite_async(loaded, options=options, config=config))
