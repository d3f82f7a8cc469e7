"""The probe grammar and ``from_probes()``: what is learned from the user's own probes, edits
that rebuild exactly, variants that keep their parent and shrink toward it, and enlarge's
from-probes default (in-domain additions, advice on a set too small to learn from)."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from agentverity_props import from_callable
from agentverity_props.errors import BadInput, InvalidArgument
from agentverity_props.search import enlarge
from agentverity_props.strategies import DEFAULT_LEXICONS, ProbeGrammar, Variant, from_probes
from agentverity_props.strategies._grammar import (
    format_like,
    parse_number,
    shared_word_share,
    tokens,
)

TRIPS = [
    "Flight from Boston to Chicago on March 3, economy, $450 for a client meeting.",
    "Flight from Denver to Seattle on May 12, economy, $1,200 for the annual conference.",
    "Train from Boston to Austin on June 2, economy, $120 for team training.",
    "Flight from Miami to Atlanta on April 9, business class, $2,400 for a sales visit.",
]


def test_the_grammar_learns_numbers_alternations_and_clauses_from_the_probes() -> None:
    g = ProbeGrammar(TRIPS, verdicts=["approve", "approve", "approve", "manager"])
    s = g.summary()
    assert s["number_slots"]["before 'for'"] == 4  # the cost, written before "for"
    classes = " ".join(s["classes"])
    assert "Boston" in classes
    assert "Denver" in classes
    assert "Miami" in classes
    assert s["clauses"] >= 8
    assert g.learnable
    kinds = {e.kind for e in g.edits(TRIPS[0])}
    assert {"number", "swap", "delete", "splice", "lexicon"} <= kinds


def test_values_only_another_verdict_holds_come_first() -> None:
    """The business-class trip is the one 'manager' probe: its values are the novel ones."""
    g = ProbeGrammar(TRIPS, verdicts=["approve", "approve", "approve", "manager"])
    edits = g.edits(TRIPS[0])
    swap = {e.after: e.novelty for e in edits if e.kind == "swap" and e.before == "economy"}
    assert swap["business class"] > 1.0 or swap.get("business", 0) > 1.0
    cost = [e for e in edits if e.kind == "number" and e.before == "450"]
    above = [e.novelty for e in cost if parse_number(e.after) > 1200]
    inside = [e.novelty for e in cost if 120 <= parse_number(e.after) <= 1200]
    assert min(above) > max(inside)  # outside what the approve probes showed


def test_numbers_are_written_the_way_the_probes_write_them() -> None:
    assert format_like(2010, "1,990") == "2,010"
    assert format_like(2250, "450", commas=True) == "2,250"
    assert format_like(3.5, "12.25") == "3.50"
    g = ProbeGrammar(TRIPS)
    afters = [e.after for e in g.edits(TRIPS[0]) if e.kind == "number" and e.before == "450"]
    assert "4,500" in afters
    assert all("," in a for a in afters if parse_number(a) >= 1000)


def test_dates_and_years_move_as_dates_not_as_amounts() -> None:
    g = ProbeGrammar(["Meeting on March 3 2024 in Paris", "Meeting on May 12 2025 in Rome",
                      "Lunch on June 2 2024 in Oslo"])
    afters = {e.before: [] for e in g.edits("Meeting on March 3 2024 in Paris")
              if e.kind == "number"}
    for e in g.edits("Meeting on March 3 2024 in Paris"):
        if e.kind == "number":
            afters[e.before].append(parse_number(e.after))
    assert all(1 <= v <= 31 for v in afters["3"])
    assert all(2010 <= v <= 2040 for v in afters["2024"])


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_every_edit_rebuilds_exactly_and_keeps_the_rest_of_the_text(data) -> None:
    g = ProbeGrammar(TRIPS)
    text = data.draw(st.sampled_from(TRIPS))
    edits = g.edits(text)
    assert edits == sorted(edits, key=lambda e: e.mildness)
    e = data.draw(st.sampled_from(edits))
    out = e.apply(text)
    assert out != text
    assert out[:e.start] == text[:e.start]
    assert out[e.start + len(e.after):] == text[e.end:]
    assert text[e.start:e.end] == e.before


@given(st.floats(0.01, 1e7), st.sampled_from(["12", "1,990", "3.25", "450", "0.5"]))
def test_format_like_round_trips_to_its_precision(value: float, like: str) -> None:
    out = format_like(value, like)
    decimals = len(like.split(".")[1]) if "." in like else 0
    assert abs(parse_number(out) - value) <= 0.5 * 10 ** -decimals + 1e-9 * value
    assert tokens(out)[0].is_number
    assert len(tokens(out)) == 1


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(from_probes(TRIPS, max_edits=3))
def test_a_variant_is_its_parent_with_its_edits_applied(v: Variant) -> None:
    assert isinstance(v, str)
    assert v.parent in TRIPS
    text = v.parent
    for e in v.edits:
        text = e.apply(text)
    assert text == v
    assert len(v.edits) <= 3
    assert isinstance(v.provenance()["edits"], list)


def test_variants_shrink_to_the_parent_and_to_the_mildest_edit() -> None:
    assert find(from_probes(TRIPS), lambda v: True) == TRIPS[0]
    v = find(from_probes(TRIPS, min_edits=1), lambda v: "$" in v and "450" not in v)
    assert v.parent == TRIPS[0]
    assert len(v.edits) == 1
    assert v.edits[0].kind == "number"
    assert v.edits[0].after in ("495", "405")


def test_a_variant_pickles_and_copies_with_its_provenance() -> None:
    v = find(from_probes(TRIPS, min_edits=1), lambda v: True)
    for w in (pickle.loads(pickle.dumps(v)), copy.deepcopy(v)):
        assert w == v
        assert w.parent == v.parent
        assert w.edits == v.edits


def test_a_lexicon_widens_a_slot_the_probes_have_and_nothing_else() -> None:
    probes = ["Order a laptop for the Berlin office", "Order a phone for the Madrid office",
              "Order a monitor for the Berlin office"]
    g = ProbeGrammar(probes, lexicon={"device": ["laptop", "server rack", "forklift"]},
                     default_lexicons=False)
    afters = {e.after for e in g.edits(probes[0]) if e.kind == "lexicon"}
    assert {"server rack", "forklift"} <= afters
    g = ProbeGrammar(probes, lexicon={"vehicle": ["truck", "forklift"]},
                     default_lexicons=False)
    assert not [e for e in g.edits(probes[0]) if e.kind == "lexicon"]
    g = ProbeGrammar(probes)  # the shipped city class: Berlin -> other cities
    assert "Paris" in {e.after for e in g.edits(probes[0]) if e.kind == "lexicon"}
    assert "city" in DEFAULT_LEXICONS


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"texts": "one probe"}, "wrap a single probe"),
    ({"texts": ["", "  "]}, "no non-empty probe"),
    ({"texts": TRIPS, "min_edits": 3, "max_edits": 1}, "min_edits <= max_edits"),
    ({"texts": TRIPS, "lexicon": {"x": ["only"]}}, "at least two distinct"),
    ({"texts": TRIPS, "lexicon": ["a", "b"]}, "mapping of class name"),
    ({"texts": TRIPS, "verdicts": ["a"]}, "1 verdicts for 4 probes"),
])
def test_bad_arguments_are_one_line_errors_at_once(kwargs, message) -> None:
    with pytest.raises(InvalidArgument, match=message):
        from_probes(**kwargs)


def test_enlarge_refuses_a_set_too_small_to_learn_from_before_any_call() -> None:
    calls = []
    agent = from_callable(lambda p: calls.append(p) or "allow")
    with pytest.raises(BadInput, match="too few to learn a probe grammar") as info:
        enlarge(agent, ["hello there", "good day"])
    assert "\n" not in str(info.value)
    assert "lexicon" in str(info.value)
    with pytest.raises(BadInput, match="nothing that varies"):
        enlarge(agent, ["alpha", "beta", "gamma"])
    assert calls == []


def _triage(seed: int):
    """Expense triage: 'manager' above $2,000; 5% noise on its own generator."""
    rng = random.Random(seed)

    def gate(p: str) -> str:
        amounts = [parse_number(t.text) for t in tokens(p) if t.is_number]
        v = "manager" if amounts and max(amounts) > 2000 else "approve"
        return ("approve" if v == "manager" else "manager") if rng.random() < 0.05 else v
    return gate


def test_enlarge_adds_minority_inputs_that_stay_in_the_users_domain() -> None:
    rng = random.Random(7)
    probes = [f"Expense claim: {w} for the {t} team, ${rng.randint(50, 1500):,}, receipt "
              "attached." for w in ("taxi", "hotel", "dinner", "train", "printer")
              for t in ("sales", "design", "support")]
    r = enlarge(from_callable(_triage(1)), probes, seed=1, max_workers=1)
    assert r.source == "probes"
    minority = [a for a in r.added if r.verdicts[a] != r.modal_verdict]
    assert len(minority) >= 3, r.stop_reason
    for a in r.added:
        origin = r.origins[a]
        assert origin["parent"] in probes
        assert shared_word_share(a, origin["parent"]) >= 0.5
        assert origin["edits"]  # each added input says how it was made
        assert origin["describe"]
    d = r.to_dict()
    assert d["schema"] == "agentverity_props.enlarge/2"
    assert len(d["origins"]) == len(r.added)
    assert d["grammar"]["probes"] == len(probes)
