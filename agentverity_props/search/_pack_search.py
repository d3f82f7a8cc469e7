"""enlarge with a strategy (a pack name or path, or any ``SearchStrategy[str]``): the search
over the pack (see :mod:`._enlarge`): Hypothesis targeting on a third of the budget, Thompson
sampling over the pack's regions and mutations of finds, then mild edits of each minority
input that flip it back (boundary pairs). Every minority verdict is confirmed by the run's
sequential test (:mod:`._verify`) before the input is added.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._internal.outcome import CandidateStatus
from ._verify import BoundaryPair

if TYPE_CHECKING:
    from ..engine import Engine

__all__ = ["adaptive_phase", "arms", "boundary_pairs_phase", "targeted_phase"]


def _examples(strategy: Any, n: int, seed: int) -> list[str]:
    """``n`` distinct examples of a strategy, deterministically, without any agent call."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    out: list[str] = []
    seen: set[str] = set()

    @hseed(seed)
    @settings(max_examples=max(1, n), database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(text: str) -> None:
        if isinstance(text, str) and text.strip() and text not in seen:
            seen.add(text)
            out.append(text)

    collect()
    return out


def _mutations(seed: int, n: int) -> list[Any]:
    from hypothesis import strategies as st

    from ..strategies import (
        case_changes,
        distractors,
        politeness_prefixes,
        punctuation_changes,
        typos,
        whitespace_changes,
    )
    strat = st.one_of(case_changes(), whitespace_changes(), punctuation_changes(),
                      politeness_prefixes(), typos(), distractors())
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed
    out: list[Any] = []

    @hseed(seed)
    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strat)
    def collect(p: Any) -> None:
        out.append(p)

    collect()
    return out


def _word_deletions(text: str) -> list[tuple[str, dict[str, Any]]]:
    """Each single-word deletion: the smallest edit that can remove a decisive word."""
    words = text.split(" ")
    out = []
    for i, w in enumerate(words):
        if len(words) > 1 and w:
            out.append((" ".join(words[:i] + words[i + 1:]),
                        {"name": "delete_word", "at": i, "word": w}))
    return out


def _mildest_per_family(muts: list[Any], src: str, *, per_family: int) -> list[Any]:
    """Edits of ``src`` interleaved across families (typo, case, ...), mildest first in each."""
    by_family: dict[str, list[Any]] = {}
    for p in muts:
        by_family.setdefault(p.name, []).append(p)
    ranked = {name: sorted(ps, key=lambda p: (len(str(p.params)),
                                              abs(len(p.apply(src)) - len(src))))[:per_family]
              for name, ps in by_family.items()}
    out: list[Any] = []
    for i in range(per_family):
        out.extend(ps[i] for ps in ranked.values() if len(ps) > i)
    return out


def arms(strategy: Any) -> dict[str, Any]:
    """Search arms: one per pack region, or a single arm for a plain strategy."""
    from hypothesis.strategies import SearchStrategy

    from ..strategies import from_pack, load_pack
    if strategy is None:
        strategy = "moderation"
    if isinstance(strategy, SearchStrategy):
        return {"strategy": strategy}
    pack = load_pack(strategy)
    return {f"region:{r}": from_pack(pack, region=r) for r in pack.regions}


