"""assess: the readers (promptfoo export, JSONL, record store), their refusals, draw order,
and the replay that decides with no agent call."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from agentverity_props.adapters import from_callable
from agentverity_props.assess import (
    JsonlDraw,
    RecordedInput,
    Recording,
    assess,
    jsonl_schema,
    load_jsonl,
    load_promptfoo,
    load_store,
    plan_assessment,
)
from agentverity_props.errors import BadInput
from agentverity_props.observation import DEFAULT_EXTRACTOR, Observation, by_key
from agentverity_props.relations import Relation
from agentverity_props.runner import RunConfig, run

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "examples" / "recorded" / "promptfoo_support.json"
JSONL = ROOT / "examples" / "recorded" / "support_draws.jsonl"
SPLIT = "This is ridiculous, refund order 1003 now."
ROUTE = by_key("route")


def export() -> dict:
    return json.loads(EXPORT.read_text())


def write(tmp_path: Path, data: object, name: str = "e.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data))
    return p


def lines(tmp_path: Path, rows: list[dict], name: str = "d.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


# ------------------------------------------------------------------ promptfoo


def test_promptfoo_export_groups_repeats_by_input_in_testidx_order() -> None:
    rec = load_promptfoo(EXPORT, extractor=ROUTE)
    assert rec.agent == "promptfoo:openai:gpt-4o-mini"
    assert [len(i.draws) for i in rec.inputs] == [26, 26, 26]
    (split,) = rec.split()
    assert split.text == SPLIT
    assert dict(split.counts()) == {"refund": 14, "escalate": 12}
    # the file is in completion order; each input's draws follow testIdx
    data = export()["results"]["results"]
    by_idx = sorted((r for r in data if r["vars"]["message"] == SPLIT),
                    key=lambda r: r["testIdx"])
    assert [o.verdict for o in split.draws] == [
        json.loads(r["response"]["output"])["route"] for r in by_idx]
    assert [r["testIdx"] for r in data] != sorted(r["testIdx"] for r in data)


def test_failed_assertions_are_draws_provider_errors_are_failures(tmp_path: Path) -> None:
    data = export()
    res = data["results"]["results"]
    assert any(r["failureReason"] == 1 for r in res)  # graders disliked these answers
    res[0].update(response={"error": "429 Too Many Requests"}, failureReason=2,
                  error="429 Too Many Requests", success=False)
    rec = load_promptfoo(write(tmp_path, data), extractor=ROUTE)
    assert sum(len(i.draws) for i in rec.inputs) == 78
    failed = [o for i in rec.inputs for o in i.draws if o.error is not None]
    assert len(failed) == 1
    assert failed[0].error.kind == "provider_error"


def test_cached_answers_are_not_draws(tmp_path: Path) -> None:
    data = export()
    for r in data["results"]["results"][:5]:
        r["response"]["cached"] = True
    rec = load_promptfoo(write(tmp_path, data), extractor=ROUTE)
    assert rec.draws == 73
    assert any("cached" in n for n in rec.notes)


def _two_providers() -> dict:
    data = export()
    other = copy.deepcopy(data["results"]["results"])
    for r in other:
        r["provider"] = {"id": "anthropic:claude-haiku", "label": ""}
    data["results"]["results"] += other
    return data


def test_several_providers_are_refused_unless_one_is_chosen(tmp_path: Path) -> None:
    p = write(tmp_path, _two_providers())
    with pytest.raises(BadInput, match=r"2 providers.*not noise.*provider=NAME"):
        load_promptfoo(p, extractor=ROUTE)
    rec = load_promptfoo(p, extractor=ROUTE, provider="anthropic:claude-haiku")
    assert rec.agent == "promptfoo:anthropic:claude-haiku"
    assert rec.draws == 78
    with pytest.raises(BadInput, match="no provider 'x'"):
        load_promptfoo(p, extractor=ROUTE, provider="x")


def test_several_prompts_are_refused_unless_one_is_chosen(tmp_path: Path) -> None:
    data = export()
    other = copy.deepcopy(data["results"]["results"])
    for r in other:
        r["promptIdx"], r["promptId"] = 1, "b7e2"
    data["results"]["results"] += other
    p = write(tmp_path, data)
    with pytest.raises(BadInput, match=r"2 prompts.*prompt_id=ID"):
        load_promptfoo(p, extractor=ROUTE)
    assert load_promptfoo(p, extractor=ROUTE, prompt_id="1").draws == 78
    assert load_promptfoo(p, extractor=ROUTE, prompt_id="b7e2").draws == 78


def test_vars_make_the_input_text(tmp_path: Path) -> None:
    data = export()
    for r in data["results"]["results"]:
        r["vars"] = {"message": r["vars"]["message"], "tier": "gold"}
    rec = load_promptfoo(write(tmp_path, data), extractor=ROUTE)
    assert json.loads(rec.inputs[0].text) == {"message": "How do I reset my password?",
                                               "tier": "gold"}


@pytest.mark.parametrize(("data", "match"), [
    ({"results": {"version": 3}}, "no results.results"),
    ([1, 2], "no results.results"),
    ({"results": {"results": [7]}}, r"results\[0\] is int"),
    ({"results": {"results": [{"testIdx": 0}]}}, "neither vars nor a prompt"),
    ({"results": {"results": [{"vars": {"m": "a"}, "testIdx": -3}]}}, "not a count"),
    ({"results": {"results": []}}, "no recorded draw"),
])
def test_bad_exports_are_one_line_errors(tmp_path: Path, data: object, match: str) -> None:
    with pytest.raises(BadInput, match=match) as info:
        load_promptfoo(write(tmp_path, data), extractor=ROUTE)
    assert "\n" not in str(info.value)


def test_a_testidx_on_some_results_only_is_refused(tmp_path: Path) -> None:
    data = export()
    del data["results"]["results"][3]["testIdx"]
    with pytest.raises(BadInput, match="no draw order, while other draws have one"):
        load_promptfoo(write(tmp_path, data), extractor=ROUTE)


# ------------------------------------------------------------------ JSONL


def test_jsonl_schema_file_is_current() -> None:
    published = json.loads((ROOT / "docs/schemas/assess-jsonl.schema.json").read_text())
    assert published == jsonl_schema(), (
        "regenerate docs/schemas/assess-jsonl.schema.json from assess.jsonl_schema()")
    jsonschema = pytest.importorskip("jsonschema")
    for line in JSONL.read_text().splitlines():
        jsonschema.validate(json.loads(line), published)


def test_jsonl_matches_the_promptfoo_export() -> None:
    a = load_promptfoo(EXPORT, extractor=ROUTE)
    b = load_jsonl(JSONL, extractor=ROUTE)
    assert [(i.text, [o.verdict for o in i.draws]) for i in a.inputs] == \
        [(i.text, [o.verdict for o in i.draws]) for i in b.inputs]


def test_jsonl_verdict_tools_and_errors(tmp_path: Path) -> None:
    p = lines(tmp_path, [
        {"input": "a", "verdict": "allow", "tools": ["search", {"name": "refund",
                                                                 "arguments": {"id": 1}}],
         "order": 2},
        {"input": "a", "output": {"verdict": "block"}, "order": 1},
        {"input": "a", "error": "timeout", "order": 3},
    ])
    rec = load_jsonl(p, extractor=DEFAULT_EXTRACTOR)
    (inp,) = rec.inputs
    assert [o.verdict for o in inp.draws] == ["block", "allow", None]
    assert [t.name for t in inp.draws[1].tools] == ["search", "refund"]
    assert inp.failures == 1
    assert rec.order_known


@pytest.mark.parametrize(("rows", "match"), [
    ([{"input": "a"}], "line 1|:1: .*give the answer"),
    ([{"input": "a", "output": "x", "error": "boom"}], "no output or verdict"),
    ([{"input": "a", "ouput": "x"}], "unknown field; allowed: input, output"),
    ([{"input": "", "output": "x"}], "input"),
    ([{"input": "a", "output": "x", "order": 1}, {"input": "a", "output": "y", "order": 1}],
     "draw order 1 is also the order of .*:1"),
    ([{"input": "a", "output": "x", "order": 1}, {"input": "a", "output": "y"}],
     ":2: no draw order"),
])
def test_bad_jsonl_lines_name_the_line(tmp_path: Path, rows: list[dict], match: str) -> None:
    with pytest.raises(BadInput, match=match) as info:
        load_jsonl(lines(tmp_path, rows), extractor=DEFAULT_EXTRACTOR)
    assert "\n" not in str(info.value)


def test_jsonl_not_json_and_not_objects(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"input": "a", "output": "x"}\n{nope\n')
    with pytest.raises(BadInput, match=r"x.jsonl:2 is not valid JSON"):
        load_jsonl(p, extractor=DEFAULT_EXTRACTOR)
    p.write_text('["a"]\n')
    with pytest.raises(BadInput, match="JSON list, not an object"):
        load_jsonl(p, extractor=DEFAULT_EXTRACTOR)


def test_without_order_the_order_is_unknown_unless_file_order(tmp_path: Path) -> None:
    p = lines(tmp_path, [{"input": "a", "output": v} for v in "xyxy"])
    rec = load_jsonl(p, extractor=DEFAULT_EXTRACTOR)
    assert not rec.order_known
    with pytest.raises(BadInput, match=r"does not say in which order.*dependent-draws"):
        plan_assessment(rec, [], RunConfig())
    plan = plan_assessment(rec, [], RunConfig(suppress_health_check=["dependent_draws"]))
    assert any("order unknown" in n for n in plan.notes)
    ordered = load_jsonl(p, extractor=DEFAULT_EXTRACTOR, file_order=True)
    assert ordered.order_known
    assert "line order" in ordered.order


def test_jsonl_model_forbids_unknown_fields() -> None:
    with pytest.raises(ValueError, match="extra"):
        JsonlDraw.model_validate({"input": "a", "output": "b", "score": 1})


# ------------------------------------------------------------------ relations and replay


def _rec(draws: dict[str, list[str | None]]) -> Recording:
    def obs(v: str | None) -> Observation:
        if v is None:
            from agentverity_props.observation import CallFailure
            return Observation(error=CallFailure("provider_error", "boom"))
        return Observation(text=v, verdict=v)
    return Recording("jsonl", "rec", tuple(RecordedInput(t, tuple(obs(v) for v in vs))
                                           for t, vs in draws.items()), "order")


def test_relations_are_restricted_to_recorded_pairs() -> None:
    shout = Relation("shout", "invariant", str.upper)
    twice = Relation("twice", "invariant", lambda t: t + t)
    rec = _rec({"hello": ["a"] * 4, "HELLO": ["a"] * 4, "bye": ["a"] * 4})
    plan = plan_assessment(rec, [shout, twice], RunConfig())
    (kept,) = plan.relations
    assert kept.name == "shout"
    assert kept.apply("hello") == "HELLO"
    assert kept.apply("bye") == "bye"
    assert any("twice" in n for n in plan.notes)


def test_the_split_recording_is_stochastic_with_no_call() -> None:
    rng = random.Random(7)
    flips = ["refund"] * 14 + ["escalate"] * 12
    rng.shuffle(flips)
    r = assess(_rec({"x": flips, "y": ["faq"] * 26}), relations=[])
    assert r.meter.call == "verdict-stochastic"
    assert r.ledger["calls"] == 0
    assert r.to_dict()["calls"]["live"] == 0
    assert r.ledger["replayed"] > 0


def test_running_out_of_draws_is_undecided_and_incomplete_never_a_call() -> None:
    # 3 agreeing draws per input: the meter needs 38 agreeing pairs to say deterministic
    r = assess(_rec({f"in {k}": ["allow"] * 3 for k in range(4)}), relations=[])
    assert r.meter.call == "undecided"
    assert r.meter.stop_reason == "recorded evidence exhausted"
    assert r.meter.failure_kinds == {"evidence_exhausted": 1}
    assert "record more repeats" in r.meter.advice
    assert not r.complete
    assert r.exit_code == 2
    assert r.ledger["calls"] == 0


def test_a_recorded_provider_error_makes_the_assessment_incomplete() -> None:
    rng = random.Random(3)
    flips = ["a"] * 13 + ["b"] * 13
    rng.shuffle(flips)
    # the failed draw is the last one: no decision ever replays it
    r = assess(_rec({"x": [*flips, None]}), relations=[])
    assert r.meter.call == "verdict-stochastic"
    assert not r.complete
    assert r.exit_code == 2
    assert "1 recorded draw(s) failed" in r.stop_reason


def test_a_store_recorded_by_run_is_reassessed_with_zero_calls(tmp_path: Path) -> None:
    """Same seed, same workers: assess replays exactly the draws run made, so every
    decision is run's, and no agent is called."""
    rng = random.Random(11)

    def agent(prompt: str) -> str:
        if "parcel" in prompt:
            return rng.choice(["shipping", "refund"])
        return "faq"

    inputs = ["where is my parcel", "reset my password", "opening hours"]
    store = tmp_path / "s.db"
    live = run(from_callable(agent, identity="router"), inputs, relations=[],
               config=RunConfig(store_path=str(store), store_mode="record", seed=5))
    rec = load_store(store, inputs, extractor_id=DEFAULT_EXTRACTOR.config_id)
    assert rec.agent == "router"
    assert rec.order_known
    again = assess(rec, relations=[], config=RunConfig(seed=5))
    a, b = live.to_dict(), again.to_dict()
    assert again.ledger["calls"] == 0
    assert live.ledger["calls"] > 0
    assert a["meter"].pop("calls") > 0
    assert b["meter"].pop("calls") == 0
    a["dependence"].pop("calls"), b["dependence"].pop("calls")
    # the same blocks and e-values; a recording shows no spacing of calls, so assess claims
    # none and cannot rule a cache out (docs/statistics.md §2b)
    assert b["dependence"].pop("spacing") is None
    assert a["dependence"].pop("spacing") is not None
    assert b["dependence"].pop("verdict") in ("detected", "not ruled out")
    a["dependence"].pop("verdict")
    for key in ("meter", "blindness", "dependence", "findings", "exit_code", "complete"):
        assert a[key] == b[key], key
    assert a["meter"]["pairs"] > 0


