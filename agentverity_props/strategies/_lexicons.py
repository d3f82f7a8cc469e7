"""General-purpose lexicons :func:`~agentverity_props.strategies.from_probes` may draw from.

A probe grammar can only recombine what the probes hold. These classes add values a probe
set rarely holds all of: places, names, dates, and the common scalar ladders (tiers,
priorities, sizes, times). A class is used on a probe only where one of its values already
appears in it ("Boston" makes every other city a candidate for that position; "economy"
makes the other tiers candidates): the lexicon widens a slot the probes already have, it
never inserts a topic they do not. A user's own lexicon (``lexicon={"product": [...]}``, or a
YAML file on the command line) works the same way and is searched first.

Matching is case-insensitive for lower-case classes and exact for proper nouns; a
replacement copies the case of the word it replaces ("Economy" -> "Business").
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from ..errors import BadInput, InvalidArgument

__all__ = ["DEFAULT_LEXICONS", "check_lexicons", "load_lexicon"]

_CITIES = (
    "Amsterdam", "Athens", "Atlanta", "Austin", "Baghdad", "Bangkok", "Barcelona", "Beijing",
    "Beirut", "Berlin", "Bogota", "Boston", "Brussels", "Bucharest", "Budapest",
    "Buenos Aires", "Cairo", "Calgary", "Cape Town", "Caracas", "Chicago", "Copenhagen",
    "Dallas", "Damascus", "Delhi", "Denver", "Detroit", "Dhaka", "Doha", "Dubai", "Dublin",
    "Edinburgh", "Frankfurt", "Geneva", "Hanoi", "Havana", "Helsinki", "Hong Kong",
    "Honolulu", "Houston", "Istanbul", "Jakarta", "Johannesburg", "Kabul", "Karachi", "Kyiv",
    "Kinshasa", "Kuala Lumpur", "Lagos", "Las Vegas", "Lima", "Lisbon", "London",
    "Los Angeles", "Madrid", "Manila", "Melbourne", "Mexico City", "Miami", "Milan",
    "Minsk", "Montreal", "Moscow", "Mumbai", "Munich", "Nairobi", "New Orleans", "New York",
    "Oslo", "Ottawa", "Paris", "Philadelphia", "Phoenix", "Portland", "Prague", "Pyongyang",
    "Reykjavik", "Riyadh", "Rome", "San Diego", "San Francisco", "Santiago", "Sao Paulo",
    "Seattle", "Seoul", "Shanghai", "Singapore", "Stockholm", "Sydney", "Taipei", "Tehran",
    "Tel Aviv", "Tokyo", "Toronto", "Tripoli", "Vancouver", "Vienna", "Warsaw",
    "Washington", "Zurich",
)
_COUNTRIES = (
    "Afghanistan", "Argentina", "Australia", "Austria", "Belarus", "Belgium", "Brazil",
    "Canada", "Chile", "China", "Colombia", "Cuba", "Denmark", "Egypt", "Finland", "France",
    "Germany", "Greece", "India", "Indonesia", "Iran", "Iraq", "Ireland", "Israel", "Italy",
    "Japan", "Kenya", "Lebanon", "Libya", "Mexico", "Netherlands", "Nigeria", "North Korea",
    "Norway", "Pakistan", "Peru", "Philippines", "Poland", "Portugal", "Russia",
    "Saudi Arabia", "Singapore", "Somalia", "South Africa", "South Korea", "Spain", "Sudan",
    "Sweden", "Switzerland", "Syria", "Thailand", "Turkey", "Ukraine",
    "United Arab Emirates", "United Kingdom", "United States", "Venezuela", "Vietnam",
    "Yemen",
)
_FIRST_NAMES = (
    "Aisha", "Alice", "Amir", "Ana", "Bob", "Carlos", "Chen", "David", "Elena", "Emma",
    "Fatima", "Hannah", "Hiro", "Ivan", "James", "John", "Juan", "Kenji", "Laura", "Leila",
    "Li", "Maria", "Mary", "Mohammed", "Noah", "Olga", "Omar", "Priya", "Raj", "Sara",
    "Sofia", "Tom", "Wei", "Yuki", "Zoe",
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")

#: class name -> values. Ladders are listed in order (low to high), which the search does not
#: rely on but a reader of a report does.
DEFAULT_LEXICONS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "city": _CITIES,
    "country": _COUNTRIES,
    "first_name": _FIRST_NAMES,
    "weekday": _WEEKDAYS,
    "month": _MONTHS,
    "tier": ("economy", "premium economy", "business", "first", "basic", "standard",
             "premium", "deluxe", "gold", "platinum", "enterprise", "vip"),
    "priority": ("low", "normal", "medium", "high", "urgent", "critical", "emergency"),
    "size": ("tiny", "small", "medium", "large", "huge", "extra large", "bulk"),
    "time": ("today", "tomorrow", "tonight", "this week", "next week", "next month",
             "next year", "immediately", "right now", "later"),
    "frequency": ("once", "twice", "daily", "weekly", "monthly", "yearly", "always",
                  "never"),
    "quantity": ("one", "two", "three", "four", "five", "ten", "twenty", "a hundred",
                 "a few", "several", "many", "all"),
    "currency": ("USD", "EUR", "GBP", "JPY", "CHF", "dollars", "euros", "pounds"),
    "modal": ("may", "might", "can", "could", "should", "must", "will"),
    "certainty": ("maybe", "possibly", "probably", "definitely", "certainly"),
    "role": ("customer", "user", "employee", "contractor", "manager", "director", "admin",
             "guest", "intern", "executive"),
    "channel": ("email", "phone", "chat", "text", "letter", "in person"),
})


def check_lexicons(lexicon: object, *, where: str) -> dict[str, tuple[str, ...]]:
    """A user lexicon as ``{class: (value, ...)}``, or one :class:`InvalidArgument` line."""
    if lexicon is None:
        return {}
    if not isinstance(lexicon, Mapping):
        raise InvalidArgument(f"{where}: lexicon must be a mapping of class name to a list of "
                              f"strings, got {type(lexicon).__name__}; e.g. "
                              "lexicon={'product': ['laptop', 'phone']}")
    out: dict[str, tuple[str, ...]] = {}
    for name, values in lexicon.items():
        if not isinstance(name, str) or not name.strip():
            raise InvalidArgument(f"{where}: lexicon class names must be non-empty strings, "
                                  f"got {name!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise InvalidArgument(f"{where}: lexicon class {name!r} must be a list of strings; "
                                  "wrap a single value as [value]")
        vals = tuple(v.strip() for v in values if isinstance(v, str) and v.strip())
        if len(vals) != len(values):
            raise InvalidArgument(f"{where}: lexicon class {name!r} holds a value that is not a "
                                  "non-empty string; every value must be text")
        if len({v.lower() for v in vals}) < 2:
            raise InvalidArgument(f"{where}: lexicon class {name!r} needs at least two distinct "
                                  "values (one to find in a probe, one to put in its place)")
        out[name] = vals
    return out


def load_lexicon(path: str | os.PathLike[str]) -> dict[str, tuple[str, ...]]:
    """A lexicon file (YAML or JSON ``{class: [value, ...]}``) checked, or one
    :class:`~agentverity_props.errors.BadInput` line naming the problem and the fix."""
    from .._internal.yaml import read_yaml
    data = read_yaml(path, what="lexicon file").data
    try:
        return check_lexicons(data, where=f"lexicon file {path}")
    except InvalidArgument as exc:
        raise BadInput(str(exc), "write it as YAML: one key per class, each a list of at "
                       "least two values (city: [Boston, Denver])") from None
