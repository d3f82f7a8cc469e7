"""load_agent: every accepted reference form and every documented failure message."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from agentverity_props.adapters import Adapter, CallableAdapter
from agentverity_props.adapters._refs import load_agent
from agentverity_props.errors import BadInput

_MODULES_BEFORE: set[str] = set()


@pytest.fixture(autouse=True)
def _restore_interpreter_state():
    """Loading user files must leave sys.path as it was; drop modules the test created."""
    path_before = list(sys.path)
    modules_before = set(sys.modules)
    _MODULES_BEFORE.clear()
    _MODULES_BEFORE.update(modules_before)
    yield
    assert sys.path == path_before
    for name in set(sys.modules) - modules_before:
        if name.startswith(("_agentverity_ref_", "avp_refs_")):
            del sys.modules[name]


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def bad(ref: str, *, cwd: Path) -> BadInput:
    with pytest.raises(BadInput) as info:
        load_agent(ref, cwd=cwd)
    err = info.value
    message = str(err)
    assert "\n" not in message, message
    assert err.fix, message  # every failure says how to fix it
    assert message == f"{err.problem} — {err.fix}"
    return err


def ref_modules() -> set[str]:
    """Modules load_agent registered for files during this test."""
    return {m for m in sys.modules
            if m.startswith("_agentverity_ref_") and m not in _MODULES_BEFORE}


STRANDS_FACTORY = """
    import random
    from strands import Agent
    from agentverity_props.examples._offline_model import OfflineModel, final, first_user_text

    _rng = random.Random(0)

    def _policy(messages, tool_specs, rng):
        return final("echo: " + first_user_text(messages))

    def make_agent():
        return Agent(model=OfflineModel(_policy, rng=_rng), callback_handler=None)

    shared = make_agent()
