"""Boundary location: the edit path (exact rebuilds, numeric styles) and the bisection on
noisy offline agents (numeric threshold, keyword, list of names)."""

from __future__ import annotations

import math
import random
import re
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentverity_props import locate_boundary
from agentverity_props.errors import AgentCallError, BadInput, InvalidArgument
from agentverity_props.search import BoundaryConfig, BoundaryLocation
from agentverity_props.search._boundary import lead_needed, midpoint
from agentverity_props.search._edit_path import (
    EditPath,
    NumberStyle,
    format_number,
    parse_number,
    tokenize,
)

WORDS = st.sampled_from(["ship", "parcel", "to", "Oslo", "weight", "kg", "urgent", "the",
                         "1,990", "2,010", "$450", "12.5", "45%", "7", ",", ".", "!", "(",
                         "don't", "x-ray"])
SPACES = st.sampled_from(["", " ", " ", "  ", "\n", "\t"])
TEXTS = st.lists(st.tuples(SPACES, WORDS), max_size=12).map(
    lambda ps: "".join(s + w for s, w in ps)) | st.text(max_size=30)


@given(TEXTS)
def test_tokens_rebuild_every_text(text):
    assert "".join(map(str, tokenize(text))) == text


@given(TEXTS, TEXTS)
@settings(max_examples=300)
def test_path_starts_at_a_ends_at_b_and_steps_one_unit(a, b):
    path = EditPath.between(a, b)
    assert path.text(0) == a
    assert path.text(len(path)) == b
    assert path.render(len(path)) == b  # the generic rebuild agrees with the shortcut
    texts = [path.text(k) for k in range(len(path) + 1)]
    for k, unit in enumerate(path.units):
        assert texts[k] != texts[k + 1]
        # partial steps run from text(k) to text(k+1), one position at a time
        assert path.partial_text(k, 0) == texts[k]
        assert path.partial_text(k, unit.width) == texts[k + 1]
        if unit.kind == "number":
            # the ends keep their own spelling (text(k)); the scaled values are theirs
            for scaled, tok in ((unit.lo_scaled, unit.a_tokens[0]),
                                (unit.hi_scaled, unit.b_tokens[0])):
                assert parse_number(unit.number_token(scaled).core)[0] == \
                    parse_number(tok.core)[0]


@given(st.decimals(min_value=0, max_value=10 ** 9, places=2, allow_nan=False),
       st.sampled_from(["", "$", "€"]), st.booleans(), st.integers(0, 3), st.booleans())
def test_numbers_round_trip_through_their_style(value, currency, thousands, decimals, pct):
    style = NumberStyle(currency, thousands, decimals, pct)
    text = format_number(value, style)
    parsed = parse_number(text)
    assert parsed is not None
    assert parsed[0] == value.quantize(Decimal(1).scaleb(-decimals))
    assert format_number(parsed[0], parsed[1].merged(style)) == text


@pytest.mark.parametrize(("a", "b", "between"), [
    ("cost 1,990", "cost 2,500", "cost 2,010"),
    ("fee $400.00", "fee $500.5", "fee $450.25"),
    ("rate 4%", "rate 12%", "rate 7%"),
    ("weight 19 kg", "weight 31 kg", "weight 25 kg"),
])
def test_numeric_units_interpolate_in_the_original_style(a, b, between):
    path = EditPath.between(a, b)
    assert [u.kind for u in path.units] == ["number"]
    want = parse_number(between.split()[1])
    assert want is not None
    unit = path.units[0]
    scaled = int(want[0] * 10 ** unit.style.decimals)
    assert path.number_text(0, scaled) == between


def test_words_and_numbers_become_separate_units():
    path = EditPath.between("Flight to Rome in economy class, cost 1,990",
                            "Flight to Rome in first class, cost 2,500 please")
    assert [(u.kind, [t.core for t in u.a_tokens], [t.core for t in u.b_tokens])
            for u in path.units] == [("replace", ["economy"], ["first"]),
                                      ("number", ["1,990"], ["2,500"]),
                                      ("insert", [], ["please"])]


@given(st.integers(-10 ** 6, 10 ** 6), st.integers(2, 10 ** 6))
def test_midpoint_is_strictly_inside(lo, width):
    hi = lo + width
    assert lo < midpoint(lo, hi) < hi
    assert lo < midpoint(hi, lo) < hi


def test_lead_meets_the_stated_step_error():
    for noise in (0.01, 0.05, 0.1, 0.2, 0.3):
        for alpha in (0.001, 0.01, 0.05):
            k = lead_needed(noise, alpha)
            r = noise / (1 - noise)
            assert r ** k / (1 + r ** k) <= alpha
            assert k == 1 or r ** (k - 1) / (1 + r ** (k - 1)) > alpha


# -- agents ----------------------------------------------------------------------------------


