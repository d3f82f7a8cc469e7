"""``prompts()``: text from templates with ``{slot}`` placeholders filled from lexicons.

The template grammar is a strict subset of :meth:`str.format`: ``{name}`` where ``name`` is a
Python identifier, and ``{{`` / ``}}`` for literal braces. No attribute access, indexing,
conversions or format specs: a template is data a user copies and edits, so anything clever
is a mistake waiting to happen and is rejected eagerly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._internal.template import Template, parse_template
from ..errors import InvalidArgument

__all__ = ["Lexicon", "Template", "check_lexicon", "parse_template", "prompts", "template_texts"]

Lexicon = list[str] | SearchStrategy[str]


def check_lexicon(name: str, value: object) -> Lexicon:
    """A validated lexicon: a non-empty list of str, or a strategy (checked as it draws)."""
    if isinstance(value, SearchStrategy):
        return value.map(lambda v: _check_drawn(name, v))
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidArgument(
            f"slot {name!r} must be a list of strings or a strategy of strings, got "
            f"{type(value).__name__}; wrap a single value as [value]")
    if len(value) == 0:
        raise InvalidArgument(f"slot {name!r} has an empty lexicon; give it at least one value")
    bad = [v for v in value if not isinstance(v, str)]
    if bad:
        raise InvalidArgument(
            f"slot {name!r} has non-string entries {bad[:3]!r}; every lexicon entry must be a str")
    return list(value)


def _check_drawn(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"the strategy for slot {name!r} drew {value!r}, not a str")
    return value


def _scaled(raw: int, size: int, span: int) -> int:
    # Maps [0, span) onto [0, size) monotonically and about evenly: raw 0 -> entry 0.
    return raw * size // span


def template_texts(
    groups: Sequence[tuple[Sequence[Template], Mapping[str, Lexicon]]],
    *,
    weights: Sequence[int] | None = None,
) -> SearchStrategy[str]:
    """Texts from groups of templates (a pack's regions, or one group for :func:`prompts`).

    Why not ``one_of(sampled_from(...))``: Hypothesis shrinks toward *fewer* choices before
    smaller ones, so a template with fewer slots (or a region with fewer templates) would
    beat the first, mildest one. Here every example makes the same number of choices with
    the same bounds (group, template, one index per slot position), so the shrinker's order
    is plain "earlier entries first": first group, first template, first lexicon entries.

    Args:
        groups: ``(templates, lexicons)`` pairs; every template's slots must be defined.
        weights: Positive integer weight per group (default equal).
    """
    if not groups or any(not templates for templates, _ in groups):
        raise InvalidArgument("template_texts() needs at least one non-empty group")
    n_slots = max(sum(1 for n in t.slot_names if isinstance(lex.get(n), list))
                  for templates, lex in groups for t in templates)
    span_values = max([len(v) for _, lex in groups for v in lex.values() if isinstance(v, list)],
                      default=1)
    span_templates = max(len(templates) for templates, _ in groups)
    picks: list[int] = []
    for i, w in enumerate(weights or [1] * len(groups)):
        picks.extend([i] * w)
    pick_group = st.sampled_from(picks) if len(picks) > 1 else st.just(picks[0])
    pick_template = st.integers(0, span_templates - 1)
    pick_value = st.integers(0, span_values - 1)

    @st.composite
    def draw(d: st.DrawFn) -> str:
        templates, lexicons = groups[d(pick_group)]
        template = templates[_scaled(d(pick_template), len(templates), span_templates)]
        raw = [d(pick_value) for _ in range(n_slots)]
        values: dict[str, str] = {}
        position = 0
        for name in template.slot_names:
            lexicon = lexicons[name]
            if isinstance(lexicon, list):
                values[name] = lexicon[_scaled(raw[position], len(lexicon), span_values)]
                position += 1
            else:
                values[name] = d(lexicon)
        return template.render(values)

    return draw()


def prompts(
    template: str | Sequence[str],
    *,
    slots: Mapping[str, Sequence[str] | SearchStrategy[str]] | None = None,
) -> SearchStrategy[str]:
    """A strategy of texts made from ``template`` with each ``{slot}`` filled from ``slots``.

    With several templates, one is chosen per example; shrinking moves toward the first
    template and, within a slot, toward the first lexicon entry. So list templates and
    lexicon entries from the simplest/mildest to the most extreme, and a minimal
    counterexample reads like the plainest text that still fails.

    Args:
        template: One template or a non-empty sequence of templates.
        slots: Slot name to lexicon (a non-empty list of strings, or a strategy of strings).
            Slots no template uses are allowed, so one lexicon table can serve many templates.

    Raises:
        InvalidArgument: eagerly, for a template using an undefined slot, an empty lexicon,
            non-string entries, or a malformed template.

    Example:
        >>> s = prompts("Where is order {order}?", slots={"order": ["A1", "B22"]})
        >>> from hypothesis import find
        >>> find(s, lambda t: True)
        'Where is order A1?'
    """
    if isinstance(template, str):
        sources: list[object] = [template]
    elif isinstance(template, Sequence):
        sources = list(template)
    else:
        raise InvalidArgument(
            f"template must be a str or a sequence of str, got {type(template).__name__}")
    if not sources:
        raise InvalidArgument("no templates given; pass at least one template string")
    slot_map: Mapping[str, object] = {} if slots is None else slots
    if not isinstance(slot_map, Mapping):
        raise InvalidArgument(f"slots must be a mapping, got {type(slot_map).__name__}")
    lexicons = {str(k): check_lexicon(str(k), v) for k, v in slot_map.items()}
    parsed: list[Template] = []
    for src in sources:
        if not isinstance(src, str):
            raise InvalidArgument(f"template {src!r} is a {type(src).__name__}, not a str")
        try:
            tpl = parse_template(src)
        except ValueError as exc:
            raise InvalidArgument(str(exc)) from None
        missing = [n for n in tpl.slot_names if n not in lexicons]
        if missing:
            known = ", ".join(sorted(lexicons)) or "none"
            raise InvalidArgument(
                f"template {src!r} uses undefined slot(s) {', '.join(missing)}; "
                f"pass them in slots= (defined: {known})")
        parsed.append(tpl)
    return template_texts([(parsed, lexicons)])
