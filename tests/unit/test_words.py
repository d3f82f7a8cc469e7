"""One tokenizer (``_internal/words.py``) for every edit, the probe grammar and the boundary
search: it rebuilds every text, splits the issue's sentence into the units its rule states,
every user of it sees the same units, and no other module of the package holds a pattern of
what a word is."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from agentverity_props._internal.words import is_number, number_parts, tokenize, words
from agentverity_props.relations import Perturbation
from agentverity_props.search._edit_path import EditPath
from agentverity_props.strategies import ProbeGrammar
from agentverity_props.strategies._grammar import tokens as grammar_tokens

PKG = Path(__file__).parents[2] / "agentverity_props"
SENTENCE = "Refund $1,990.50 (45%) for my e-mail order A12"
UNITS = ["Refund", "$1,990.50", "(", "45%", ")", "for", "my", "e-mail", "order", "A12"]

PIECES = st.sampled_from(["Refund", "$1,990.50", "45%", "(", ")", "e-mail", "A12", "don't",
                          "it’s", "1,990", "12.5", "$", "%", "€3", ",", ".", "-", "'", "5kg",
                          "naïve", "٣٤", "_", "x_y", "\u00a0", "Boston,", "end."])
SPACES = st.sampled_from(["", " ", "  ", "\n", "\t", "\u00a0", " \r\n"])
TEXTS = st.lists(st.tuples(SPACES, PIECES), max_size=15).map(
    lambda ps: "".join(s + p for s, p in ps)) | st.text(max_size=40)


@given(TEXTS)
def test_joining_the_tokens_returns_the_text_exactly(text: str) -> None:
    toks = tokenize(text)
    assert "".join(map(str, toks)) == text
    assert toks[-1].kind == "end"
    assert toks[-1].space == text[len(text.rstrip()):]
    for t in toks:
        assert text[t.start:t.end] == t.text  # offsets point at the text
        assert t.text == "" or not t.text[0].isspace()
        assert t.space.strip() == ""
    body = tokenize(text, trailing=False)
    assert body == toks[:-1]


@given(TEXTS)
def test_a_token_is_a_word_a_number_or_one_character(text: str) -> None:
    for t in tokenize(text, trailing=False):
        assert t.kind in ("word", "number", "symbol")
        if t.kind == "symbol":
            assert len(t.text) == 1
            assert not t.text.isalnum()
        if t.kind == "number":
            assert is_number(t.text)
            assert number_parts(t.text) is not None


def test_the_example_sentence_splits_into_the_stated_units() -> None:
    toks = tokenize(SENTENCE, trailing=False)
    assert [t.text for t in toks] == UNITS
    assert [t.kind for t in toks] == ["word", "number", "symbol", "number", "symbol", "word",
                                      "word", "word", "word", "word"]
    assert [w.text for w in words(SENTENCE)] == ["Refund", "for", "my", "e-mail", "order",
                                                 "A12"]


def test_the_grammar_the_boundary_search_and_the_edits_see_the_same_units() -> None:
    # the probe grammar
    assert [t.text for t in grammar_tokens(SENTENCE)] == UNITS
    # the boundary search's edit path: the amount is one numeric unit, signs and all
    path = EditPath.between(SENTENCE, SENTENCE.replace("$1,990.50", "$2,100.00"))
    assert [(u.kind, [t.text for t in u.a_tokens]) for u in path.units] == \
        [("number", ["$1,990.50"])]
    assert [t.text for t in path.tokens][:-1] == UNITS
    # the relation transforms: a word is a unit of the tokenizer ("e-mail" whole)
    title = Perturbation("case", {"kind": "title_all"}).apply(SENTENCE.lower())
    assert title == "Refund $1,990.50 (45%) For My E-Mail Order A12"
    upper = [Perturbation("case", {"kind": "upper_word", "at": at}).apply(SENTENCE)
             for at in range(0, 1000, 100)]
    changed = {next(w for w, o in zip(u.split(), SENTENCE.split(), strict=True) if w != o)
               for u in upper}
    assert changed <= {"REFUND", "FOR", "MY", "E-MAIL", "ORDER"}
    # the grammar's number edits change the amount and keep its currency sign
    g = ProbeGrammar([SENTENCE, SENTENCE.replace("1,990.50", "2,400.00")])
    numbers = [e for e in g.edits(SENTENCE) if e.kind == "number"]
    assert numbers
    assert all(e.apply(SENTENCE).startswith("Refund $") for e in numbers)
    assert {e.before for e in numbers} <= {"1,990.50", "45"}


#: what a pattern of words (or of numbers written in words' place) looks like: a run of
#: letters, with or without digits, and the pieces of the old patterns of the grammar, the
#: boundary search and the transforms
WORD_PATTERNS = (r"[^\W\d_]", r"[^\W_]", r"\w+", r"\w+(?:['’-]\w+)*", r"[a-z][a-z']",
                 r"[a-z]+", r"[A-Za-z]+", r"[a-zA-Z]+", r"\d{1,3}(?:,", r"(?:,\d{3})")
#: modules that read words for something other than an edit, a grammar or a boundary
#: (module -> why): each keeps its own, documented, reading
OWN_READING = {
    # answer similarity compares an agent's answers, word-count vectors of lower-cased
    # ``\w+`` runs: the published ``lexical-token-cosine`` measure
    "tools/_similarity.py": r"\w+",
    # a shipped example agent's own reading of its input (an agent under test)
    "examples/_risk.py": r"[a-z]+(?:-[a-z]+)*",
    # not text: an XML attribute name in a rendered SVG, a ``{field}`` of a format string
    "report/_plots.py": r'\s+xmlns(:\w+)?="[^"]*"',
    "store/_namespace.py": r"{(\w+)}",
}


def _patterns(path: Path) -> list[str]:
    """The string constants of ``path`` that look like a pattern of words."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and any(p in n.value for p in WORD_PATTERNS)]


def test_no_second_word_pattern_in_the_package() -> None:
    found = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel == "_internal/words.py":
            continue
        pats = [p for p in _patterns(path) if p != OWN_READING.get(rel)]
        if pats:
            found[rel] = pats
    assert found == {}, "split text with agentverity_props/_internal/words.py"
    # the one module does hold the pattern (so the search above looks for the right thing)
    assert _patterns(PKG / "_internal" / "words.py")
    for rel, pat in OWN_READING.items():
        assert pat in _patterns(PKG / rel), rel  # an exception that is gone is dropped
