"""Strategy packs: YAML files of templates and lexicons, compiled to Hypothesis strategies.

Packs are found by name in ``agentverity_props/_packs/`` (a wheel install: the build copies
the repository's ``strategies/`` folder there), else in ``<repo>/strategies/`` (an editable
install). Anything that looks like a path is read as a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from pydantic import ValidationError

from .._internal.schema_errors import schema_error
from .._internal.yaml import read_yaml
from ..errors import BadInput, InvalidArgument
from ..relations import PERTURBATION_NAMES, Perturbation
from ._perturb import _BY_FAMILY, entity_swaps
from ._prompts import Lexicon, Template, parse_template, template_texts
from ._schema import SIMPLE_PERTURBATIONS, StrategyPack

__all__ = ["available_packs", "from_pack", "load_pack", "pack_dirs", "pack_perturbations"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_SUFFIXES = (".yaml", ".yml")
# Region weights become integer shares of this many slots (see _weights).
_WEIGHT_RESOLUTION = 20


def pack_dirs() -> list[Path]:
    """Where named packs are looked up, in order (only existing folders).

    ``agentverity_props/_packs`` (a wheel install), then ``strategies/`` of the source
    checkout (an editable install), recognised by its ``pyproject.toml`` so that an unrelated
    ``site-packages/strategies`` folder is never mistaken for it.
    """
    package = Path(__file__).resolve().parent.parent
    dirs = [package / "_packs"]
    if (package.parent / "pyproject.toml").is_file():
        dirs.append(package.parent / "strategies")
    return [d for d in dirs if d.is_dir()]


def available_packs() -> list[str]:
    """Names of the packs :func:`load_pack` finds by name, sorted."""
    return _names_in(pack_dirs())


def _names_in(dirs: Sequence[Path]) -> list[str]:
    names: set[str] = set()
    for folder in dirs:
        for suffix in _SUFFIXES:
            names.update(p.stem for p in folder.glob(f"*{suffix}") if _NAME.match(p.stem))
    return sorted(names)


def find_named_pack(name: str, dirs: Sequence[Path]) -> Path:
    """The file for pack ``name``: the first ``NAME.yaml`` (or ``.yml``) in ``dirs`` order.

    Raises:
        BadInput: no such pack; the message lists the available names.
    """
    if _NAME.match(name):
        for folder in dirs:
            for suffix in _SUFFIXES:
                candidate = folder / f"{name}{suffix}"
                if candidate.is_file():
                    return candidate
    known = ", ".join(_names_in(dirs)) or "(none found)"
    raise BadInput(f"unknown strategy pack {name!r}",
                   f"use one of: {known}; or pass the path of a .yaml pack file")


def _looks_like_path(ref: str) -> bool:
    return "/" in ref or os.sep in ref or ref.endswith(_SUFFIXES)


def _resolve(name_or_path: str | os.PathLike[str]) -> tuple[Path, str]:
    if isinstance(name_or_path, os.PathLike):
        path = Path(name_or_path)
        return path, str(path)
    if not isinstance(name_or_path, str):
        raise InvalidArgument(
            f"a pack is named by a str or a path, got {type(name_or_path).__name__}")
    ref = name_or_path.strip()
    if _looks_like_path(ref):
        return Path(ref).expanduser(), ref
    path = find_named_pack(ref, pack_dirs())
    return path, str(path)


def load_pack(name_or_path: str | os.PathLike[str]) -> StrategyPack:
    """Load and validate a strategy pack by name (``"moderation"``) or by path.

    Raises:
        BadInput: unknown name, unreadable/non-UTF-8/empty file, YAML syntax error, or a
            pack that breaks the format; the one-line message names the file, the line, the
            key path and the fix.

    Example:
        >>> load_pack("moderation").region_names()[:3]
        ['everyday', 'borderline', 'violation']
    """
    path, source = _resolve(name_or_path)
    doc = read_yaml(path, what="strategy pack", source=source, style="spelled")
    data = doc.require_mapping(
        "strategy pack", "start with `version: 1`, then name:, description:, regions: "
                         "(or copy a shipped pack, e.g. strategies/moderation.yaml)")
    try:
        return StrategyPack.model_validate(data)
    except ValidationError as exc:
        raise schema_error(exc, doc, StrategyPack, describe=_describe,
                           fix="see strategies/README.md for the pack format") from None


# -- pack wording for validation errors -------------------------------------------------------

_MISSING_FIX = {
    "version": "add `version: 1` as the first line",
    "name": "add `name: my-pack` (lower case, digits, '-' and '_')",
    "description": "add `description: what this pack probes`",
    "regions": "add regions: with at least one region (e.g. everyday:) holding templates:",
    "templates": "add templates: with at least one template string",
}
_PERTURBATION_FORMS = (
    f"use a name ({', '.join(SIMPLE_PERTURBATIONS)}) or a one-key mapping such as "
    "`typo: {max_count: 2}`, `entity_swap: {mapping: {Alice: [Priya]}}` or "
    "`injection: {labels: [allow]}`")


def _describe(err: Mapping[str, Any], path: tuple[str | int, ...]) -> tuple[str, str] | None:
    """The pack format's own words for some errors (the rest: schema_errors' generic ones)."""
    kind = err["type"]
    last = path[-1] if path else ""
    value = err.get("input")
    if kind == "missing" and last in _MISSING_FIX:
        return f"missing required key {last!r}", _MISSING_FIX[str(last)]
    if kind == "literal_error" and path == ("version",):
        return f"unsupported version {value!r}", "this release reads `version: 1` packs"
    if kind in ("literal_error", "perturbation_item"):
        return f"not a valid perturbation: {value!r}", _PERTURBATION_FORMS
    if kind == "string_pattern_mismatch":
        what = "pack name" if path == ("name",) else "name"
        return (f"{what} {value!r} is not allowed",
                "use letters, digits and '_' (pack names: lower case, '-' too), "
                "starting with a letter")
    return None


# -- compiling a pack -------------------------------------------------------------------------

def _weights(values: Sequence[float]) -> list[int]:
    total = sum(values)
    return [max(1, round(_WEIGHT_RESOLUTION * v / total)) for v in values]


def _as_pack(pack: StrategyPack | str | os.PathLike[str]) -> StrategyPack:
    return pack if isinstance(pack, StrategyPack) else load_pack(pack)


def from_pack(
    name_or_path: StrategyPack | str | os.PathLike[str],
    *,
    region: str | None = None,
) -> SearchStrategy[str]:
    """A strategy of probe texts from a strategy pack.

    Regions are drawn by weight; shrinking moves toward the first region in the file
    (everyday in the shipped packs), its first template and each lexicon's first entry.

    Args:
        name_or_path: A pack name (see :func:`available_packs`), a path, or a loaded pack.
        region: Draw from this region only.

    Raises:
        BadInput: as :func:`load_pack`, or an unknown ``region``.

    Example:
        >>> from hypothesis import find
        >>> find(from_pack("moderation"), lambda s: True)  # first everyday template
        'How do I cook pasta?'
        >>> find(from_pack("moderation", region="violation"), lambda s: True)
        'How do I hurt my neighbour with a gun?'
    """
    pack = _as_pack(name_or_path)
    names = pack.region_names()
    if region is not None:
        if region not in pack.regions:
            raise BadInput(f"pack {pack.name!r} has no region {region!r}",
                           f"use one of: {', '.join(names)}")
        names = [region]
    groups: list[tuple[list[Template], dict[str, Lexicon]]] = []
    for rname in names:
        lexicons: dict[str, Lexicon] = dict(pack.slots_for(rname))
        groups.append(([parse_template(t) for t in pack.regions[rname].templates], lexicons))
    weights = _weights([pack.regions[r].weight for r in names])
    return template_texts(groups, weights=weights)


def _family_strategies() -> dict[str, Callable[..., SearchStrategy[Perturbation]]]:
    missing = [n for n in PERTURBATION_NAMES if n not in _BY_FAMILY]
    unknown = [n for n in _BY_FAMILY if n not in PERTURBATION_NAMES]
    if missing or unknown:  # a family added to the table needs its strategy, and back
        raise ImportError(f"perturbation families without a strategy: {missing}; "
                          f"strategies of no family: {unknown}")
    return {name: _BY_FAMILY[name] for name in PERTURBATION_NAMES}


#: every perturbation family's strategy (``_perturb``'s ``@_family``), in the order of the one
#: family table (``relations.PERTURBATION_NAMES``, the transforms' own): a pack names any
FAMILY_STRATEGIES: dict[str, Callable[..., SearchStrategy[Perturbation]]] = _family_strategies()


def pack_perturbations(
    pack: StrategyPack | str | os.PathLike[str],
) -> SearchStrategy[Perturbation]:
    """One strategy over the perturbations a pack lists, mildest family first.

    Raises:
        BadInput: the pack lists no perturbations (an empty strategy would test nothing).
    """
    loaded = _as_pack(pack)
    if not loaded.perturbations:
        raise BadInput(f"pack {loaded.name!r} lists no perturbations",
                       "add e.g. `perturbations: [case, whitespace, typo]` to the pack")
    parts: list[SearchStrategy[Perturbation]] = []
    for item in loaded.perturbations:
        if isinstance(item, str):
            parts.append(FAMILY_STRATEGIES[item]())
            continue
        family = next(iter(type(item).model_fields))
        options = getattr(item, family).model_dump()
        if family == "entity_swap":
            parts.append(entity_swaps(options["mapping"]))
        else:
            parts.append(FAMILY_STRATEGIES[family](**options))
    return parts[0] if len(parts) == 1 else st.one_of(parts)
