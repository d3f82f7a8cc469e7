"""Negation and scope edits for the probe grammar: where a verdict often turns on whether a
term is negated ("denies chest pain" / "reports chest pain"), and on how far a negation
reaches ("no fever, chest pain or cough" / "no fever or cough, but chest pain").

:func:`negation_edits` lists, for one text:

* ``negate`` (arm ``negation:remove``): a negation cue taken away, short ones included
  (``no``, ``not``, ``never`` deleted; ``without`` -> ``with``, ``free of`` -> ``with``,
  ``denies`` -> ``reports``, ``negative for`` -> ``positive for``, ``: none`` ->
  ``: present``);
* ``negate`` (arm ``negation:add``): one put in (``reports`` -> ``denies``, ``with`` ->
  ``without``, ``present`` -> ``absent``, ``no`` before a clause);
* ``scope`` (arm ``scope:out``): a term moved out of a negated list ("no A, B or C" ->
  "no A or C, but B"); (arm ``scope:in``) a clause of the text moved into a negated phrase
  ("chest pain, no fever" -> "no fever or chest pain").

Every edit replaces one span, and the texts stay well formed: a sentence keeps its capital,
no doubled spaces or stray punctuation are left. Cues are English.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from typing import Any

from .._internal.words import tokenize, word_at
from .._internal.words import words as words_of

__all__ = ["NEGATION_CUES", "negation_edits"]

#: cue -> what replaces it when the negation is removed ("" deletes it)
NEGATION_CUES: dict[str, str] = {
    "no": "", "not": "", "never": "", "without": "with", "free of": "with",
    "denies": "reports", "denied": "reported", "deny": "report",
    "negative for": "positive for", "absent": "present", "none": "present",
}
#: word -> its negated form (adding a negation)
_NEGATORS: dict[str, str] = {
    "reports": "denies", "reported": "denied", "report": "deny", "with": "without",
    "positive for": "negative for", "present": "absent", "has": "has no",
    "have": "have no", "is": "is not", "was": "was not", "are": "are not",
}
_CUE_RE = re.compile(r"\b(" + "|".join(sorted((re.escape(c) for c in NEGATION_CUES),
                                              key=len, reverse=True)) + r")\b", re.IGNORECASE)
_NEG_RE = re.compile(r"\b(" + "|".join(sorted((re.escape(c) for c in _NEGATORS),
                                              key=len, reverse=True)) + r")\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.;!?:]|,\s+but\b|$")
_CONJ = re.compile(r"\s+(or|and|nor)\s+")

#: the novelty prior of these edits (a cue is where a verdict often turns)
NOVELTY = 3.0


def _case_like(value: str, like: str) -> str:
    return value[:1].upper() + value[1:] if like[:1].isupper() and value else value


def _sentence_start(text: str, at: int) -> bool:
    before = text[:at].rstrip()
    return not before or before[-1] in ".!?;:"


def _removals(text: str, make: Callable[..., Any]) -> Iterable[Any]:
    for m in _CUE_RE.finditer(text):
        cue, repl = m.group(1), NEGATION_CUES[m.group(1).casefold()]
        if cue.casefold() in ("none", "absent") and not text[:m.start()].rstrip().endswith(":"):
            continue
        if repl:
            yield make("negate", m.start(), m.end(), cue, _case_like(repl, cue),
                       arm="negation:remove", slot=f"negation {cue!r}")
            continue
        # delete the cue and the space after it; a sentence's first word takes the capital
        nxt = word_at(text, m.end() + 1) if text[m.end():m.end() + 1] == " " else None
        if nxt is None:
            continue
        word = nxt.text
        after = _case_like(word, cue) if _sentence_start(text, m.start()) else word
        yield make("negate", m.start(), nxt.end, text[m.start():nxt.end], after,
                   arm="negation:remove", slot=f"negation {cue!r}")


def _additions(text: str, make: Callable[..., Any]) -> Iterable[Any]:
    for m in _NEG_RE.finditer(text):
        word = m.group(1)
        if word.casefold() == "present" and not text[:m.start()].rstrip().endswith(":"):
            continue
        yield make("negate", m.start(), m.end(), word,
                   _case_like(_NEGATORS[word.casefold()], word),
                   arm="negation:add", slot=f"negating {word!r}")
    # "no" before a clause that starts with a lower-case word (a finding, not a verb phrase
    # the search cannot tell apart: the agent's draws decide)
    toks = tokenize(text, trailing=False)
    for mark, nxt in itertools.pairwise(toks):
        if mark.text not in (",", ";") or not nxt.space or not nxt.is_word:
            continue
        word = nxt.text
        if _CUE_RE.fullmatch(word) or _NEG_RE.fullmatch(word) or not word[:1].islower():
            continue
        after = "no " + word
        yield make("negate", nxt.start, nxt.end, word, after, arm="negation:add",
                   slot="negating a clause")


def _lists(text: str) -> Iterable[tuple[re.Match[str], int, int, list[tuple[int, int]]]]:
    """Negated lists: ``(cue, start, end, item spans)`` for "cue A, B or C" (two items or
    more, the last after a conjunction)."""
    for m in _CUE_RE.finditer(text):
        if NEGATION_CUES[m.group(1).casefold()] in ("present",):
            continue
        start = m.end() + 1
        end_m = _CLAUSE_END.search(text, start)
        end = end_m.start() if end_m else len(text)
        seg = text[start:end]
        conj = list(_CONJ.finditer(seg))
        if not conj:
            continue
        c = conj[0]
        last_end = seg.find(",", c.end())
        last_end = len(seg) if last_end < 0 else last_end
        head = seg[:c.start()]
        items: list[tuple[int, int]] = []
        pos = 0
        for part in head.split(", "):
            items.append((start + pos, start + pos + len(part)))
            pos += len(part) + 2
        items.append((start + c.end(), start + last_end))
        if all(words_of(text[a:b]) for a, b in items) and len(items) >= 2:
            yield m, start, start + last_end, items


def _scope(text: str, make: Callable[..., Any]) -> Iterable[Any]:
    for m, start, end, items in _lists(text):
        first = _CONJ.search(text, start)
        conj = first.group(1) if first else "or"
        words = [text[a:b] for a, b in items]
        for i, item in enumerate(words):
            rest = words[:i] + words[i + 1:]
            kept = rest[0] if len(rest) == 1 else ", ".join(rest[:-1]) + f" {conj} {rest[-1]}"
            yield make("scope", start, end, text[start:end], f"{kept}, but {item}",
                       arm="scope:out", slot=f"the list negated by {m.group(1)!r}")
    # a clause of the text moved into a negated phrase: "X, no A." -> "no A or X."
    parts = [(p.start(), p.end()) for p in re.finditer(r"[^,.;!?]+", text)]
    for a, b in parts:
        clause = text[a:b].strip()
        if not clause or _CUE_RE.search(clause) or len(words_of(clause)) > 4:
            continue
        for c, d in parts:
            neg = text[c:d].strip()
            cue = _CUE_RE.match(neg)
            if (c, d) == (a, b) or cue is None or (abs(c - b) > 2 and abs(a - d) > 2):
                continue  # only a neighbouring clause
            lo, hi = min(a, c), max(b, d)
            lead = text[lo:hi][:len(text[lo:hi]) - len(text[lo:hi].lstrip())]
            moved = clause if clause[1:2].isupper() else clause[:1].lower() + clause[1:]
            new = neg + " or " + moved
            if _sentence_start(text, lo + len(lead)):
                new = new[:1].upper() + new[1:]
            yield make("scope", lo + len(lead), hi, text[lo + len(lead):hi], new,
                       arm="scope:in", slot=f"into the phrase negated by {cue.group(1)!r}")


def negation_edits(text: str, make: Callable[..., Any]) -> list[Any]:
    """Every negation and scope edit of ``text`` (module doc); ``make(kind, start, end,
    before, after, *, arm, slot)`` builds each edit."""
    out = [*_removals(text, make), *_additions(text, make), *_scope(text, make)]
    return out