def targeted_phase(calls: Any, arms: dict[str, Any], modal: str,
                    minority_found: list[str], seed: int) -> None:
    """Step 1 (a pack or strategy): Hypothesis with targeting on a third of what is left;
    each text with a minority verdict confirmed by its sequential test is added."""
    eng, res = calls.eng, calls.res

    def consider(text: str) -> bool:
        if text in res.verdicts or calls.done() or not eng.can_afford(2):
            return False
        v = calls.verdict(text)
        if v is None or v == modal:
            return False
        got = calls.confirm([(text, v)])  # the sequential test of _verify
        if text not in got:
            return False
        calls.add(text, got[text])
        minority_found.append(text)
        return True

    calls0 = eng.ledger.calls
    eng.ledger.phase = "hypothesis_target"
    calls.phase[0] = "targeted search"
    h_budget = max(0, (eng.remaining or 0) // 3)
    if not calls.done() and h_budget >= 4:
        _targeted(arms, consider, h_budget, seed, eng, calls0)
    res.phase_calls["hypothesis_target"] = eng.ledger.calls - calls0
    eng.ledger.phase = "adaptive_search"


def adaptive_phase(calls: Any, arms: dict[str, Any], modal: str,
                    minority_found: list[str], *, rng: random.Random, seed: int,
                    width: int) -> list[Any]:
    """Step 2: the own adaptive search, Thompson sampling over the arms (and mutations of
    what was found), a batch of ``width`` candidates at a time; returns the mutations."""
    eng, res = calls.eng, calls.res
    calls1 = eng.ledger.calls
    calls.phase[0] = "adaptive search"
    pools = {} if calls.done() else {name: _examples(s, 120, seed + i)
                                     for i, (name, s) in enumerate(arms.items())}
    muts = _mutations(seed, 200)
    wins: Counter[str] = Counter()
    tries: Counter[str] = Counter()
    stale = 0
    while not calls.done() and eng.can_afford(2) and not eng.stopping:
        names = [n for n in pools if pools[n]] + (["mutate"] if minority_found else [])
        if not names:
            break
        batch = _thompson_batch(pools, muts, minority_found, wins, tries, rng=rng,
                                width=width, tried=res.verdicts)
        if not batch:
            stale += 1
            if stale > 100:  # every arm only repeats what was tried: nothing new to find
                break
            continue
        stale = 0
        firsts = calls.verdicts([c for _, c in batch])
        minority = [(a, c, v) for (a, c), v in zip(batch, firsts, strict=True)
                    if v is not None and v != modal]
        kept = calls.confirm([(c, v) for _, c, v in minority]) if minority else {}
        for arm, _ in batch:
            tries[arm] += 1
        for arm, cand, _v in minority:
            if cand in kept and not calls.done():
                wins[arm] += 1
                calls.add(cand, kept[cand])
                minority_found.append(cand)
    res.phase_calls["adaptive_search"] = eng.ledger.calls - calls1
    return muts


def _thompson_batch(pools: dict[str, list[str]], muts: list[Any], minority_found: list[str],
                    wins: Counter[str], tries: Counter[str], *, rng: random.Random,
                    width: int, tried: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Up to ``width`` new ``(arm, candidate)`` pairs, each arm from its own Thompson draw
    (the posteriors are updated once the batch is back); a repeat counts as a try of its
    arm, with no call made."""
    batch: list[tuple[str, str]] = []
    for _ in range(width):
        names = [n for n in pools if pools[n]] + (["mutate"] if minority_found else [])
        if not names:
            break
        arm = max(names, key=lambda n: rng.betavariate(1 + wins[n], 1 + tries[n] - wins[n]))
        if arm == "mutate":
            cand = rng.choice(muts).apply(rng.choice(minority_found))
        else:
            cand = pools[arm].pop(0)
        if cand not in tried and cand not in (c for _, c in batch):
            batch.append((arm, cand))
        else:
            tries[arm] += 1  # a repeat: the arm is less promising, and no call made
    return batch


def boundary_pairs_phase(calls: Any, minority_found: list[str], muts: list[Any],
                          alpha: float) -> None:
    """Step 3: boundary pairs, mild edits of minority inputs that flip back to the modal
    verdict, each decided as an invariance candidate beyond the agent's noise (the family
    of every planned edit shares ``alpha``)."""
    from ..engine import Probe

    eng, res, pool, layer = calls.eng, calls.res, calls.pool, calls.layer
    calls2 = eng.ledger.calls
    eng.ledger.phase = "boundary_pairs"
    plans = []
    for src in list(minority_found)[:8]:
        edits = [(p.apply(src), {"name": p.name, **dict(p.params)})
                 for p in _mildest_per_family(muts, src, per_family=1)]
        edits += _word_deletions(src)
        plans.append((src, [(fu, e) for fu, e in edits
                            if fu != src and fu not in res.verdicts and fu.strip()]))
    family = sum(len(e) for _, e in plans)
    if family:
        from ..decide import bonferroni
        from ..relations import Candidate, Relation, RelationDecider, RelationOutcome

        calls.phase[0] = "boundary pairs"
        decider = RelationDecider(eng, pool, alpha_candidate=bonferroni(alpha, family),
                                  progress=calls.tick)
        for src, edits in plans:
            for fu, edit in edits:
                if not eng.can_afford(2) or eng.stopping:
                    break
                rel = Relation(f"edit:{edit.get('name', 'edit')}", "invariant",
                               _constant(fu), layer=layer)
                sp, fp = Probe.make(src), Probe.make(fu)
                out = RelationOutcome(fp=sp.fp, follow_up_fp=fp.fp)
                calls.loop.run(decider.decide([Candidate(rel, sp, fp, out)]))
                if out.status == CandidateStatus.CONFIRMED:
                    flipped = pool.get(fp.fp).counts(layer).most_common(1)
                    res.boundary_pairs.append(BoundaryPair(
                        src, fu, edit, res.verdicts[src],
                        flipped[0][0] if flipped else str(out.follow_up),
                        dict(out.decision or {})))
                    break
    res.phase_calls["boundary_pairs"] = eng.ledger.calls - calls2


def _constant(text: str) -> Callable[[str], str]:
    """The transform of a boundary-pair candidate: the edit is already applied."""
    def transform(_: str) -> str:
        return text
    return transform


def _targeted(arms: dict[str, Any], consider: Any, h_budget: int, seed: int, eng: Engine,
              calls0: int) -> None:
    from hypothesis import HealthCheck, Phase, given, settings, target
    from hypothesis import seed as hseed
    from hypothesis import strategies as st

    strat = st.one_of(*arms.values())

    @hseed(seed)
    @settings(max_examples=max(2, h_budget // 2), database=None, deadline=None,
              phases=[Phase.generate, Phase.target], suppress_health_check=list(HealthCheck))
    @given(strat)
    def search(text: str) -> None:
        if eng.ledger.calls - calls0 >= h_budget:
            return
        target(1.0 if consider(text) else 0.0, label="minority verdict")

    search()

