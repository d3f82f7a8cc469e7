"""Offline agents for issue 44: negation and scope, a two-number gate, a noisy one-verdict
router. Shared by tests/stats/test_enlarge_scope.py and the measurements in its docstring.

* ``intake``: clinical intake triage. ``urgent`` when a note mentions chest pain or
  breathlessness that no cue negates (``denies``, ``no``, ``without``, ``free of``,
  ``negative for``, ``not``, a trailing ``: none``); a cue negates every term after it in its
  scope (a negated list: "no fever, chest pain or cough"), which ends at ``.``, ``;``,
  ``but`` or a verb that reports a finding (``reports``, ``has``, ``with``). The probes: 20
  routine notes, many mentioning the terms negated (all ``routine``).
* ``refund``: reject when the refund asked exceeds the order total (two numbers compared).
  The probes: 20 requests under the total (all ``approve``).
* ``billing``: a router whose every probe is truly ``billing``; it answers a uniformly random
  label with probability ``noise`` (0.1 in the issue).

:func:`truth` is the noise-free verdict, to judge what enlarge added. Every agent has its own
``random.Random`` (Hypothesis reseeds the global one).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["SCOPE_DOMAINS", "ScopeDomain", "intake_rule", "refund_rule"]

_TERMS = re.compile(r"\b(?:chest (?:pain|tightness)|short(?:ness)? of breath|"
                    r"breathless(?:ness)?|difficulty breathing)\b", re.IGNORECASE)
_CUES = re.compile(r"\b(?:no|not|denies|denied|deny|without|free of|negative for|never)\b",
                   re.IGNORECASE)
_BREAK = re.compile(r"[.;]|\bbut\b|\breports\b|\bhas\b|\bwith\b|\bcomplains of\b|"
                    r"\bpresents with\b", re.IGNORECASE)
_TRAILING_NONE = re.compile(r"^\s*:\s*(?:none|no|absent|denied)\b", re.IGNORECASE)


def intake_rule(text: str) -> str:
    """``urgent`` when a chest-pain or breathlessness term stands un-negated."""
    for m in _TERMS.finditer(text):
        if _TRAILING_NONE.match(text[m.end():]):
            continue
        before = text[:m.start()]
        scope_start = max((b.end() for b in _BREAK.finditer(before)), default=0)
        if not _CUES.search(before[scope_start:]):
            return "urgent"
    return "routine"


_INTAKE = (
    "Itchy rash on both forearms after gardening, no swelling of the lips, breathing "
    "normally.",
    "Follow-up after a fall last week; denies chest pain, mild bruising on the left hip.",
    "Sore throat for three days, no fever, chest pain or cough.",
    "Patient denies shortness of breath and chest pain, requests a repeat prescription.",
    "Ankle sprain while running, able to walk, free of chest pain.",
    "Headache since yesterday without chest pain or breathlessness.",
    "Chest pain: none. Requests a sick note for a cold.",
    "Routine blood pressure check, denies breathlessness, no dizziness.",
    "Mild back pain after lifting boxes, no numbness, no chest pain.",
    "Ear ache in the right ear for two days, no fever.",
    "Cut on the thumb from a kitchen knife, bleeding controlled.",
    "Cough for a week, no shortness of breath, no chest pain.",
    "Medication review for asthma, breathing fine today, negative for chest pain.",
    "Wants advice on a travel vaccine, no complaints.",
    "Knee pain when climbing stairs, no swelling, no breathlessness.",
    "Follow-up of a urinary infection, symptoms improved, denies fever.",
    "Insect bite on the ankle, some redness, without shortness of breath.",
    "Dry eyes from screen work, no headache.",
    "Heartburn after meals, free of chest pain at rest.",
    "Tiredness for two weeks, sleeping poorly, denies chest pain.",
    "Sprained wrist from a cycling fall, no dizziness, no chest pain.",
    "Skin check for a changing mole, otherwise well, no breathlessness.",
    "Stomach ache after a takeaway, no vomiting, chest pain or fever.",
    "Can't sleep since starting a new job, denies chest pain or palpitations.",
)


def _intake_probes(seed: int) -> list[str]:
    rng = random.Random(4000 + seed)
    return rng.sample(_INTAKE, 20)


_MONEY = r"\$(\d[\d,]*(?:\.\d+)?)"
_TOTAL = re.compile(r"total (?:of )?" + _MONEY, re.IGNORECASE)
_REFUND = re.compile(r"refund (?:of )?" + _MONEY, re.IGNORECASE)


def refund_rule(text: str) -> str:
    """``reject`` when the refund asked exceeds the order total."""
    total, refund = _TOTAL.search(text), _REFUND.search(text)
    if not total or not refund:
        return "approve"
    return ("reject" if float(refund.group(1).replace(",", "")) >
            float(total.group(1).replace(",", "")) else "approve")


_ITEMS = ("a blender", "two lamps", "a desk chair", "running shoes", "a winter coat",
          "a coffee grinder", "a phone case", "garden tools", "a rug", "headphones")
_WHY = ("it arrived damaged", "a part is missing", "it was the wrong colour",
        "it stopped working", "it arrived late", "it does not fit")


def _refund_probes(seed: int) -> list[str]:
    rng = random.Random(5000 + seed)
    out: list[str] = []
    while len(out) < 20:
        total = rng.choice((48, 65, 90, 120, 149, 210, 260, 340, 480, 620))
        asked = round(total * rng.choice((0.2, 0.3, 0.5, 0.6, 0.75, 0.9)))
        item, why = rng.choice(_ITEMS), rng.choice(_WHY)
        text = rng.choice((
            f"Order for {item}, total ${total}; the customer asks a refund of ${asked} because "
            f"{why}.",
            f"Please process a refund of ${asked} on an order total of ${total} ({item}), "
            f"{why}.",
            f"Customer bought {item}, order total ${total}, wants a refund of ${asked}: {why}."))
        if text not in out:
            out.append(text)
    return out


_BILLING = (
    "I was charged twice for my subscription this month.",
    "Can you send me a copy of last month's invoice?",
    "My card was declined but the payment still shows as pending.",
    "Why did my bill go up by ten dollars?",
    "I need a receipt for the annual plan I bought.",
    "Please update the billing address on my account invoices.",
    "There is a charge on my statement I do not recognise.",
    "How do I switch from monthly to yearly billing?",
    "The refund for my cancelled order has not reached my card.",
    "Can I pay my outstanding balance in two instalments?",
)


@dataclass(frozen=True)
class ScopeDomain:
    name: str
    labels: tuple[str, ...]
    rule: Callable[[str], str]
    probes: Callable[[int], list[str]]
    noise: float = 0.05

    def agent(self, seed: int, noise: float | None = None) -> Callable[[str], str]:
        """The noisy agent: the rule, or with probability ``noise`` another label
        (``billing``: any label, as a router answering at random)."""
        rng = random.Random(seed)
        p = self.noise if noise is None else noise

        def call(prompt: str) -> str:
            v = self.rule(prompt)
            if p and rng.random() < p:
                others = self.labels if self.name == "billing" else \
                    [x for x in self.labels if x != v]
                v = rng.choice(others)
            return v
        return call

    def truth(self, text: str) -> str:
        return self.rule(text)


SCOPE_DOMAINS: dict[str, ScopeDomain] = {
    "intake": ScopeDomain("intake", ("routine", "urgent"), intake_rule, _intake_probes),
    "refund": ScopeDomain("refund", ("approve", "reject"), refund_rule, _refund_probes),
    "billing": ScopeDomain("billing", ("billing", "technical", "account", "sales"),
                           lambda _t: "billing", lambda _s: list(_BILLING), noise=0.1),
}
