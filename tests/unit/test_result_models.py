"""One pydantic model per result kind: the published schemas are generated from them, the
registry covers every kind, older versions migrate, and loading names the first bad field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentverity_props.errors import BadInput
from agentverity_props.report import RESULT_KINDS, check_result, kind_for, load_result
from agentverity_props.results import DOCUMENTS, RunDocument, document_for
from agentverity_props.results.__main__ import schema_text

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda d: d.__name__)
def test_published_schema_is_generated_from_the_model(doc: type) -> None:
    published = (SCHEMAS / doc.FILE).read_text(encoding="utf-8")
    assert published == schema_text(doc), (
        f"docs/schemas/{doc.FILE} drifted from {doc.__name__}: regenerate it with "
        "python -m agentverity_props.results docs/schemas")


def test_every_model_has_one_registry_entry_and_back() -> None:
    assert sorted(k.document for k in RESULT_KINDS) == sorted(d.__name__ for d in DOCUMENTS)
    for entry in RESULT_KINDS:
        assert entry.schema.startswith(f"agentverity_props.{entry.kind}/")
        for name in entry.schemas:
            assert kind_for(name) is entry
        assert entry.exit_meanings, entry.kind
    assert kind_for("agentverity_props.run/99") is None
    assert kind_for("agentverity_props.nothing/1") is None
    assert document_for("agentverity_props.run/2") is RunDocument


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
    from agentverity_props import RunConfig, from_callable, run
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
            "from agentverity_props.results import DOCUMENTS\n"
            "from agentverity_props.results.__main__ import schema_text\n"
            f"root = Path({str(SCHEMAS)!r})\n"
            "print([d.FILE for d in DOCUMENTS if (root / d.FILE).read_text() != schema_text(d)])")
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


def test_the_recipe_for_a_result_kind_makes_it_load_validate_and_render(monkeypatch) -> None:
    """docs/architecture.md's recipe "a result kind", followed in a test: a model, its place
    in ``DOCUMENTS`` and in ``results``' exports, one ``ResultKind``; ``load_result``'s check,
    ``render`` and ``kind_for`` then take the new kind, and a wrong field is one line."""
    from typing import Annotated, ClassVar, Literal

    from pydantic import Field

    from agentverity_props import results
    from agentverity_props.report import _kinds as kinds
    from agentverity_props.report import render
    from agentverity_props.results import Document
    from agentverity_props.results import _registry as registry

    class DemoDocument(Document):
        SCHEMA: ClassVar[str] = "agentverity_props.demo/1"
        TITLE: ClassVar[str] = "demo"
        FILE: ClassVar[str] = "demo.schema.json"

        schema_: Annotated[Literal["agentverity_props.demo/1"], Field(alias="schema")]
        answers: Annotated[int, Field(ge=0)]

    monkeypatch.setattr(results, "DemoDocument", DemoDocument, raising=False)  # step 4
    monkeypatch.setattr(registry, "DOCUMENTS", (*registry.DOCUMENTS, DemoDocument))  # step 3
    monkeypatch.setitem(registry._BY_SCHEMA, DemoDocument.SCHEMA, DemoDocument)
    entry = kinds.ResultKind("demo", "DemoDocument", "demo", {0: "answered"},  # step 5
                       text=lambda r, **_: f"{r['answers']} answers")
    monkeypatch.setitem(kinds._BY_KIND, "demo", entry)

    good = {"schema": "agentverity_props.demo/1", "answers": 3}
    assert kind_for(good["schema"]) is entry
    assert document_for(good["schema"]) is DemoDocument
    assert check_result(good) == good
    assert render(good, "text") == "3 answers"
    assert json.loads(render(good, "json")) == good
    assert schema_text(DemoDocument).startswith("{")  # step 6 writes this file
    with pytest.raises(BadInput, match="answers"):
        check_result({"schema": "agentverity_props.demo/1", "answers": -1})