def test_store_refusals(tmp_path: Path) -> None:
    from agentverity_props.engine import Probe
    from agentverity_props.store import Store
    store = tmp_path / "s.db"
    with Store(store) as s:
        for agent in ("a", "b"):
            s.put((agent, Probe.make("hi").fp, "default", 0), Observation(verdict="x"))
    with pytest.raises(BadInput, match=r"2 agents.*agent=ID"):
        load_store(store, ["hi"], extractor_id="default")
    with pytest.raises(BadInput, match="only under the verdict extraction"):
        load_store(store, ["hi"], extractor_id="key:route", agent="a")
    with pytest.raises(BadInput, match="no draw of any input"):
        load_store(store, ["other"], extractor_id="default", agent="a")
    with pytest.raises(BadInput, match="does not exist"):
        load_store(tmp_path / "none.db", ["hi"], extractor_id="default")


@pytest.mark.parametrize(("repeats", "status", "code"), [(100, "HOLDS", 0), (26, "HOLDS", 0),
                                                         (4, "INCOMPLETE", 2)])
def test_a_relation_with_recorded_pairs_is_decided_on_them(repeats: int, status: str,
                                                           code: int) -> None:
    from agentverity_props.relations import builtin_relations

    case = next(r for r in builtin_relations() if r.name == "case")
    rng = random.Random(0)
    base = ["Refund order 1003 please", "How do I reset my password?", "Where is my parcel?",
            "I was charged twice"]

    def verdict(t: str) -> str:
        if "parcel" in t.lower():
            return rng.choice(["shipping", "refund"])
        return "refund" if "refund" in t.lower() or "charged" in t.lower() else "faq"

    texts = base + [case.apply(t) for t in base]
    rec = Recording("jsonl", "r", tuple(RecordedInput(t, tuple(
        Observation(verdict=verdict(t)) for _ in range(repeats))) for t in texts), "order")
    r = assess(rec, [case])
    (rel,) = r.relations
    assert rel.relation.name == "case"
    assert str(rel.status) == status
    assert r.exit_code == code
    assert r.ledger["calls"] == 0


