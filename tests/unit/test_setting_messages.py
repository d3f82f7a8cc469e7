"""Library messages name a setting in the caller's terms (``_internal/settings.py``)."""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

import pytest

import agentverity_props_pytest as plugin
from agentverity_props._internal.aio import run_sync
from agentverity_props._internal.settings import SETTINGS, current_edge, setting, speaking
from agentverity_props.engine import Engine, EngineConfig, Probe
from agentverity_props.engine._session import LoopThread
from agentverity_props.errors import BudgetExhausted

PACKAGE = Path(__file__).parents[2] / "agentverity_props"
FLAG = re.compile(r"(?<![\w-])(?<!var\()--[a-z][a-z0-9-]+")

#: the spelling each edge must use for the budget, and the others' it must not leak
OWN = {"python": "budget=", "cli": "--budget", "pytest": "--agentverity-budget"}
FOREIGN = {"python": ("--budget", "--agentverity"), "cli": ("--agentverity", "budget="),
           "pytest": ("budget=", " --budget")}

#: modules another change owns (the result models, the adapters, the report kinds table):
#: their flags are known leftovers, not a pass
LEFTOVERS = {"results", "adapters", "report/_kinds.py"}
#: (module, flag) that are not a setting of this package's edges: another program's flag, the
#: CLI's global --debug, the bench file's schema text (docs/schemas) and two notes naming a
#: command line whole (known leftovers)
NOT_SETTINGS = {
    ("assess/_promptfoo.py", "--no-cache"),        # promptfoo's own flag
    ("bench/_evaluators.py", "--debug"),           # run_cli's global flag
    ("assess/_jsonl.py", "--verdict-key"), ("assess/_jsonl.py", "--verdict-regex"),  # schema
    ("bench/_model.py", "--runs"),                 # schema text of the bench file
    ("bench/_moves.py", "--early-stop"),           # MOVES_NOTE names a command line
    ("report/_bench.py", "--runs"),                # BENCH_EXIT, read by report/_kinds.py
    ("report/_markdown.py", "--format"),           # render_markdown moves to report/_kinds.py
}


def _budget_message() -> str:
    eng = Engine(lambda p: "ok", EngineConfig(budget=1))
    try:
        run_sync(eng.draw(Probe.make("a")))
        with pytest.raises(BudgetExhausted) as info:
            run_sync(eng.draw(Probe.make("b")))
    finally:
        eng.close()
    return str(info.value)


def _assert_spoken(edge: str, text: str) -> None:
    assert OWN[edge] in text, (edge, text)
    for other in FOREIGN[edge]:
        assert other not in text, (edge, other, text)


@pytest.mark.parametrize("edge", ["python", "cli", "pytest"])
def test_the_engine_names_the_budget_as_the_edge_that_runs_it(edge: str) -> None:
    with speaking(edge):  # type: ignore[arg-type]
        text = _budget_message()
    _assert_spoken(edge, text)


def test_python_is_the_default_edge() -> None:
    assert current_edge() in ("python", "pytest")  # pytest only inside @agent_property
    with speaking("python"):
        _assert_spoken("python", _budget_message())


@pytest.mark.parametrize("edge", ["cli", "pytest"])
def test_the_edge_travels_into_another_threads_loop(edge: str) -> None:
    """LoopThread (@agent_property) and run_sync from a running loop (Jupyter) run the
    engine in another thread: a message formed there is still spelled as the caller's."""
    async def spent(eng: Engine) -> str:
        await eng.draw(Probe.make("a"))
        try:
            await eng.draw(Probe.make("b"))
        except BudgetExhausted as exc:
            return str(exc)
        raise AssertionError("the budget of 1 was not enforced")

    with speaking(edge):  # type: ignore[arg-type]
        loop = LoopThread()
        eng = Engine(lambda p: "ok", EngineConfig(budget=1))
        try:
            _assert_spoken(edge, loop.run(spent(eng)))
        finally:
            loop.run(eng.aclose())
            loop.close()

        async def inside_a_loop() -> str:
            eng2 = Engine(lambda p: "ok", EngineConfig(budget=1))
            try:
                return run_sync(spent(eng2))  # a loop runs here: run_sync uses a thread
            finally:
                eng2.close()

        _assert_spoken(edge, asyncio.run(inside_a_loop()))


def test_spellings_of_one_setting() -> None:
    assert setting("budget", 500, edge="cli") == "--budget 500"
    assert setting("budget", 500, edge="python") == "budget=500"
    assert (setting("budget", 500, edge="pytest")
            == "--agentverity-budget 500 (ini agentverity_budget)")
    assert setting("budget", "", edge="python") == "budget"
    assert setting("budget", "", edge="cli") == "--budget"
    # a setting the plugin has no option for: the test's own Python keyword under pytest
    assert setting("precision", "cheap", edge="pytest") == "precision=cheap"
    assert setting("tokens_from", "r.json", edge="python") == "TokensPerCall.measured(r.json)"


def test_the_table_matches_the_pytest_plugins_options() -> None:
    options = {v for k, v in vars(plugin).items() if k.startswith("OPT_")}
    for key, spelled in SETTINGS.items():
        if spelled.pytest is None:
            assert spelled.ini is None, key
            continue
        option = spelled.pytest.split()[0]
        assert option in options, (key, option)
        assert plugin.INI_NAMES[option] == spelled.ini, key


def test_the_table_matches_the_cli_flags() -> None:
    from agentverity_props.cli._main import COMMANDS, cli

    flags: set[str] = set()
    for name in COMMANDS:
        cmd = cli.get_command(None, name)  # type: ignore[arg-type]
        stack = [cmd]
        while stack:
            c = stack.pop()
            stack.extend(getattr(c, "commands", {}).values())
            for p in getattr(c, "params", []):
                flags.update(o for o in p.opts if o.startswith("--"))
    for key, spelled in SETTINGS.items():
        assert spelled.cli is not None, key
        for flag in FLAG.findall(spelled.cli):
            assert flag in flags, (key, flag)


def _message_strings(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings (docstrings document the CLI)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docs.add(id(body[0].value))
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_library_module_outside_the_edges_writes_a_flag() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("cli/") or rel == "_internal/settings.py":
            continue  # the CLI is an edge; the table is where flags are spelled
        if any(rel == left or rel.startswith(left + "/") for left in LEFTOVERS):
            continue
        for line, text in _message_strings(path):
            found += [f"{rel}:{line}: {flag}" for flag in FLAG.findall(text)
                      if (rel, flag) not in NOT_SETTINGS]
    assert not found, "write setting(KEY) instead of a flag:\n" + "\n".join(found)


def test_the_flag_scan_would_see_a_flag(tmp_path: Path) -> None:
    mod = tmp_path / "m.py"
    mod.write_text('"""Doc: --budget here is documentation."""\n'
                   'MSG = "raise --budget N"\nCSS = "var(--grid)"\n')
    assert [FLAG.findall(t) for _, t in _message_strings(mod)] == [["--budget"], []]
