"""The base of every result model: the JSON file format, strict."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["Document", "Model"]

#: the form of every result kind's schema name
_SCHEMA_NAME = re.compile(r"agentverity_props\.[a-z_]+/[1-9][0-9]*")


class Model(BaseModel):
    """A part of a result file: no key the format does not name (``extra="forbid"``), and
    each value of its JSON type (``strict``: ``"0.1"`` is not a number, ``true`` not an
    integer, ``2.0`` not a count; an integer is a number).

    Non-finite floats are written as ``null`` (JSON has no ``Infinity``), as the package's
    JSON writer does.
    """

    model_config = ConfigDict(extra="forbid", strict=True, ser_json_inf_nan="null",
                              defer_build=True)


class Document(Model):
    """A whole result file: its ``schema`` key names the kind and version.

    The version this model writes is written once, as the type of its ``schema`` field
    (``schema_: Annotated[Literal["agentverity_props.<kind>/<n>"], Field(alias="schema")]``);
    ``SCHEMA`` (that string), ``KIND`` (``<kind>``) and ``FILE`` (``<kind>.schema.json``, the
    generated JSON Schema's name) are derived from it when the class is made, and every
    producer of the kind reads ``SCHEMA`` from the model. ``MIGRATIONS`` lists the older
    versions it reads, oldest first, each with the function turning a file of that version
    into the next one (the next key, the last into ``SCHEMA``; the step sets the ``schema``
    key, the function changes the body); a ``mode="before"`` validator applies them in turn,
    so an old file validates as the current version (``migrate`` does the same on a plain
    dict). ``TITLE`` heads the generated JSON Schema.
    """

    SCHEMA: ClassVar[str] = ""
    KIND: ClassVar[str] = ""
    FILE: ClassVar[str] = ""
    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = {}
    TITLE: ClassVar[str] = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("schema_")
        names = get_args(field.annotation) if field is not None else ()
        if len(names) != 1 or not isinstance(names[0], str) \
                or not _SCHEMA_NAME.fullmatch(names[0]):
            raise TypeError(f"{cls.__name__} needs a field schema_: Annotated[Literal["
                            "'agentverity_props.<kind>/<version>'], Field(alias='schema')]")
        cls.SCHEMA = names[0]
        cls.KIND = names[0].removeprefix("agentverity_props.").split("/")[0]
        cls.FILE = f"{cls.KIND}.schema.json"

    @classmethod
    def migrate(cls, data: Any) -> Any:
        """``data`` as the current version when it is an older one this kind reads; anything
        else (the current version, not a dict, an unknown schema) unchanged."""
        order = list(cls.MIGRATIONS)
        while isinstance(data, dict) and data.get("schema") in cls.MIGRATIONS:
            step = order.index(str(data["schema"]))
            after = order[step + 1] if step + 1 < len(order) else cls.SCHEMA
            data = {**cls.MIGRATIONS[order[step]](data), "schema": after}
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

        The model is the one validator of a file: a file of the current version is validated
        field by field, and so is an older one once migrated, except that a key the older
        version never recorded may be absent (a ``snapshot/1`` input has no ``status``; its
        migration fills what the renderers and readers need, not what was never measured);
        a wrong type or value in it is refused as in a current file."""
        from pydantic import ValidationError

        from ..errors import BadInput
        schema = data.get("schema")
        try:
            data = cls.migrate(data)
        except (TypeError, AttributeError, KeyError, ValueError):  # a damaged older file
            raise BadInput(f"{where} claims schema {schema!r} but its contents are not that "
                           "version's", fix) from None
        missing = [k for k in cls.required_keys() if k not in data]
        if missing:
            raise BadInput(f"{where} claims schema {schema!r} but lacks "
                           f"{', '.join(missing[:5])}{' and more' if len(missing) > 5 else ''}",
                           fix)
        try:
            cls.model_validate(data)
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
            if schema != cls.SCHEMA:
                errors = [e for e in errors if e["type"] != "missing"]
            if errors:
                raise BadInput(f"{where} claims schema {schema!r} but "
                               f"{_first_error(errors, data)}", fix) from None
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


def _first_error(errors: list[Any], data: Any) -> str:
    """``relations[0].status: input should be 'HOLDS', ...`` (and how many more); what the
    file supplies (key names) is shown as data, never as terminal control."""
    from .._internal.jsonpath import format_path
    from .._internal.schema_errors import clean_loc
    from .._internal.shown import visible
    first = errors[0]
    loc, _ = clean_loc(first["loc"], data, first["type"])
    msg = str(first["msg"])
    msg = msg[:1].lower() + msg[1:]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return visible(f"{format_path(loc)}: {msg}"[:300]) + more
