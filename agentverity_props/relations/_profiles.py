"""Profiles: how much evidence a relation decision buys, chosen by name (as Hypothesis's
settings profiles choose how many examples a test runs).

Every profile decides each relation's pooled effect with the same error rates (a HOLDS wrong
with probability at most ``beta``, a VIOLATED at most the relation's share of ``alpha``);
they differ in what they guarantee *per input*, which is where most agent calls go, and
``quick`` also in the tolerance its HOLDS rules out:

* ``quick`` — the pooled effect only, at tolerance 0.2 (the ``cheap`` precision's: a
  transform that changes one verdict in five) unless ``--tolerance`` or ``--precision`` says
  otherwise. No input is screened on its own, and the pooled epochs draw a uniform sample of
  the inputs, so its cost does not grow with the probe set; of the drawn inputs whose draws
  differ beyond chance, the most unlike their sources are tested one by one (so a strong bug
  is still confirmed and shown), but a HOLDS says nothing about any single input.
  On an agent the meter certifies deterministic it takes the *deterministic path*: one
  follow-up draw a pair, audited by re-draws, finds every deterministic flip with
  probability at least ``1 - 2 r`` (``r``: the meter's bound on a draw's flip rate).
* ``standard`` (the default) — every (input, follow-up) pair is screened: a follow-up that
  violates on a share ``0.5`` of its draws beyond the input's own noise is found with
  probability at least ``0.95`` (relations/_screen.py). On an agent the meter certifies
  deterministic it takes the deterministic path too (a fifth of the calls; a follow-up that
  flips part of the time is then found with about its flip share).
* ``thorough`` — every kind of a relation's family on every input, each pair screened at
  ``screen_beta = 0.01``, never on the deterministic path.

Users add their own with :func:`register_profile` and choose one with ``--profile``,
``RunConfig(profile=...)`` or ``@agent_property(profile=...)``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InvalidArgument


@dataclass(frozen=True)
class Profile:
    """A named choice of per-input evidence.

    Args:
        name: how users choose it.
        screen: screen every (input, follow-up) pair on its own (False: the pooled effect
            only, plus local tests of the most suspicious inputs whose draws differ beyond
            chance).
        screen_size: the violation a screened pair rules out: a follow-up violating on this
            share of its draws beyond the input's own noise, in (0, 1].
        screen_beta: the chance a violation of that size on a pair is cleared anyway.
        edits_per_input: follow-ups per input from a relation's family of edits: ``auto``
            (the primary kind on every input, each other kind on three), ``all``, or a
            number.
        description: one line for ``--help`` and the docs.
        deterministic_path: when the meter certifies a deterministic verdict (and no
            dependence between draws was found), screen each pair with one follow-up draw
            and an audit of re-draws (relations/_screen.py ``screen_once``): a deterministic
            flip is found with probability at least ``1 - 2 r`` (``r`` the meter's bound on a
            draw's flip rate), at a fifth of the standard screen's draws on a quiet agent,
            but a follow-up that flips part of the time is found only with about its flip
            share. With ``screen`` off it is the only per-input evidence.
        candidate_beta: ``@agent_property``'s per-input evidence: the chance a generated
            example that violates (as reliably as the stated alternative) is passed.
        tolerance: the pooled effect a HOLDS rules out when neither ``tolerance`` nor
            ``precision`` is given (None: the default, 0.1).
        violation: with the profile's own tolerance in force, the pooled effect a VIOLATED
            shows exceeded, at most that tolerance (None: the tolerance). ``quick`` holds at
            0.2 and finds an effect above 0.1, as ``standard``'s pooled test does: between
            the two either decision may come, each within its own error rate.
    """

    name: str
    screen: bool = True
    screen_size: float = 0.5
    screen_beta: float = 0.05
    edits_per_input: int | str = "auto"
    description: str = ""
    deterministic_path: bool = False
    candidate_beta: float = 0.01
    tolerance: float | None = None
    violation: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip() or "," in self.name:
            raise InvalidArgument(f"a profile name must be a non-empty word, got {self.name!r}")
        if not 0.0 < self.screen_size <= 1.0:
            raise InvalidArgument(f"profile {self.name!r}: screen_size={self.screen_size!r} "
                                  "must be in (0, 1]")
        for name in ("screen_beta", "candidate_beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise InvalidArgument(f"profile {self.name!r}: {name}={value!r} must be in "
                                      "(0, 0.5)")
        for name in ("tolerance", "violation"):
            t = getattr(self, name)
            if t is not None and (isinstance(t, bool) or not isinstance(t, (int, float))
                                  or not 0.0 < t < 1.0):
                raise InvalidArgument(f"profile {self.name!r}: {name}={t!r} must be in (0, 1) "
                                      "or None (the default)")
        e = self.edits_per_input
        if not (e in ("auto", "all") or (isinstance(e, int) and not isinstance(e, bool)
                                         and e >= 1)):
            raise InvalidArgument(f"profile {self.name!r}: edits_per_input={e!r}; use a "
                                  "positive integer, 'auto' or 'all'")

    def guarantee(self) -> str:
        """What the profile guarantees per input, in words (printed in every report)."""
        if not self.screen:
            return (f"profile {self.name}: the pooled effect only, estimated from uniform "
                    "samples of the inputs; no input was screened on its own (drawn inputs "
                    "whose draws differed beyond chance were tested one by one)")
        return (f"profile {self.name}: every (input, follow-up) pair screened: a follow-up "
                f"violating on a share {self.screen_size:g} of its draws beyond the input's "
                f"own noise is found with probability >= {1 - self.screen_beta:.2g}")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "screen": self.screen, "screen_size": self.screen_size,
                "screen_beta": self.screen_beta, "edits_per_input": self.edits_per_input,
                "deterministic_path": self.deterministic_path,
                "candidate_beta": self.candidate_beta, "tolerance": self.tolerance,
                "violation": self.violation, "guarantee": self.guarantee()}


DEFAULT_PROFILE = "standard"
_BUILT_IN = (
    Profile("quick", screen=False, deterministic_path=True, candidate_beta=0.05, tolerance=0.2,
            violation=0.1,
            description="the pooled effect only, tolerance 0.2, from a sample of the inputs "
                        "(on a certified deterministic agent, one follow-up draw a pair): "
                        "cheapest"),
    Profile("standard", deterministic_path=True,
            description="every pair screened at size 0.5, beta 0.05 (one draw a pair on a "
                        "certified deterministic agent) (default)"),
    Profile("thorough", screen_beta=0.01, edits_per_input="all", candidate_beta=0.002,
            description="every edit kind on every input, each pair screened at beta 0.01"),
)
_PROFILES: dict[str, Profile] = {p.name: p for p in _BUILT_IN}
_LOCK = threading.Lock()


def register_profile(name: str, *, parent: str = DEFAULT_PROFILE, **changes: Any) -> Profile:
    """Register (or replace) a profile: ``parent``'s settings with ``changes``.

    >>> register_profile("nightly", screen_beta=0.02).screen_beta
    0.02
    >>> profile("nightly").screen_size
    0.5
    """
    if name in {p.name for p in _BUILT_IN}:
        raise InvalidArgument(f"profile {name!r} is built in; register yours under a new name")
    base = profile(parent)
    unknown = set(changes) - {"screen", "screen_size", "screen_beta", "edits_per_input",
                              "description", "deterministic_path", "candidate_beta",
                              "tolerance", "violation"}
    if unknown:
        raise InvalidArgument(f"unknown profile setting(s) {', '.join(sorted(unknown))}; "
                              "use screen, screen_size, screen_beta, edits_per_input, "
                              "deterministic_path, candidate_beta, tolerance, violation, "
                              "description")
    new = replace(base, name=name, **changes)
    with _LOCK:
        _PROFILES[name] = new
    return new


def violation_threshold(prof: Profile, tolerance: float) -> float:
    """The pooled effect a VIOLATED shows exceeded: the profile's ``violation`` while its
    own tolerance is in force, else the tolerance.

    >>> violation_threshold(profile("quick"), 0.2), violation_threshold(profile("quick"), 0.3)
    (0.1, 0.3)
    """
    if prof.violation is not None and prof.tolerance is not None \
            and tolerance == prof.tolerance:
        return min(prof.violation, tolerance)
    return tolerance


def profile(name: str | Profile | None) -> Profile:
    """The profile of that name (None: the default); a :class:`Profile` is returned as is."""
    if isinstance(name, Profile):
        return name
    key = DEFAULT_PROFILE if name is None else name
    with _LOCK:
        found = _PROFILES.get(key) if isinstance(key, str) else None
        names = ", ".join(_PROFILES)
    if found is None:
        raise InvalidArgument(f"unknown profile {name!r}; choose from {names} (or register "
                              "one with register_profile)")
    return found


def profile_names() -> tuple[str, ...]:
    with _LOCK:
        return tuple(_PROFILES)
