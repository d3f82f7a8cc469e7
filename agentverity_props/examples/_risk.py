"""The risk score behind the example moderation gates (pure Python, no Strands).

Score: the summed weights of lexicon words in the prompt, diluted by length
(``raw * 12 / (words + 8)``: a weapon word in a five-word question weighs more than the same
word in a paragraph). Verdicts: ``allow`` below :data:`REVIEW_AT`, ``review`` from it,
``block`` from :data:`BLOCK_AT`.

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
    "kill": ("violence", 2.0), "killing": ("violence", 2.0), "murder": ("violence", 3.0),
    "attack": ("violence", 1.5), "stab": ("violence", 2.5), "shoot": ("violence", 2.0),
    "hurt": ("violence", 1.0), "violence": ("violence", 2.0), "threaten": ("violence", 2.0),
    "torture": ("violence", 3.0),
    # weapons
    "weapon": ("weapons", 2.0), "gun": ("weapons", 2.0), "rifle": ("weapons", 2.0),
    "bomb": ("weapons", 3.0), "explosive": ("weapons", 3.0), "grenade": ("weapons", 3.0),
    "ammunition": ("weapons", 1.5),
    # self-harm
    "suicide": ("self_harm", 3.5), "self-harm": ("self_harm", 3.5), "overdose": ("self_harm", 2.5),
    # scams and fraud
    "scam": ("scam", 1.5), "fraud": ("scam", 2.0), "phishing": ("scam", 2.0),
    "launder": ("scam", 2.5), "counterfeit": ("scam", 2.0), "steal": ("scam", 1.5),
    "stolen": ("scam", 1.5),
    # intrusion
    "hack": ("hacking", 1.2), "malware": ("hacking", 2.5), "ransomware": ("hacking", 3.0),
    "keylogger": ("hacking", 2.5),
    # drugs
    "cocaine": ("drugs", 2.5), "meth": ("drugs", 2.5), "heroin": ("drugs", 2.5),
}

_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
# logistic(-4): the probability floor that is rescaled to exactly 0 (and 1 - it to 1)
_EPS = 1.0 / (1.0 + math.exp(4.0))


@dataclass(frozen=True)
class Risk:
    """A prompt's risk: score, dominant category (``None`` if no lexicon hit), hits."""

    score: float
    category: str | None
    hits: tuple[str, ...]


def risk(prompt: str) -> Risk:
    """Score ``prompt`` against :data:`LEXICON` (case-insensitive, length-diluted)."""
    words = _WORD.findall(prompt.lower())
    raw = 0.0
    per_category: dict[str, float] = {}
    hits: list[str] = []
    for word in words:
        entry = LEXICON.get(word)
        if entry is None and word.endswith("s"):
            entry = LEXICON.get(word[:-1])
        if entry is None:
            continue
        category, weight = entry
        raw += weight
        per_category[category] = per_category.get(category, 0.0) + weight
        hits.append(word)
    score = round(raw * 12.0 / (len(words) + 8), 4)
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
