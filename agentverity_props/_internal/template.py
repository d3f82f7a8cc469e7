"""Prompt templates: literal text with ``{slot}`` placeholders (pure; no Hypothesis).

Shared by the strategies (which fill slots from lexicons) and the relation transforms (a
paraphrase is a template around ``{text}``).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Template", "parse_template"]

_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class Template:
    """A parsed template: literal pieces interleaved with slot names.

    ``pieces[i]`` is literal text; ``slots[i]`` (if any) follows it. Repeated slot names are
    filled with the same value, like :meth:`str.format` with keyword arguments.
    """

    source: str
    pieces: tuple[str, ...]
    slots: tuple[str, ...]

    @property
    def slot_names(self) -> tuple[str, ...]:
        """Distinct slot names, in order of first appearance."""
        return tuple(dict.fromkeys(self.slots))

    def render(self, values: Mapping[str, str]) -> str:
        """Fill every placeholder from ``values`` (which must define all of them)."""
        out: list[str] = []
        for i, piece in enumerate(self.pieces):
            out.append(piece)
            if i < len(self.slots):
                out.append(values[self.slots[i]])
        return "".join(out)


def parse_template(source: str) -> Template:
    """Parse ``source`` into a :class:`Template`.

    Raises:
        ValueError: unbalanced braces, or a placeholder that is not a bare identifier.

    >>> parse_template("Hi {name}, {{ok}}").slot_names
    ('name',)
    """
    pieces: list[str] = []
    slots: list[str] = []
    try:
        parsed = list(_FORMATTER.parse(source))
    except ValueError as exc:
        raise ValueError(f"unbalanced brace in template {source!r} ({exc}); "
                         "write {{ or }} for a literal brace") from None
    for literal, field, spec, conversion in parsed:
        if field is None:
            pieces.append(literal)
            continue
        if not field.isidentifier() or spec or conversion:
            shown = "{" + field + (f"!{conversion}" if conversion else "")
            shown += (f":{spec}" if spec else "") + "}"
            raise ValueError(
                f"placeholder {shown} in template {source!r} is not a bare slot name; "
                "use {name} with letters, digits and underscores only")
        pieces.append(literal)
        slots.append(field)
    if len(pieces) == len(slots):
        pieces.append("")
    return Template(source=source, pieces=tuple(pieces), slots=tuple(slots))
