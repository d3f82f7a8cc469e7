"""Options shared by the commands that call agents, and the objects they build."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import click

from ..errors import BadInput

if TYPE_CHECKING:
    from ..engine import Engine, EngineConfig
    from ..runner import RunConfig

T = TypeVar("T")

StoreModeName = Literal["off", "record", "replay", "auto"]


def default_of(config: type[Any], name: str) -> Any:
    """The default of field ``name`` of the config dataclass ``config`` (its factory's value
    for a field made by one): an option showing it restates nothing, so each default is
    written once, in its config."""
    import dataclasses

    field = next(f for f in dataclasses.fields(config) if f.name == name)
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    assert field.default is not dataclasses.MISSING, f"{config.__name__}.{name} has none"
    return field.default


def engine_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--budget --max-workers --timeout --retries --error-policy --store --record/--replay ..."""
    from ..engine import EngineConfig

    def default(name: str) -> Any:
        return default_of(EngineConfig, name)

    opts = [
        click.option("--budget", type=click.IntRange(min=1), default=None,
                     help="Hard cap on agent calls (retries included). Default: no cap."),
        click.option("--max-workers", type=click.IntRange(1, 256), default=default("max_workers"),
                     show_default=True, help="Concurrent agent calls across distinct inputs."),
        click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.001),
                     default=default("timeout_s"), show_default=True,
                     help="Seconds per agent call."),
        click.option("--retries", type=click.IntRange(0, 20), default=default("retries"),
                     show_default=True,
                     help="Retries for transient failures (rate limits, 5xx, timeouts)."),
        click.option("--error-policy", type=click.Choice(["record", "raise"]),
                     default=default("error_policy"), show_default=True,
                     help="record: keep failures as incomplete evidence; "
                     "raise: stop at the first failed call."),
        click.option("--store", "store_path", default=None, metavar="PATH|URL",
                     help="Record/replay store: a SQLite file, a .jsonl export (replay), or "
                     "redis://host:port/db?namespace=team (default mode with a store: auto)."),
        click.option("--runner", "store_runner", default=None, metavar="NAME",
                     help="Runner namespace of the draws this run records (default: "
                     "$AGENTVERITY_PROPS_RUNNER; for redis:// the CI job id or host name)."),
        click.option("--record", "store_mode", flag_value="record", default=None,
                     help="Call the agent live and record every draw into --store."),
        click.option("--replay", "store_mode", flag_value="replay",
                     help="Only replay draws from --store; a missing draw is an error."),
        click.option("--max-calls-in-flight", type=click.IntRange(min=1), default=None,
                     metavar="N", help="At most N agent calls at once across every process "
                     "sharing the quota: with a redis:// --store, every runner on its "
                     "namespace (slots leased for 10 s, renewed while the process lives). "
                     "Default: --max-workers per engine."),
        click.option("--price", "price", default=None, metavar="IN,OUT|FILE",
                     help="What tokens cost: prices per 1,000 input and output tokens "
                     "(0.15,0.60), or a YAML/JSON file of model: {input_per_1k, "
                     "output_per_1k}. Reports then show the cost of the tokens the adapter "
                     "reported."),
        click.option("--price-model", default=None, metavar="NAME",
                     help="The model of --price FILE to use (needed when it lists several)."),
        click.option("--seed", type=int, default=default("seed"), show_default=True,
                     help="Seed of the input sampling (same seed + store = same result)."),
        click.option("--verdict-key", default=None,
                     help="Verdict = this key of a dict result (dotted path)."),
        click.option("--verdict-regex", default=None,
                     help="Verdict = group 1 of this regex searched in the answer text."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def store_mode(store_path: str | None, mode: str | None) -> StoreModeName:
    if mode is not None and store_path is None:
        raise BadInput(f"--{mode} needs a store", "add --store PATH")
    if store_path is None:
        return "off"
    if mode == "record":
        return "record"
    if mode == "replay":
        return "replay"
    return "auto"


def _runner(name: str | None) -> str | None:
    if name is None:
        return None
    from ..errors import InvalidArgument
    from ..store import runner_namespace
    try:
        return runner_namespace(name)
    except InvalidArgument as exc:
        raise BadInput(f"--runner: {exc}", "use up to 120 printable characters") from None


def extractor(verdict_key: str | None, verdict_regex: str | None) -> Any:
    from ..observation import DEFAULT_EXTRACTOR, by_key, by_regex

    if verdict_key and verdict_regex:
        raise BadInput("--verdict-key and --verdict-regex both given", "use one of them")
    if verdict_key:
        return by_key(verdict_key)
    if verdict_regex:
        from ..errors import InvalidArgument
        try:
            return by_regex(verdict_regex)
        except InvalidArgument as exc:
            raise BadInput(str(exc), "fix the regular expression") from None
    return DEFAULT_EXTRACTOR


def engine_config(eng: dict[str, Any]) -> EngineConfig:
    """The one place CLI engine options become an :class:`EngineConfig` (every command).

    ``eng`` holds the options of :func:`engine_options`; a command that offers only some
    of them (``assess``: --max-workers, --seed, --verdict-key/--verdict-regex) passes those
    and the others take the engine's defaults.
    """
    from ..engine import EngineConfig

    store_path = eng.get("store_path")
    fields = {name: eng[name] for name in ("max_workers", "timeout_s", "retries", "budget",
                                           "error_policy", "seed", "max_calls_in_flight")
              if name in eng}
    return EngineConfig(
        **fields, price=price_option(eng.get("price"), eng.get("price_model")),
        store_path=store_path, store_mode=store_mode(store_path, eng.get("store_mode")),
        store_runner=_runner(eng.get("store_runner")),
        extractor=extractor(eng.get("verdict_key"), eng.get("verdict_regex")))


def price_option(spec: str | None, model: str | None) -> Any:
    """``--price`` (and ``--price-model``) as a :class:`~agentverity_props.engine.Price`, or
    None."""
    if spec is None:
        if model is not None:
            raise BadInput("--price-model needs --price FILE", "add --price prices.yaml")
        return None
    from ..engine import parse_price
    return parse_price(spec, model=model)


def run_config(eng: dict[str, Any], **kw: Any) -> RunConfig:
    """A :class:`RunConfig` from CLI engine options plus the command's own settings."""
    from ..runner import RunConfig

    return RunConfig(engine=engine_config(eng), **kw)


def load_agent_ref(ref: str) -> Any:
    from ..adapters import load_agent
    return load_agent(ref)


def progress_bar(enabled: bool) -> Any:
    """A rich progress bar on stderr, or None when disabled or stderr is not a terminal."""
    import sys
    if not enabled or not sys.stderr.isatty():
        return None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("{task.description}"), BarColumn(),
                    TextColumn("{task.completed} calls"), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True)


