"""Example: a free-text question-answering agent and an LLM-judge stand-in, both offline.

``make_qa_agent(seed)`` answers "What is the capital of X?" in free text, phrased one of
three ways at random (its own ``random.Random(seed)``); with ``paraphrase_bug=True`` it
answers a *rephrased* question (one not starting with "What is") with the wrong city.
``make_judge(seed, error=0.15)`` grades an answer against what it knows, returning
``correct`` or ``incorrect`` — and the other label on a share ``error`` of its calls; on
pairwise prompts (``PAIRWISE_TEMPLATE``) it answers ``A``, ``B`` or ``tie``, and with
``order_bias=p`` it says ``A`` on a share ``p`` of them whatever the answers are.

CLI references: ``agentverity_props.examples.judged_qa:qa_agent``,
``agentverity_props.examples.judged_qa:buggy_qa_agent`` and
``agentverity_props.examples.judged_qa:noisy_judge``.

Example:
    >>> agent = make_qa_agent(seed=1)
    >>> "Paris" in agent("What is the capital of France?")
    True
    >>> judge = make_judge(seed=1, error=0.0)
    >>> from agentverity_props.judge import Judge
    >>> judge(Judge(judge).prompt_for("What is the capital of France?", "It is Paris."))
    'correct'
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable

from ..relations import Relation

__all__ = ["CAPITALS", "PARAPHRASE", "buggy_qa_agent", "make_judge", "make_qa_agent",
           "noisy_judge", "order_biased_judge", "qa_agent", "qa_inputs"]

CAPITALS: dict[str, str] = {
    "France": "Paris", "Germany": "Berlin", "Italy": "Rome", "Spain": "Madrid",
    "Portugal": "Lisbon", "Austria": "Vienna", "Belgium": "Brussels", "Poland": "Warsaw",
    "Norway": "Oslo", "Sweden": "Stockholm", "Finland": "Helsinki", "Denmark": "Copenhagen",
    "Ireland": "Dublin", "Greece": "Athens", "Hungary": "Budapest", "Czechia": "Prague",
    "Japan": "Tokyo", "China": "Beijing", "India": "New Delhi", "Egypt": "Cairo",
    "Kenya": "Nairobi", "Peru": "Lima", "Chile": "Santiago", "Canada": "Ottawa",
    "Australia": "Canberra", "Mexico": "Mexico City", "Turkey": "Ankara", "Iran": "Tehran",
    "Thailand": "Bangkok", "Vietnam": "Hanoi",
}
_COUNTRIES = list(CAPITALS)
_PHRASINGS = ("The capital of {country} is {city}.", "{city} is the capital of {country}.",
              "It is {city}.")


def qa_inputs(n: int = 30) -> list[str]:
    """``n`` questions (at most one per country)."""
    return [f"What is the capital of {c}?" for c in _COUNTRIES[:n]]


def _paraphrase(text: str) -> str:
    return "Quick question: " + text[:1].lower() + text[1:] if text else text


#: the relation the planted bug breaks: a rephrased question must be answered alike
PARAPHRASE = Relation("paraphrase", "invariant", _paraphrase,
                      description="a rephrased question gets an answer graded alike")


def _country(text: str) -> str | None:
    low = text.lower()
    found = [c for c in _COUNTRIES if c.lower() in low]
    return max(found, key=len) if found else None


def make_qa_agent(seed: int = 0, *, paraphrase_bug: bool = False) -> Callable[[str], str]:
    """A free-text QA agent drawing its phrasing from its own ``Random(seed)``."""
    rng = random.Random(seed)
    lock = threading.Lock()

    def qa(prompt: str) -> str:
        country = _country(prompt)
        if country is None:
            return "I don't know."
        city = CAPITALS[country]
        if paraphrase_bug and not prompt.lstrip().lower().startswith("what is"):
            other = _COUNTRIES[(_COUNTRIES.index(country) + 1) % len(_COUNTRIES)]
            city = CAPITALS[other]
        with lock:
            phrasing = rng.choice(_PHRASINGS)
        return phrasing.format(country=country, city=city)

    qa.__qualname__ = f"make_qa_agent(seed={seed},paraphrase_bug={paraphrase_bug})"
    return qa


def _tag(text: str, name: str) -> str | None:
    m = re.search(rf"<{name}>\s*(.*?)\s*</{name}>", text, re.S)
    return m.group(1) if m else None


def _names_city(answer: str, city: str) -> bool:
    flat = " ".join(answer.split()).lower()
    return re.search(r"(?<!\w)" + re.escape(city.lower()) + r"(?!\w)", flat) is not None


def make_judge(seed: int = 0, *, error: float = 0.15,
               order_bias: float = 0.0) -> Callable[[str], str]:
    """A simulated judge: the right label, except on a share ``error`` of its calls (the
    other label); on pairwise prompts ``order_bias`` of its calls answer ``A`` outright."""
    if not (0.0 <= error <= 1.0 and 0.0 <= order_bias <= 1.0):
        raise ValueError("error and order_bias must be in [0, 1]")
    rng = random.Random(seed)
    lock = threading.Lock()

    def judge(prompt: str) -> str:
        question = _tag(prompt, "question") or ""
        country = _country(question)
        city = CAPITALS.get(country or "", "\0")
        with lock:
            flip = rng.random() < error
            biased = rng.random() < order_bias
        a, b = _tag(prompt, "answer_a"), _tag(prompt, "answer_b")
        if a is not None and b is not None:
            if biased:
                return "A"
            ok_a, ok_b = _names_city(a, city), _names_city(b, city)
            label = "tie" if ok_a == ok_b else ("A" if ok_a else "B")
            if flip:
                label = {"A": "B", "B": "A", "tie": "A"}[label]
            return label
        ok = _names_city(_tag(prompt, "answer") or "", city)
        if flip:
            ok = not ok
        return "correct" if ok else "incorrect"

    judge.__qualname__ = f"make_judge(seed={seed},error={error},order_bias={order_bias})"
    return judge


qa_agent = make_qa_agent(seed=1234)
buggy_qa_agent = make_qa_agent(seed=1234, paraphrase_bug=True)
noisy_judge = make_judge(seed=4321, error=0.15)
order_biased_judge = make_judge(seed=4321, error=0.0, order_bias=0.5)
