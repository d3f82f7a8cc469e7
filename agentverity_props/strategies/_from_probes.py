"""``from_probes()``: a Hypothesis strategy of variations of the user's own probes.

Bring your probes: the strategy learns a :class:`~._grammar.ProbeGrammar` from them (slots,
numbers, alternations, clauses; no model) and draws a probe plus up to ``max_edits`` edits of
it. Every drawn text is a :class:`Variant` (a ``str``) that keeps its ``parent`` probe and its
``edits``, so a counterexample reads "probe 3 with cost 450 → 4,500".

Shrinking moves toward the parent: the number of edits shrinks to ``min_edits`` (0 by
default: the probe itself), each edit toward the mildest one that applies (a number scaled by
1.1 before one scaled by 100, another probe's value before a lexicon's, a word deleted before
a clause spliced in), and the parent toward the first probe.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ..errors import InvalidArgument
from ._grammar import Edit, ProbeGrammar
from ._lexicons import check_lexicons

__all__ = ["VARIATION_PROMPT", "Variant", "from_probes", "variations_from"]


class Variant(str):
    """A generated text that remembers where it came from.

    >>> v = Variant("cost $900", parent="cost $450", edits=())
    >>> v == "cost $900", v.parent
    (True, 'cost $450')
    """

    parent: str
    edits: tuple[Edit, ...]

    def __new__(cls, text: str, *, parent: str, edits: Sequence[Edit]) -> Variant:
        self = super().__new__(cls, text)
        self.parent = parent
        self.edits = tuple(edits)
        return self

    def __reduce__(self) -> Any:  # pickles (and copies) as the variant it is
        return (_rebuild, (str(self), self.parent, self.edits))

    def describe(self) -> str:
        """``from 'parent': edit; edit`` in the user's words."""
        if not self.edits:
            return "the probe itself"
        return "; ".join(e.describe() for e in self.edits)

    def provenance(self) -> dict[str, Any]:
        """The parent probe and the edits, as JSON-able data."""
        return {"parent": self.parent, "edits": [e.to_json() for e in self.edits]}


def _rebuild(text: str, parent: str, edits: tuple[Edit, ...]) -> Variant:
    return Variant(text, parent=parent, edits=edits)


def _check_probes(texts: object, where: str) -> list[str]:
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Sequence):
        raise InvalidArgument(f"{where}: probes must be a list of strings, got "
                              f"{type(texts).__name__}; wrap a single probe as [text]")
    out: list[str] = []
    for t in texts:
        if not isinstance(t, str):
            raise InvalidArgument(f"{where}: every probe must be a str, got "
                                  f"{type(t).__name__}")
        if t.strip() and t not in out:
            out.append(t)
    if not out:
        raise InvalidArgument(f"{where}: no non-empty probe given; pass the inputs your agent "
                              "sees (three or more)")
    return out


def from_probes(texts: Sequence[str], *, verdicts: Sequence[str | None] | None = None,
                lexicon: Mapping[str, Sequence[str]] | None = None,
                default_lexicons: bool = True, min_edits: int = 0,
                max_edits: int = 3) -> SearchStrategy[Variant]:
    """Variations of ``texts``: each a probe with up to ``max_edits`` learned edits.

    Args:
        texts: your probe set (three or more inputs give the grammar frames to compare).
        verdicts: optional verdict of each probe (e.g. from a first run): values only
            other verdicts' probes hold are drawn into splices first.
        lexicon: your own value classes, ``{"product": ["laptop", "phone", ...]}``: where a
            probe holds one of a class's values, the others are candidates.
        default_lexicons: also use the shipped classes (cities, countries, names, months,
            weekdays, tiers, priorities, sizes, times, ...).
        min_edits, max_edits: how many edits a variant carries (shrinks to ``min_edits``).

    Example:
        >>> from hypothesis import find
        >>> probes = ["Refund order 1041, it arrived broken", "Refund order 2230, wrong size"]
        >>> v = find(from_probes(probes, min_edits=1), lambda v: "1041" not in v)
        >>> v.parent, v.describe()
        ('Refund order 1041, it arrived broken', "1041 → 1145 (number after 'order')")
    """
    where = "from_probes"
    probes = _check_probes(texts, where)
    lex = check_lexicons(lexicon, where=where)
    if not (isinstance(min_edits, int) and isinstance(max_edits, int)
            and 0 <= min_edits <= max_edits <= 20):
        raise InvalidArgument(f"{where}: need 0 <= min_edits <= max_edits <= 20, got "
                              f"min_edits={min_edits!r}, max_edits={max_edits!r}")
    if verdicts is not None and len(verdicts) != len(texts):
        raise InvalidArgument(f"{where}: {len(verdicts)} verdicts for {len(texts)} probes; give "
                              "one verdict (or None) per probe")
    vmap = dict(zip(texts, verdicts, strict=True)) if verdicts is not None else {}
    grammar = ProbeGrammar(probes, verdicts=[vmap.get(p) for p in probes], lexicon=lex,
                           default_lexicons=default_lexicons)
    cache: dict[str, list[Edit]] = {}

    def edits_of(text: str) -> list[Edit]:
        if text not in cache:
            if len(cache) > 4096:
                cache.clear()
            cache[text] = grammar.edits(text)
        return cache[text]

    @st.composite
    def variants(draw: st.DrawFn) -> Variant:
        parent = probes[draw(st.integers(0, len(probes) - 1))]
        n = draw(st.integers(min_edits, max_edits))
        text, chain = parent, []
        for _ in range(n):
            options = edits_of(text)
            if not options:
                break
            e = options[draw(st.integers(0, len(options) - 1))]
            text = e.apply(text)
            chain.append(e)
        return Variant(text, parent=parent, edits=chain)

    return variants()


#: how ``variations_from`` asks an agent for variations (``{n}`` and ``{text}`` are filled)
VARIATION_PROMPT = ("Rewrite the request below in {n} different ways a real user might send "
                    "it. Change its details (amounts, names, places, dates, wording) but keep "
                    "it the same kind of request. One rewrite per line, nothing else.\n\n"
                    "Request: {text}")

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def variations_from(agent: Any, *, n: int = 5, prompt: str = VARIATION_PROMPT) -> Any:
    """A generator for ``enlarge(generator=...)`` from any agent the adapters accept (an LLM
    you already have): it is asked for ``n`` rewrites of each probe, one per line.

    >>> from agentverity_props import from_callable
    >>> echo = from_callable(lambda p: {"text": "1. Refund order 7 now\\n- Refund order 9"})
    >>> variations_from(echo, n=2)("Refund order 5")
    ['Refund order 7 now', 'Refund order 9']
    """
    from ..adapters import as_adapter

    if not isinstance(n, int) or not 1 <= n <= 50:
        raise InvalidArgument(f"variations_from: n={n!r} must be an int in 1..50")
    if "{text}" not in prompt:
        raise InvalidArgument("variations_from: prompt must contain {text} (and may contain {n})")
    adapter = as_adapter(agent)

    def generate(text: str) -> list[str]:
        obs = adapter.invoke(prompt.replace("{n}", str(n)).replace("{text}", text))
        lines = [_BULLET.sub("", ln).strip().strip('"') for ln in (obs.text or "").splitlines()]
        return [ln for ln in lines if ln][:n]

    generate.__name__ = f"variations_from({getattr(adapter, 'identity', 'agent')})"
    return generate