def ticker(bar: Any, budget: int | None = None) -> Callable[[str, int], None]:
    """A ``progress(phase, calls)`` callback: a first line for the whole command (calls spent,
    against the budget when there is one), then a line per phase as it starts."""
    total = bar.add_task("all calls" + (f" (budget {budget})" if budget else ""),
                         total=budget)
    tasks: dict[str, Any] = {}

    def tick(phase: str, n: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(f"  {phase}", total=None)
        bar.advance(tasks[phase], n)
        bar.advance(total, n)

    return tick


def progress_ticker(enabled: bool, budget: int | None = None
                    ) -> tuple[Any, Callable[[str, int], None] | None]:
    """``(bar, tick)`` for commands that run their own engine: the bar is a context manager
    (a no-op one when disabled or not on a terminal) and ``tick`` is None then."""
    import contextlib
    bar = progress_bar(enabled)
    if bar is None:
        return contextlib.nullcontext(), None
    return bar, ticker(bar, budget)


# -- choices derived from the library (never retyped) -------------------------------------


def _layers() -> list[str]:
    from ..observation import LAYERS
    return list(LAYERS)


def _precisions() -> list[str]:
    from ..diagnose import PRESETS
    return list(PRESETS)


def _health_checks() -> list[str]:
    from ..diagnose import HealthCheck
    return [h.value for h in HealthCheck]


LAYER_CHOICE = click.Choice(_layers())
PRECISION_CHOICE = click.Choice(_precisions())
HEALTH_CHECK_CHOICE = click.Choice(_health_checks())


def progress_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--progress/--no-progress``: the same flag and default on every command."""
    return click.option("--progress/--no-progress", default=True, show_default=True,
                        help="Progress bar on stderr (shown only when stderr is a "
                             "terminal).")(f)


def session(agents: Sequence[Any], config: EngineConfig,
            work: Callable[[list[Engine], Callable[[str, int], None] | None], Awaitable[T]], *,
            progress: bool, report_stop: bool = True) -> T:
    """What every command that calls agents does around its work: one engine per agent,
    SIGINT/SIGTERM as a clean stop, a progress bar on a terminal (``work`` gets the
    ``tick(phase, calls)`` callback, or None), and why an engine stopped on its own said on
    stderr (``report_stop=False`` when the report itself says it)."""
    from ..engine import run_session
    from ._common import say_stop

    bar = progress_bar(progress)

    async def go(engines: list[Engine]) -> T:
        if bar is None:
            return await work(engines, None)
        with bar:
            return await work(engines, ticker(bar, config.budget))

    return run_session(agents, config, go, on_stop=say_stop if report_stop else None)


def analysis_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """What ``run``, ``assess`` and ``plan`` decide with: --precision --epsilon --alpha
    --tolerance --indifference --layer --relations --no-relations --suppress-health-check."""
    # the library's defaults, shown, never re-stated
    from ..diagnose import (
        DEFAULT_ALPHA,
        DEFAULT_EPSILON,
        DEFAULT_INDIFFERENCE,
        DEFAULT_LAYER,
        DEFAULT_TOLERANCE,
        PRESETS,
        TOLERANCE_PRESETS,
    )
    opts = [
        click.option("--precision", type=PRECISION_CHOICE, default=None,
                     help="Epsilon preset: " + ", ".join(
                         f"{k} {v:.2f}" for k, v in PRESETS.items()) + "."),
        click.option("--epsilon", type=float, default=None,
                     help="The meter's limit on the pair-disagreement rate (default "
                     f"{DEFAULT_EPSILON:g})."),
        click.option("--alpha", type=click.FloatRange(0.0001, 0.49), default=DEFAULT_ALPHA,
                     show_default=True, help="Family-wise error rate of every finding."),
        click.option("--tolerance", type=float, default=None,
                     help="Largest relation effect (excess share of verdicts a transform "
                     f"changes) a HOLDS allows, in (0, 1); default {DEFAULT_TOLERANCE:g} "
                     f"(precision cheap {TOLERANCE_PRESETS['cheap']:g}, strict "
                     f"{TOLERANCE_PRESETS['strict']:g}; profile quick 0.2)."),
        click.option("--indifference", type=click.FloatRange(1.05, 10.0),
                     default=DEFAULT_INDIFFERENCE, show_default=True,
                     help="The meter's guarantees hold at epsilon/r and epsilon*r."),
        click.option("--layer", type=LAYER_CHOICE, default=DEFAULT_LAYER, show_default=True),
        click.option("--relations", "relations_ref", default=None, metavar="REF|NAMES",
                     help="Built-in names (case,typo,...; opt-in: formatting, tool-injection, "
                     "injection=LABEL, obfuscation=LABEL[+LABEL]) or module:attr of a list "
                     "of Relation."),
        click.option("--no-relations", is_flag=True, help="Only the diagnostics."),
        click.option("--profile", "profile", default=None, metavar="NAME",
                     help="How much per-input evidence relations buy: quick (the pooled "
                     "effect only), standard (default: every (input, follow-up) pair "
                     "screened at size 0.5, beta 0.05), thorough (every edit kind on every "
                     "input, beta 0.01), or one registered with register_profile."),
        click.option("--edits-per-input", "edits_per_input", default=None,
                     metavar="N|auto|all",
                     help="Follow-ups per input from each relation's family of edits "
                     "(default: the profile's; auto: the primary kind on every input, each "
                     "other kind on 3; all: every kind on every input)."),
        click.option("--suppress-health-check", multiple=True, type=HEALTH_CHECK_CHOICE,
                     help="Skip a health check (repeatable); the report says it was not run."),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def report_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--format text|json|junit|markdown, --output FILE, --include-inputs, --annotations
    (``run``, ``assess``)."""
    from ._ci import FORMATS, annotations_option
    opts: list[Callable[..., Any]] = [
        click.option("--format", "fmt", type=click.Choice(list(FORMATS)),
                     default="text", show_default=True),
        click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
                     help="Write the report here (atomically) instead of stdout."),
        click.option("--include-inputs", is_flag=True,
                     help="Keep raw prompts in the report (off: fingerprints only)."),
        annotations_option,
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def require_verdicts_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--require-verdicts a,b,c`` or ``@FILE``: verdicts the probe set must produce."""
    return click.option(
        "--require-verdicts", "require_verdicts", default=None, metavar="A,B,C|@FILE",
        help="Verdict labels the probe set must produce (comma list, or @FILE with one "
             "label a line); one never produced is a finding (run) or a refusal (snapshot).",
    )(fn)


def required_verdicts(spec: str | None) -> tuple[str, ...]:
    """The labels of ``--require-verdicts`` (a one-line error for an empty or unreadable one)."""
    from ..runner import parse_required_verdicts
    return parse_required_verdicts(spec)


def edits_value(spec: str | None) -> int | str | None:
    """``--edits-per-input``: a positive integer, ``auto`` or ``all`` (None: the profile's)."""
    if spec is None:
        return None
    if spec in ("auto", "all"):
        return spec
    try:
        n = int(spec)
    except ValueError:
        n = 0
    if n < 1:
        from ..errors import BadInput
        raise BadInput(f"--edits-per-input {spec!r} is not a positive integer, auto or all",
                       "write e.g. --edits-per-input 2, auto or all")
    return n
