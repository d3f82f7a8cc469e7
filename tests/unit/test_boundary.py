"""Boundary location: the edit path rebuilds both ends exactly, the crossing edit is named in
the inputs' words, and the CLI says it (or refuses bad input in one line)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentverity_props import from_callable
from agentverity_props.errors import InvalidArgument
from agentverity_props.strategies import BoundaryConfig, edit_path, locate_boundary
from agentverity_props.strategies._boundary import _Path, _units

ROOT = Path(__file__).parents[2]
WORDS = st.sampled_from(["cost", "$450", "1,200", "economy", "business", "to", "Oslo", "Paris",
                         "for", "a", "medical", "visit", ",", ".", "3.5", "kg", "URGENT"])
TEXTS = st.lists(WORDS, min_size=1, max_size=12).map(" ".join)


@given(TEXTS, TEXTS)
def test_the_edit_path_starts_at_a_ends_at_b_and_moves_one_unit_at_a_time(a: str, b: str):
    path = edit_path(a, b)
    assert path[0] == a
    assert path[-1] == b
    units, _gaps = _units(a, b)
    assert len(path) == len(units) + 1
    assert len(set(path)) == len(path) or a.casefold() == b.casefold() or len(units) == 0


@given(TEXTS, TEXTS, st.integers(0, 20))
def test_a_unit_written_otherwise_changes_only_that_unit(a: str, b: str, k: int):
    units, gaps = _units(a, b)
    if not units:
        return
    p = _Path(a, b, tuple(units), tuple(gaps))
    k = k % len(units)
    assert p.text(k, (k, units[k].after)) == p.text(k + 1)


def _threshold(limit: float, noise: float = 0.0, seed: int = 0):
    rng = random.Random(seed)

    def gate(p: str) -> str:
        amount = float(p.split("$")[1].split(maxsplit=1)[0].replace(",", ""))
        v = "manager" if amount > limit else "approve"
        if rng.random() < noise:
            v = "approve" if v == "manager" else "manager"
        return v
    return from_callable(gate)


def test_a_numeric_threshold_is_named_in_the_inputs_number_format() -> None:
    loc = locate_boundary(_threshold(2000), "Trip to Oslo, cost $450 total",
                          "Trip to Oslo, cost $9,000 total")
    assert loc.status == "located"
    lo = float(loc.edit["before"].replace(",", ""))
    hi = float(loc.edit["after"].replace(",", ""))
    assert lo <= 2000 < hi
    assert hi - lo <= 0.01 * 2000 + 1
    assert loc.describe() == f"cost {loc.edit['before']} → {loc.edit['after']} flips approve " \
                             "→ manager"
    assert "," in loc.edit["after"]  # written like $9,000
    assert loc.low.endswith(f"${loc.edit['before']} total")
    assert loc.high.endswith(f"${loc.edit['after']} total")


def test_the_crossing_word_of_a_phrase_is_found() -> None:
    gate = from_callable(lambda p: "hr" if "medical" in p else "auto")
    loc = locate_boundary(gate, "Two days off next month.",
                          "Two days off next month for a medical appointment today.")
    assert loc.status == "located"
    assert loc.edit["word"] == "medical"
    assert "medical" in loc.high
    assert "medical" not in loc.low


def test_a_keyword_among_several_edits_is_the_unit_that_crosses() -> None:
    gate = from_callable(lambda p: "manager" if "business" in p else "approve")
    loc = locate_boundary(gate, "Flight to Oslo in economy for a client visit on May 3",
                          "Train to Paris in business for a sales visit on June 9")
    assert loc.status == "located"
    assert (loc.edit["before"], loc.edit["after"]) == ("economy", "business")
    assert loc.describe() == "'economy' → 'business' flips approve → manager"


def test_same_verdicts_are_no_crossing_and_a_stochastic_region_is_undecided() -> None:
    same = locate_boundary(from_callable(lambda p: "allow"), "a b c", "a x c")
    assert same.status == "no-crossing"
    rng = random.Random(3)

    def coin(p: str) -> str:
        amount = float(p.split("$")[1])
        if amount < 100:
            return "approve"
        if amount > 10000:
            return "manager"
        return rng.choice(["approve", "manager"])
    loc = locate_boundary(from_callable(coin), "cost $10", "cost $50000", budget=200)
    assert loc.status in ("undecided", "located")
    if loc.status == "undecided":
        assert "stochastic" in loc.reason


def test_bad_arguments_are_refused_at_once() -> None:
    with pytest.raises(InvalidArgument, match="non-empty str"):
        locate_boundary(from_callable(str), "", "b")
    with pytest.raises(InvalidArgument, match="resolution"):
        BoundaryConfig(resolution=0.9)
    assert BoundaryConfig(eta=0.15, step_error=0.01).steps_lead == 3


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentverity_props", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.e2e
def test_the_cli_names_the_crossing_and_refuses_bad_input_in_one_line() -> None:
    proc = _cli("boundary", "--agent", "examples/travel_gate.py:noisy_gate", "--from",
                "Train from Dallas to Austin, $560 in total.", "--to",
                "Train from Dallas to Austin, $56,000 in total.", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["status"] == "located"
    assert d["description"].startswith("Austin ") or " → " in d["description"]
    lo, hi = (float(d["edit"][k].replace(",", "")) for k in ("before", "after"))
    assert lo <= 2000 < hi
    proc = _cli("boundary", "--agent", "examples/travel_gate.py:gate", "--from", "same",
                "--to", "same")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("error: --from and --to are the same text")
