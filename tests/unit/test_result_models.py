"""One pydantic model per result kind: the published schemas are generated from them, the
registry covers every kind, older versions migrate, and loading names the first bad field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentverity_props.errors import BadInput
from agentverity_props.report import (
    RESULT_KINDS,
    check_result,
    document_for,
    kind_for,
    load_result,
)
from agentverity_props.report.__main__ import schema_text
from agentverity_props.results import Document, RunDocument

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
MODELS = [k.model for k in RESULT_KINDS]


@pytest.mark.parametrize("doc", MODELS, ids=lambda d: d.__name__)
def test_published_schema_is_generated_from_the_model(doc: type) -> None:
    published = (SCHEMAS / doc.FILE).read_text(encoding="utf-8")
    assert published == schema_text(doc), (
        f"docs/schemas/{doc.FILE} drifted from {doc.__name__}: regenerate it with "
        "python -m agentverity_props.report docs/schemas")


def test_the_registry_holds_every_model_once_and_finds_each_version() -> None:
    from agentverity_props import results
    models = {getattr(results, n) for n in results._EXPORTS}
    models = {m for m in models if m is not Document}
    assert set(MODELS) == models  # every model...
    assert len(MODELS) == len(models)  # ...once
    assert len({k.kind for k in RESULT_KINDS}) == len(RESULT_KINDS)
    for entry in RESULT_KINDS:
        assert entry.schema == entry.model.SCHEMA
        assert entry.schema.startswith(f"agentverity_props.{entry.kind}/")
        assert f"{entry.kind}.schema.json" == entry.model.FILE
        for name in entry.schemas:
            assert kind_for(name) is entry
            assert document_for(name) is (None if name in entry.legacy else entry.model)
        assert entry.exit_meanings, entry.kind
    assert kind_for("agentverity_props.run/99") is None
    assert kind_for("agentverity_props.nothing/1") is None
    assert document_for("agentverity_props.run/2") is RunDocument
    assert document_for("agentverity_props.run/99") is None


def test_a_model_without_a_schema_name_is_refused_when_made() -> None:
    from typing import Annotated, Literal

    from pydantic import Field
    with pytest.raises(TypeError, match="schema_"):
        class NoName(Document):
            answers: int
    with pytest.raises(TypeError, match="schema_"):
        class BadName(Document):
            schema_: Annotated[Literal["demo-1"], Field(alias="schema")]


def test_each_schema_name_is_written_once_in_the_package() -> None:
    """The version a kind writes today is written once, as the type of its model's ``schema``
    field; every producer reads ``SCHEMA`` from the model."""
    import re
    root = Path(__file__).resolve().parents[2]
    files = [*sorted((root / "agentverity_props").rglob("*.py")),
             root / "agentverity_props_pytest.py"]
    texts = {f.relative_to(root).as_posix(): f.read_text(encoding="utf-8") for f in files}
    for entry in RESULT_KINDS:
        where = [f for f, t in texts.items() for _ in re.finditer(re.escape(entry.schema), t)]
        assert where == [f"agentverity_props/results/_{entry.kind}.py"], (entry.schema, where)


def test_a_run_1_file_migrates_through_run_2_to_run_3() -> None:
    old = {"schema": "agentverity_props.run/1", "relations": [
        {"name": "case", "status": "HOLDS", "outcomes": [
            {"status": "not-confirmed", "confirmation": {"p_value": 0.5, "alpha": 0.05}}]}]}
    new = RunDocument.migrate(old)
    assert new["schema"] == "agentverity_props.run/3"
    rel = new["relations"][0]
    assert rel["effect"] is None
    assert rel["statement"].startswith("version 2")
    assert rel["outcomes"][0]["status"] == "pass"
    assert rel["outcomes"][0]["decision"]["e_violation"] == 2.0
    assert old["schema"] == "agentverity_props.run/1"  # the input is left as it was


def _valid_run(tmp_path: Path) -> dict:
    from agentverity_props import from_callable, run
    from agentverity_props.runner import RunConfig
    res = run(from_callable(lambda p: "block" if "kill" in p else "allow"),
              ["kill it", "hello", "hi there", "kill all"], relations=[],
              config=RunConfig(budget=60, max_workers=1))
    return json.loads(json.dumps(res.to_dict()))


def test_a_file_with_a_wrong_field_is_refused_naming_it(tmp_path: Path) -> None:
    d = _valid_run(tmp_path)
    assert check_result(d)["schema"] == "agentverity_props.run/3"
    d["meter"]["call"] = "\x1b[31mcertain"
    f = tmp_path / "r.json"
    f.write_text(json.dumps(d))
    with pytest.raises(BadInput) as exc:
        load_result(f)
    msg = str(exc.value)
    assert "meter.call" in msg
    assert "\x1b" not in msg


def test_a_file_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    d = _valid_run(tmp_path)
    d["meter"]["surprise"] = 1
    with pytest.raises(BadInput, match=r"meter: extra inputs are not permitted|surprise"):
        check_result(d)


def test_the_writer_under_test_refuses_a_result_that_does_not_fit(tmp_path: Path) -> None:
    from agentverity_props.report import dumps
    d = _valid_run(tmp_path)
    dumps(d)  # fits
    d["exit_code"] = 7
    with pytest.raises(AssertionError, match="does not fit its model"):
        dumps(d)


def test_the_generated_schema_does_not_depend_on_import_order() -> None:
    """``typing`` caches unions by their members and equal ``Literal`` types need not share an
    order: a ``Literal["high", "low"] | None`` made before the models are imported comes
    back for their ``Literal["low", "high"] | None``."""
    import subprocess
    import sys
    code = ("import typing\n"
            "typing.Literal['high', 'low'] | None\n"
            "from pathlib import Path\n"
            "from agentverity_props.report import RESULT_KINDS\n"
            "from agentverity_props.report.__main__ import schema_text\n"
            f"root = Path({str(SCHEMAS)!r})\n"
            "print([k.model.FILE for k in RESULT_KINDS\n"
            "       if (root / k.model.FILE).read_text() != schema_text(k.model)])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_a_newer_version_of_a_known_kind_says_so(tmp_path: Path) -> None:
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"schema": "agentverity_props.run/9", "agent": "x"}))
    with pytest.raises(BadInput, match=r"run result of format 'agentverity_props.run/9'.*"
                                       r"reads agentverity_props.run/1, .*run/3") as exc:
        load_result(f)
    assert "upgrade" in exc.value.fix
    f.write_text(json.dumps({"schema": "agentverity_props.nothing/1"}))
    with pytest.raises(BadInput, match="is not an agentverity-props result"):
        load_result(f)


def test_the_recipe_for_a_result_kind_makes_it_load_validate_and_render(
        monkeypatch, tmp_path: Path, capsys) -> None:
    """docs/architecture.md's recipe "a result kind", followed in a test: a model (step 1),
    exported by ``results`` (step 2), and one ``ResultKind`` in the registry with its
    renderers (step 5); nothing else. Then the public paths take the new kind:
    ``load_result``, ``agentverity-props report FILE`` (text, JUnit, Markdown, JSON, HTML),
    ``document_for``, the schema writer (step 6) and the check of every written result, and
    a wrong field is one line (exit 2 in the CLI). The demo records no exit code: its entry
    derives it, and the Markdown heading shows it."""
    from typing import Annotated, ClassVar, Literal

    import jsonschema
    from pydantic import Field

    from agentverity_props import results
    from agentverity_props.cli import main
    from agentverity_props.report import _registry as registry
    from agentverity_props.report import dumps, render, render_html
    from agentverity_props.report.__main__ import main as write_schemas
    from agentverity_props.report._kinds import derived_exit
    from agentverity_props.report._md import head, meaning

    class DemoDocument(Document):  # step 1: results/_demo.py
        """Written by a demo feature."""

        TITLE: ClassVar[str] = "agentverity-props demo result"

        schema_: Annotated[Literal["agentverity_props.demo/1"], Field(alias="schema")]
        answers: Annotated[int, Field(ge=0)]

    monkeypatch.setattr(results, "DemoDocument", DemoDocument, raising=False)  # step 2
    meanings = {0: "answered", 1: "unanswered"}
    entry = registry.ResultKind(  # step 5: report/_registry.py
        "DemoDocument", "demo", meanings,
        text=lambda r, **_: f"{r['answers']} answers",
        markdown=lambda r, **_: [*head("demo", r, meaning(meanings, r), None),
                                 f"{r['answers']} answers"],
        junit=lambda r: f"<testsuite tests=\"{r['answers']}\"/>",
        derive_exit=lambda r: 0 if r["answers"] else 1)
    monkeypatch.setattr(registry, "RESULT_KINDS", (*registry.RESULT_KINDS, entry))

    good = {"schema": DemoDocument.SCHEMA, "answers": 3}  # step 3: to_dict()
    assert DemoDocument.SCHEMA == "agentverity_props.demo/1"
    assert (DemoDocument.KIND, DemoDocument.FILE) == ("demo", "demo.schema.json")
    assert kind_for(good["schema"]) is entry
    assert document_for(good["schema"]) is DemoDocument
    f = tmp_path / "demo.json"
    f.write_text(dumps(good))  # the writer's check under test takes the kind
    assert load_result(f) == good
    assert render(good, "text") == "3 answers"
    assert json.loads(render(good, "json")) == good
    assert "3" in render(good, "markdown")
    assert (derived_exit(good), derived_exit({**good, "answers": 0})) == (0, 1)
    assert "exit 1" in render({**good, "answers": 0}, "markdown")
    assert "**unanswered**" in render({**good, "answers": 0}, "markdown")
    assert "demo" in render_html(good)

    for fmt, want in (("text", "3 answers"), ("junit", 'tests="3"'), ("json", '"answers": 3')):
        with pytest.raises(SystemExit) as done:
            main(["report", str(f), "--format", fmt])
        assert done.value.code == 0, fmt
        assert want in capsys.readouterr().out, fmt

    assert write_schemas([str(tmp_path / "schemas")]) == 0  # step 6
    capsys.readouterr()
    schema = json.loads((tmp_path / "schemas" / "demo.schema.json").read_text())
    assert schema["title"] == "agentverity-props demo result"
    jsonschema.validate(good, schema)

    bad = {**good, "answers": -1}
    with pytest.raises(BadInput, match=r"answers: input should be greater than or equal to 0"):
        check_result(bad)
    with pytest.raises(AssertionError, match="does not fit its model"):
        dumps(bad)
    f.write_text(json.dumps(bad))
    with pytest.raises(SystemExit) as done:
        main(["report", str(f)])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "answers" in err
    assert "Traceback" not in err
