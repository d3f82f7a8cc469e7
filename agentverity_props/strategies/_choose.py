"""Which strategy pack fits a probe set: chosen from the inputs' own words, or refused.

``enlarge`` adds inputs drawn from a pack; a pack about another domain adds inputs the agent
was never meant to see (moderation prompts on a support router). :func:`choose_pack`
scores every pack :func:`load_pack` finds by name against the probe set's words and picks
one only when it is clearly ahead; otherwise the caller must name ``--strategy``.

The score of a pack is the mean, over the inputs, of the share of an input's words found in
the pack's templates and lexicons, each word weighted by ``1 / (number of packs using it)``
so that words every pack uses ("what", "order") count for little. A pack is chosen when its
score is at least :data:`MIN_SCORE` and :data:`LEAD` times the runner-up's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._internal.words import words

#: a pack is chosen only with at least this score ...
MIN_SCORE = 0.05
#: ... and this many times the runner-up's score
LEAD = 1.5

def _words(text: str) -> set[str]:
    """The words of ``text`` that say what it is about: lower-cased, of three letters or more
    and no digits (the package's one tokenizer; ``{slot}`` braces are no part of a word)."""
    return {w.text.casefold() for w in words(text.replace("{", " ").replace("}", " "))
            if len(w.text) >= 3 and not any(c.isdigit() for c in w.text)}


@dataclass(frozen=True)
class PackChoice:
    """The outcome of :func:`choose_pack`: ``name`` is None when no pack is clearly ahead."""

    name: str | None
    scores: dict[str, float]

    def describe(self) -> str:
        """One line: the scores, best first."""
        ranked = sorted(self.scores.items(), key=lambda kv: -kv[1])
        return ", ".join(f"{n} {s:.2f}" for n, s in ranked)


def choose_pack(inputs: Sequence[str], packs: Sequence[str] | None = None) -> PackChoice:
    """The strategy pack whose vocabulary the probe set shares, if one is clearly ahead.

    Example:
        >>> choose_pack(["Where is my order 1002?", "What are your support hours?"]).name
        'support_routing'
        >>> choose_pack(["xyzzy plugh", "frobnicate the quux"]).name is None
        True
    """
    from ._packs import available_packs, load_pack

    names = list(packs) if packs is not None else available_packs()
    vocab: dict[str, set[str]] = {}
    for name in names:
        pack = load_pack(name)
        words: set[str] = set()
        for region in pack.regions.values():
            for t in region.templates:
                words |= _words(t)
            for lex in region.slots.values():
                for v in lex:
                    words |= _words(v)
        for lex in pack.slots.values():
            for v in lex:
                words |= _words(v)
        vocab[name] = words
    users: dict[str, int] = {}
    for words in vocab.values():
        for w in words:
            users[w] = users.get(w, 0) + 1
    texts = [_words(t) for t in inputs]
    texts = [w for w in texts if w]
    scores: dict[str, float] = {}
    for name, words in vocab.items():
        if not texts:
            scores[name] = 0.0
            continue
        scores[name] = sum(sum(1.0 / users[w] for w in ws if w in words) / len(ws)
                           for ws in texts) / len(texts)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if not ranked:
        return PackChoice(None, scores)
    best, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0.0
    ok = top >= MIN_SCORE and top >= LEAD * second
    return PackChoice(best if ok else None, scores)
