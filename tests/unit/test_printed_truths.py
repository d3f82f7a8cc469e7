"""Issue 46's defects, one test each: what a report prints is true as printed (every printed
inequality holds, every count is the sum it claims, every word agrees with the page)."""

from __future__ import annotations

import re

from agentverity_props.decide import account
from agentverity_props.property._records import Counterexample, PropertyRecord
from agentverity_props_pytest import _format_counterexample

# a forced flip ('!' -> 'technical' on 16 of 17 draws) decided by the reverse e-process:
# forward 6.68e3 < 2/alpha = 1.8e4 <= reverse 5.2e4 (the numbers the issue reproduced)
FLIP = {"alpha": 0.000111, "e_violation": 6680.0, "e_reverse": 52000.0, "e_pass": 0.01,
        "follow_up_violations": 16, "follow_up_draws": 17, "source_violations": 3,
        "source_draws": 16, "test": "two e-processes"}


def _record(confirmation: dict) -> PropertyRecord:
    rec = PropertyRecord(test="t::test_bang", agent="a", alpha=0.05, alpha_candidate=0.000111,
                         max_candidates=225, calls=300)
    rec.minimal = rec.first = Counterexample(
        test="t::test_bang", relation="bang", rtype="invariant", source="hello",
        follow_up="hello!", source_value="billing", follow_up_value="technical",
        confirmation=confirmation, kwargs={"prompt": "hello"}, calls_at_confirmation=40)
    return rec


def _inequalities(text: str) -> list[tuple[float, int, float]]:
    """(e-value, k, threshold) of each ``e-value E ≥ k/alpha_candidate = T`` printed."""
    return [(float(e), int(k), float(t)) for e, k, t in re.findall(
        r"e-value ([\d.e+-]+) (?:>=|≥) (\d)/alpha_candidate(?: = ([\d.e+-]+))?", text)]


def test_counterexample_section_prints_the_e_value_that_decided_and_its_threshold():
    section = _format_counterexample(_record(FLIP))
    ineq = _inequalities(section)
    assert ineq, section
    for e, k, t in ineq:
        assert e >= t, section  # true as printed
        assert k == 2  # a two-sided candidate: each direction at alpha_candidate / 2
    assert "reverse e-value 5.2e+04" in section
    # the old section: 'e-value 6.68e+03 >= 1/alpha_candidate, alpha_candidate = 0.000111'
    assert "6.68e+03 >=" not in section and "6.68e+03 ≥" not in section


def test_a_forced_flip_is_not_described_as_a_more_decided_follow_up():
    text = account(FLIP).sentence()
    assert "more decided" not in text
    assert "flips the verdict" in text
    # a follow-up that rarely leaves the source's verdict, decided in reverse, is one
    quiet = {**FLIP, "follow_up_violations": 2, "source_violations": 7}
    assert "more decided" in account(quiet).sentence()


def test_the_section_and_the_exception_share_one_account():
    # the exception's text is built by the decorator from the same account: its sentence
    # appears word for word in the section
    section = _format_counterexample(_record(FLIP))
    assert account(FLIP).sentence() in section


def test_a_one_sided_decision_crosses_one_over_alpha():
    one = {k: v for k, v in FLIP.items() if k != "e_reverse"} | {"e_violation": 1.0e4}
    acc = account(one)
    assert acc.test == "forward" and acc.sides == 1
    assert "e-value 1e+04 ≥ 1/alpha_candidate = 9.01e+03" == acc.inequality()
