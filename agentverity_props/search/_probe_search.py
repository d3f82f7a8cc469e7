"""enlarge's default search: edits of the user's own probes that draw a minority verdict.

Thompson sampling over *arms*, an arm being an edit kind and its slot ("the number after
'cost', upwards", "class {Boston, Denver}", "a clause of a probe of another verdict"). Each
arm's prior leans on the edit's novelty (:mod:`._grammar`): a value outside what the
modal-verdict probes already showed the agent is where a decision boundary can be, a value
inside that range mostly is not. What crosses once is tried on other probes next (the arm's
posterior), so the second and third finds come cheaply and from different parents.

Every candidate keeps at least half the words of the probe it was made from (the enlarged
set stays in the user's domain). A first draw with a minority verdict is handed to
``confirm`` (enlarge's sequential test, :mod:`._verify`); only what it confirms is
kept. The random-recombination baseline
(``EnlargeConfig(search="recombine")``, for the benchmark) draws parents and edits that
recombine the probes' own material uniformly instead; ``search="uniform"`` draws uniformly
from every edit of the grammar.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..strategies import Edit, ProbeGrammar, shared_word_share

__all__ = ["IN_DOMAIN_SHARE", "Find", "ProbeSearch"]

#: a candidate keeps at least this share of its parent probe's words
IN_DOMAIN_SHARE = 0.5
#: finds after which an arm's score is discounted (diversity of the boundaries found)
SATURATION = 3


_RECOMBINE = frozenset(("swap", "insert", "splice", "add_item", "delete"))


def _family(arm: str) -> str:
    """``number:after 'cost':up`` -> ``number:up``; ``swap:3`` -> ``swap:3``."""
    parts = arm.split(":")
    return f"{parts[0]}:{parts[-1]}" if parts[0] == "number" else arm


@dataclass(frozen=True)
class Find:
    """A kept input: its text, verdict, parent probe and the edits from it."""

    text: str
    verdict: str
    parent: str
    edits: tuple[Edit, ...]
    calls: int  # the calls spent when it was confirmed
    #: the confirmation test's evidence (:meth:`._verify.FindTest.evidence`)
    evidence: dict[str, Any] | None = None

    def provenance(self) -> dict[str, Any]:
        return {"text": self.text, "verdict": self.verdict, "parent": self.parent,
                "evidence": self.evidence,
                "edits": [e.to_json() for e in self.edits],
                "describe": "; ".join(e.describe() for e in self.edits) or "the probe itself",
                "shared_words": round(shared_word_share(self.text, self.parent), 3)}


@dataclass
class ProbeSearch:
    """One search over a grammar. ``draw`` takes texts and returns one verdict each (None when
    no usable verdict was had), spending one call per text."""

    grammar: ProbeGrammar
    parents: Sequence[str]
    modal: str
    rng: random.Random
    draw: Callable[[list[str]], list[str | None]]
    can_afford: Callable[[int], bool]
    calls: Callable[[], int]
    uniform: bool = False
    #: with ``uniform``: only the edits that recombine the probes' own material (another
    #: probe's value, clause or inserted phrase; a deletion), the random-recombination
    #: baseline; else every edit of the grammar
    recombine_only: bool = False
    generator: Callable[[str], Sequence[str]] | None = None
    #: ``[(text, first verdict)] -> {text: test}`` of the candidates it confirms; None: a
    #: second draw with the same verdict confirms (no error control: for tests only)
    confirm: Callable[[list[tuple[str, str]]], dict[str, Any]] | None = None
    tried: set[str] = field(default_factory=set)
    wins: Counter[str] = field(default_factory=Counter)
    family_wins: Counter[str] = field(default_factory=Counter)
    tries: Counter[str] = field(default_factory=Counter)
    finds: list[Find] = field(default_factory=list)
    by_parent: Counter[str] = field(default_factory=Counter)
    _edits: dict[str, list[Edit]] = field(default_factory=dict)
    _generated: dict[str, list[str]] = field(default_factory=dict)
    misses: int = 0

    def _options(self, text: str) -> list[Edit]:
        if text not in self._edits:
            self._edits[text] = self.grammar.edits(text)
        return self._edits[text]

    def _generated_for(self, parent: str) -> list[str]:
        if self.generator is None:
            return []
        if parent not in self._generated:
            got = [g for g in self.generator(parent) if isinstance(g, str) and g.strip()]
            self._generated[parent] = [g for g in got if g != parent and
                                       shared_word_share(g, parent) >= IN_DOMAIN_SHARE]
        return self._generated[parent]

    def _arm_score(self, arm: str, prior: float) -> float:
        w, n = self.wins[arm], self.tries[arm]
        score = self.rng.betavariate(prior + w, 1.0 + n - w)
        # a family of arms (numbers upwards, in any slot) that already gave SATURATION finds
        # mostly yields the same boundary again: the enlarged set is worth more with other
        # boundaries in it, so other families get their turn
        fw = self.family_wins[_family(arm)]
        return score * (0.6 ** (fw - SATURATION + 1)) if fw >= SATURATION else score

    def _pick_parent(self) -> str:
        if self.uniform:
            return self.rng.choice(list(self.parents))
        # the parents with the fewest finds first: the added inputs spread over the probes
        least = min(self.by_parent[p] for p in self.parents)
        pool = [p for p in self.parents if self.by_parent[p] == least]
        return self.rng.choice(pool)

    def _candidate(self) -> tuple[str, str, tuple[Edit, ...], str] | None:
        """``(text, parent, edits, arm)`` of the next candidate, or None if none is left."""
        for _ in range(20):
            parent = self._pick_parent()
            gen = [g for g in self._generated_for(parent) if g not in self.tried]
            options = [e for e in self._options(parent) if e.apply(parent) not in self.tried]
            # a second edit on top once single edits keep missing (interactions)
            two = not self.uniform and self.misses > 30 and self.rng.random() < 0.3
            if not options and not gen:
                continue
            if self.uniform:
                if self.recombine_only:
                    options = [o for o in options if o.kind in _RECOMBINE]
                e = self.rng.choice(options) if options else None
                if e is None:
                    continue
                return e.apply(parent), parent, (e,), e.arm
            if gen and (not options or self._arm_score("generator", 2.0) >
                        max(self._arm_score(a, 1.0) for a in {o.arm for o in options[:50]})):
                return gen[0], parent, (), "generator"
            scores: dict[str, float] = {}
            best: Edit | None = None
            best_score = -1.0
            for e in options:
                if e.arm not in scores:
                    scores[e.arm] = self._arm_score(e.arm, e.novelty)
                s = scores[e.arm] + 1e-3 * e.novelty * self.rng.random()
                if s > best_score:
                    best, best_score = e, s
            assert best is not None
            text, chain = best.apply(parent), (best,)
            chain_: tuple[Edit, ...] = chain
            if two:
                more = [o for o in self._options(text) if o.arm != best.arm]
                if more:
                    second = max(more, key=lambda o: self._arm_score(o.arm, o.novelty))
                    text, chain_ = second.apply(text), (best, second)
            if shared_word_share(text, parent) < IN_DOMAIN_SHARE or text in self.tried:
                self.tried.add(text)
                continue
            return text, parent, chain_, best.arm
        return None

    def step(self, width: int) -> bool:
        """One batch of up to ``width`` candidates; False when nothing is left to try."""
        batch: list[tuple[str, str, tuple[Edit, ...], str]] = []
        while len(batch) < width:
            c = self._candidate()
            if c is None:
                break
            self.tried.add(c[0])
            batch.append(c)
        if not batch:
            return False
        firsts = self.draw([c[0] for c in batch])
        minority = [(c, v) for c, v in zip(batch, firsts, strict=True)
                    if v is not None and v != self.modal]
        evidence: dict[str, dict[str, Any]] = {}
        if self.confirm is not None:
            tests = self.confirm([(c[0], v) for c, v in minority]) if minority else {}
            confirmed = {t: test.verdict for t, test in tests.items()}
            evidence = {t: test.evidence() for t, test in tests.items()}
        else:
            seconds = self.draw([c[0] for c, _ in minority]) if minority else []
            confirmed = {c[0]: v for (c, v), again in zip(minority, seconds, strict=True)
                         if again == v}
        for text, parent, chain, arm in batch:
            self.tries[arm] += 1
            if text in confirmed:
                self.wins[arm] += 1
                self.family_wins[_family(arm)] += 1
                self.by_parent[parent] += 1
                self.misses = 0
                extra = chain if chain else (Edit("generated", 0, len(parent), parent, text,
                                                  slot="your generator",
                                                  origin="generator", arm="generator"),)
                self.finds.append(Find(text, confirmed[text], parent, extra, self.calls(),
                                       evidence.get(text)))
            else:
                self.misses += 1
        return True
