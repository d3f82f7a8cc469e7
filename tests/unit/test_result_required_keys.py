"""``report`` refuses a result without its kind's required keys: the list it checks is read
from the kind's model, and equals the ``required`` list of the published JSON schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentverity_props.errors import BadInput
from agentverity_props.report import RESULT_KINDS, load_result

REQUIRED_KEYS = {k.schema: k.required_keys() for k in RESULT_KINDS}

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def _published() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for path in SCHEMAS.glob("*.schema.json"):
        doc = json.loads(path.read_text(encoding="utf-8"))
        schema = doc.get("properties", {}).get("schema", {})
        names = [schema["const"]] if "const" in schema else schema.get("enum", [])
        for name in names:
            if name.startswith("agentverity_props.") and "required" in doc:
                out[name] = tuple(k for k in doc["required"] if k != "schema")
    return out


def test_required_keys_match_the_published_schemas() -> None:
    assert _published() == REQUIRED_KEYS


@pytest.mark.parametrize("schema", sorted(REQUIRED_KEYS))
def test_a_result_with_only_its_schema_is_refused(tmp_path: Path, schema: str) -> None:
    f = tmp_path / "r.json"
    f.write_text(json.dumps({"schema": schema}))
    with pytest.raises(BadInput, match="lacks"):
        load_result(f)
