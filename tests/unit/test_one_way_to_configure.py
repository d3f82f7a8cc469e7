"""One way to configure: each setting is validated and resolved once, by its config's
constructor. Flat keywords, ``with_fields`` and the pytest plugin's options are spellings of
config fields, merged in one place (``engine.configured``); nothing else re-checks a range or
pokes a resolved value."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentverity_props import agent_property, from_callable
from agentverity_props._internal.plugin import PLUGIN_SETTINGS, plugin_config, running_test
from agentverity_props.errors import InvalidArgument
from agentverity_props.property import PropertyConfig, records
from agentverity_props.runner import RunConfig

ROOT = Path(__file__).parents[2]
PKG = ROOT / "agentverity_props"
PLUGIN = ROOT / "agentverity_props_pytest.py"
#: a range check's message: "alpha=2 must be in (0, 0.5)", "budget=... must be >= 2"
RANGE = re.compile(r"must be (in \(|>=|an int >=|a number)")


def _strings(path: Path) -> list[str]:
    """Every string constant of ``path`` (the literal parts of f-strings included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_the_plugin_checks_no_setting_of_its_own():
    """The plugin holds no range check and no comparison with a number: a bad option is
    refused by the config it is applied to (``_check_settings`` builds one)."""
    tree = ast.parse(PLUGIN.read_text(encoding="utf-8"))
    assert not [s for s in _strings(PLUGIN) if RANGE.search(s)]
    numeric = [ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Compare)
               and any(isinstance(c, ast.Constant) and isinstance(c.value, (int, float))
                       and not isinstance(c.value, bool) for c in (n.left, *n.comparators))
               and "verbose" not in ast.unparse(n) and "len(" not in ast.unparse(n)
               and "sum(" not in ast.unparse(n)]
    assert numeric == []
    source = PLUGIN.read_text(encoding="utf-8")
    assert "plugin_config(PropertyConfig()" in source


def test_a_plugin_setting_reaches_a_test_only_through_plugin_config():
    """Only ``plugin_config`` applies the plugin's settings; the decorator reads the
    plugin's other options (its store, the test's node id) and no setting by itself."""
    readers = []
    for path in PKG.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("plugin_options", "plugin_config", "_plugin_option"):
                key = (node.args[0].value if node.func.id == "_plugin_option" and node.args
                       and isinstance(node.args[0], ast.Constant) else None)
                readers.append((path.relative_to(PKG).as_posix(), node.func.id, key))
    settings_read = [r for r in readers if r[1] == "_plugin_option" and r[2] in PLUGIN_SETTINGS]
    assert settings_read == []
    assert [r for r in readers if r[1] == "plugin_config"] == [
        ("property/_decorator.py", "plugin_config", None)]


def test_a_property_setting_is_range_checked_in_its_config_only():
    """In the property folder and the plugin's channel, the range checks are written once:
    in ``PropertyConfig`` (``_records.py``); the tolerance's range once in the package."""
    checks = {p.relative_to(PKG).as_posix(): [s for s in _strings(p) if RANGE.search(s)]
              for p in [*(PKG / "property").glob("*.py"), PKG / "_internal" / "plugin.py"]}
    assert {k for k, v in checks.items() if v} == {"property/_records.py"}
    tolerance = [p for p in PKG.rglob("*.py")
                 if any("it is the excess share of verdicts" in s for s in _strings(p))]
    assert [p.relative_to(PKG).as_posix() for p in tolerance] == ["diagnose/_presets.py"]


def test_with_fields_rebuilds_the_config_through_its_constructor():
    cheap = RunConfig(precision="cheap")
    assert cheap.tolerance == 0.2
    assert cheap.with_fields(precision="strict").tolerance == 0.05  # re-resolved
    assert cheap.with_fields(alpha=0.1).tolerance == 0.2
    assert RunConfig(tolerance=0.3, precision="strict").with_fields(alpha=0.1).tolerance == 0.3
    assert cheap.with_fields(retries=0).engine.retries == 0  # an engine field, flat
    with pytest.raises(InvalidArgument, match=r"alpha=0\.7 must be in \(0, 0\.5\)"):
        PropertyConfig().with_fields(alpha=0.7)
    with pytest.raises(InvalidArgument, match="tolerance"):
        PropertyConfig().with_fields(tolerance=1.5)
    with pytest.raises(InvalidArgument, match="unknown argument"):
        PropertyConfig().with_fields(tolerence=0.2)


def test_the_old_tol_attribute_is_a_warned_alias_of_tolerance():
    with pytest.warns(DeprecationWarning, match=r"RunConfig\.tolerance"):
        assert RunConfig(precision="cheap").tol == 0.2
    with pytest.warns(DeprecationWarning, match=r"PropertyConfig\.tolerance"):
        assert PropertyConfig(tolerance=0.3).tol == 0.3


def test_plugin_config_applies_the_plugins_settings_through_the_constructor():
    conf = PropertyConfig(alpha=0.01, beta=0.02, engine=PropertyConfig().engine)
    out = plugin_config(conf, {"budget": 50, "alpha": 0.1, "epsilon": 0.2, "tolerance": 0.3,
                               "store": "x.db", "test": "t.py::test"})
    assert (out.engine.budget, out.alpha, out.epsilon, out.tolerance) == (50, 0.1, 0.2, 0.3)
    assert out.candidate_beta == 0.02  # no profile option: the test's own beta
    assert plugin_config(conf, {"profile": "quick"}).candidate_beta == 0.05
    assert plugin_config(conf, {"budget": None}) is conf
    with pytest.raises(InvalidArgument, match="tolerance"):
        plugin_config(conf, {"tolerance": 2.0})


def test_the_plugins_options_apply_to_a_run_of_the_test():
    """Under the plugin's options (as the plugin hands them over around a test call), a run
    uses them over the decorator's own settings: alpha, tolerance and budget."""
    gate = from_callable(lambda p: "allow", identity="constant")

    @agent_property(agent=gate, alpha=0.05, tolerance=0.1, budget=4000)
    @settings(database=None, max_examples=5)
    @given(prompt=st.sampled_from(["hello there", "book a table", "my order is late"]))
    def test_q(check, prompt):
        check.invariant(prompt, prompt + "?", name="q")

    with running_test({"alpha": 0.1, "tolerance": 0.3, "budget": 400, "test": "t::q"}):
        test_q()
    rec = records()[-1]
    assert rec.alpha == 0.1
    assert rec.effects["q"]["tolerance"] == 0.3
    assert 0 < rec.calls <= 400
    test_q()  # outside the plugin: the decorator's own settings
    rec = records()[-1]
    assert rec.alpha == 0.05
    assert rec.effects["q"]["tolerance"] == 0.1


def test_every_entry_config_changes_through_its_constructor_only():
    """Each config an entry point takes has the one ``with_fields`` (``Configurable``'s,
    never one of its own), and the flat keywords of its entry point go through the same
    ``engine.configured``."""
    from agentverity_props.conversation import ConversationConfig
    from agentverity_props.diagnose import MeterConfig
    from agentverity_props.engine import Configurable
    from agentverity_props.search import BoundaryConfig, EnlargeConfig

    for cls in (RunConfig, MeterConfig, PropertyConfig, EnlargeConfig, BoundaryConfig,
                ConversationConfig):
        assert issubclass(cls, Configurable), cls.__name__
        assert cls.with_fields is Configurable.with_fields, cls.__name__
        assert cls().with_fields(retries=0).engine.retries == 0, cls.__name__