def flipper(rule, labels, noise, seed):
    """``rule(prompt)`` with probability 1 - noise, else another label (own Random)."""
    rng = random.Random(seed)

    def agent(prompt: str) -> str:
        v = rule(prompt)
        if rng.random() < noise:
            v = rng.choice([x for x in labels if x != v])
        return v
    return agent


def loan(prompt: str) -> str:
    m = re.search(r"\$([\d,]+)", prompt)
    return "refer" if m and int(m.group(1).replace(",", "")) >= 25000 else "grant"


def shipping(prompt: str) -> str:
    return "hold" if re.search(r"\b(lithium|aerosol|fireworks)\b", prompt) else "ship"


BLOCKED = {"Minsk", "Caracas", "Pyongyang"}


def visa(prompt: str) -> str:
    return "deny" if any(c in prompt for c in BLOCKED) else "allow"


@pytest.mark.parametrize("seed", range(3))
def test_numeric_threshold_at_five_percent_noise(seed):
    agent = flipper(loan, ["grant", "refer"], 0.05, seed)
    loc = locate_boundary(agent, "Loan of $3,000 for a used car, salary $41,000",
                          "Loan of $90,000 for a used car, salary $41,000", seed=seed)
    assert loc.status == "located", loc.reason
    before, after = (int(x.lstrip("$").replace(",", "")) for x in
                     (loc.edit["before"], loc.edit["after"]))
    assert before < 25000 <= after
    assert after - before <= 0.01 * before
    assert loc.edit["kind"] == "number"
    assert loc.edit["context"] == "of"
    assert loc.describe().startswith(f"of {loc.edit['before']} → {loc.edit['after']} flips "
                                     "grant → refer")
    assert loc.calls <= 120
    assert loc.low_verdict == "grant"
    assert loc.high_verdict == "refer"


def test_keyword_crossing_names_the_word():
    agent = flipper(shipping, ["ship", "hold"], 0.05, 7)
    loc = locate_boundary(agent, "Send 2 boxes of books and a lamp to Lyon by road",
                          "Send 2 boxes of lithium cells and a heater to Bonn by air")
    assert loc.status == "located", loc.reason
    assert loc.edit["after"] == "lithium"
    assert loc.describe().endswith("flips ship → hold")
    assert shipping(loc.low) == "ship"
    assert shipping(loc.high) == "hold"


def test_a_name_in_a_list_is_found_word_by_word():
    agent = flipper(visa, ["allow", "deny"], 0.05, 3)
    loc = locate_boundary(agent, "Visitors from Lisbon, Porto and Faro",
                          "Visitors from Minsk, Kyiv and Riga")
    assert loc.status == "located", loc.reason
    assert (loc.edit["before"], loc.edit["after"]) == ("Lisbon", "Minsk")
    assert loc.describe() == '"Lisbon" → "Minsk" flips allow → deny'


def test_same_verdict_at_both_ends_is_no_crossing():
    loc = locate_boundary(flipper(visa, ["allow", "deny"], 0.0, 0),
                          "Visitors from Lisbon", "Visitors from Porto")
    assert loc.status == "no-crossing"
    assert loc.edit == {}
    assert loc.calls <= 6


def test_a_coin_flip_agent_is_undecided_not_located():
    loc = locate_boundary(flipper(lambda p: "a", ["a", "b"], 0.5, 1), "one two", "three four",
                          budget=200)
    assert loc.status in ("undecided", "no-crossing", "incomplete")
    assert loc.status != "located"


def test_budget_too_small_is_incomplete():
    loc = locate_boundary(flipper(loan, ["grant", "refer"], 0.05, 0), "Loan of $3,000",
                          "Loan of $90,000", budget=8)
    assert loc.status == "incomplete"
    assert "budget" in loc.reason
    assert loc.calls <= 8


def test_a_failing_agent_is_incomplete_with_its_cause():
    def broken(prompt: str) -> str:
        raise RuntimeError("provider down")
    loc = locate_boundary(broken, "Loan of $3,000", "Loan of $90,000", retries=0)
    assert loc.status == "incomplete"
    assert "provider down" in loc.reason


def test_to_dict_is_plain_json_with_the_pair():
    import json
    loc = locate_boundary(loan, "Loan of $3,000", "Loan of $90,000")
    d = json.loads(json.dumps(loc.to_dict()))
    assert set(d) == {"status", "low", "high", "low_verdict", "high_verdict", "edit",
                      "description", "steps", "calls", "reason", "decision", "step_error"}
    assert d["steps"] == len(loc.step_log)
    assert 0 < d["step_error"] <= 0.02
    assert d["status"] == "located"
    assert d["edit"]["kind"] == "number"
    assert d["description"] == loc.describe()
    assert isinstance(loc, BoundaryLocation)


def test_bad_arguments_fail_eagerly_with_a_fix():
    with pytest.raises(BadInput, match="same text"):
        locate_boundary(loan, "x", "x")
    with pytest.raises(InvalidArgument, match="alpha"):
        locate_boundary(loan, "a", "b", alpha=0.7)
    with pytest.raises(InvalidArgument, match="resolution"):
        BoundaryConfig(resolution=1.5)
    with pytest.raises(InvalidArgument, match="unknown argument"):
        locate_boundary(loan, "a", "b", retry=1)