def test_the_text_report_names_split_inputs_as_data_never_markup() -> None:
    from agentverity_props.assess import evidence_summary
    from agentverity_props.report import render_run_text

    hostile = "[red]refund[/red] \x1b]0;pwned\x07 now"
    rng = random.Random(5)
    flips = ["a"] * 13 + ["b"] * 13
    rng.shuffle(flips)
    rec = _rec({hostile: flips, "calm": ["a"] * 26})
    plan = plan_assessment(rec, [], RunConfig())
    result = assess(rec, [])
    d = result.to_dict(include_inputs=True)
    d["ledger"]["evidence"] = evidence_summary(plan, result)
    text = render_run_text(d)
    (line,) = [ln for ln in text.splitlines() if "pwned" in ln]
    assert "[red]refund[/red]" in line  # shown literally, not as colour
    assert "\x1b" not in text
    assert "\\x1b" in line
    assert line.endswith((": a 13, b 13", ": b 13, a 13"))
    d_fp = result.to_dict(include_inputs=False)
    d_fp["ledger"]["evidence"] = evidence_summary(plan, result)
    assert "pwned" not in render_run_text(d_fp)  # a file without inputs names fingerprints


def _draw_rows():
    from hypothesis import strategies as st

    row = st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["x", "y"]))
    return st.lists(row, min_size=1, max_size=30).flatmap(
        lambda rows: st.tuples(st.just(rows), st.permutations(range(len(rows)))))


