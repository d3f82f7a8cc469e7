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

    @classmethod
    def required_keys(cls) -> tuple[str, ...]:
        """Top-level keys every file of the current version has (the schema's ``required``)."""
        return tuple(f.alias or name for name, f in cls.model_fields.items()
                     if f.is_required() and (f.alias or name) != "schema")

    @classmethod
    def check(cls, data: dict[str, Any], *, where: str, fix: str) -> dict[str, Any]:
        """``data`` migrated to the current version and validated; one :class:`BadInput`
        line naming the missing keys or the first field that is wrong (its path in the file
        and pydantic's message) otherwise. Returns the migrated dict itself, not a dump.

        A file of the current version is validated field by field. An older one is migrated
        and checked for the current version's top-level keys only: older versions never
        recorded every field of today's (a ``snapshot/1`` input has no ``status``), and their
        migrations fill what the renderers and readers need, not what was never measured."""
        from pydantic import ValidationError

        from ..errors import BadInput
        schema = data.get("schema")
        data = cls.migrate(data)
        missing = [k for k in cls.required_keys() if k not in data]
        if missing:
            raise BadInput(f"{where} claims schema {schema!r} but lacks "
                           f"{', '.join(missing[:5])}{' and more' if len(missing) > 5 else ''}",
                           fix)
        if schema != cls.SCHEMA:
            return data
        try:
            cls.model_validate(data)
        except ValidationError as exc:
            raise BadInput(f"{where} claims schema {schema!r} but {_first_error(exc, data)}",
                           fix) from None
        return data

    @model_validator(mode="before")
    @classmethod
    def _migrate_older(cls, data: Any) -> Any:
        return cls.migrate(data)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """The published JSON Schema of this kind (``docs/schemas/<FILE>``), generated."""
        body = _sorted_enums(cls.model_json_schema(by_alias=True, mode="validation"))
        body.pop("title", None)
        return {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": f"https://agentverity-props.invalid/schemas/{cls.FILE}",
                "title": cls.TITLE, **body}


def _sorted_enums(node: Any) -> Any:
    """Every ``enum`` list sorted: ``typing`` caches unions by their members, and two
    ``Literal`` types with the same values in another order are equal, so
    ``Literal["low", "high"] | None`` may come back in the order another module first wrote
    (``Literal["high", "low"] | None``); the published schema must not depend on that."""
    if isinstance(node, dict):
        out = {k: _sorted_enums(v) for k, v in node.items()}
        enum = out.get("enum")
        if isinstance(enum, list) and (
                all(isinstance(v, str) for v in enum)
                or all(isinstance(v, int) and not isinstance(v, bool) for v in enum)):
            out["enum"] = sorted(enum)
        return out
    if isinstance(node, list):
        return [_sorted_enums(v) for v in node]
    return node


def _first_error(exc: Any, data: Any) -> str:
    """``relations[0].status: input should be 'HOLDS', ...`` (and how many more); what the
    file supplies (key names) is shown as data, never as terminal control."""
    from .._internal.jsonpath import format_path
    from .._internal.schema_errors import clean_loc
    from .._internal.shown import visible
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc, _ = clean_loc(first["loc"], data, first["type"])
    msg = str(first["msg"])
    msg = msg[:1].lower() + msg[1:]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return visible(f"{format_path(loc)}: {msg}"[:300]) + more
