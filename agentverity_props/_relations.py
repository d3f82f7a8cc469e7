"""Metamorphic relations and their noise-calibrated confirmation.

A :class:`Relation` maps a source input ``x`` to a follow-up ``y = transform(x)`` and says how
the follow-up's verdict must relate to the source's: equal (``invariant``), ordered
(``monotone``), or a stated expected value (``directional``). An input the transform leaves
unchanged is *skipped*, never a pass.

Screen, then confirm
    Screen: one source draw ``a`` (reused from the meter when it exists) and one follow-up
    draw. A *raw* violation is a screen where the relation fails on these two draws.

    Confirm (only raw violations): rounds of one fresh source draw ``S_j`` and one fresh
    follow-up draw ``F_j``. Baseline indicator ``[S_j disagrees with a]`` (for monotone
    relations: ``S_j`` would violate the relation against ``a``); violation indicator
    ``[F_j violates the relation against a]``. Under H0 (the follow-up behaves like a re-draw
    of the source, or better), given ``a`` the violation indicators are no more likely than the
    baseline ones, so a one-sided Fisher exact test on the 2x2 table is valid. The violation is
    *calibrated* (confirmed) when ``p <= alpha_candidate / 2`` at one of two fixed looks (see
    :class:`ConfirmState`): ``K`` rounds, the smallest size at which a perfect separation
    succeeds, then ``3K`` rounds when a noisy agent's data are promising. Rounds stop early
    when a look has become impossible (futility curtailment only lowers the rejection rate).

    Family-wise error: ``alpha_candidate = alpha / m`` with ``m`` the number of exercised
    (relation, input) pairs in the run (Bonferroni over every candidate that could be tested).
    So on an agent that truly satisfies every relation, the run reports any calibrated violation
    with probability at most ``alpha``, however noisy the agent. On a deterministic agent one
    flip that reproduces on every fresh draw is confirmed.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import InvalidArgument
from .observation import LAYERS

RType = Literal["invariant", "monotone", "directional"]
RTYPES = ("invariant", "monotone", "directional")


@dataclass(frozen=True)
class Relation:
    """A metamorphic relation.

    Args:
        name: short identifier, used in reports and in the per-relation exception class.
        rtype: ``invariant`` (same verdict), ``monotone`` (follow-up at least as high in
            ``order``; with ``decreasing=True`` at most as high) or ``directional`` (follow-up
            equals ``expected``, a label or a function of the source verdict).
        transform: ``str -> str``; must be deterministic.
        check: optional ``(source_key, follow_up_key) -> bool`` overriding the rtype's rule.
        layer: ``verdict`` (default), ``text`` or ``tools``.

    Example:
        >>> shout = Relation("shout", "invariant", str.upper)
        >>> shout.holds("allow", "allow"), shout.holds("allow", "block")
        (True, False)
    """

    name: str
    rtype: RType
    transform: Callable[[str], str]
    check: Callable[[str, str], bool] | None = None
    layer: str = "verdict"
    order: Sequence[str] | None = None
    decreasing: bool = False
    expected: str | Callable[[str], str] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgument("Relation name must be a non-empty string")
        if self.rtype not in RTYPES:
            raise InvalidArgument(f"Relation {self.name!r}: rtype={self.rtype!r}; use one of "
                                  + ", ".join(RTYPES))
        if not callable(self.transform):
            raise InvalidArgument(f"Relation {self.name!r}: transform must be callable str -> str")
        if self.layer not in LAYERS:
            raise InvalidArgument(f"Relation {self.name!r}: layer={self.layer!r}; use one of "
                                  + ", ".join(LAYERS))
        if self.check is None:
            if self.rtype == "monotone" and not self.order:
                raise InvalidArgument(f"monotone relation {self.name!r} needs order=[...] "
                                      "(verdicts from lowest to highest) or a check=")
            if self.rtype == "directional" and self.expected is None:
                raise InvalidArgument(f"directional relation {self.name!r} needs expected= "
                                      "(a label or a function of the source verdict) or a check=")

    def holds(self, source: str, follow_up: str) -> bool:
        """Whether the relation holds between one source and one follow-up value."""
        if self.check is not None:
            return bool(self.check(source, follow_up))
        if self.rtype == "invariant":
            return source == follow_up
        if self.rtype == "monotone":
            order = list(self.order or ())
            if source not in order or follow_up not in order:
                return source == follow_up
            si, fi = order.index(source), order.index(follow_up)
            return fi <= si if self.decreasing else fi >= si
        exp = self.expected(source) if callable(self.expected) else self.expected
        return follow_up == exp

    def baseline_violates(self, anchor: str, redraw: str) -> bool:
        """Whether a re-draw of the *source* counts as a noise-level violation of ``anchor``."""
        if self.check is None and self.rtype in ("invariant", "monotone"):
            return not self.holds(anchor, redraw)
        return redraw != anchor

    def apply(self, text: str) -> str:
        out = self.transform(text)
        if not isinstance(out, str):
            raise InvalidArgument(f"relation {self.name!r}: transform returned "
                                  f"{type(out).__name__}, expected str")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "rtype": self.rtype, "layer": self.layer,
                "description": self.description}


# ------------------------------------------------------------------ confirmation test


def confirmation_size(alpha_candidate: float, *, k_max: int = 12) -> int:
    """Smallest K with 1 / C(2K, K) <= alpha_candidate (perfect separation suffices)."""
    for k in range(1, k_max + 1):
        if 1.0 / math.comb(2 * k, k) <= alpha_candidate:
            return k
    return k_max


def fisher_greater(f_viol: int, f_n: int, s_viol: int, s_n: int) -> float:
    """One-sided Fisher exact p-value: follow-ups violate more often than source re-draws."""
    from scipy.stats import hypergeom

    total_viol = f_viol + s_viol
    n = f_n + s_n
    if total_viol == 0:
        return 1.0
    # P(X >= f_viol), X ~ Hypergeom(population n, successes total_viol, draws f_n)
    return float(hypergeom.sf(f_viol - 1, n, total_viol, f_n))


@dataclass
class ConfirmState:
    """A two-look confirmation: feed whole rounds (one follow-up and one source re-draw each).

    Look 1 at ``k`` rounds, look 2 at ``k2`` (= 3k) rounds, each a one-sided Fisher exact test
    at ``alpha / 2`` (Bonferroni over the two fixed looks). Rounds stop early when a look can
    no longer succeed (futility only removes rejections); the procedure goes on to look 2
    only when look 1 failed but the data are *promising* (follow-ups violate in >= 75% of
    rounds, at least 50 points more often than source re-draws) — the case of a real
    violation on a noisy agent, where perfect separation is not to be had.
    """

    k: int
    alpha: float
    k2: int | None = None
    f_viol: int = 0
    f_n: int = 0
    s_viol: int = 0
    s_n: int = 0
    stage: int = 1
    done: bool = False
    _confirmed: bool = False

    @property
    def alpha_look(self) -> float:
        return self.alpha / 2 if self.k2 else self.alpha

    @property
    def target(self) -> int:
        return self.k if self.stage == 1 or not self.k2 else self.k2

    @property
    def rounds(self) -> int:
        return min(self.f_n, self.s_n)

    def add(self, *, follow_up_violates: bool, source_violates: bool) -> None:
        """One round; updates whether more rounds are needed (``done``)."""
        self.f_n += 1
        self.f_viol += follow_up_violates
        self.s_n += 1
        self.s_viol += source_violates
        self._after_round()

    def _promising(self) -> bool:
        n = self.rounds
        if n < 3:
            return False
        f_rate, s_rate = self.f_viol / n, self.s_viol / n
        return f_rate >= 0.75 and f_rate - s_rate >= 0.5

    def _next_look_or_stop(self) -> None:
        if self.stage == 1 and self.k2 and self._promising():
            self.stage = 2
        else:
            self.done = True

    def _after_round(self) -> None:
        if self.done:
            return
        if self.rounds >= self.target:
            if self.p_value <= self.alpha_look:
                self.done = self._confirmed = True
            else:
                self._next_look_or_stop()
        elif self.best_case_p() > self.alpha_look:
            self._next_look_or_stop()

    @property
    def p_value(self) -> float:
        return fisher_greater(self.f_viol, self.f_n, self.s_viol, self.s_n)

    def best_case_p(self) -> float:
        """p-value at the current look if every remaining follow-up violates and no
        remaining source re-draw does."""
        t = self.target
        return fisher_greater(self.f_viol + t - self.f_n, t, self.s_viol, self.s_n + t - self.s_n)

    @property
    def finished(self) -> bool:
        return self.done

    @property
    def confirmed(self) -> bool:
        return self._confirmed

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "k2": self.k2, "looks": self.stage, "alpha": self.alpha,
                "alpha_per_look": self.alpha_look, "follow_up_violations": self.f_viol,
                "follow_up_draws": self.f_n, "source_violations": self.s_viol,
                "source_draws": self.s_n, "p_value": self.p_value,
                "test": "one-sided Fisher exact (follow-up vs source re-draws), two looks"}


def new_confirmation(alpha_candidate: float) -> ConfirmState:
    """A confirmation at ``alpha_candidate``: look 1 at the smallest size where a perfect
    separation succeeds at ``alpha_candidate / 2``, look 2 at three times that."""
    k = confirmation_size(alpha_candidate / 2)
    return ConfirmState(k=k, alpha=alpha_candidate, k2=3 * k)


# ------------------------------------------------------------------------ built-ins


def _normalise(text: str) -> str:
    # a typographic variant that Unicode NFKC normalisation maps back to the source:
    # a no-break space for the first space, typographic apostrophes
    variant = text.replace(" ", "\u00a0", 1).replace("'", "\u2019")
    return variant if unicodedata.normalize("NFKC", variant.replace("\u2019", "'")) == text \
        else text


def _case(text: str) -> str:
    return text.swapcase()


def _whitespace(text: str) -> str:
    return "  " + "  ".join(text.split(" ")) + " \n"


def _punctuation(text: str) -> str:
    stripped = text.rstrip()
    if stripped and stripped[-1] in ".!?":
        return stripped[:-1] + "!!"
    return stripped + "."


_QWERTY_NEIGHBOURS = {
    "a": "s", "b": "v", "c": "x", "d": "s", "e": "w", "f": "d", "g": "f", "h": "g", "i": "u",
    "j": "h", "k": "j", "l": "k", "m": "n", "n": "b", "o": "i", "p": "o", "q": "w", "r": "e",
    "s": "a", "t": "r", "u": "y", "v": "c", "w": "q", "x": "z", "y": "t", "z": "x",
}


def _typo(text: str) -> str:
    # one adjacent-key substitution in the longest word (the word most likely to survive a typo)
    words = text.split(" ")
    if not words:
        return text
    i = max(range(len(words)), key=lambda j: (len(words[j]), -j))
    w = words[i]
    for pos in range(len(w) // 2, len(w)):
        ch = w[pos]
        if ch.lower() in _QWERTY_NEIGHBOURS:
            rep = _QWERTY_NEIGHBOURS[ch.lower()]
            words[i] = w[:pos] + (rep.upper() if ch.isupper() else rep) + w[pos + 1:]
            return " ".join(words)
    return text


def _politeness(text: str) -> str:
    return "Please, " + text[:1].lower() + text[1:] if text else text


def _distractor(text: str) -> str:
    return text.rstrip() + " By the way, the weather has been lovely this week."


def _tool_selection(text: str) -> str:
    return "Hi there. " + " ".join(text.split())


def builtin_relations() -> list[Relation]:
    """The eight built-in invariant relations (fresh objects each call)."""
    return [
        Relation("normalisation", "invariant", _normalise,
                 description="a typographic variant (no-break space, curly apostrophe) that "
                             "normalises to the source"),
        Relation("case", "invariant", _case, description="swapping letter case"),
        Relation("whitespace", "invariant", _whitespace,
                 description="extra spaces and a trailing newline"),
        Relation("punctuation", "invariant", _punctuation,
                 description="changed final punctuation"),
        Relation("typo", "invariant", _typo,
                 description="one keyboard-adjacent typo in the longest word"),
        Relation("politeness", "invariant", _politeness,
                 description="a 'Please,' prefix"),
        Relation("distractor", "invariant", _distractor,
                 description="an irrelevant sentence appended"),
        Relation("tool-selection", "invariant", _tool_selection, layer="tools",
                 description="a greeting and normalised spacing do not change the tools called"),
    ]


BUILTIN_NAMES = tuple(r.name for r in builtin_relations())


def select_builtins(names: Sequence[str]) -> list[Relation]:
    table = {r.name: r for r in builtin_relations()}
    out = []
    for n in names:
        if n not in table:
            raise InvalidArgument(f"unknown built-in relation {n!r}; choose from "
                                  + ", ".join(BUILTIN_NAMES))
        out.append(table[n])
    return out


@dataclass
class RelationOutcome:
    """Per (relation, input) bookkeeping during a run."""

    fp: str
    follow_up_fp: str
    status: str = "pending"  # skipped | pass | raw | confirmed | not-confirmed | incomplete
    source: str | None = None
    follow_up: str | None = None
    confirm: ConfirmState | None = None
    draws: int = 0
    note: str = ""

    def confirmation_dict(self) -> dict[str, Any]:
        return self.confirm.to_dict() if self.confirm else {}

    def to_dict(self) -> dict[str, Any]:
        return {"fp": self.fp, "follow_up_fp": self.follow_up_fp, "status": self.status,
                "source_value": self.source, "follow_up_value": self.follow_up,
                "confirmation": self.confirm.to_dict() if self.confirm else None,
                "draws": self.draws, "note": self.note}


@dataclass
class RelationResult:
    relation: Relation
    outcomes: list[RelationOutcome] = field(default_factory=list)

    @property
    def draws(self) -> int:
        """Draws this relation made (screens and confirmations; source draws it reused are
        not counted)."""
        return sum(o.draws for o in self.outcomes)

    @property
    def exercised(self) -> int:
        return sum(1 for o in self.outcomes if o.status != "skipped")

    @property
    def skipped(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "skipped")

    @property
    def raw_violations(self) -> int:
        return sum(1 for o in self.outcomes if o.status in ("raw", "confirmed", "not-confirmed"))

    @property
    def calibrated_violations(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "confirmed")

    @property
    def incomplete(self) -> int:
        return sum(1 for o in self.outcomes if o.status == "incomplete")

    @property
    def status(self) -> str:
        if self.exercised == 0:
            return "NOT EXERCISED"
        if self.calibrated_violations:
            return "VIOLATED"
        if self.incomplete:
            return "INCOMPLETE"
        return "HOLDS"

    def to_dict(self) -> dict[str, Any]:
        return {**self.relation.to_dict(), "status": self.status, "exercised": self.exercised,
                "skipped": self.skipped, "raw_violations": self.raw_violations,
                "calibrated_violations": self.calibrated_violations,
                "incomplete": self.incomplete, "draws": self.draws,
                "outcomes": [o.to_dict() for o in self.outcomes]}