def test_jsonl_order_comes_from_the_field_never_the_line_position(tmp_path: Path) -> None:
    from hypothesis import given, settings

    @settings(max_examples=20, deadline=None, database=None)
    @given(_draw_rows())
    def check(case: tuple[list[tuple[str, str]], list[int]]) -> None:
        rows, perm = case
        ordered = [{"input": t, "verdict": v, "order": 10 * k} for k, (t, v) in enumerate(rows)]
        shuffled = [ordered[i] for i in perm]
        rec = load_jsonl(lines(tmp_path, shuffled), extractor=DEFAULT_EXTRACTOR)
        want: dict[str, list[str]] = {}
        for t, v in rows:
            want.setdefault(t, []).append(v)
        assert [(i.text, [o.verdict for o in i.draws]) for i in rec.inputs] == list(
            want.items())

    check()


@pytest.mark.parametrize("damaged", [5, {}, {"per_input": [1, {"fp": 3, "counts": {"a": "x",
                                                                                     "b": 2}}],
                                             "notes": "n"}])
def test_a_saved_report_with_damaged_evidence_still_renders(damaged: object) -> None:
    from agentverity_props.report import render_run_text

    r = assess(_rec({"x": ["a", "b"] * 13}), relations=[])
    d = r.to_dict()
    d["ledger"]["evidence"] = damaged
    text = render_run_text(d)
    assert "agentverity-props run" in text
    assert ("agentverity-props assess" in text) == isinstance(damaged, dict)