"""


# ------------------------------------------------------------------ successes


def test_file_attr_adapter_instance_is_used_as_is(tmp_path):
    write(tmp_path, "agent_file.py", """
        from agentverity_props.adapters import from_callable
        agent = from_callable(lambda p: "allow", identity="mine")
    """)
    adapter = load_agent("agent_file.py:agent", cwd=tmp_path)
    assert isinstance(adapter, CallableAdapter)
    assert adapter.identity == "mine"
    assert adapter.invoke("x").text == "allow"


def test_file_prompt_function_becomes_callable_adapter(tmp_path):
    write(tmp_path, "sub/gate.py", """
        def gate(prompt: str) -> dict:
            return {"verdict": "block" if "attack" in prompt else "allow"}
    """)
    adapter = load_agent("sub/gate.py:gate", cwd=tmp_path)
    assert adapter.identity == "callable:gate.gate"
    assert adapter.invoke("an attack").verdict == "block"
    assert adapter.is_async is False


def test_async_prompt_function(tmp_path):
    write(tmp_path, "agent_async.py", """
        async def answer(prompt):
            return "async " + prompt
    """)
    adapter = load_agent("agent_async.py:answer", cwd=tmp_path)
    assert adapter.is_async is True


def test_absolute_path_and_default_cwd(tmp_path, monkeypatch):
    path = write(tmp_path, "abs_agent.py", "def run(prompt):\n    return 'ok'\n")
    assert load_agent(f"{path}:run").invoke("x").text == "ok"
    monkeypatch.chdir(tmp_path)
    assert load_agent("abs_agent.py:run").invoke("x").text == "ok"


def test_zero_arg_factory_returning_adapter(tmp_path):
    write(tmp_path, "factory_adapter.py", """
        from agentverity_props.adapters import from_callable
        def build():
            return from_callable(lambda p: p.upper(), identity="built")
    """)
    adapter = load_agent("factory_adapter.py:build", cwd=tmp_path)
    assert adapter.identity == "built"
    assert adapter.invoke("hi").text == "HI"


def test_factory_returning_prompt_callable_and_class_with_call(tmp_path):
    write(tmp_path, "factories.py", """
        def make_gate(seed=0):
            return lambda prompt: f"seed {seed}"

        class Gate:
            def __call__(self, prompt):
                return "class " + prompt
    """)
    assert load_agent("factories.py:make_gate", cwd=tmp_path).invoke("x").text == "seed 0"
    assert load_agent("factories.py:Gate", cwd=tmp_path).invoke("x").text == "class x"


def test_prompt_named_parameter_with_default_is_a_prompt_callable(tmp_path):
    write(tmp_path, "defaults.py", "def answer(prompt='hi'):\n    return 'said ' + prompt\n")
    assert load_agent("defaults.py:answer", cwd=tmp_path).invoke("x").text == "said x"


def test_dotted_attribute(tmp_path):
    write(tmp_path, "holder.py", """
        class Holder:
            @staticmethod
            def gate(prompt):
                return "held"
    """)
    assert load_agent("holder.py:Holder.gate", cwd=tmp_path).invoke("x").text == "held"


def test_sibling_imports_work_and_sys_path_is_restored(tmp_path):
    suffix = uuid.uuid4().hex[:8]
    write(tmp_path, f"avp_refs_helper_{suffix}.py", "LABEL = 'from sibling'\n")
    write(tmp_path, "uses_sibling.py", f"""
        from avp_refs_helper_{suffix} import LABEL
        def gate(prompt):
            return LABEL
    """)
    assert load_agent("uses_sibling.py:gate", cwd=tmp_path).invoke("x").text == "from sibling"
    assert str(tmp_path) not in sys.path


def test_module_reference(tmp_path):
    pkg = f"avp_refs_pkg_{uuid.uuid4().hex[:8]}"
    write(tmp_path, f"{pkg}/__init__.py", "")
    write(tmp_path, f"{pkg}/agents.py", "def gate(prompt):\n    return 'module ok'\n")
    adapter = load_agent(f"{pkg}.agents:gate", cwd=tmp_path)
    assert adapter.identity == f"callable:{pkg}.agents.gate"
    assert adapter.invoke("x").text == "module ok"


def test_installed_module_reference():
    adapter = load_agent("agentverity_props.examples.plain:gate")
    assert adapter.identity == "callable:agentverity_props.examples.plain.gate"
    assert adapter.invoke("Write a haiku about autumn leaves.").verdict == "allow"


@pytest.mark.parametrize(
    ("defined", "expected"),
    [
        (("agent", "make_agent", "run_agent"), "agent"),
        (("make_agent", "run_agent"), "make_agent"),
        (("run_agent",), "run_agent"),
    ],
)
def test_bare_file_picks_agent_then_make_agent_then_run_agent(tmp_path, defined, expected):
    lines = ["from agentverity_props.adapters import from_callable"]
    if "agent" in defined:
        lines.append("agent = from_callable(lambda p: 'agent', identity='agent')")
    if "make_agent" in defined:
        lines.append("def make_agent():\n    return from_callable(lambda p: 'make_agent')")
    if "run_agent" in defined:
        lines.append("def run_agent(task: str) -> str:\n    return 'run_agent'")
    write(tmp_path, "bare.py", "\n".join(lines) + "\n")
    assert load_agent("bare.py", cwd=tmp_path).invoke("task").text == expected


def test_agentverdict_run_agent_file(tmp_path):
    write(tmp_path, "my_agent.py", "def run_agent(task: str) -> str:\n    return task[::-1]\n")
    adapter = load_agent("my_agent.py", cwd=tmp_path)
    assert adapter.identity == "callable:my_agent.run_agent"
    assert adapter.invoke("abc").text == "cba"


def test_strands_factory_is_wrapped_with_from_strands(tmp_path):
    pytest.importorskip("strands")
    from agentverity_props.adapters._strands import StrandsAdapter

    write(tmp_path, "strands_agent.py", STRANDS_FACTORY)
    adapter = load_agent("strands_agent.py:make_agent", cwd=tmp_path)
    assert isinstance(adapter, StrandsAdapter)
    assert isinstance(adapter, Adapter)
    assert adapter.identity == "strands:strands_agent.make_agent"
    assert adapter.invoke("hello").text == "echo: hello"
    assert adapter.invoke("again").text == "echo: again"  # a fresh agent per call


# ------------------------------------------------------------------ failures


@pytest.mark.parametrize(
    ("ref", "problem", "fix"),
    [
        ("", "empty agent reference", "module:attr"),
        ("   ", "empty agent reference", "module:attr"),
        ("mypackage", "neither module:attr nor a .py file", "e.g. examples/moderation_gate.py"),
        ("agent.py:", "ends with ':'", "name the attribute"),
        (":agent", "nothing before ':'", "module or a .py file"),
        ("mod:1bad", "is not an attribute name", "Python identifier"),
        ("not-a-module:agent", "is not a module name", "dotted.module:attr"),
    ],
)
def test_malformed_references(tmp_path, ref, problem, fix):
    err = bad(ref, cwd=tmp_path)
    assert problem in err.problem
    assert fix in err.fix


def test_file_not_found(tmp_path):
    err = bad("missing/agent.py:agent", cwd=tmp_path)
    assert "not found" in err.problem
    assert "agent.py" in err.problem
    assert "check the path" in err.fix
    assert str(tmp_path) in err.fix


def test_folder_and_non_python_file(tmp_path):
    (tmp_path / "agents").mkdir()
    assert "is a folder" in bad("agents/:agent", cwd=tmp_path).problem
    assert "is a folder" in bad("./agents", cwd=tmp_path).problem
    write(tmp_path, "agent.txt", "x = 1\n")
    assert "is not a .py file" in bad("agent.txt:x", cwd=tmp_path).problem


def test_module_not_found(tmp_path):
    err = bad("avp_refs_no_such_module_xyz.agents:agent", cwd=tmp_path)
    assert "module 'avp_refs_no_such_module_xyz.agents' not found" in err.problem
    assert "check the spelling" in err.fix


def test_missing_dependency_inside_user_file(tmp_path):
    write(tmp_path, "needs_dep.py", "import avp_refs_dependency_xyz\nagent = None\n")
    err = bad("needs_dep.py:agent", cwd=tmp_path)
    assert "ModuleNotFoundError" in err.problem
    assert "avp_refs_dependency_xyz" in err.problem
    assert "install 'avp_refs_dependency_xyz'" in err.fix
    assert isinstance(err.__cause__, ModuleNotFoundError)
    assert ref_modules() == set()


def test_missing_dependency_inside_user_module(tmp_path):
    pkg = f"avp_refs_pkg_{uuid.uuid4().hex[:8]}"
    write(tmp_path, f"{pkg}/__init__.py", "")
    write(tmp_path, f"{pkg}/agents.py", "import avp_refs_dependency_xyz\n")
    err = bad(f"{pkg}.agents:agent", cwd=tmp_path)
    assert "ModuleNotFoundError" in err.problem
    assert f"{pkg}.agents" not in sys.modules


def test_syntax_error(tmp_path):
    write(tmp_path, "broken.py", "def gate(prompt)\n    return 1\n")
    err = bad("broken.py:gate", cwd=tmp_path)
    assert "line 1" in err.problem
    assert "SyntaxError" in err.problem
    assert "fix the syntax error" in err.fix
    assert isinstance(err.__cause__, SyntaxError)
    assert ref_modules() == set()


def test_exception_while_importing_keeps_cause_and_leaves_no_module(tmp_path):
    write(tmp_path, "raises.py", "raise RuntimeError('config missing:\\n  API_KEY')\n")
    err = bad("raises.py:agent", cwd=tmp_path)
    assert "raised RuntimeError: config missing: API_KEY" in err.problem
    assert "--debug" in err.fix
    assert isinstance(err.__cause__, RuntimeError)
    assert ref_modules() == set()


def test_exception_while_importing_a_module(tmp_path):
    pkg = f"avp_refs_pkg_{uuid.uuid4().hex[:8]}"
    write(tmp_path, f"{pkg}/__init__.py", "")
    write(tmp_path, f"{pkg}/agents.py", "1 / 0\n")
    err = bad(f"{pkg}.agents:agent", cwd=tmp_path)
    assert "ZeroDivisionError" in err.problem
    assert f"{pkg}.agents" not in sys.modules


def test_sys_exit_while_importing(tmp_path):
    write(tmp_path, "script.py", "import sys\nsys.exit(3)\n")
    err = bad("script.py:agent", cwd=tmp_path)
    assert "sys.exit(3)" in err.problem
    assert "__main__" in err.fix


def test_missing_attribute_lists_public_callables(tmp_path):
    write(tmp_path, "some_agents.py", """
        from pathlib import Path
        def alpha(prompt): return "a"
        def beta(prompt): return "b"
        def _hidden(prompt): return "h"
        class Local: pass
        VALUE = 3
    """)
    err = bad("some_agents.py:gamma", cwd=tmp_path)
    assert "has no attribute 'gamma'" in err.problem
    assert "public callables found: Local, alpha, beta" in err.fix
    assert "some_agents.py:NAME" in err.fix
    assert "_hidden" not in err.fix
    assert "Path" not in err.fix
    assert ref_modules() == set()


def test_missing_attribute_in_empty_module(tmp_path):
    write(tmp_path, "empty.py", "X = 1\n")
    assert "defines no public callables" in bad("empty.py:agent", cwd=tmp_path).fix


def test_bare_file_without_known_names(tmp_path):
    write(tmp_path, "nothing.py", "def helper(prompt):\n    return 'x'\n")
    err = bad("nothing.py", cwd=tmp_path)
    assert "defines none of agent, make_agent, run_agent" in err.problem
    assert "helper" in err.fix
    assert "run_agent(task) -> str" in err.fix


def test_wrong_type(tmp_path):
    write(tmp_path, "wrong.py", "agent = 42\n")
    err = bad("wrong.py:agent", cwd=tmp_path)
    assert "is a int, not an agent" in err.problem
    assert "zero-argument factory" in err.fix


def test_too_many_arguments(tmp_path):
    write(tmp_path, "many.py", "def gate(prompt, context):\n    return 'x'\n"
                               "def kw(prompt, *, mode):\n    return 'x'\n")
    assert "takes 2 required arguments" in bad("many.py:gate", cwd=tmp_path).problem
    assert "takes 2 required arguments" in bad("many.py:kw", cwd=tmp_path).problem


def test_factory_raising(tmp_path):
    write(tmp_path, "bad_factory.py", "def make_agent():\n    raise ValueError('no key')\n")
    err = bad("bad_factory.py:make_agent", cwd=tmp_path)
    assert "calling factory" in err.problem
    assert "raised ValueError: no key" in err.problem
    assert "fix the factory" in err.fix
    assert isinstance(err.__cause__, ValueError)


def test_factory_returning_wrong_type(tmp_path):
    write(tmp_path, "odd_factory.py", "def make_agent():\n    return 42\n")
    err = bad("odd_factory.py:make_agent", cwd=tmp_path)
    assert "returned int, not an agent" in err.problem
    assert "from_strands" in err.fix


def test_strands_agent_instance_is_refused(tmp_path):
    pytest.importorskip("strands")
    write(tmp_path, "strands_instance.py", STRANDS_FACTORY)
    err = bad("strands_instance.py:shared", cwd=tmp_path)
    assert "strands.Agent instance" in err.problem
    assert "zero-argument factory" in err.fix
    assert "make_agent" in err.fix
    assert ref_modules() == set()


def test_an_object_reference_to_a_missing_name_lists_the_names_it_could_mean(tmp_path):
    """``--relations myrel:NOPE`` of a module defining ``RELATIONS`` names RELATIONS (a list,
    not a callable), and not the classes and functions it imported."""
    from agentverity_props.adapters import load_object
    from agentverity_props.errors import BadInput

    (tmp_path / "myrel_names.py").write_text(
        "from agentverity_props import Relation\n"
        "RELATIONS = [Relation('shout', 'invariant', str.upper)]\n", encoding="utf-8")
    with pytest.raises(BadInput) as info:
        load_object("myrel_names:NOPE", what="relations", cwd=tmp_path)
    msg = str(info.value)
    assert "public names found: RELATIONS" in msg
    assert "no public callables" not in msg
    assert "Relation," not in msg


# ------------------------------------------------------------------ the framework registry

ECHO_FRAMEWORK = """
    class EchoAgent:
        '''A stand-in for another framework's agent object: not callable with a prompt.'''
        def __init__(self, prefix="echo: "):
            self.prefix = prefix

    agent = EchoAgent()

    def make_agent():
        return EchoAgent(prefix="made: ")
