"""Settings named in the caller's terms: one table, spelled by the edge that runs the code.

A library message that tells the user to change a setting ("raise the budget") must name it
the way *that* user sets it: the command line says ``--budget N``, the pytest plugin
``--agentverity-budget N`` (ini ``agentverity_budget``), Python ``budget=N``. Library code
never writes a flag: it writes :func:`setting` with the setting's key, and the edge that is
running (chosen once, at the edge, with :func:`speaking`) decides the spelling.

The edges: the CLI (``cli/``) speaks ``"cli"``, the pytest plugin speaks ``"pytest"``
around each test call, and Python (any other caller) is the default. The edge travels with
the call in a context variable; :func:`carry` takes it into a coroutine that another
thread's event loop runs, so a message formed there is spelled as the caller's.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

__all__ = ["EDGES", "SETTINGS", "Spelling", "carry", "current_edge", "setting", "speaking"]

Edge = Literal["python", "cli", "pytest"]
EDGES: tuple[Edge, ...] = ("python", "cli", "pytest")
T = TypeVar("T")


@dataclass(frozen=True)
class Spelling:
    """How each edge names one setting.

    Attributes:
        cli: the command-line flag (``--budget``), or None when the CLI has none.
        pytest: the pytest plugin's option (``--agentverity-budget``), or None.
        ini: the pytest ini name (``agentverity_budget``), or None.
        python: the Python keyword (``budget=``, followed by the value) or call (``{}``
            marks where the value goes: ``Price.load({})``).
        value: how a value is written after the flag / keyword by default (``N``).
    """

    cli: str | None
    pytest: str | None
    ini: str | None
    python: str
    value: str = ""


#: key -> how each edge writes it. A setting the pytest plugin has no option for is written
#: in Python terms under pytest (the test's own ``@agent_property(...)`` / ``RunConfig``).
SETTINGS: dict[str, Spelling] = {
    "budget": Spelling("--budget", "--agentverity-budget", "agentverity_budget",
                       "budget=", "N"),
    "store": Spelling("--store", "--agentverity-store", "agentverity_store",
                      "store_path=", "PATH"),
    "record": Spelling("--record", "--agentverity-store-mode record",
                       "agentverity_store_mode", 'store_mode="record"'),
    "replay": Spelling("--replay", "--agentverity-store-mode replay",
                       "agentverity_store_mode", 'store_mode="replay"'),
    "auto": Spelling("a --store without --record/--replay (auto)",
                     "--agentverity-store-mode auto", "agentverity_store_mode",
                     'store_mode="auto"'),
    "tolerance": Spelling("--tolerance", "--agentverity-tolerance", "agentverity_tolerance",
                          "tolerance=", "T"),
    "epsilon": Spelling("--epsilon", "--agentverity-epsilon", "agentverity_epsilon",
                        "epsilon=", "E"),
    "alpha": Spelling("--alpha", "--agentverity-alpha", "agentverity_alpha", "alpha=", "A"),
    "max_calls_in_flight": Spelling("--max-calls-in-flight",
                                    "--agentverity-max-calls-in-flight",
                                    "agentverity_max_calls_in_flight",
                                    "max_calls_in_flight=", "N"),
    "precision": Spelling("--precision", None, None, "precision=", "P"),
    "inputs": Spelling("--inputs", None, None, "the inputs passed"),
    "verdict": Spelling("--verdict-key/--verdict-regex", None, None,
                        "extractor=by_key(...)/by_regex(...)"),
    "threshold": Spelling("--threshold", None, None, "threshold=", "X"),
    "accept_reference": Spelling("--accept-reference", None, None, "accept_reference=True"),
    "require_verdicts": Spelling("--require-verdicts", None, None, "require_verdicts="),
    "judge_min_agreement": Spelling("--judge-min-agreement", None, None,
                                    "Judge(min_agreement={})", "X"),
    "judge_low_agreement": Spelling("--judge-low-agreement", None, None,
                                    'Judge(on_low_agreement="warn")', "warn"),
    "judge_labels": Spelling("--judge-labels", None, None, "judge_labels=", "a,b"),
    "relations": Spelling("--relations", None, None, "relations="),
    "runner": Spelling("--runner", None, None, "store_runner=", "NAME"),
    "include_inputs": Spelling("--include-inputs", None, None, "include_inputs=True"),
    "suppress_health_check": Spelling("--suppress-health-check", None, None,
                                      "suppress_health_check=", "NAME"),
    "seed": Spelling("--seed", None, None, "seed=", "N"),
    "enlarge_threshold": Spelling("agentverity-props enlarge --threshold", None, None,
                                  "enlarge(..., threshold={})", "X"),
    "price": Spelling("--price", None, None, "price"),
    "price_model": Spelling("--price-model", None, None, "Price.load(path, model=NAME)",
                            "NAME"),
    "noise": Spelling("--noise", None, None, "noises=", "D"),
    "noise_from": Spelling("--noise-from", None, None, "NoiseEstimate.read({})", ""),
    "confirm_all": Spelling("--confirm-all", None, None, "confirm_all=True"),
    "modal_share": Spelling("--modal-share", None, None, "modal_share=", "S"),
    "tool_calls": Spelling("--tool-calls", None, None, "tool_calls=True"),
    "tokens_per_call": Spelling("--tokens-per-call", None, None,
                                'tokens_per_call=TokensPerCall.stated("IN,OUT")', "IN,OUT"),
    "tokens_from": Spelling("--tokens-from", None, None, "TokensPerCall.measured({})", ""),
    "format_json": Spelling("--format json", None, None, "to_dict()"),
    "lexicon": Spelling("--lexicon", None, None, "lexicon=", "FILE"),
    "verdict_key": Spelling("--verdict-key", None, None, "extractor=by_key({})", "KEY"),
    "verdict_regex": Spelling("--verdict-regex", None, None, "extractor=by_regex(...)"),
    "file_order": Spelling("--file-order", None, None, "file_order=True"),
    "provider": Spelling("--provider", None, None, "provider=", "NAME"),
    "prompt_id": Spelling("--prompt-id", None, None, "prompt_id=", "ID"),
    "agent_id": Spelling("--agent-id", None, None, "agent=", "ID"),
    "run_store": Spelling("run --store", None, None, "run(..., config=RunConfig(store_path=...))"),
    "max_runs": Spelling("--max-runs", None, None, "max_runs=", "N"),
    "runs": Spelling("--runs", None, None, "runs=", "N"),
    "margin": Spelling("--margin", None, None, "margin=", "M"),
    "early_stop": Spelling("--early-stop", None, None, "early_stop=", "MODE"),
    "include_outputs": Spelling("--include-outputs", None, None, "include_outputs=True"),
    "otlp_port": Spelling("--otlp-port", None, None, "otlp_port=", "PORT"),
    "generator": Spelling("--generator-agent", None, None, "generator="),
    "strategy": Spelling("--strategy", None, None, "strategy=", "PACK"),
}

_EDGE: contextvars.ContextVar[Edge] = contextvars.ContextVar("agentverity_edge",
                                                              default="python")


def current_edge() -> Edge:
    """The edge whose terms messages use now (``"python"`` unless an edge chose)."""
    return _EDGE.get()


@contextlib.contextmanager
def speaking(edge: Edge) -> Iterator[None]:
    """Name settings in ``edge``'s terms inside the block (the CLI and the plugin use it)."""
    if edge not in EDGES:
        raise ValueError(f"unknown edge {edge!r}; one of {', '.join(EDGES)}")
    token = _EDGE.set(edge)
    try:
        yield
    finally:
        _EDGE.reset(token)


