"""Probe-text and follow-up strategies: grammar, shrinking toward the mildest, purity."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from agentverity_props.errors import InvalidArgument
from agentverity_props.strategies import (
    DEFAULT_DISTRACTORS,
    DEFAULT_PARAPHRASES,
    DEFAULT_POLITENESS,
    KEYBOARD_NEIGHBOURS,
    Perturbation,
    case_changes,
    distractors,
    entity_swaps,
    follow_ups,
    negations,
    paraphrases,
    politeness_prefixes,
    prompts,
    punctuation_changes,
    typos,
    whitespace_changes,
)

FAST = settings(max_examples=50, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])

def minimal(strategy, predicate, *, max_examples: int = 100):
    """``hypothesis.find`` without the explain phase (it re-runs ~100 variants per call)."""
    return find(strategy, predicate, settings=settings(
        max_examples=max_examples, database=None, phases=[Phase.generate, Phase.shrink]))

LEX = {"who": ["Ann", "Bo", "Cyd"], "what": ["tea", "a cake", "soup"], "when": ["now", "later"]}
TEMPLATES = ["Hi {who}", "{who} wants {what} {when}, says {who}", "No slots {{here}}"]

# Texts with at least one ASCII letter (typos only touch keys of the QWERTY map).
texts = st.text(alphabet=string.ascii_letters + " .,!?'0123456789é", min_size=0, max_size=40)
lettered = texts.filter(lambda t: any(c in string.ascii_letters for c in t))

ALL_PERTURBATIONS = st.one_of(
    case_changes(), whitespace_changes(), typos(), punctuation_changes(),
    politeness_prefixes(), distractors(), negations(), paraphrases(),
    entity_swaps({"Ann": ["Bo", "Cyd"], "tea": "coffee"}),
)


def _template_regex(template: str, lexicons: dict[str, list[str]]) -> re.Pattern[str]:
    """A regex matching exactly the texts ``template`` can produce (repeats share a value)."""
    out, seen = "", set()
    for literal, field, _, _ in string.Formatter().parse(template):
        out += re.escape(literal)
        if field is None:
            continue
        if field in seen:
            out += f"(?P={field})"
        else:
            seen.add(field)
            out += f"(?P<{field}>" + "|".join(map(re.escape, lexicons[field])) + ")"
    return re.compile(out)


# -- prompts ----------------------------------------------------------------------------------

@FAST
@given(prompts(TEMPLATES, slots=LEX))
def test_prompts_match_the_template_grammar(text: str) -> None:
    assert any(_template_regex(t, LEX).fullmatch(text) for t in TEMPLATES), text


def test_prompts_shrink_to_first_template_and_first_entries() -> None:
    # The second and third templates draw fewer slots; the first must still win.
    s = prompts(["{who} wants {what} {when}", "Hi {who}", "No slots"], slots=LEX)
    assert minimal(s, lambda t: True) == "Ann wants tea now"
    assert minimal(s, lambda t: "soup" in t) == "Ann wants soup now"
    assert minimal(s, lambda t: t.startswith("Hi")) == "Hi Ann"


def test_prompts_repeated_slot_gets_one_value_and_braces_escape() -> None:
    s = prompts("{who} and {who} {{literal}}", slots={"who": ["A", "B"]})
    assert minimal(s, lambda t: "B" in t) == "B and B {literal}"


def test_prompts_accept_strategy_lexicons() -> None:
    s = prompts("id {n}", slots={"n": st.integers(0, 9).map(str)})
    assert minimal(s, lambda t: t.endswith("7")) == "id 7"
    bad = prompts("id {n}", slots={"n": st.just(3)})  # type: ignore[dict-item]
    with pytest.raises(InvalidArgument, match="not a str"):
        minimal(bad, lambda t: True)


@pytest.mark.parametrize(
    ("template", "slots", "match"),
    [
        ("Hi {name}", {}, "undefined slot"),
        ("Hi {name}", {"name": []}, "empty lexicon"),
        ("Hi {name}", {"name": ["ok", 3]}, "non-string"),
        ("Hi {name}", {"name": "Ann"}, "list of strings"),
        ("Hi {name.attr}", {"name": ["x"]}, "bare slot name"),
        ("Hi {0}", {"name": ["x"]}, "bare slot name"),
        ("Hi {name!r}", {"name": ["x"]}, "bare slot name"),
        ("Hi {name:>5}", {"name": ["x"]}, "bare slot name"),
        ("Hi {name", {"name": ["x"]}, "unbalanced brace"),
        ([], {}, "at least one template"),
        (["ok", 5], {}, "not a str"),
        (5, {}, "str or a sequence"),
    ],
)
def test_prompts_reject_bad_arguments_eagerly(template: object, slots: object, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        prompts(template, slots=slots)  # type: ignore[arg-type]


# -- minimal perturbations are the mildest ------------------------------------------------------

@pytest.mark.parametrize(
    ("strategy", "name", "params"),
    [
        (case_changes(), "case", {"kind": "upper_word", "at": 0}),
        (typos(), "typo", {"edits": [{"at": 0, "kind": "neighbour", "key": 0}]}),
        (whitespace_changes(), "whitespace", {"kind": "extra_space", "count": 1, "at": 0}),
        (punctuation_changes(), "punctuation", {"kind": "toggle_period"}),
        (politeness_prefixes(), "politeness", {"prefix": DEFAULT_POLITENESS[0]}),
        (distractors(), "distractor",
         {"sentence": min(DEFAULT_DISTRACTORS, key=len), "position": "end"}),
        (negations(), "negation", {"at": 0}),
        (paraphrases(), "paraphrase", {"template": DEFAULT_PARAPHRASES[0]}),
        (entity_swaps({"Ann": ["Bo", "Cyd"], "Oslo": "Lima"}), "entity_swap",
         {"swaps": {"Ann": "Bo", "Oslo": "Lima"}}),
    ],
)
def test_minimal_perturbation_is_the_mildest(strategy, name: str, params: dict) -> None:
    assert minimal(strategy, lambda p: True) == Perturbation(name, params)


def test_minimal_perturbations_applied() -> None:
    text = "please check my order"
    assert minimal(case_changes(), lambda p: True).apply(text) == "PLEASE check my order"
    assert minimal(typos(), lambda p: True).apply(text) == "olease check my order"
    assert minimal(whitespace_changes(), lambda p: True).apply(text) == "please  check my order"
    assert minimal(punctuation_changes(), lambda p: True).apply(text) == "please check my order."
    assert minimal(distractors(), lambda p: True).apply(text) == (
        "please check my order It's Tuesday.")


def test_typos_shrink_count_and_position() -> None:
    # Two typos are needed: the shrinker still keeps positions and kinds at their mildest.
    p = minimal(typos(max_count=3), lambda p: len(p.params["edits"]) >= 2)
    assert p.params["edits"] == [{"at": 0, "kind": "neighbour", "key": 0}] * 2
    # Needing a later letter: the position shrinks to exactly that letter.
    def hits_fourth_letter_only(p: Perturbation) -> bool:
        out = p.apply("abcdef")
        return len(out) == 6 and out[:3] == "abc" and out[3] != "d"

    p = minimal(typos(max_count=1), hits_fourth_letter_only, max_examples=300)
    (edit,) = p.params["edits"]
    assert (edit["kind"], edit["key"]) == ("neighbour", 0)
    assert p.apply("abcdef") == "abcsef"
    # ``at`` is per mille along the letters: the smallest value that reaches letter 3 of 6
    assert edit["at"] == 500


def test_case_shrinks_to_one_word_before_whole_text() -> None:
    p = minimal(case_changes(), lambda p: p.apply("call me now") == "call ME now")
    assert p.params == {"kind": "upper_word", "at": 334}  # ceil(1000 / 3): the second word
    p = minimal(case_changes(), lambda p: p.apply("ab cd") == "AB CD")
    assert p.params == {"kind": "upper_all"}


# -- purity, determinism, changes ---------------------------------------------------------------

@FAST
@given(texts, ALL_PERTURBATIONS)
def test_apply_is_pure_and_round_trips_through_json(text: str, p: Perturbation) -> None:
    out = p.apply(text)
    assert p.apply(text) == out
    clone = Perturbation.from_json(p.to_json())
    assert clone == p
    assert hash(clone) == hash(p)
    assert clone.apply(text) == out
    assert p.changes(text) == (out != text)
    assert p.describe().startswith(p.name + "(")


@FAST
@given(lettered, st.one_of(typos(), whitespace_changes(), politeness_prefixes(),
                           distractors(), paraphrases()))
def test_always_changing_families_change_every_lettered_text(text: str, p: Perturbation) -> None:
    assert p.changes(text), (text, p)


@FAST
@given(texts, punctuation_changes())
def test_final_punctuation_kinds_always_change(text: str, p: Perturbation) -> None:
    if p.params["kind"] in ("toggle_period", "exclamations", "ellipsis"):
        assert p.changes(text)


@FAST
@given(lettered.filter(lambda t: any(c.islower() for c in t)), case_changes())
def test_word_case_changes_change_text_with_a_lower_case_word(text: str, p: Perturbation) -> None:
    if p.params["kind"] == "upper_word":
        out = p.apply(text)
        assert out != text
        assert out.lower() == text.lower()


@FAST
@given(lettered, typos(max_count=1))
def test_one_neighbour_typo_is_one_adjacent_key(text: str, p: Perturbation) -> None:
    out = p.apply(text)
    if p.params["edits"][0]["kind"] == "neighbour":
        diffs = [(a, b) for a, b in zip(text, out, strict=False) if a != b]
        assert len(out) == len(text)
        assert len(diffs) == 1
        (a, b), = diffs
        assert b.lower() in KEYBOARD_NEIGHBOURS[a.lower()]
        assert a.isupper() == b.isupper()


def test_typo_kinds_and_letters_only() -> None:
    def typo(kind: str, at: int = 0) -> Perturbation:
        return Perturbation("typo", {"edits": [{"at": at, "kind": kind, "key": 0}]})

    assert typo("double").apply("12 ab") == "12 aab"
    assert typo("drop").apply("12 ab") == "12 b"
    assert typo("swap").apply("12 ab") == "12 ba"
    assert typo("swap", 999).apply("ab") == "av"  # nothing after the last letter: neighbour key
    assert typo("neighbour").apply("Quit") == "Wuit"
    assert not typo("neighbour").changes("123 ?!")


def test_whitespace_and_punctuation_kinds() -> None:
    def ws(kind: str, **kw: int) -> str:
        return Perturbation("whitespace", {"kind": kind, **kw}).apply("a b c")

    assert ws("extra_space", count=2, at=999) == "a b   c"
    assert ws("tab", at=0) == "a\tb c"
    assert ws("newline", at=500) == "a b\nc"
    assert ws("leading", count=1) == " a b c"
    assert ws("double_all") == "a  b  c"

    def punct(kind: str, text: str, **kw: int) -> str:
        return Perturbation("punctuation", {"kind": kind, **kw}).apply(text)

    assert punct("toggle_period", "Hi there.") == "Hi there"
    assert punct("toggle_period", "Hi there ") == "Hi there. "
    assert punct("exclamations", "Hi?", count=2) == "Hi!!"
    assert punct("exclamations", "Hi!", count=1) == "Hi!!"
    assert punct("ellipsis", "Hi.") == "Hi..."
    assert punct("strip_all", "Hi, you! ok?") == "Hi you ok"
    assert punct("space_before", "Hi, you!") == "Hi , you !"


@pytest.mark.parametrize(
    ("text", "negated"),
    [
        ("I want a refund", ["I don't want a refund"]),
        ("it is urgent", ["it is not urgent"]),
        ("I'm sure it's broken", ["I'm not sure it's broken", "I'm sure it's not broken"]),
        ("Send it now. Please send the order.",
         ["Don't send it now. Please send the order.",
          "Send it now. Please don't send the order."]),
        ("Can you help me?", []),  # a question: no natural place for "not"
        ("How do I cook pasta?", []),
        ("I don't want it", []),  # already negated
        ("Hello there", []),
        ("Alice's order", []),  # a possessive, not "is"
    ],
)
def test_negations(text: str, negated: list[str]) -> None:
    n = max(len(negated), 1)
    # one ``at`` per site: site i is reached from ceil(1000 * i / n)
    outs = [Perturbation("negation", {"at": -(-1000 * i // n)}).apply(text) for i in range(n)]
    assert outs == (negated or [text])
    assert Perturbation("negation", {"at": 999}).apply(text) == (negated or [text])[-1]


def test_entity_swaps_are_whole_word_simultaneous_and_longest_first() -> None:
    p = Perturbation("entity_swap", {"swaps": {"Ann": "Bo", "Bo": "Ann", "New York": "Lima",
                                               "New York City": "Quito"}})
    assert p.apply("Ann met Bo in New York City, not Annabel in New York.") == \
        "Bo met Ann in Quito, not Annabel in Lima."
    assert not p.changes("nobody here")
    with pytest.raises(InvalidArgument):
        entity_swaps({})
    with pytest.raises(InvalidArgument, match="itself"):
        entity_swaps({"Ann": ["Ann"]})
    with pytest.raises(InvalidArgument):
        entity_swaps({"Ann": []})


def test_custom_lists_and_their_validation() -> None:
    polite = minimal(politeness_prefixes(prefixes=["Yo. ", "Hey. "]), lambda p: True)
    assert polite.apply("x") == "Yo. x"
    assert minimal(distractors(sentences=["Long sentence here.", "Short."]),
                lambda p: True).params["sentence"] == "Short."
    p = minimal(paraphrases(templates=["Q: {text}"]), lambda p: True)
    assert p.apply("why?") == "Q: why?"
    for bad in (["no placeholder"], ["{text}"], ["{text} {other}"], ["{text} and {text}"]):
        with pytest.raises(InvalidArgument):
            paraphrases(templates=bad)
    with pytest.raises(InvalidArgument):
        politeness_prefixes(prefixes=[])
    with pytest.raises(InvalidArgument):
        distractors(sentences="one string")
    for fn in (typos, whitespace_changes, punctuation_changes):
        with pytest.raises(InvalidArgument):
            fn(max_count=0)


def test_perturbation_rejects_bad_values() -> None:
    with pytest.raises(InvalidArgument, match="unknown perturbation"):
        Perturbation("shout", {})
    with pytest.raises(InvalidArgument, match="do not define"):
        Perturbation("typo", {"edits": "oops"})
    with pytest.raises(InvalidArgument, match="unknown kind"):
        Perturbation("whitespace", {"kind": "zigzag"})
    with pytest.raises(InvalidArgument, match="unknown kind"):
        Perturbation("typo", {"edits": [{"at": 0, "kind": "zigzag", "key": 0}]})
    with pytest.raises(InvalidArgument, match="JSON"):
        Perturbation("case", {"kind": "upper_all", "x": object()})
    with pytest.raises(InvalidArgument):
        Perturbation("case", {"kind": "upper_all"}).apply(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        Perturbation.from_json({"params": {}})


def test_params_are_detached_from_the_callers_dict() -> None:
    params = {"kind": "upper_word", "at": 0}
    p = Perturbation("case", params)
    params["at"] = 5
    assert p.params["at"] == 0


# -- follow_ups ------------------------------------------------------------------------------------

@FAST
@given(follow_ups(prompts(TEMPLATES, slots=LEX), ALL_PERTURBATIONS))
def test_follow_ups_are_consistent_and_changed(triple: tuple[str, Perturbation, str]) -> None:
    text, p, out = triple
    assert out == p.apply(text)
    assert out != text


def test_follow_ups_shrink_to_mildest_pair_and_validate() -> None:
    s = follow_ups(prompts("hello there"), st.one_of(case_changes(), typos()))
    assert minimal(s, lambda t: True)[2] == "HELLO there"
    keep = follow_ups(prompts("123"), negations(), require_change=False)
    assert minimal(keep, lambda t: True)[2] == "123"
    with pytest.raises(InvalidArgument):
        follow_ups(["a"], typos())  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        follow_ups(prompts("a"), typos)  # type: ignore[arg-type]