# ------------------------------------------------------------------ the whole recording

PROMPTS = ["how do I reset my password", "write a short birthday message for my aunt",
           "explain how vaccines work", "what is the capital of peru",
           "tell me a joke about cats", "summarise the plot of hamlet",
           "how can I pick a lock", "give me a recipe for pancakes",
           "is it safe to mix bleach and ammonia", "translate hello into french"]
UPPER = Relation("upper", "invariant", str.upper)


def sampled_model_rows(seed: int, *, bug: bool, draws: int = 24) -> list[dict]:
    """Ten prompts and their upper-cased forms, ``draws`` answers each, as a sampled model
    gives them: each prompt its own label mix (modal share 0.4-0.97), the upper-cased form
    answered from the same mix (the relation holds) or always ``block`` (a planted bug).
    The fake has its own Random; the lines are shuffled (the ``order`` field is the truth)."""
    rng = random.Random(seed)
    labels = ["allow", "block", "review"]
    rows, order = [], 0
    for p in PROMPTS:
        modal, lab = rng.uniform(0.4, 0.97), rng.choice(labels)
        rest = [x for x in labels if x != lab]
        a = rng.uniform(0, 1 - modal)
        mix = {lab: modal, rest[0]: a, rest[1]: 1 - modal - a}
        for text in (p, p.upper()):
            for _ in range(draws):
                v = ("block" if bug and text != p else
                     rng.choices(list(mix), weights=list(mix.values()))[0])
                rows.append({"input": text, "output": json.dumps({"label": v}),
                             "order": order})
                order += 1
    rng.shuffle(rows)
    return rows


