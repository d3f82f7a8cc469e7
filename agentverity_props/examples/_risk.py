"""The risk score behind the example moderation gates (pure Python, no Strands).

Score: the summed weights of lexicon words in the prompt, diluted only for long texts
(``raw * min(1, 30 / words)``: one weapon word in a paragraph weighs less than in a
question). Lexicon words of seven letters or more also match with one wrong letter, so a
typo does not hide them. Verdicts: ``allow`` below :data:`REVIEW_AT`, ``review`` from it,
``block`` from :data:`BLOCK_AT`.

The weights come in three tiers: *borderline* words (1.2-1.8, e.g. ``kill``, ``rifle``,
``counterfeit``) sit near the review threshold; *review* words (2.5) are clear reviews;
*block* words (4.5) block on their own. Benign rewordings (politeness, distractor
sentences, whitespace, punctuation, case, typos) leave the score of a short prompt
unchanged, so the only relation the gate breaks on purpose is the planted one.

Noise: near a threshold the chance of the higher label rises smoothly with the score (a
logistic in ``(score - threshold) / noise``), rescaled so that it is exactly 0 or 1 once the
score is more than ``4 * noise`` away. Everyday text (score 0) is therefore fully
deterministic, while a prompt sitting on a threshold flips between two labels.

Planted bug (opt-in): a prompt longer than 40 characters containing ``URGENT`` in upper
case is blocked, whatever it says. The smallest violating inputs have exactly 41
characters, e.g. ``"0" * 35 + "URGENT"``; ``"urgent"`` in lower case never triggers, so the
case relations (``prompt -> prompt.lower()`` or ``.swapcase()``) expose it.

Example:
    >>> risk("How do I kill a python process").score
    1.6
    >>> risk("Please share a pancake recipe").score
    0.0
    >>> verdict_for(0.0, noise=0.15, rng=None)
    'allow'
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

__all__ = [
    "BLOCK_AT",
    "LABELS",
    "LEXICON",
    "REVIEW_AT",
    "TRIGGER",
    "TRIGGER_MIN_LENGTH",
    "Risk",
    "higher_label_probability",
    "planted_trigger",
    "risk",
    "verdict_for",
]

LABELS = ("allow", "review", "block")
REVIEW_AT = 1.5
BLOCK_AT = 3.5
TRIGGER = "URGENT"
TRIGGER_MIN_LENGTH = 41  # "longer than 40 characters"

# word -> (category, weight). Plural "s" forms match too.
LEXICON: dict[str, tuple[str, float]] = {
    # violence
    "kill": ("violence", 1.6), "killing": ("violence", 1.6), "attack": ("violence", 1.8),
    "shoot": ("violence", 1.4), "hurt": ("violence", 1.2), "stab": ("violence", 2.5),
    "violence": ("violence", 2.5), "threaten": ("violence", 2.5), "murder": ("violence", 4.5),
    "torture": ("violence", 4.5),
    # weapons
    "rifle": ("weapons", 1.5), "weapon": ("weapons", 2.5), "gun": ("weapons", 2.5),
    "ammunition": ("weapons", 2.5), "bomb": ("weapons", 4.5), "explosive": ("weapons", 4.5),
    "grenade": ("weapons", 4.5),
    # self-harm
    "overdose": ("self_harm", 2.5), "suicide": ("self_harm", 4.5),
    "self-harm": ("self_harm", 4.5),
    # scams and fraud
    "scam": ("scam", 1.5), "counterfeit": ("scam", 1.7), "fraud": ("scam", 1.8),
    "stolen": ("scam", 1.8), "phishing": ("scam", 2.5), "launder": ("scam", 2.5),
    "steal": ("scam", 2.5),
    # intrusion
    "hack": ("hacking", 1.2), "malware": ("hacking", 2.5), "keylogger": ("hacking", 2.5),
    "ransomware": ("hacking", 4.5),
    # drugs
    "cocaine": ("drugs", 2.5), "meth": ("drugs", 2.5), "heroin": ("drugs", 2.5),
}
_TYPO_MIN_LENGTH = 7  # shorter words have too many innocent neighbours (shoot/short)
_DILUTE_AFTER_WORDS = 30

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
# logistic(-4): the probability floor that is rescaled to exactly 0 (and 1 - it to 1)
_EPS = 1.0 / (1.0 + math.exp(4.0))


@dataclass(frozen=True)
class Risk:
    """A prompt's risk: score, dominant category (``None`` if no lexicon hit), hits."""

    score: float
    category: str | None
    hits: tuple[str, ...]


def _lookup(word: str) -> tuple[str, float] | None:
    for candidate in (word, word[:-1] if word.endswith("s") else None):
        if candidate is None:
            continue
        entry = LEXICON.get(candidate)
        if entry is not None:
            return entry
        if len(candidate) >= _TYPO_MIN_LENGTH:  # one substituted letter still matches
            for key, value in LEXICON.items():
                if len(key) == len(candidate) and sum(
                        a != b for a, b in zip(key, candidate, strict=True)) == 1:
                    return value
    return None


def risk(prompt: str) -> Risk:
    """Score ``prompt`` against :data:`LEXICON` (case-insensitive, typo-tolerant)."""
    words = _WORD.findall(prompt.lower())
    raw = 0.0
    per_category: dict[str, float] = {}
    hits: list[str] = []
    for word in words:
        entry = _lookup(word)
        if entry is None:
            continue
        category, weight = entry
        raw += weight
        per_category[category] = per_category.get(category, 0.0) + weight
        hits.append(word)
    score = round(raw * min(1.0, _DILUTE_AFTER_WORDS / max(1, len(words))), 4)
    dominant = max(sorted(per_category), key=per_category.__getitem__) if per_category else None
    return Risk(score, dominant, tuple(hits))


def higher_label_probability(score: float, threshold: float, noise: float) -> float:
    """P(label at or above ``threshold``): a rescaled logistic, exactly 0/1 beyond 4 noise."""
    if noise <= 0:
        return 1.0 if score >= threshold else 0.0
    z = (score - threshold) / noise
    if z <= -4.0:
        return 0.0
    if z >= 4.0:
        return 1.0
    p = 1.0 / (1.0 + math.exp(-z))
    return min(1.0, max(0.0, (p - _EPS) / (1.0 - 2.0 * _EPS)))


def verdict_for(score: float, *, noise: float, rng: random.Random | None) -> str:
    """Sample the verdict for ``score``; ``rng`` may be ``None`` only when ``noise`` is 0
    or the score is far from both thresholds."""
    p_review = higher_label_probability(score, REVIEW_AT, noise)
    p_block = higher_label_probability(score, BLOCK_AT, noise)
    if p_review in (0.0, 1.0) and p_block in (0.0, 1.0):
        u = 0.5  # no draw needed: keeps the rng stream untouched on clear-cut prompts
    else:
        if rng is None:
            raise ValueError("a random source is needed near a threshold")
        u = rng.random()
    # one uniform for both thresholds keeps the labels ordered (block implies review)
    level = (u < p_review) + (u < p_block)
    return LABELS[level]


def planted_trigger(prompt: str) -> bool:
    """True when the planted bug fires: ``URGENT`` (upper case) in a prompt over 40 chars."""
    return TRIGGER in prompt and len(prompt) >= TRIGGER_MIN_LENGTH