"""


def test_a_registered_framework_is_detected_and_wrapped_by_both_entry_points(tmp_path):
    """The recipe "add an adapter" (docs/architecture.md): one ``Framework`` in the registry,
    and ``load_agent`` (an object or a factory of them) and ``as_adapter`` both wrap it."""
    from agentverity_props.adapters import as_adapter, from_callable
    from agentverity_props.adapters._registry import Framework, register

    def wrap(obj_or_factory, *, identity=None):
        make = obj_or_factory if not hasattr(obj_or_factory, "prefix") else None
        def answer(prompt: str) -> str:
            agent = make() if make is not None else obj_or_factory  # a fresh one per call
            return agent.prefix + prompt
        return from_callable(answer, identity=identity or "echo:inline")

    undo = register(Framework("echo", lambda o: type(o).__name__ == "EchoAgent", wrap,
                              "EchoAgent"))
    try:
        write(tmp_path, "echo_agent.py", ECHO_FRAMEWORK)
        by_object = load_agent("echo_agent.py:agent", cwd=tmp_path)
        assert by_object.identity == "echo:echo_agent.agent"
        assert by_object.invoke("hi").text == "echo: hi"
        by_factory = load_agent("echo_agent.py:make_agent", cwd=tmp_path)
        assert by_factory.identity == "echo:echo_agent.make_agent"
        assert by_factory.invoke("hi").text == "made: hi"
        module = sys.modules[next(iter(ref_modules()))]
        assert as_adapter(module.agent).invoke("x").text == "echo: x"
        with pytest.raises(Exception, match="already registered"):
            register(Framework("echo", bool, wrap))
    finally:
        undo()
    bad("echo_agent.py:agent", cwd=tmp_path)  # unregistered: an EchoAgent is no agent