def setting(key: str, value: object = None, *, edge: Edge | None = None) -> str:
    """The setting ``key`` as the running edge writes it, with ``value`` (default: its
    placeholder, ``N``...; ``""`` for the bare flag or keyword).

    >>> setting("budget", 500, edge="cli")
    '--budget 500'
    >>> setting("budget", edge="pytest")
    '--agentverity-budget N (ini agentverity_budget)'
    >>> setting("budget", 500, edge="python")
    'budget=500'
    """
    spelled = SETTINGS[key]  # a KeyError here is a bug in the library's message
    where = edge or _EDGE.get()
    shown = spelled.value if value is None else str(value)
    if where == "cli" and spelled.cli is not None:
        return f"{spelled.cli} {shown}".rstrip()
    if where == "pytest" and spelled.pytest is not None:
        flag = f"{spelled.pytest} {shown}".rstrip()
        return f"{flag} (ini {spelled.ini})" if spelled.ini else flag
    py = spelled.python
    if "{}" in py:
        return py.replace("{}", shown or "...")
    if py.endswith("="):  # a keyword: with its value, or bare (``budget``) for value ""
        return py + shown if shown else py[:-1]
    return py


def carry(coro: Coroutine[Any, Any, T]) -> Coroutine[Any, Any, T]:
    """``coro`` run with the caller's edge, wherever its loop runs (another thread's loop
    starts tasks in its own context, where the edge would be the default)."""
    edge = _EDGE.get()
    if edge == "python":
        return coro

    async def spoken() -> T:
        _EDGE.set(edge)  # the task's own context: nothing to reset
        return await coro

    return spoken()
