"""The word-level edit path between two texts, with numbers as numeric paths.

A text is split into *tokens* by the package's one tokenizer (``_internal/words.py``: a
number with its currency and percent signs, a word, or one punctuation mark), each keeping
the whitespace before it, plus the trailing whitespace: joining the tokens rebuilds the text
exactly. The two texts are aligned on their tokens (:mod:`difflib`, with every number
compared as "a number" so that ``1,990`` and ``2,010`` line up) into edit *units*: a run of
tokens replaced, inserted or deleted, or one number replaced by another (a *numeric* unit,
whose intermediate values are formatted in the original's style: ``2,010`` between ``1,990``
and ``2,500``, ``$450.25`` between ``$400.00`` and ``$500.50``).

``EditPath.text(k)`` is ``a`` with the first ``k`` units applied: ``text(0) == a``,
``text(len(units)) == b``, and two adjacent path texts differ by one unit.

>>> p = EditPath.between("Trip to Oslo, cost 1,990, economy.",
...                      "Trip to Oslo, cost 2,500, business.")
>>> [u.kind for u in p.units]
['number', 'replace']
>>> p.number_text(0, p.units[0].lo_scaled + 20)
'Trip to Oslo, cost 2,010, economy.'
>>> p.text(2) == "Trip to Oslo, cost 2,500, business."
True
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from decimal import Decimal

from .._internal.words import Token, number_parts, tokenize

__all__ = ["EditPath", "EditUnit", "NumberStyle", "Token", "format_number", "parse_number",
           "tokenize"]


@dataclass(frozen=True)
class NumberStyle:
    """How a number was written: currency prefix, thousands separators, decimals, percent."""

    currency: str = ""
    thousands: bool = False
    decimals: int = 0
    percent: bool = False

    def merged(self, other: NumberStyle) -> NumberStyle:
        """The style for values between two numbers: the first one's currency and percent,
        separators if either used them, the finer of the two precisions."""
        return NumberStyle(self.currency, self.thousands or other.thousands,
                           max(self.decimals, other.decimals), self.percent)


def parse_number(core: str) -> tuple[Decimal, NumberStyle] | None:
    """The value and style of a number token, or None when it is not one.

    >>> parse_number("$1,990.50")
    (Decimal('1990.50'), NumberStyle(currency='$', thousands=True, decimals=2, percent=False))
    >>> parse_number("economy") is None
    True
    """
    parts = number_parts(core)
    if parts is None:
        return None
    currency, body, pct = parts
    percent = bool(pct)
    decimals = len(body.split(".", 1)[1]) if "." in body else 0
    return Decimal(body.replace(",", "")), NumberStyle(currency, "," in body, decimals, percent)


def format_number(value: Decimal, style: NumberStyle) -> str:
    """``value`` written in ``style`` (the inverse of :func:`parse_number` on its own forms).

    >>> format_number(Decimal("2010"), NumberStyle(thousands=True))
    '2,010'
    >>> format_number(Decimal("12.5"), NumberStyle(currency="$", decimals=2))
    '$12.50'
    """
    q = value.quantize(Decimal(1).scaleb(-style.decimals))
    body = f"{q:,.{style.decimals}f}" if style.thousands else f"{q:.{style.decimals}f}"
    return f"{style.currency}{body}{'%' if style.percent else ''}"


@dataclass(frozen=True)
class EditUnit:
    """One edit of the path: ``a_tokens`` (tokens ``start:start+len`` of ``a``) become
    ``b_tokens``. A numeric unit also carries both values scaled to integers of its finest
    step (``value = scaled / 10**style.decimals``)."""

    kind: str  # "number" | "replace" | "insert" | "delete"
    start: int
    a_tokens: tuple[Token, ...]
    b_tokens: tuple[Token, ...]
    style: NumberStyle | None = None
    lo_scaled: int = 0
    hi_scaled: int = 0

    @property
    def width(self) -> int:
        """Word-by-word sub-steps of this unit (1 for a single-token edit)."""
        return max(len(self.a_tokens), len(self.b_tokens))

    def partial(self, j: int) -> tuple[Token, ...]:
        """The unit with its first ``j`` positions edited (``0``: as in ``a``; ``width``:
        as in ``b``); adjacent ``j`` differ by one token replaced, inserted or deleted."""
        return self.b_tokens[:j] + self.a_tokens[j:]

    def number_token(self, scaled: int) -> Token:
        assert self.style is not None
        value = Decimal(scaled).scaleb(-self.style.decimals)
        return Token(self.a_tokens[0].space, format_number(value, self.style))


def _key(t: Token) -> tuple[str, ...]:
    parsed = parse_number(t.text)
    if parsed is not None:  # every number aligns with every number of the same kind
        return ("#number", parsed[1].currency, str(parsed[1].percent))
    return ("", t.text)


def _kind(a: tuple[Token, ...], b: tuple[Token, ...]) -> str:
    return "insert" if not a else "delete" if not b else "replace"


def _numeric(at: int, ta: Token, tb: Token) -> EditUnit | None:
    pa, pb = parse_number(ta.text), parse_number(tb.text)
    if pa is None or pb is None or ta.space != tb.space:
        return None
    style = pa[1].merged(pb[1])
    scale = Decimal(1).scaleb(style.decimals)
    return EditUnit("number", at, (ta,), (tb,), style, int(pa[0] * scale), int(pb[0] * scale))


@dataclass(frozen=True)
class EditPath:
    """The units turning ``a`` into ``b`` and the texts along the way (module docstring)."""

    a: str
    b: str
    tokens: tuple[Token, ...]
    units: tuple[EditUnit, ...]

    @classmethod
    def between(cls, a: str, b: str) -> EditPath:
        ta, tb = tokenize(a), tokenize(b)
        units: list[EditUnit] = []
        matcher = difflib.SequenceMatcher(None, [_key(t) for t in ta], [_key(t) for t in tb],
                                          autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":  # equal keys: numbers may differ in value, tokens in spacing
                for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                    if ta[i] != tb[j]:
                        units.append(_numeric(i, ta[i], tb[j]) or
                                     EditUnit("replace", i, (ta[i],), (tb[j],)))
            else:
                ra, rb = tuple(ta[i1:i2]), tuple(tb[j1:j2])
                if "".join(map(str, ra)) != "".join(map(str, rb)):
                    # (equal text split differently, "45%" against "45" "%": no edit)
                    units.append(EditUnit(_kind(ra, rb), i1, ra, rb))
        return cls(a, b, tuple(ta), tuple(units))

    def __len__(self) -> int:
        return len(self.units)

    def render(self, k: int, current: tuple[Token, ...] | None = None) -> str:
        """``a`` with units ``< k`` applied, unit ``k`` as ``current`` (default: as in ``a``)
        and the later ones as in ``a``."""
        out: list[str] = []
        pos = 0
        for i, u in enumerate(self.units):
            out.extend(map(str, self.tokens[pos:u.start]))
            toks = u.b_tokens if i < k else current if (i == k and current is not None) \
                else u.a_tokens
            out.extend(map(str, toks))
            pos = u.start + len(u.a_tokens)
        out.extend(map(str, self.tokens[pos:]))
        return "".join(out)

    def text(self, k: int) -> str:
        """``a`` with its first ``k`` units applied (``text(0) == a``, ``text(n) == b``)."""
        if not 0 <= k <= len(self.units):
            raise IndexError(f"path position {k} outside 0..{len(self.units)}")
        if k == len(self.units):
            return self.b
        return self.a if k == 0 else self.render(k)

    def number_text(self, k: int, scaled: int) -> str:
        """``text(k)`` with numeric unit ``k`` set to the (scaled) value ``scaled``."""
        return self.render(k, (self.units[k].number_token(scaled),))

    def partial_text(self, k: int, j: int) -> str:
        """``text(k)`` with the first ``j`` positions of unit ``k`` edited."""
        return self.render(k, self.units[k].partial(j))

    def prefix_tokens(self, k: int) -> list[Token]:
        """The tokens before unit ``k`` in ``text(k)`` (for positions and context)."""
        out: list[Token] = []
        pos = 0
        for i, u in enumerate(self.units[:k + 1]):
            out.extend(self.tokens[pos:u.start])
            if i < k:
                out.extend(u.b_tokens)
            pos = u.start + len(u.a_tokens)
        return out