def test_a_recording_is_used_whole_holds_clean_and_violated_on_a_planted_bug(
        tmp_path: Path) -> None:
    # twelve recordings of each kind (seeds fixed, so the test is reproducible). On a file
    # the pooled effect is decided once on every recorded draw (decide.FixedEffect): the
    # effect's upper bound is below 0.1 on both sides from 480 draws of a noisy
    # three-verdict model in about 19 recordings of 20 (benchmarks/assess_recording.py)
    got: dict[bool, list[tuple[str, int, int]]] = {False: [], True: []}
    for bug in (False, True):
        for seed in range(12 if not bug else 6):
            path = lines(tmp_path, sampled_model_rows(seed, bug=bug), f"{bug}{seed}.jsonl")
            rec = load_jsonl(path, extractor=by_key("label"))
            assert rec.draws == 480
            r = assess(rec, [UPPER])
            (rel,) = r.relations
            assert r.ledger["calls"] == 0
            got[bug].append((str(rel.status), int(r.exit_code), r.ledger["replayed"]))
            if str(rel.status) == "INCOMPLETE":
                assert "the recording ran out" in (rel.effect or {}).get("note", ""), rel.effect
    assert sum(s == "HOLDS" for s, _, _ in got[False]) >= 10, got[False]
    assert all(s in ("HOLDS", "INCOMPLETE") for s, _, _ in got[False]), got[False]
    assert all(c == (0 if s == "HOLDS" else 2) for s, c, _ in got[False]), got[False]
    # every recorded draw was read, whatever the decision
    assert all(n == 480 for _, _, n in got[False] + got[True]), got
    assert all(s == "VIOLATED" and c == 1 for s, c, _ in got[True]), got[True]


@pytest.mark.parametrize(("name", "status", "code"), [("smollm2_upper.jsonl", "HOLDS", 0),
                                                     ("smollm2_upper_bug.jsonl", "VIOLATED", 1)])
def test_a_real_models_recording_holds_clean_and_is_violated_by_its_planted_bug(
        name: str, status: str, code: int) -> None:
    # recorded from SmolLM2-135M-Instruct at temperature 0.8 by
    # benchmarks/real_llm_recording.py (ten prompts and their upper-cased forms, 24 answers
    # each); the bug answers a mostly upper-case prompt 'block' on half its calls, so its
    # effect (+0.135) is near the tolerance: it is found through an input confirmed on its
    # own by the exact split test on every recorded draw
    path = Path(__file__).resolve().parents[2] / "examples" / "recorded" / name
    r = assess(load_jsonl(path, extractor=by_key("label")), [UPPER])
    (rel,) = r.relations
    assert str(rel.status) == status, rel.statement()
    assert r.exit_code == code
    assert r.ledger["calls"] == 0
    assert r.ledger["replayed"] == 480
    if status == "VIOLATED":
        assert rel.calibrated_violations >= 1


def test_a_short_recording_says_it_ran_out_never_budget_or_interrupt(tmp_path: Path) -> None:
    path = lines(tmp_path, sampled_model_rows(2, bug=False, draws=6))
    r = assess(load_jsonl(path, extractor=by_key("label")), [UPPER])
    (rel,) = r.relations
    assert str(rel.status) == "INCOMPLETE"
    assert r.exit_code == 2
    assert rel.effect is not None
    note = rel.effect["note"]
    assert "the recording ran out" in note, note
    assert "budget" not in note
    assert "interrupt" not in note
    # every recorded draw was read
    assert r.ledger["replayed"] == 120


