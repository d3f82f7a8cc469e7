"""The strategy-pack file format, as pydantic models, and its published JSON Schema.

``docs/schemas/strategy-pack.schema.json`` is generated from these models by
:func:`pack_json_schema`; regenerate it after changing a model with::

    python -c "from agentverity_props.strategies._schema import pack_json_schema_text as t; \
print(t(), end='')" > docs/schemas/strategy-pack.schema.json

(a test fails when the committed file and the models disagree).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    create_model,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..relations import FAMILIES_WITH_REQUIRED_OPTIONS, PERTURBATION_NAMES
from ._prompts import parse_template

__all__ = [
    "CANONICAL_REGIONS",
    "SIMPLE_PERTURBATIONS",
    "CountOptions",
    "DistractorOptions",
    "EntitySwapOptions",
    "InjectionOptions",
    "ParaphraseOptions",
    "PolitenessOptions",
    "Region",
    "StrategyPack",
    "TypoOptions",
    "pack_json_schema",
]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
CANONICAL_REGIONS: tuple[str, ...] = ("everyday", "borderline", "violation")

_IDENT = r"^[A-Za-z_][A-Za-z0-9_]*$"
SlotName = Annotated[str, StringConstraints(pattern=_IDENT)]
RegionName = Annotated[str, StringConstraints(pattern=_IDENT)]
NonEmptyStr = Annotated[str, StringConstraints(min_length=1)]
LexiconList = Annotated[list[str], Field(min_length=1)]

#: Families a pack may name without options: every perturbation family (one table,
#: ``PERTURBATION_NAMES``) except those whose strategy needs the user's values.
SIMPLE_PERTURBATIONS: tuple[str, ...] = tuple(
    n for n in PERTURBATION_NAMES if n not in FAMILIES_WITH_REQUIRED_OPTIONS)
if TYPE_CHECKING:
    SimplePerturbation = str
else:
    SimplePerturbation = Literal[SIMPLE_PERTURBATIONS]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Region(_Strict):
    """One region of the input space (e.g. everyday, borderline, violation)."""

    weight: float = Field(
        default=1.0, gt=0,
        description="Relative share of generated examples drawn from this region.")
    templates: Annotated[list[NonEmptyStr], Field(min_length=1)] = Field(
        description="Text templates with {slot} placeholders, simplest/mildest first "
                    "(shrinking moves toward the first).")
    slots: dict[SlotName, LexiconList] = Field(
        default_factory=dict,
        description="Per-region lexicons; they override pack-level slots of the same name.")
    expect: list[str] = Field(
        default_factory=list,
        description="Verdict labels a correct agent may give texts from this region "
                    "(informational; each must be listed in the pack's labels).")


class CountOptions(_Strict):
    """Options for whitespace and punctuation perturbations."""

    max_count: int = Field(default=3, ge=1, le=10, description="Most edits per perturbation.")


class TypoOptions(_Strict):
    """Options for typo perturbations."""

    max_count: int = Field(default=3, ge=1, le=5, description="Most typos per perturbation.")


class PolitenessOptions(_Strict):
    prefixes: Annotated[list[NonEmptyStr], Field(min_length=1)] = Field(
        description="Polite openings, mildest first, each prepended verbatim.")


class DistractorOptions(_Strict):
    sentences: Annotated[list[NonEmptyStr], Field(min_length=1)] = Field(
        description="Irrelevant sentences (shrinking moves toward the shortest).")


class ParaphraseOptions(_Strict):
    templates: Annotated[list[NonEmptyStr], Field(min_length=1)] = Field(
        description="Templates containing {text} exactly once, mildest first.")


class InjectionOptions(_Strict):
    labels: Annotated[list[NonEmptyStr], Field(min_length=1)] = Field(
        description="Verdict labels an injected instruction asks for, mildest first (for a "
                    "safety gate: the permissive one).")


class EntitySwapOptions(_Strict):
    mapping: Annotated[dict[NonEmptyStr, NonEmptyStr | LexiconList], Field(min_length=1)] = Field(
        description="Entity (name, place, phrase) to one replacement or a list of them.")


#: family -> the options a pack may give it as a one-key mapping (``typo: {max_count: 2}``).
#: Each key is a family of the one family table (``PERTURBATION_NAMES``), and every family
#: whose strategy needs the user's values is here (tests/unit/test_relation_families.py)
FAMILY_OPTIONS: dict[str, type[BaseModel]] = {
    "typo": TypoOptions,
    "whitespace": CountOptions,
    "punctuation": CountOptions,
    "politeness": PolitenessOptions,
    "distractor": DistractorOptions,
    "paraphrase": ParaphraseOptions,
    "entity_swap": EntitySwapOptions,
    "injection": InjectionOptions,
}
_ITEM_TAGS = tuple(FAMILY_OPTIONS)
#: one model a family, ``{family: options}`` (named ``TypoItem``, ``EntitySwapItem``, ...)
_ITEMS: dict[str, type[BaseModel]] = {
    family: create_model("".join(w.capitalize() for w in family.split("_")) + "Item",
                         __base__=_Strict, **{family: (options, ...)})  # type: ignore[call-overload]
    for family, options in FAMILY_OPTIONS.items()
}


def _item_tag(value: Any) -> str | None:
    if isinstance(value, str):
        return "name"
    if isinstance(value, BaseModel):
        return next(iter(type(value).model_fields))
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        return key if key in _ITEM_TAGS else None
    return None


_ITEM_TYPES: tuple[Any, ...] = (Annotated[SimplePerturbation, Tag("name")],
                                *(Annotated[m, Tag(f)] for f, m in _ITEMS.items()))
_ITEM_UNION: Any = Union[_ITEM_TYPES]  # noqa: UP007 (a union built from the table)
PerturbationItem = Annotated[
    _ITEM_UNION,
    Discriminator(
        _item_tag,
        custom_error_type="perturbation_item",
        custom_error_message="not a perturbation name or a one-key mapping of name to options",
    ),
]


def _problem(problem: str, path: tuple[str | int, ...], fix: str) -> PydanticCustomError:
    # ``path`` travels in ctx so the loader can point at the exact YAML line.
    return PydanticCustomError("pack_semantics", "{problem}",
                               {"problem": problem, "path": path, "fix": fix})


class StrategyPack(_Strict):
    """A strategy pack: where generated probe texts come from, region by region.

    Regions are listed mildest first: shrinking moves toward the first region, its first
    template and its lexicons' first entries.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True,
        title="agentverity-props strategy pack",
        json_schema_extra={"$schema": SCHEMA_DIALECT},
    )

    version: Literal[1] = Field(description="Format version; this release reads 1.")
    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]*$")] = Field(
        description="Pack name (lower case, digits, '-' and '_').")
    description: NonEmptyStr = Field(description="What the pack probes, in one sentence.")
    labels: list[NonEmptyStr] = Field(
        default_factory=list, description="Verdict labels the agent under test is expected to use.")
    slots: dict[SlotName, LexiconList] = Field(
        default_factory=dict,
        description="Lexicons shared by every region, each ordered mildest/simplest first.")
    regions: Annotated[dict[RegionName, Region], Field(min_length=1)] = Field(
        description="Regions in file order, mildest first (e.g. everyday, borderline, violation).")
    perturbations: list[PerturbationItem] = Field(
        default_factory=list,
        description="Follow-up perturbations relevant to this pack, mildest family first: a "
                    "name (case, whitespace, typo, ...) or a one-key mapping name -> options.")

    @model_validator(mode="after")
    def _check_references(self) -> StrategyPack:
        seen: set[str] = set()
        for i, label in enumerate(self.labels):
            if label in seen:
                raise _problem(f"label {label!r} is listed twice", ("labels", i),
                               "list each label once")
            seen.add(label)
        for rname, region in self.regions.items():
            for j, label in enumerate(region.expect):
                if label not in seen:
                    raise _problem(
                        f"expected label {label!r} is not in the pack's labels",
                        ("regions", rname, "expect", j),
                        f"add it to labels: or use one of: {', '.join(self.labels) or '(none)'}")
            defined = {**self.slots, **region.slots}
            for j, source in enumerate(region.templates):
                path: tuple[str | int, ...] = ("regions", rname, "templates", j)
                try:
                    template = parse_template(source)
                except ValueError as exc:
                    raise _problem(str(exc), path, "fix the braces in the template") from None
                missing = [n for n in template.slot_names if n not in defined]
                if missing:
                    raise _problem(
                        f"template uses undefined slot {{{missing[0]}}}", path,
                        f"define {missing[0]}: [...] under slots: (pack-wide) or under "
                        f"regions.{rname}.slots")
        for i, item in enumerate(self.perturbations):
            if isinstance(item, _ITEMS["paraphrase"]):
                for j, source in enumerate(item.paraphrase.templates):  # type: ignore[attr-defined]
                    path = ("perturbations", i, "paraphrase", "templates", j)
                    try:
                        ok = parse_template(source).slots == ("text",)
                    except ValueError:
                        ok = False
                    if not ok:
                        raise _problem("paraphrase template must contain {text} exactly once",
                                       path, "write e.g. 'In other words: {text}'")
        return self

    def region_names(self) -> list[str]:
        """Region names in file order (the shrink order)."""
        return list(self.regions)

    def slots_for(self, region: str) -> dict[str, list[str]]:
        """The lexicons a region's templates see: pack-level slots, then region overrides."""
        return {**self.slots, **self.regions[region].slots}

    def perturbation_names(self) -> list[str]:
        """The families listed under ``perturbations``, in order."""
        return [item if isinstance(item, str) else next(iter(type(item).model_fields))
                for item in self.perturbations]


def _close_pattern_properties(node: Any) -> None:
    # pydantic emits patternProperties for constrained dict keys but leaves other keys open;
    # the loader rejects them, so the published schema must too.
    if isinstance(node, dict):
        if "patternProperties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            _close_pattern_properties(value)
    elif isinstance(node, list):
        for value in node:
            _close_pattern_properties(value)


def pack_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a strategy pack file, generated from the models.

    The schema checks structure; cross-references (a template's slots are defined, expected
    labels are listed) are checked by :func:`load_pack` only.
    """
    schema = StrategyPack.model_json_schema(mode="validation")
    _close_pattern_properties(schema)
    return {"$schema": schema.pop("$schema"), **schema}


def pack_json_schema_text() -> str:
    """:func:`pack_json_schema` as the committed file's text (2-space indent, final newline)."""
    return json.dumps(pack_json_schema(), indent=2, ensure_ascii=False) + "\n"
