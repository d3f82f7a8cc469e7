"""A probe grammar learned from the user's own probes: the slots they vary, and edits of them.

:class:`ProbeGrammar` reads a probe set (no model, no agent call) and learns:

* **numbers** (amounts, counts, prices, percentages, years), keyed by the words around them
  ("cost $450" and "cost $1,200" are one slot), with the values seen there;
* **alternations**: words and phrases that replace each other between probes sharing a frame
  ("to Boston on Monday" / "to Denver on Friday": {Boston, Denver}, {Monday, Friday}),
  merged into classes;
* **insertions**: a word or phrase one probe has and another, otherwise alike, lacks
  ("an urgent refund" / "a refund");
* **clauses**: sentences and comma- or ``and``-separated parts, for splicing between probes;
* **lexicon classes** (shipped ones, :data:`~._lexicons.DEFAULT_LEXICONS`, and the user's):
  where a probe holds a value of a class, the other values of that class.

:meth:`ProbeGrammar.edits` lists the :class:`Edit` values that apply to a text, mildest first
(the order Hypothesis shrinks toward): scale or replace a number, swap a slot value for
another probe's, a lexicon value, insert, delete a word or a clause, splice in a clause of
another probe (preferring a probe of another verdict), add a list item. Each edit names its
``arm`` (its kind and slot) and carries a ``novelty`` prior: how far it leaves what the
modal-verdict probes already showed the agent (a value outside the range they span, a value
only probes of another verdict hold), which is where a decision boundary can be.

What it cannot do: invent a word that no probe and no lexicon holds, or a sentence shape
none of the probes has. Add such words through a lexicon.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._internal.words import Token, has_letter, is_number, number_parts, tokenize
from ..decide import modal
from ._lexicons import DEFAULT_LEXICONS
from ._negation import NEGATION_CUES, negation_edits
from ._negation import NOVELTY as NEGATION_NOVELTY

__all__ = ["Edit", "ProbeGrammar", "shared_word_share", "tokens"]

_CLAUSE_SPLIT = re.compile(r"(?<=[.!?;])\s+|,\s+|\s+(?:and|but|or|because|so)\s+")

#: scale factors tried on a number, mildest first (|log factor| ascending)
SCALES: tuple[float, ...] = (1.1, 0.9, 1.5, 0.5, 2.0, 3.0, 0.2, 5.0, 0.1, 10.0, 100.0)
#: the most candidate edits :meth:`ProbeGrammar.edits` returns for one text
MAX_EDITS = 600
#: the longest phrase (in tokens) learned as one alternation or insertion
MAX_PHRASE = 4
#: the most probe pairs aligned to learn alternations (all pairs of up to 90 probes)
MAX_PAIRS = 4000


def tokens(text: str) -> list[Token]:
    """Words, numbers and single symbols of ``text`` with their character spans (the
    package's one tokenizer, ``_internal/words.py``; no trailing-whitespace token)."""
    return tokenize(text, trailing=False)


def _word_set(text: str) -> set[str]:
    return {t.text.casefold() for t in tokens(text) if t.is_word or t.is_number}


def shared_word_share(text: str, other: str) -> float:
    """The share of ``text``'s distinct words and numbers (case-folded) that ``other`` holds
    too."""
    a, b = _word_set(text), _word_set(other)
    return len(a & b) / len(a) if a else 0.0


def _digits(t: Token) -> tuple[int, int, str]:
    """A number token's digits without its currency and percent signs: ``(start, end,
    digits)`` (the grammar edits the value and keeps the signs)."""
    parts = number_parts(t.text)
    assert parts is not None, t
    currency, digits, _ = parts
    start = t.start + len(currency)
    return start, start + len(digits), digits


@dataclass(frozen=True)
class Edit:
    """One edit of a text: replace ``text[start:end]`` (``before``) with ``after``.

    ``kind`` is ``number``, ``swap`` (another probe's value of the slot), ``lexicon``,
    ``insert``, ``delete``, ``splice`` (a clause of another probe) or ``add_item``; ``slot``
    names what was edited in the user's words ("the number after 'cost'", "class {Boston,
    Denver}"); ``origin`` where the new value came from ("probe 4", "lexicon city", "x10").

    >>> e = Edit("number", 6, 9, "450", "900", slot="number after 'cost'", origin="x2")
    >>> e.apply("cost $450 total")
    'cost $900 total'
    """

    kind: str
    start: int
    end: int
    before: str
    after: str
    slot: str = ""
    origin: str = ""
    #: the search's arm: the kind and slot, so that what worked once is tried elsewhere
    arm: str = ""
    #: 1 = mildest; Hypothesis shrinks toward low values
    mildness: float = 1.0
    #: prior weight that the edit leaves what the modal-verdict probes showed
    novelty: float = 1.0

    def apply(self, text: str) -> str:
        return text[:self.start] + self.after + text[self.end:]

    def describe(self) -> str:
        """The edit in the user's words: ``450 → 900 (number after 'cost')``."""
        if self.kind == "number":
            what = f"{self.before} → {self.after}"
        elif self.kind == "insert":
            what = f"insert {self.after.strip()!r}"
        elif self.kind == "delete":
            what = f"delete {self.before.strip()!r}"
        elif self.kind == "splice":
            what = f"add clause {self.after.strip(' ,.!?')!r}"
        elif self.kind == "add_item":
            what = f"add {self.after.strip()!r}"
        else:
            what = f"{self.before.strip()!r} → {self.after.strip()!r}"
        return f"{what} ({self.slot})" if self.slot else what

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "before": self.before, "after": self.after,
                "slot": self.slot, "origin": self.origin, "at": self.start}


