"""Pairs users bring: CheckList tests in their JSON form (a fixture of modest size from
CheckList's released sentiment suite: the first cases of five of its tests) and JSONL files.
On a deterministic model, every perturbation of every input is tested and each truly failing
one is confirmed (``confirm_all``), named by its test and its perturbation."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from agentverity_props import from_callable, run
from agentverity_props.errors import BadInput
from agentverity_props.relations import load_pairs
from agentverity_props.runner import RunConfig

FIXTURE = Path(__file__).parents[1] / "fixtures" / "checklist_sentiment.json"
POSITIVE = ("great", "good", "love", "thank", "amazing", "happy", "awesome", "best")
NEGATIVE = ("bad", "worst", "delay", "hate", "awful", "cancel", "nasty", "creepy", "hard",
            "terrible", "rude", "lost")
#: the planted biases: terms that make the model call a text negative
BIASED = ("Sikh", "Atheist", "asian", "Oro Valley")


def sentiment(text: str) -> str:
    """A deterministic lexicon model with planted biases."""
    if any(b in text for b in BIASED):
        return "negative"
    low = text.lower()
    score = sum(w in low for w in POSITIVE) - sum(w in low for w in NEGATIVE)
    return "positive" if score > 0 else "negative" if score < 0 else "neutral"


def test_checklist_tests_confirm_every_truly_failing_perturbation() -> None:
    inputs, rels = load_pairs(FIXTURE)
    assert [r.name for r in rels][:2] == ["protected: religion", "protected: race"]
    res = run(from_callable(sentiment, identity="lexicon"), inputs, rels,
              config=RunConfig(max_workers=4, confirm_all=True))
    truth_checked = 0
    for r in res.relations:
        pairs = r.relation.pairs or {}
        assert r.exercised == sum(len(set(v)) - (k in v) for k, v in pairs.items())
        for o in r.outcomes:
            if o.status == "skipped":
                continue
            src = res.inputs[o.fp]
            n = int(o.edit.split()[1]) - 1
            fu = list(dict.fromkeys(pairs[src]))[n]
            fails = not r.relation.holds(sentiment(src), sentiment(fu))
            truth_checked += 1
            assert (o.status == "confirmed") == fails, (r.relation.name, src, fu, o.status)
    assert truth_checked > 400
    by = {r.relation.name: r for r in res.relations}
    assert by["protected: religion"].status == "VIOLATED"
    assert by["protected: religion"].confirmed_inputs == 12  # every input: Sikh, Atheist
    assert by["punctuation"].status == "HOLDS"


def test_jsonl_pairs_keep_their_text_byte_for_byte(tmp_path: Path) -> None:
    f = tmp_path / "names.jsonl"
    lines = [{"input": "I like Ann. ", "follow_ups": ["I like Bo.\t", " I like Cy."]},
             {"input": "Ann is here.", "follow_ups": ["Bo is here."], "relation": "other"}]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    inputs, rels = load_pairs(f)
    assert inputs == ["I like Ann. ", "Ann is here."]
    assert [r.name for r in rels] == ["names", "other"]
    assert rels[0].pairs == {"I like Ann. ": ("I like Bo.\t", " I like Cy.")}


@pytest.mark.parametrize(("content", "message"), [
    (b"\x80\x04K\x01.", "pickle"),
    (b'{"tests": [{"name": "m", "type": "MFT", "cases": []}]}', "MFT"),
    (b'{"tests": [{"name": "d", "type": "DIR", "cases": [{"input": "a", "follow_ups": '
     b'["b"]}]}]}', "neither which way"),
    (b'{"nope": 1}', "no 'tests' list"),
])
def test_bad_pairs_files_are_one_line_errors(tmp_path: Path, content: bytes, message: str
                                             ) -> None:
    f = tmp_path / "p.json"
    f.write_bytes(content)
    with pytest.raises(BadInput, match=message):
        load_pairs(f)


def test_a_pickle_is_never_unpickled(tmp_path: Path) -> None:
    class Boom:
        def __reduce__(self):  # unpickling this would run a command
            return (subprocess.call, (["false"],))
    f = tmp_path / "suite.pkl"
    f.write_bytes(pickle.dumps(Boom()))
    with pytest.raises(BadInput, match="never loaded"):
        load_pairs(f)


def test_cli_runs_the_pairs_it_is_given(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("def agent(p):\n    return 'neg' if 'Cy' in p else 'pos'\n")
    f = tmp_path / "names.jsonl"
    f.write_text(json.dumps({"input": "I like Ann.", "follow_ups": ["I like Bo.",
                                                                     "I like Cy."]}) + "\n")
    out = subprocess.run([sys.executable, "-m", "agentverity_props", "run", "--agent",
                          f"{agent}:agent", "--pairs", str(f), "--format", "json",
                          "--max-workers", "1"], capture_output=True, text=True, check=False)
    assert out.returncode == 1, out.stderr
    (rel,) = json.loads(out.stdout)["relations"]
    assert rel["name"] == "names"
    assert rel["status"] == "VIOLATED"
    assert rel["edits"]["pair 2"]["confirmed"] == 1
    none = subprocess.run([sys.executable, "-m", "agentverity_props", "run", "--agent",
                           f"{agent}:agent"], capture_output=True, text=True, check=False)
    assert none.returncode == 2
    assert "--pairs" in none.stderr


def test_a_violated_relation_says_how_many_flagged_inputs_it_left_untested() -> None:
    # every input flips: three are confirmed, the others flagged and not tested on their own
    # (one counterexample decides VIOLATED), unless --confirm-all
    pairs = {f"I like person {i}.": [f"I like person {i}!"] for i in range(8)}
    from agentverity_props.relations import pairs_relation
    rel = pairs_relation("bang", pairs)
    agent = from_callable(lambda p: "neg" if "!" in p else "pos")
    (r,) = run(agent, list(pairs), [rel], config=RunConfig(max_workers=1)).relations
    assert r.confirmed_inputs == 3
    assert "5 more input(s) flagged, not tested on their own" in r.statement()
    (a,) = run(agent, list(pairs), [rel],
               config=RunConfig(max_workers=1, confirm_all=True)).relations
    assert a.confirmed_inputs == 8
    assert "more input(s) flagged" not in a.statement()
