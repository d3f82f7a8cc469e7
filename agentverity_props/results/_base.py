"""The base of every result model: the JSON file format, strict."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["Document", "Model"]


class Model(BaseModel):
    """A part of a result file: no key the format does not name (``extra="forbid"``).

    Non-finite floats are written as ``null`` (JSON has no ``Infinity``), as the package's
    JSON writer does.
    """

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="null")


class Document(Model):
    """A whole result file: its ``schema`` key names the kind and version.

    ``SCHEMA`` is the version this model writes. ``MIGRATIONS`` maps each older version it
    reads to the function turning it into the next version; a ``mode="before"`` validator
    applies them in turn, so an old file validates as the current version (``migrate`` does
    the same on a plain dict). ``TITLE`` and ``FILE`` head and name the generated JSON Schema.
    """

    SCHEMA: ClassVar[str] = ""
    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {}
    TITLE: ClassVar[str] = ""
    FILE: ClassVar[str] = ""

    @classmethod
    def migrate(cls, data: Any) -> Any:
        """``data`` as the current version when it is an older one this kind reads; anything
        else (the current version, not a dict, an unknown schema) unchanged."""
        seen: set[str] = set()
        while isinstance(data, dict) and data.get("schema") in cls.MIGRATIONS:
            name = str(data["schema"])
            if name in seen:  # pragma: no cover - a migration that does not advance
                raise ValueError(f"migration of {name} does not advance")
            seen.add(name)
            data = cls.MIGRATIONS[name](data)
        return data

    @model_validator(mode="before")
    @classmethod
    def _migrate_older(cls, data: Any) -> Any:
        return cls.migrate(data)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The published JSON Schema of this kind (``docs/schemas/<FILE>``), generated."""
        body = cls.model_json_schema(by_alias=True, mode="validation")
        body.pop("title", None)
        return {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": f"https://agentverity-props.invalid/schemas/{cls.FILE}",
                "title": cls.TITLE, **body}