# -- numbers ------------------------------------------------------------------------------

def parse_number(text: str) -> float:
    """The value of a number token, its currency and percent signs left out.

    >>> parse_number("$1,990.50"), parse_number("45%")
    (1990.5, 45.0)
    """
    parts = number_parts(text)
    return float((parts[1] if parts else text).replace(",", ""))


def format_like(value: float, like: str, *, commas: bool = False) -> str:
    """``value`` written the way ``like`` writes numbers (thousands separators, decimals);
    ``commas``: the probes write thousands with separators, so a value past 999 gets them.

    >>> format_like(2010, "1,990"), format_like(12.5, "3.25"), format_like(7.6, "12")
    ('2,010', '12.50', '8')
    >>> format_like(2250, "450", commas=True)
    '2,250'
    """
    decimals = len(like.split(".", 1)[1]) if "." in like else 0
    commas = "," in like or (commas and len(like.split(".", maxsplit=1)[0]) <= 3)
    if decimals:
        out = f"{value:,.{decimals}f}" if commas else f"{value:.{decimals}f}"
    else:
        out = f"{round(value):,d}" if commas else f"{round(value):d}"
    return out


_MONTH_NAMES = frozenset(m.casefold() for m in DEFAULT_LEXICONS["month"]) | frozenset(
    ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"))


def _is_year(tok: str) -> bool:
    return len(tok) == 4 and tok.isdigit() and 1900 <= int(tok) <= 2100


def _number_context(toks: Sequence[Token], i: int) -> str:
    """The words around a number, as the slot's name: the nearest word before it (within
    two tokens, skipping symbols; its currency sign counts as one), else the word after it
    (likewise, its percent sign counting as one)."""
    parts = number_parts(toks[i].text) or ("", "", "")
    back, ahead = 2 - bool(parts[0]), 2 - bool(parts[2])
    for j in range(i - 1, max(-1, i - 1 - back), -1):
        if toks[j].is_word:
            return f"after {toks[j].text.casefold()!r}"
    for j in range(i + 1, min(len(toks), i + 1 + ahead)):
        if toks[j].is_word:
            return f"before {toks[j].text.casefold()!r}"
    return "alone"


# -- the grammar ----------------------------------------------------------------------------

@dataclass
class _Class:
    """Values that replace each other in some frame, with the probes (by index) holding them."""

    values: dict[str, str] = field(default_factory=dict)  # casefold -> surface form
    holders: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    origin: str = "probes"

    def label(self, limit: int = 3) -> str:
        vals = list(self.values.values())
        more = f", +{len(vals) - limit}" if len(vals) > limit else ""
        return "{" + ", ".join(vals[:limit]) + more + "}"


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _phrase(toks: Sequence[Token], text: str, i: int, j: int) -> str:
    return text[toks[i].start:toks[j - 1].end] if j > i else ""


def _case_like(value: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return value.upper()
    if like[:1].isupper() and not value[:1].isupper():
        return value[:1].upper() + value[1:]
    if like[:1].islower() and value[:1].isupper() and value.lower() == value.lower() \
            and not any(c.isupper() for c in value[1:]):
        return value[:1].lower() + value[1:]
    return value


class ProbeGrammar:
    """Slots and edits learned from a probe set (see the module doc).

    Args:
        probes: the user's probe texts.
        verdicts: optional verdict per probe (same order, None where unknown): edits that
            bring in values only other verdicts' probes hold get a higher novelty, and
            splices prefer clauses of another verdict.
        lexicon: the user's own lexicon classes, searched before the shipped ones.
        default_lexicons: use :data:`~._lexicons.DEFAULT_LEXICONS` too.

    Example:
        >>> g = ProbeGrammar(["Flight to Boston, cost $450", "Flight to Denver, cost $1,200",
        ...                   "Train to Boston, cost $80"])
        >>> sorted({e.kind for e in g.edits("Flight to Boston, cost $450")})
        ['delete', 'lexicon', 'negate', 'number', 'splice', 'swap']
        >>> [e.after for e in g.edits("Flight to Boston, cost $450") if e.kind == "swap"][:2]
        ['Train', 'Denver']
    """

    def __init__(self, probes: Sequence[str], *, verdicts: Sequence[str | None] | None = None,
                 lexicon: Mapping[str, Sequence[str]] | None = None,
                 default_lexicons: bool = True) -> None:
        self.probes = list(probes)
        self.verdicts: list[str | None] = [None] * len(self.probes)
        self.modal: str | None = None
        if verdicts is not None:
            self.set_verdicts(verdicts)
        self._toks = [tokens(p) for p in self.probes]
        self.numbers: dict[str, list[tuple[float, int]]] = defaultdict(list)
        self.classes: list[_Class] = []
        self._class_of: dict[str, int] = {}
        self.insertions: list[tuple[str, str, str, int]] = []  # (left, phrase, right, probe)
        #: (clause, probe index, the sentence end it had: "?", "!", "." or "")
        self.clauses: list[tuple[str, int, str]] = []
        self.lexicons: list[tuple[str, tuple[str, ...]]] = [
            *((f"your lexicon {k}", tuple(v)) for k, v in (lexicon or {}).items()),
            *((f"lexicon {k}", v) for k, v in (DEFAULT_LEXICONS.items()
                                               if default_lexicons else ()))]
        self._commas = any("," in t.text for toks in self._toks for t in toks if t.is_number)
        self._learn()

    def set_verdicts(self, verdicts: Sequence[str | None]) -> None:
        """Tell the grammar each probe's verdict (same order, None where unknown). What it
        learned does not depend on them; only the novelty of edits does, so a grammar built
        before any agent call is told the verdicts once they are known, without relearning."""
        self.verdicts = list(verdicts)
        known = [v for v in self.verdicts if v is not None]
        self.modal = modal(known)

    # -- learning ---------------------------------------------------------------------------

    def _modal_probe(self, i: int) -> bool:
        return self.modal is not None and self.verdicts[i] == self.modal

    def _learn(self) -> None:
        for i, toks in enumerate(self._toks):
            for k, t in enumerate(toks):
                if t.is_number:
                    self.numbers[_number_context(toks, k)].append(
                        (parse_number(_digits(t)[2]), i))
            for part in _CLAUSE_SPLIT.split(self.probes[i]):
                end = part.strip()[-1:] if part.strip()[-1:] in ("?", "!", ".") else ""
                clause = part.strip().rstrip(".!?;,")
                if len(tokens(clause)) >= 2:
                    self.clauses.append((clause, i, end))
        uf = _UnionFind()
        surface: dict[str, str] = {}
        holders: dict[str, set[int]] = defaultdict(set)
        n = len(self.probes)
        # every pair of a small probe set; of a large one, near neighbours in order suffice
        reach = n if n * (n - 1) // 2 <= MAX_PAIRS else max(1, MAX_PAIRS // n)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, min(n, i + 1 + reach))]
        for i, j in pairs:
            a, b = self._toks[i], self._toks[j]
            ka = [t.text.casefold() for t in a]
            kb = [t.text.casefold() for t in b]
            sm = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
            if sm.ratio() < 0.4:
                continue
            for op, i1, i2, j1, j2 in sm.get_opcodes():
                if op == "replace" and i2 - i1 <= MAX_PHRASE and j2 - j1 <= MAX_PHRASE:
                    pa = _phrase(a, self.probes[i], i1, i2)
                    pb = _phrase(b, self.probes[j], j1, j2)
                    if is_number(pa) and is_number(pb):
                        continue  # numbers are their own slots
                    if not (has_letter(pa) and has_letter(pb)):
                        continue
                    fa, fb = pa.casefold(), pb.casefold()
                    surface.setdefault(fa, pa)
                    surface.setdefault(fb, pb)
                    holders[fa].add(i)
                    holders[fb].add(j)
                    uf.union(fa, fb)
                elif op in ("insert", "delete"):
                    toks, lo, hi, idx = (b, j1, j2, j) if op == "insert" else (a, i1, i2, i)
                    other, at = (a, i1) if op == "insert" else (b, j1)
                    if hi - lo > MAX_PHRASE:
                        continue
                    phrase = _phrase(toks, self.probes[idx], lo, hi)
                    if not has_letter(phrase):
                        continue
                    left = other[at - 1].text.casefold() if at > 0 else ""
                    right = other[at].text.casefold() if at < len(other) else ""
                    self.insertions.append((left, phrase, right, idx))
        groups: dict[str, _Class] = {}
        for key, surf in surface.items():
            root = uf.find(key)
            cls = groups.setdefault(root, _Class())
            cls.values[key] = surf
            cls.holders[key] |= holders[key]
        for cls in groups.values():
            if len(cls.values) >= 2:
                idx = len(self.classes)
                self.classes.append(cls)
                for key in cls.values:
                    self._class_of.setdefault(key, idx)
        unique: dict[tuple[str, str, str], tuple[str, str, str, int]] = {}
        for x in self.insertions:
            unique.setdefault((x[0], x[1].casefold(), x[2]), x)
        self.insertions = list(unique.values())

    # -- describing what was learned --------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """What the grammar learned, for a report: slot names and value counts."""
        return {
            "probes": len(self.probes),
            "number_slots": {k: len(v) for k, v in self.numbers.items()},
            "classes": [c.label() for c in self.classes],
            "insertions": len(self.insertions),
            "clauses": len(self.clauses),
            "lexicons": [name for name, _ in self.lexicons],
        }

    @property
    def learnable(self) -> bool:
        """Whether the probes give anything to vary beyond deleting words."""
        return bool(self.numbers or self.classes or self.insertions
                    or len({i for _, i, _ in self.clauses}) >= 2)

    # -- edits ------------------------------------------------------------------------------

    def _number_edits(self, text: str, toks: Sequence[Token]) -> Iterable[Edit]:
        for k, t in enumerate(toks):
            if not t.is_number:
                continue
            ctx = _number_context(toks, k)
            start, end, digits = _digits(t)
            value = parse_number(digits)
            seen = self.numbers.get(ctx, [])
            modal_vals = [v for v, i in seen if self._modal_probe(i)] or [v for v, _ in seen]
            lo, hi = (min(modal_vals), max(modal_vals)) if modal_vals else (value, value)
            other_vals = {v for v, i in seen if self.modal is not None
                          and self.verdicts[i] not in (None, self.modal)}
            slot = f"number {ctx}"
            cands: dict[str, tuple[float, str]] = {}
            day = ctx.removeprefix("after ").strip("'") in _MONTH_NAMES
            if day and digits.isdigit() and 1 <= value <= 31:
                for v in (value + 1, value - 1, value + 7, value - 7, 1, 28):
                    if 1 <= v <= 31:
                        cands.setdefault(str(int(v)), (abs(v - value) / 10, f"day {v - value:+g}"))
            elif _is_year(digits):
                steps = [value + d for d in (1, -1, 2, -2, 5, -5, 10, -10)]
                for v in steps:
                    cands.setdefault(str(int(v)), (abs(v - value) / 10, f"{v - value:+g} years"))
            else:
                for f in SCALES:
                    v = value * f
                    if digits.isdigit() or "." not in digits:
                        v = round(v)
                    cands.setdefault(format_like(v, digits, commas=self._commas),
                                     (abs(math.log(f)), f"x{f:g}"))
                if modal_vals:
                    for v, why in ((hi * 2, "twice the largest seen"),
                                   (lo / 2, "half the smallest seen")):
                        cands.setdefault(format_like(v, digits, commas=self._commas),
                                         (abs(math.log(max(v, 1e-9) / max(value, 1e-9))), why))
                for v, i in seen:
                    cands.setdefault(format_like(v, digits, commas=self._commas),
                                     (abs(math.log(max(v, 1e-9) / max(value, 1e-9))),
                                      f"probe {i + 1}"))
            for after, (dist, origin) in cands.items():
                if after == digits or (parse_number(after) == 0 and value != 0):
                    continue
                v = parse_number(after)
                outside = v > hi * 1.0001 or v < lo * 0.9999
                novelty = 1.0 + (1.5 if outside else 0.0) + (2.0 if v in other_vals else 0.0)
                if outside:  # how far outside the modal probes' range, in octaves
                    span = math.log2(max(v, 1e-9) / hi) if v > hi else math.log2(lo / max(v, 1e-9))
                    novelty += min(1.5, 0.5 * span)
                yield Edit("number", start, end, digits, after, slot=slot, origin=origin,
                           arm=f"number:{ctx}:{'up' if v > value else 'down'}",
                           mildness=1.0 + dist, novelty=novelty)

    def _phrase_spans(self, text: str, toks: Sequence[Token]) -> Iterable[tuple[int, int, str]]:
        """Every run of up to :data:`MAX_PHRASE` tokens: ``(start, end, phrase)``."""
        for i in range(len(toks)):
            for j in range(i + 1, min(len(toks), i + MAX_PHRASE) + 1):
                yield toks[i].start, toks[j - 1].end, text[toks[i].start:toks[j - 1].end]

    def _swap_edits(self, text: str, toks: Sequence[Token]) -> Iterable[Edit]:
        spans = list(self._phrase_spans(text, toks))
        for start, end, phrase in spans:
            key = phrase.casefold()
            ci = self._class_of.get(key)
            if ci is not None:
                cls = self.classes[ci]
                for rank, (other, surf) in enumerate(cls.values.items()):
                    if other == key:
                        continue
                    held = cls.holders.get(other, set())
                    only_other = bool(held) and all(not self._modal_probe(i) for i in held)
                    yield Edit("swap", start, end, phrase, _case_like(surf, phrase),
                               slot=f"class {cls.label()}",
                               origin=f"probe {min(held) + 1}" if held else "probes",
                               arm=f"swap:{ci}", mildness=2.0 + rank / 100,
                               novelty=1.0 + (2.5 if only_other else 0.0))
            for li, (name, values) in enumerate(self.lexicons):
                proper = any(v[:1].isupper() for v in values)
                match = [v for v in values if (v == phrase if proper else v.casefold() == key)]
                if not match:
                    continue
                for rank, v in enumerate(values):
                    if v.casefold() == key:
                        continue
                    in_probes = ci is not None and v.casefold() in self.classes[ci].values
                    if in_probes:
                        continue  # already a swap
                    yield Edit("lexicon", start, end, phrase, _case_like(v, phrase),
                               slot=f"{name}", origin=name, arm=f"lexicon:{name}",
                               mildness=3.0 + li / 10 + rank / 1000, novelty=1.8)

    def _insert_edits(self, text: str, toks: Sequence[Token]) -> Iterable[Edit]:
        keys = [t.text.casefold() for t in toks]
        for n, (left, phrase, right, idx) in enumerate(self.insertions):
            for k in range(len(toks) + 1):
                lk = keys[k - 1] if k > 0 else ""
                rk = keys[k] if k < len(toks) else ""
                if lk != left or rk != right:
                    continue
                if k < len(toks):
                    pos = toks[k].start
                    after = phrase + " "
                else:
                    pos = len(text.rstrip())
                    after = " " + phrase
                novelty = 1.0 + (2.0 if not self._modal_probe(idx) and self.modal else 0.0)
                yield Edit("insert", pos, pos, "", after, slot=f"between {left!r} and {right!r}",
                           origin=f"probe {idx + 1}", arm=f"insert:{phrase.casefold()}",
                           mildness=2.5 + n / 1000, novelty=novelty)

    def _delete_edits(self, text: str, toks: Sequence[Token]) -> Iterable[Edit]:
        # a whole word (hyphenated and contracted words are one token: deleting "Follow"
        # from "Follow-up" is not offered); a short word only when it is a negation cue
        for k, t in enumerate(toks):
            if not t.is_word or (len(t.text) < 3 and t.text.casefold() not in NEGATION_CUES):
                continue
            end = toks[k + 1].start if k + 1 < len(toks) else t.end
            start = t.start
            after = ""
            if k + 1 >= len(toks) and k > 0:  # the last token: take the space before it
                start = toks[k - 1].end
            elif k + 1 < len(toks) and toks[k + 1].is_word and t.text[:1].isupper() \
                    and (k == 0 or toks[k - 1].text in ".!?;:"):
                # the sentence's first word: the next one takes its capital
                nxt = toks[k + 1]
                end = nxt.start + 1
                after = nxt.text[:1].upper()
            elif k + 1 < len(toks) and not toks[k + 1].is_word \
                    and not toks[k + 1].is_number:
                continue  # "word," -> a stray comma: the clause deletion covers it
            yield Edit("delete", start, end, text[start:end], after, slot=f"word {t.text!r}",
                       origin="deletion", arm="delete:word", mildness=1.5 + k / 1000,
                       novelty=0.6)

    def _negation_edits(self, text: str) -> Iterable[Edit]:
        def make(kind: str, start: int, end: int, before: str, after: str, *, arm: str,
                 slot: str) -> Edit:
            return Edit(kind, start, end, before, after, slot=slot, origin=kind, arm=arm,
                        mildness=1.2, novelty=NEGATION_NOVELTY)
        return negation_edits(text, make)

    def _splice_edits(self, text: str) -> Iterable[Edit]:
        body = text.rstrip()
        end_punct = body[-1] if body and body[-1] in ".!?" else ""
        core = body[:-1] if end_punct else body
        own = {c.casefold() for c, _ in ((x.strip().rstrip(".!?;,"), 0)
                                          for x in _CLAUSE_SPLIT.split(text))}
        for n, (clause, idx, end) in enumerate(self.clauses):
            if clause.casefold() in own:
                continue
            other_verdict = self.modal is not None and not self._modal_probe(idx)
            if end and clause[:1].isupper():  # a sentence of its own: added as one
                after = f"{end_punct or '.'} {clause}{end}"
            else:
                lowered = clause[:1].lower() + clause[1:] if not clause[:2].isupper() else clause
                after = f", {lowered}{end_punct}"
            yield Edit("splice", len(core), len(body), body[len(core):],
                       after, slot="an added clause",
                       origin=f"probe {idx + 1}",
                       arm=f"splice:{'other' if other_verdict else 'same'}",
                       mildness=4.0 + n / 1000, novelty=1.0 + (3.0 if other_verdict else 0.0))

    def _add_item_edits(self, text: str, toks: Sequence[Token]) -> Iterable[Edit]:
        for _start, end, phrase in self._phrase_spans(text, toks):
            ci = self._class_of.get(phrase.casefold())
            if ci is None or len(self.classes[ci].values) < 3:
                continue
            for other, surf in self.classes[ci].values.items():
                if other != phrase.casefold() and other not in text.casefold():
                    yield Edit("add_item", end, end, "", f" and {surf}",
                               slot=f"class {self.classes[ci].label()}", origin="probes",
                               arm=f"add_item:{ci}", mildness=3.5, novelty=1.2)

    def edits(self, text: str) -> list[Edit]:
        """Every edit that applies to ``text``, mildest first, at most :data:`MAX_EDITS`
        (spread over the kinds when there are more)."""
        toks = tokens(text)
        by_kind: dict[str, list[Edit]] = defaultdict(list)
        seen: set[str] = set()
        # negation edits first: a cue deleted is the same text as the word deleted, and is
        # kept as the negation edit it is
        for gen in (self._negation_edits(text), self._number_edits(text, toks),
                    self._swap_edits(text, toks), self._insert_edits(text, toks),
                    self._delete_edits(text, toks), self._splice_edits(text),
                    self._add_item_edits(text, toks)):
            for e in gen:
                out = e.apply(text)
                if out == text or out in seen or not out.strip():
                    continue
                seen.add(out)
                by_kind[e.kind].append(e)
        for es in by_kind.values():
            es.sort(key=lambda e: e.mildness)
        total = sum(len(es) for es in by_kind.values())
        if total > MAX_EDITS:  # keep the mildest of every kind, in proportion
            share = MAX_EDITS / total
            by_kind = defaultdict(list, {k: es[:max(1, int(len(es) * share))]
                                         for k, es in by_kind.items()})
        return sorted((e for es in by_kind.values() for e in es), key=lambda e: e.mildness)
