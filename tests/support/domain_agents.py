"""Agents from domains no strategy pack covers, each with a blind probe set of 20 inputs.

Shared by tests/stats/test_enlarge_domains.py and benchmarks/enlarge_domains.py, so the two
cannot drift apart. Each domain has a different boundary shape:

* ``travel``: a numeric threshold (``manager`` above a cost of $2,000) and a keyword
  (``manager`` for business or first class); ``deny`` for a few cities. The probes: 20
  economy trips under $1,500 (all ``approve``).
* ``leave``: a keyword list (``hr`` when a leave request mentions a medical, legal or
  harassment matter). The probes: 19 routine requests and one that mentions a medical
  appointment (19/20 ``auto``: blind at the 0.9 threshold).
* ``shipping``: a list of places (``hold`` for a shipment to an embargoed country, ``review``
  above 30 kg). The probes: 20 parcels to ordinary destinations (all ``ship``).

Every agent answers a uniformly random other label with probability ``noise`` (its own
``random.Random``: Hypothesis reseeds the global one).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DOMAINS", "Domain"]

_MONEY = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")
_KG = re.compile(r"(\d+(?:\.\d+)?)\s?kg", re.IGNORECASE)


@dataclass(frozen=True)
class Domain:
    name: str
    labels: tuple[str, ...]
    rule: Callable[[str], str]
    probes: Callable[[int], list[str]]
    boundary: str  # the boundary shape, for tables

    def agent(self, seed: int, noise: float = 0.05) -> Callable[[str], str]:
        rng = random.Random(seed)

        def call(prompt: str) -> str:
            v = self.rule(prompt)
            if noise and rng.random() < noise:
                v = rng.choice([x for x in self.labels if x != v])
            return v
        return call


# -- travel ---------------------------------------------------------------------------------

_DENY_CITIES = ("pyongyang", "tehran", "caracas", "havana", "damascus")
_CITIES = ("Boston", "Chicago", "Denver", "Seattle", "Austin", "Miami", "Atlanta", "Dallas",
           "Portland", "Phoenix")
_PURPOSES = ("a client meeting", "the annual conference", "a sales visit", "team training",
             "a site inspection")


def _travel_rule(p: str) -> str:
    low = p.lower()
    amounts = [float(x.replace(",", "")) for x in _MONEY.findall(p)]
    if any(c in low for c in _DENY_CITIES):
        return "deny"
    if (amounts and max(amounts) > 2000) or "business" in low or "first class" in low:
        return "manager"
    return "approve"


def _travel_probes(seed: int) -> list[str]:
    rng = random.Random(1000 + seed)
    out: list[str] = []
    while len(out) < 20:
        a, b = rng.sample(_CITIES, 2)
        cost = rng.choice((180, 240, 320, 450, 560, 640, 780, 890, 1100, 1250, 1400))
        purpose = rng.choice(_PURPOSES)
        text = rng.choice((
            f"Flight from {a} to {b} on March {rng.randint(1, 28)}, economy, ${cost:,} for "
            f"{purpose}.",
            f"Please approve my economy trip to {b} for {purpose}; total cost ${cost:,}.",
            f"Train from {a} to {b}, {rng.randint(1, 4)} nights hotel, ${cost:,} total, for "
            f"{purpose}."))
        if text not in out:
            out.append(text)
    return out


# -- leave requests -------------------------------------------------------------------------

_HR_WORDS = ("medical", "surgery", "lawyer", "lawsuit", "harassment", "disability",
             "pregnancy", "court")
_NAMES = ("Dana", "Luis", "Mei", "Tariq", "Ines", "Oskar", "Ruth", "Kofi", "Yara", "Pavel")
_REASONS = ("a family wedding", "moving house", "a long weekend away", "my sister's graduation",
            "a school event for my son", "a short holiday", "visiting my parents",
            "a friend's birthday trip")


def _leave_rule(p: str) -> str:
    low = p.lower()
    return "hr" if any(w in low for w in _HR_WORDS) else "auto"


def _leave_probes(seed: int) -> list[str]:
    rng = random.Random(2000 + seed)
    out: list[str] = []
    while len(out) < 19:
        days = rng.randint(1, 5)
        text = rng.choice((
            f"Hi, this is {rng.choice(_NAMES)}. I'd like {days} days off next month for "
            f"{rng.choice(_REASONS)}.",
            f"Requesting {days} days of annual leave starting Monday for {rng.choice(_REASONS)}.",
            f"Can I take Friday off? It's for {rng.choice(_REASONS)}."))
        if text not in out:
            out.append(text)
    out.insert(rng.randint(0, 19), f"Hi, this is {rng.choice(_NAMES)}. I'd like 2 days off "
                                    "next month for a medical appointment.")
    return out


# -- shipping -------------------------------------------------------------------------------

_EMBARGOED = ("north korea", "iran", "syria", "cuba", "venezuela", "russia", "belarus")
_DESTINATIONS = ("Canada", "Germany", "Japan", "Brazil", "Australia", "France", "Mexico",
                 "Spain", "Kenya", "India", "Norway", "Chile")
_GOODS = ("books", "spare parts", "clothing", "kitchen tools", "printed manuals", "toys",
          "coffee beans", "sample fabrics")


def _shipping_rule(p: str) -> str:
    low = p.lower()
    if any(c in low for c in _EMBARGOED):
        return "hold"
    weights = [float(x) for x in _KG.findall(p)]
    return "review" if weights and max(weights) > 30 else "ship"


def _shipping_probes(seed: int) -> list[str]:
    rng = random.Random(3000 + seed)
    out: list[str] = []
    while len(out) < 20:
        dest = rng.choice(_DESTINATIONS)
        kg = rng.choice((0.5, 1.2, 2, 3.5, 5, 8, 12))
        goods = rng.choice(_GOODS)
        text = rng.choice((
            f"Ship a {kg} kg parcel of {goods} to a customer in {dest}.",
            f"Express order: {goods}, {kg} kg, destination {dest}, insured.",
            f"Please send our {goods} sample ({kg} kg) to the distributor in {dest} by "
            "courier."))
        if text not in out:
            out.append(text)
    return out


DOMAINS: dict[str, Domain] = {
    "travel": Domain("travel", ("approve", "manager", "deny"), _travel_rule, _travel_probes,
                     "numeric threshold, keyword, places"),
    "leave": Domain("leave", ("auto", "hr"), _leave_rule, _leave_probes, "keyword list"),
    "shipping": Domain("shipping", ("ship", "review", "hold"), _shipping_rule,
                       _shipping_probes, "list of places, numeric threshold"),
}