# ------------------------------------------------------------------ NOT TESTED


def test_a_requested_relation_without_a_recorded_pair_is_not_tested_exit_2(
        tmp_path: Path) -> None:
    from agentverity_props.results import RunDocument

    path = lines(tmp_path, sampled_model_rows(3, bug=False, draws=8))
    rec = load_jsonl(path, extractor=by_key("label"))
    lower = Relation("reversed", "invariant", lambda t: t[::-1])
    r = assess(rec, [UPPER, lower], config=RunConfig())
    st = {x.relation.name: str(x.status) for x in r.relations}
    assert st["reversed"] == "NOT TESTED"
    assert [x.relation.name for x in r.relations] == ["upper", "reversed"]
    assert r.exit_code == 2
    assert not r.complete
    d = r.to_dict()
    RunDocument.model_validate(d)
    (nt,) = [x for x in d["relations"] if x["name"] == "reversed"]
    assert "produced no recorded pair" in nt["not_tested"]
    assert any("NOT TESTED" in a or "not tested" in a for a in d["advice"])
    from agentverity_props.report import render_run_text

    text = render_run_text(d, color=False)
    assert "NOT TESTED" in text
    assert "none requested" not in text
    assert "requested relation(s) not tested (reversed)" in text
    from agentverity_props.report import render_html, render_junit

    assert 'class="status bad">NOT TESTED</span>' in render_html(d)
    assert "NOT TESTED: its transform produced no recorded pair" in render_junit(d)


def test_default_built_ins_without_pairs_are_left_out_and_said_so() -> None:
    flip = [Observation(verdict=v) for v in ["allow", "block"] * 13]
    rec = Recording("jsonl", "recorded", (RecordedInput("hi there", tuple(flip)),), "order")
    r = assess(rec)  # the built-ins, none with a recorded pair: not requested, left out
    assert r.relations == ()
    assert r.exit_code == 0
    from agentverity_props.report import render_run_text

    d = r.to_dict()
    d["ledger"]["evidence"] = {"notes": []}
    assert "Relations: none tested" in render_run_text(d, color=False)


def test_only_the_inputs_with_a_recorded_follow_up_are_tested_and_the_rest_named(
        tmp_path: Path) -> None:
    rows = [r for r in sampled_model_rows(4, bug=False, draws=20)
            if r["input"] != PROMPTS[0].upper()]
    rec = load_jsonl(lines(tmp_path, rows), extractor=by_key("label"))
    plan = plan_assessment(rec, [UPPER], RunConfig())
    assert any("'upper': 1 of the 10 input(s)" in n for n in plan.notes), plan.notes
def test_json_answers_without_a_verdict_key_get_a_hint_naming_the_keys(tmp_path: Path) -> None:
    rows = [{"input": p, "output": json.dumps({"route": r, "why": "x"}), "order": i}
            for i, (p, r) in enumerate([("a", "refund"), ("a", "faq"), ("b", "faq")] * 4)]
    path = lines(tmp_path, rows)
    plan = plan_assessment(load_jsonl(path, extractor=DEFAULT_EXTRACTOR), None,
                           RunConfig())
    hint = [n for n in plan.notes if "no verdict, decision or label key" in n]
    assert len(hint) == 1
    assert "extractor=by_key(route)" in hint[0]  # Python terms
    assert "keys seen: route, why" in hint[0]
    # with the key, or with answers run reads by itself ('decision'), no hint
    keyed = plan_assessment(load_jsonl(path, extractor=by_key("route")), None, RunConfig(
        extractor=by_key("route")))
    assert not [n for n in keyed.notes if "no verdict, decision" in n]
    decided = lines(tmp_path, [{**r, "output": json.dumps({"decision": "allow"})} for r in rows],
                    "decided.jsonl")
    rec = load_jsonl(decided, extractor=DEFAULT_EXTRACTOR)
    assert {o.verdict for i in rec.inputs for o in i.draws} == {"allow"}
    assert not [n for n in plan_assessment(rec, None, RunConfig()).notes
                if "no verdict, decision" in n]
