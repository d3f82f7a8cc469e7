"""The one tokenizer: how every edit, the probe grammar and the boundary search split a text.

The probe grammar (``strategies/_grammar.py``), the negation and scope edits
(``strategies/_negation.py``), the boundary search's edit path (``search/_edit_path.py``) and
the relation transforms (``relations/_transforms.py``) all read a text's units from
:func:`tokenize`, so "a word" and "a number" mean the same thing wherever an edit is made or
shown. The rule:

* a **word** is a maximal run of letters and digits in which an apostrophe (``'`` or the
  typographic U+2019) or a hyphen joins two letters (``don't``, ``e-mail``, ``follow-up``)
  and a comma or a full stop joins two digits (``1,990.50``); so ``A12`` and ``5kg`` are
  one word each, while ``Boston,`` and ``end.`` are a word and a mark;
* a word that is a **number** (digits, optionally in thousands groups, optionally with a
  decimal part: ``7``, ``1,990``, ``12.5``) takes the currency sign written directly before
  it (``$ € £ ¥ ₹``) and a percent sign directly after it: ``$1,990.50`` and ``45%`` are
  one token each, of kind ``number``;
* every other character that is not whitespace is a token of its own (``(``, ``.``, ``%``
  after a word, ``$`` before one), of kind ``symbol``;
* whitespace is kept, not tokenized: each token holds the whitespace before it
  (:attr:`Token.space`) and the text's trailing whitespace ends the list as a token of kind
  ``end`` with no text, so joining the tokens gives the text back exactly.

>>> [t.text for t in tokenize("Refund $1,990.50 (45%) for my e-mail order A12")]
['Refund', '$1,990.50', '(', '45%', ')', 'for', 'my', 'e-mail', 'order', 'A12', '']
>>> [t.kind for t in tokenize("Cost: $12 (45%)!", trailing=False)]
['word', 'symbol', 'number', 'symbol', 'number', 'symbol', 'symbol']

This module holds the package's only pattern of what a word is; a test
(``tests/unit/test_words.py``) fails when another module of the package compiles one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["CURRENCY", "Token", "has_letter", "is_number", "number_parts", "sub_words",
           "tokenize", "word_at", "words"]

#: currency signs that belong to the number written directly after them
CURRENCY = "$€£¥₹"
_LETTER = r"[^\W\d_]"
_ALNUM = r"[^\W_]"
# letters and digits; an apostrophe (two kinds) or a hyphen between two letters; a comma
# or a full stop between two digits
_WORD = rf"{_ALNUM}+(?:(?:(?<={_LETTER})['’-](?={_LETTER})|(?<=\d)[.,](?=\d)){_ALNUM}+)*"
_TOKEN = re.compile(rf"(\s*)(?:([{CURRENCY}]?)({_WORD})(%?)|(\S))")
_NUMBER = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_NUMBER_TOKEN = re.compile(rf"([{CURRENCY}]?)({_NUMBER.pattern})(%?)")


@dataclass(frozen=True)
class Token:
    """One token and the whitespace before it (``text`` is empty for the trailing
    whitespace). ``start`` is the offset of ``text`` in the tokenized text; it is not part
    of a token's equality, so tokens of two texts compare by what they write."""

    space: str
    text: str
    start: int = field(default=0, compare=False)

    @property
    def kind(self) -> str:
        """``word``, ``number``, ``symbol``, or ``end`` (the trailing whitespace)."""
        if not self.text:
            return "end"
        if _NUMBER_TOKEN.fullmatch(self.text):
            return "number"
        return "word" if self.text[0].isalnum() else "symbol"

    @property
    def is_word(self) -> bool:
        """A word (letters and digits; not a number)."""
        return self.kind == "word"

    @property
    def end(self) -> int:
        """The offset just after ``text``."""
        return self.start + len(self.text)

    @property
    def is_number(self) -> bool:
        """A number, with its currency and percent signs if it has them."""
        return self.kind == "number"

    @property
    def core(self) -> str:
        """``text`` (the boundary search's name for it)."""
        return self.text

    def __str__(self) -> str:
        return self.space + self.text


def tokenize(text: str, *, trailing: bool = True) -> list[Token]:
    """The tokens of ``text`` by the rule of the module doc; with ``trailing`` (the default)
    the last one holds the trailing whitespace (possibly empty), so
    ``"".join(map(str, tokenize(text))) == text`` for every text.

    >>> [str(t) for t in tokenize("Cost: $1,990.50 (45%)! ")]
    ['Cost', ':', ' $1,990.50', ' (', '45%', ')', '!', ' ']
    >>> [t.text for t in tokenize("$abc 5%x abc%", trailing=False)]
    ['$', 'abc', '5%', 'x', 'abc', '%']
    """
    out: list[Token] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        space, currency, word, percent, symbol = m.groups()
        at = m.start() + len(space)
        if word is None:
            out.append(Token(space, symbol, at))
        elif _NUMBER.fullmatch(word):
            out.append(Token(space, currency + word + percent, at))
        else:  # a sign beside a word that is no number is a token of its own
            if currency:
                out.append(Token(space, currency, at))
                space, at = "", at + 1
            out.append(Token(space, word, at))
            if percent:
                out.append(Token("", percent, at + len(word)))
        pos = m.end()
    if trailing:
        out.append(Token(text[pos:], "", len(text)))
    return out


def words(text: str) -> list[Token]:
    """The word tokens of ``text`` (numbers and symbols left out).

    >>> [w.text for w in words("Don't e-mail 3 people at 9am, Alice's order A12!")]
    ["Don't", 'e-mail', 'people', 'at', '9am', "Alice's", 'order', 'A12']
    """
    return [t for t in tokenize(text, trailing=False) if t.kind == "word"]


def word_at(text: str, pos: int) -> Token | None:
    """The word token that starts at offset ``pos`` of ``text``, or None."""
    for t in tokenize(text, trailing=False):
        if t.start >= pos:
            return t if t.start == pos and t.kind == "word" else None
    return None


def sub_words(text: str, fn: Callable[[str], str]) -> str:
    """``text`` with every word replaced by ``fn(word)``, everything else kept.

    >>> sub_words("send 2 e-mails, now", str.upper)
    'SEND 2 E-MAILS, NOW'
    """
    return "".join(t.space + (fn(t.text) if t.kind == "word" else t.text)
                   for t in tokenize(text))


def is_number(text: str) -> bool:
    """Whether ``text`` is one number token (``$1,990.50``, ``45%``, ``7``)."""
    return _NUMBER_TOKEN.fullmatch(text) is not None


def number_parts(text: str) -> tuple[str, str, str] | None:
    """``(currency, digits, percent)`` of a number token, or None when it is not one.

    >>> number_parts("$1,990.50"), number_parts("45%"), number_parts("A12")
    (('$', '1,990.50', ''), ('', '45', '%'), None)
    """
    m = _NUMBER_TOKEN.fullmatch(text)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def has_letter(text: str) -> bool:
    """Whether ``text`` holds a letter (a word, not only digits and marks)."""
    return any(c.isalpha() for c in text)