def test_control_characters_from_the_agent_are_shown_as_data():
    loc = locate_boundary(lambda p: "\x1b[2Jdeny" if "Minsk" in p else "allow",
                          "from Lisbon", "from Minsk")
    assert loc.status == "located"
    assert "\x1b" not in loc.describe()
    assert "\\x1b" in loc.describe()


def test_config_and_keywords_reach_the_engine():
    from agentverity_props.engine import EngineConfig

    calls = []

    def broken(prompt: str) -> str:
        calls.append(prompt)
        raise AgentCallError("rate limited", kind="rate_limit", retryable=True)
    conf = BoundaryConfig(engine=EngineConfig(budget=50, retries=0, fail_fast=1,
                                              backoff_base_s=0.0, backoff_max_s=0.0))
    loc = locate_boundary(broken, "Loan of $3,000", "Loan of $90,000", config=conf)
    assert loc.status == "incomplete"
    assert len(calls) <= 2  # the first batch (a lead of 2), no retry
    calls.clear()
    loc = locate_boundary(broken, "Loan of $3,000", "Loan of $90,000", config=conf, retries=1)
    assert 2 <= len(calls) <= 4  # the keyword overrides the config: one retry each
    assert locate_boundary(loan, "Loan of $3,000", "Loan of $90,000",
                           config=BoundaryConfig(resolution=0.0)).edit["after"] == "$25,000"


@given(st.integers(1, 10 ** 6), st.integers(1, 10 ** 6), st.integers(1, 10 ** 6))
@settings(max_examples=60, deadline=None)
def test_a_deterministic_threshold_is_bracketed_in_logarithmic_calls(x, y, z):
    lo, t, hi = sorted((x, y, z))
    if not lo <= t < hi:
        return

    def agent(prompt: str) -> str:
        return "high" if int(prompt.rsplit(maxsplit=1)[-1].replace(",", "")) > t else "low"
    loc = locate_boundary(agent, f"order size {lo:,}", f"order size {hi:,}", budget=400)
    assert loc.status == "located"
    before, after = (int(v.replace(",", "")) for v in (loc.edit["before"], loc.edit["after"]))
    assert before <= t < after
    assert after - before <= max(1, 0.01 * before)
    # a lead of 2 per step, bisecting (hi - lo) / (1% of the value) at worst, plus the ends
    # and the confirmation: logarithmic in the range, not linear
    steps = math.ceil(math.log(max(2, hi - lo), 1 / 0.6)) + 2
    assert loc.calls <= 2 * steps + 12


def test_alocate_reuses_the_pool_and_known_verdicts():
    from agentverity_props.engine import Engine, EngineConfig, EvidencePool, Probe, run_sync
    from agentverity_props.observation import Observation
    from agentverity_props.search._boundary import alocate

    a, b = "Loan of $3,000", "Loan of $90,000"
    seen: list[str] = []

    def agent(prompt: str) -> str:
        seen.append(prompt)
        return loan(prompt)

    async def main(pool, **kw):
        eng = Engine(agent, EngineConfig(budget=200))
        try:
            return await alocate(eng, pool, a, b, layer="verdict", alpha=0.05, **kw)
        finally:
            await eng.aclose()

    pool = EvidencePool()
    for i in range(3):  # draws the caller already made
        pool.add(Probe.make(a).fp, i, Observation(verdict="grant"))
        pool.add(Probe.make(b).fp, i, Observation(verdict="refer"))
    loc = run_sync(main(pool))
    assert loc.located
    assert a not in seen
    assert b not in seen
    seen.clear()
    loc = run_sync(main(EvidencePool(), a_verdict="grant", b_verdict="refer", max_calls=6))
    assert loc.status == "incomplete"
    assert len(seen) <= 6
    assert a not in seen
    assert b not in seen


def test_a_graded_boundary_is_located_as_a_wider_confirmed_pair():
    def ramp(seed: int):
        rng = random.Random(seed)

        def agent(prompt: str) -> str:
            v = int(prompt.rsplit(maxsplit=1)[-1].replace(",", ""))
            p = 0.05 + 0.9 / (1 + math.exp(-(v - 2000) / 30))  # 10% → 90% over ~130
            return "manager" if rng.random() < p else "approve"
        return agent
    results = [locate_boundary(ramp(s), "Trip, cost 1,200", "Trip, cost 4,800", budget=300)
               for s in range(6)]
    located = [r for r in results if r.located]
    assert len(located) >= 4
    for r in located:
        before, after = (int(v.replace(",", "")) for v in (r.edit["before"], r.edit["after"]))
        assert before < 2100
        assert after > 1900
        assert r.low_verdict == "approve"
        assert r.high_verdict == "manager"
    assert any(r.graded and "graded" in r.reason for r in located)
