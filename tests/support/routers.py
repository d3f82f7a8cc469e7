"""A ticket router with one planted bug on one kind of edit (``tests/unit/test_edit_families.py``,
``benchmarks/edit_kinds.py``): every prompt the bug's trigger matches goes to ``technical``; the
others to their topic (robust to whitespace and case); a share ``noise`` of calls answer a
random route. Each router keeps its own ``random.Random`` (Hypothesis reseeds the global one).
"""

from __future__ import annotations

import random
from collections.abc import Callable

PROMPTS = [
    "Where is my package? It was due yesterday.", "How do I reset my password?",
    "I was charged twice for my order.", "Can I get a refund for a damaged item?",
    "My invoice shows the wrong address.", "When will my order be delivered?",
    "I cannot log in to my account.", "Do you ship to Canada?",
    "How do I change my login email?", "The package arrived empty.",
    "Please cancel the extra charge on my card.", "What are your opening hours?",
    "Can I speak to a human?", "My delivery was left at the wrong door.",
    "I forgot my password again.", "How long does shipping take to Spain?",
    "Why was I charged a late fee?", "Send me a copy of my last invoice.",
    "Is there a discount for students?", "The courier says it was delivered but it is not.",
    "Can I pay by bank transfer?", "How do I close my account?",
    "Where do I find my order history?", "My refund has not arrived yet.",
    "Do you have a phone number?", "Can I change the delivery date?",
    "The login page shows an error.", "What is your returns policy?",
    "I want to update my billing details.", "Is my data safe with you?",
]

#: bug -> (the built-in relation it belongs to, the edit kinds that carry it, its trigger).
#: A final ``?`` misroutes the questions among the sources too: every edit that moves their
#: final mark shows it.
BUGS: dict[str, tuple[str, tuple[str, ...], Callable[[str], bool]]] = {
    "`!` anywhere": ("punctuation", ("exclamation",), lambda p: "!" in p),
    "a final `?`": ("punctuation", ("question", "toggle period", "exclamation", "repeat",
                                    "ellipsis", "strip all"), lambda p: p.endswith("?")),
    "trailing whitespace": ("whitespace", ("trailing",), lambda p: p != p.rstrip()),
    "a tab": ("whitespace", ("tab",), lambda p: "\t" in p),
    "all upper case": ("case", ("upper", "swapped"), lambda p: p.isupper()),
}
ROUTES = ("billing", "shipping", "account", "general")


def topic(p: str) -> str:
    """The route of a prompt by its words (whitespace and case do not matter)."""
    low = " ".join(p.lower().split())
    for label, words in (("billing", ("invoice", "refund", "charge", "pay", "billing")),
                         ("shipping", ("ship", "package", "deliver", "courier", "order")),
                         ("account", ("password", "login", "log in", "account"))):
        if any(w in low for w in words):
            return label
    return "general"


def router(bug: str | None, noise: float, seed: int) -> Callable[[str], str]:
    """The router with ``bug`` planted (None: clean) and ``noise`` random answers."""
    rng = random.Random(f"router:{bug}:{noise}:{seed}")
    hit = BUGS[bug][2] if bug else (lambda p: False)

    def route(p: str) -> str:
        v = "technical" if hit(p) else topic(p)
        if rng.random() < noise:
            v = rng.choice(ROUTES)
        return v
    return route
