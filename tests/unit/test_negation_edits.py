"""The probe grammar's negation and scope edits (issue 44), and word deletions that keep
hyphenated and contracted words whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentverity_props.strategies._grammar import ProbeGrammar

PROBES = ["Sore throat for three days, no fever, chest pain or cough.",
          "Follow-up after a fall last week; denies chest pain, mild bruising on the hip.",
          "Ankle sprain while running, free of chest pain.",
          "Chest pain: none. Requests a sick note for a cold.",
          "No fever today, can't sleep."]


def _out(text: str, kind: str | None = None) -> list[str]:
    g = ProbeGrammar(PROBES)
    return [e.apply(text) for e in g.edits(text) if kind is None or e.kind == kind]


def test_a_short_cue_is_removed_and_the_sentence_keeps_its_capital() -> None:
    assert "Fever today, can't sleep." in _out("No fever today, can't sleep.", "negate")
    assert "Sore throat for three days, fever, chest pain or cough." in \
        _out(PROBES[0], "negate")


def test_cues_are_removed_and_added_by_their_counterparts() -> None:
    assert any("reports chest pain" in t for t in _out(PROBES[1], "negate"))
    assert any("with chest pain" in t for t in _out(PROBES[2], "negate"))
    assert "Chest pain: present. Requests a sick note for a cold." in _out(PROBES[3])
    assert any("denies" in t for t in _out("Patient reports chest pain.", "negate"))


def test_a_term_moves_out_of_and_into_a_negated_list() -> None:
    assert "Sore throat for three days, no fever or cough, but chest pain." in \
        _out(PROBES[0], "scope")
    assert "Heartburn after meals, no fever or chest pain." in \
        _out("Heartburn after meals, chest pain, no fever.", "scope")


def test_deletions_keep_hyphenated_and_contracted_words_whole() -> None:
    outs = _out(PROBES[1], "delete") + _out(PROBES[4], "delete")
    assert not any(t.startswith(("-up", "Up after")) for t in outs)
    assert not any("'t" in t and "can't" not in t for t in outs)
    assert "After a fall last week; denies chest pain, mild bruising on the hip." in outs


@given(st.sampled_from(PROBES), st.data())
def test_every_negation_edit_leaves_a_well_formed_text(text: str, data: st.DataObject) -> None:
    edits = [e for e in ProbeGrammar(PROBES).edits(text) if e.kind in ("negate", "scope")]
    e = data.draw(st.sampled_from(edits))
    out = e.apply(text)
    assert not any(bad in out for bad in ("  ", " ,", ",,"))
    assert out[:1].isupper()
    assert out != text
