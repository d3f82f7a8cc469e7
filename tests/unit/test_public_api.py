"""The public surface is deliberate: __all__ matches the lazy exports, and each resolves."""

from __future__ import annotations

import subprocess
import sys

import agentverity_props
import agentverity_props.decide
import agentverity_props.engine
import agentverity_props.strategies


def test_all_matches_exports_and_every_name_resolves():
    exported = set(agentverity_props._EXPORTS) | {"__version__"}
    assert set(agentverity_props.__all__) == exported
    for name in agentverity_props.__all__:
        assert getattr(agentverity_props, name) is not None, name


def test_subpackages_export_what_they_define():
    for mod in (agentverity_props.decide, agentverity_props.engine,
                agentverity_props.strategies):
        for name in mod.__all__:
            assert hasattr(mod, name), (mod.__name__, name)


def test_import_is_light():
    code = ("import sys, agentverity_props; "
            "print([m for m in ('numpy', 'scipy', 'hypothesis', 'strands', 'httpx', "
            "'opentelemetry', 'jinja2', 'matplotlib', 'rich', 'pydantic') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_unknown_attribute_is_an_attribute_error():
    import pytest
    with pytest.raises(AttributeError):
        agentverity_props.no_such_name  # noqa: B018


def test_every_entry_point_takes_one_config_nesting_the_engine():
    """One configuration shape: ``entry(config=XConfig(engine=EngineConfig(...)))``."""
    import dataclasses
    import inspect

    from agentverity_props import tools
    from agentverity_props.engine import EngineConfig

    entries = {agentverity_props.measure: agentverity_props.MeterConfig,
               agentverity_props.enlarge: agentverity_props.EnlargeConfig,
               agentverity_props.agent_property: agentverity_props.PropertyConfig,
               agentverity_props.conversation_machine: agentverity_props.ConversationConfig,
               agentverity_props.run: agentverity_props.RunConfig,
               tools.run_suite: tools.ToolsConfig}
    for entry, cls in entries.items():
        param = inspect.signature(entry).parameters["config"]
        assert param.kind is inspect.Parameter.KEYWORD_ONLY, entry.__name__
        assert cls.__name__ in str(param.annotation), (entry.__name__, param.annotation)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        assert "EngineConfig" in str(fields["engine"].type), cls.__name__
        engine = cls().engine
        assert engine is None or isinstance(engine, EngineConfig), cls.__name__
