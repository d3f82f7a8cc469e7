"""The HTML report shows what the terminal shows: no effect for a relation not exercised, no
empty seed placeholder, every table in a horizontal scroller (never clipped), a readable
privacy line."""

from __future__ import annotations

import re

from agentverity_props import Relation, from_callable, run
from agentverity_props.property._records import (
    Counterexample,
    PropertyRecord,
    counterexample_report,
)
from agentverity_props.report import render_html
from agentverity_props.report._text import render_run_text
from agentverity_props.runner import RunConfig

PROMPTS = ["hello there", "book a table", "what time is it", "plan a trip"]


def _run_dict() -> dict:
    same = Relation("identity", "invariant", lambda p: p)  # moves no input: not exercised
    res = run(from_callable(lambda p: "allow", identity="allow"), PROMPTS, [same],
              config=RunConfig(max_workers=1))
    d = res.to_dict()
    assert d["relations"][0]["status"] == "NOT EXERCISED"
    return d


def _row(html: str, name: str) -> str:
    return next(m for m in re.findall(r"<tr>.*?</tr>", html, re.S) if f">{name}<" in m)


def test_not_exercised_shows_no_effect_in_html_as_on_the_terminal():
    d = _run_dict()
    html = render_html(d)
    row = _row(html, "identity")
    assert "NOT EXERCISED" in row
    assert not re.search(r"[+-]\d\.\d", row), row  # neither +0.000 nor [-1.00, +0.33]
    text_row = next(ln for ln in render_run_text(d).splitlines() if ln.startswith("identity"))
    assert "–" in text_row
    assert not re.search(r"[+-]\d\.\d", text_row)


def test_every_table_scrolls_instead_of_being_clipped():
    html = render_html(_run_dict())
    tables = html.count("<table")
    assert tables >= 2
    assert html.count('<div class="wide"><table') == tables
    assert ".wide { overflow-x: auto; }" in html


def test_the_privacy_line_reads_as_a_sentence():
    d = _run_dict()
    assert d["privacy"].startswith("inputs are identified by fingerprint only")
    d_inc = run(from_callable(lambda p: "allow", identity="allow"), PROMPTS, [],
                config=RunConfig(max_workers=1, include_inputs=True)).to_dict()
    assert "('inputs', under their fingerprints" not in d_inc["privacy"]
    assert "this report keeps the inputs&#39; text" in render_html(d_inc)


def test_no_seed_is_not_printed_as_a_dash():
    ce = Counterexample(test="t::x", relation="case", rtype="invariant", source="hi",
                        follow_up="HI", source_value="allow", follow_up_value="block",
                        confirmation={}, kwargs={"prompt": "hi"}, calls_at_confirmation=3)
    rec = PropertyRecord(test="t::x", agent="a", alpha=0.05, alpha_candidate=0.001,
                         max_candidates=10, status="failed", seed=None, first=ce, minimal=ce)
    html = render_html(counterexample_report([rec]))
    assert "seed –" not in html
    assert "seed None" not in html
    assert "add the @example" in html  # the reproduce line is there, without a seed
    rec.seed = 1234
    assert "seed 1234 · " in render_html(counterexample_report([rec]))  # not "1,234"


def _page_exit(html: str) -> str:
    return re.search(r'<div class="exit \w+">\s*<span class="code">([^<]*)</span>', html).group(1)


def test_the_page_shows_the_exit_code_the_command_exits_with():
    """A format that records no exit code is given the one its kind's registry entry derives
    (the Markdown heading's and ``report``'s), never a view's own: an enlargement whose agent
    calls failed exits 2 (incomplete) even though its modal share is below the threshold."""
    import random

    from agentverity_props.report._kinds import derived_exit
    from agentverity_props.search import enlarge

    rng = random.Random(1)

    def agent(p: str) -> str:
        if rng.random() < 0.3:
            raise RuntimeError("provider down")
        return "block" if "kill" in p else "allow"

    prompts = ["hello there", "book a table", "how do I kill a process", "plan a trip",
               "what time is it"]
    d = enlarge(from_callable(agent, identity="flaky"), prompts, budget=60, seed=1,
                max_workers=1).to_dict()
    # its single-draw share is under the threshold; it is neither done nor complete
    assert d["skew_after"] < d["threshold"]
    assert (d["complete"], d["success"], derived_exit(d)) == (False, False, 2)
    html = render_html(d)
    assert _page_exit(html) == "2"
    assert "the evidence is incomplete" in html
    # a tests report with a status neither passed nor failed exits 2, on the page as well
    record = {"schema": "agentverity_props.counterexample/1", "tests": [
        {"test": "t.test_a", "status": "passed"}, {"test": "t.test_b", "status": "skipped"}]}
    assert _page_exit(render_html(record)) == str(derived_exit(record)) == "2"
