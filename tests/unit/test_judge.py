"""Judges for free-text agents (docs/judges.md): labels, the judged agent's draws, the store,
the noise arithmetic, calibration, the grader relations, the run's hooks."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path

import pytest

from agentverity_props import run
from agentverity_props.engine import EngineConfig, Probe, run_sync
from agentverity_props.errors import BadInput, InvalidArgument
from agentverity_props.examples.judged_qa import (
    PARAPHRASE,
    make_judge,
    make_qa_agent,
    qa_inputs,
)
from agentverity_props.judge import (
    Judge,
    JudgedAgent,
    calibrate,
    judge_probes,
    judge_relations,
    judge_under_test,
)
from agentverity_props.judge._judge import compose, label_extractor
from agentverity_props.judge._noise import (
    consensus_error,
    error_rate_of,
    judge_noise,
    lead_for,
)
from agentverity_props.judge._relations import swap_answers
from agentverity_props.observation import Observation
from agentverity_props.runner import RunConfig

LABELS = ("correct", "incorrect")


# -- labels and prompts ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "want"), [
    ("correct", "correct"), ("Correct.", "correct"), ("  INCORRECT  ", "incorrect"),
    ("Reasoning...\nVERDICT: incorrect", "incorrect"),
    ("The answer is correct because it names Paris.", "correct"),
])
def test_the_label_is_read_from_the_judges_answer(text: str, want: str) -> None:
    assert label_extractor(LABELS).apply(Observation(text=text)).verdict == want


@pytest.mark.parametrize("text", ["maybe", "partly correct, partly incorrect", ""])
def test_an_answer_outside_the_labels_is_a_no_decision_never_a_verdict(text: str) -> None:
    obs = label_extractor(LABELS).apply(Observation(text=text))
    assert obs.verdict is None
    assert obs.no_decision is not None
    assert not obs.decided


def test_a_dict_answer_gives_its_label_and_an_unknown_one_is_no_decision() -> None:
    ext = label_extractor(LABELS)
    assert ext.apply(Observation(raw={"label": "Correct"})).verdict == "correct"
    assert ext.apply(Observation(raw={"verdict": "great"})).no_decision is not None


def test_compose_fills_every_field_in_one_pass() -> None:
    out = compose("{prompt}|{answer}|{labels}|{reference}", prompt="q {answer}",
                  answer="{reference}", labels=LABELS, reference="R")
    assert out == "q {answer}|{reference}|correct, incorrect|<reference>\nR\n</reference>\n"


@pytest.mark.parametrize("kwargs", [
    {"labels": "correct"}, {"labels": ","}, {"margin": 0}, {"max_calls": 2},
    {"min_agreement": 1.5}, {"on_low_agreement": "ignore"}, {"template": "no answer here"},
    {"consensus_error": 0.0}, {"references": 3},
])
def test_a_bad_judge_setting_is_refused_eagerly(kwargs: dict) -> None:
    with pytest.raises(InvalidArgument):
        Judge(lambda p: "correct", **kwargs)


def test_references_match_a_follow_up_containing_the_source() -> None:
    j = Judge(lambda p: "x", references={"What is the capital of France?": "Paris"})
    assert j.reference("What is the capital of France?") == "Paris"
    assert j.reference("Quick question: what is the capital of France?") == "Paris"
    assert j.reference("Something else") is None


# -- the judged agent -----------------------------------------------------------------------


def _counted(fn):
    n = [0]
    lock = threading.Lock()

    def wrapped(prompt: str):
        with lock:
            n[0] += 1
        return fn(prompt)

    wrapped.__qualname__ = getattr(fn, "__qualname__", "fn")
    return wrapped, n


def test_one_draw_is_one_answer_and_the_judges_consensus_on_it() -> None:
    agent, n_agent = _counted(lambda p: "It is Paris.")
    judge, n_judge = _counted(lambda p: "correct")
    with JudgedAgent(agent, Judge(judge, labels=LABELS, margin=2)) as ja:
        obs = ja.invoke("What is the capital of France?")
        again = ja.invoke("What is the capital of France?")
    assert obs.verdict == again.verdict == "correct"
    assert obs.text == "It is Paris."
    assert n_agent[0] == 2  # a fresh answer per draw
    assert n_judge[0] == 2  # the identical answer is judged once (two calls: margin 2)


def test_a_judge_answering_outside_its_labels_gives_no_decision() -> None:
    with JudgedAgent(lambda p: "Paris", Judge(lambda p: "dunno", labels=LABELS)) as ja:
        obs = ja.invoke("q?")
    assert obs.verdict is None
    assert obs.no_decision is not None
    assert "none of the labels" in obs.no_decision.reason


def test_a_split_judge_gives_no_decision_not_a_coin_flip() -> None:
    votes = iter(["correct", "incorrect"] * 10)
    lock = threading.Lock()

    def judge(p: str) -> str:
        with lock:
            return next(votes)

    with JudgedAgent(lambda p: "Paris", Judge(judge, labels=LABELS, margin=3,
                                              max_calls=4)) as ja:
        obs = ja.invoke("q?")
    assert obs.verdict is None
    assert "split evenly" in obs.no_decision.reason


def test_the_judge_sees_the_prompt_the_answer_and_the_reference() -> None:
    seen: list[str] = []
    judge = Judge(lambda p: seen.append(p) or "correct", labels=LABELS, margin=1,
                  references={"q?": "Paris"})
    with JudgedAgent(lambda p: "It is Paris.", judge) as ja:
        ja.invoke("q?")
    assert "<question>\nq?\n</question>" in seen[0]
    assert "<answer>\nIt is Paris.\n</answer>" in seen[0]
    assert "<reference>\nParis\n</reference>" in seen[0]
    assert "correct, incorrect" in seen[0]


def test_answers_are_recorded_once_and_regraded_without_calling_the_agent(tmp_path: Path
                                                                           ) -> None:
    store = tmp_path / "s.db"
    cfg = EngineConfig(store_path=store, store_mode="auto", max_workers=2)
    agent, n_agent = _counted(make_qa_agent(1))
    first, n_first = _counted(make_judge(1, error=0.0))
    texts = qa_inputs(5)

    async def draws(ja: JudgedAgent) -> list[Observation]:
        return [await ja.ainvoke(t) for t in texts for _ in range(3)]

    with JudgedAgent(agent, Judge(first, labels=LABELS), cfg) as ja:
        before = run_sync(draws(ja))
        assert ja.agent_calls == 15
        assert n_agent[0] == 15
        fps = [rec.prompt_fp for rec in ja.records]
    assert all(fp.startswith(("sha256:", "hmac")) for fp in fps)
    # another judge on the same store: the agent's recorded answers, slot by slot
    second, n_second = _counted(make_judge(2, error=0.0))
    second.__qualname__ = "second_judge"
    with JudgedAgent(agent, Judge(second, labels=LABELS), cfg) as ja2:
        after = run_sync(draws(ja2))
        assert ja2.agent_calls == 0
        assert ja2.agent_engine.ledger.replayed == 15
    assert n_agent[0] == 15
    assert n_second[0] > 0
    assert [o.text for o in after] == [o.text for o in before]
    # the same judge again: every judge call replayed too
    with JudgedAgent(agent, Judge(first, labels=LABELS), cfg) as ja3:
        run_sync(draws(ja3))
        assert ja3.agent_calls == 0
        assert ja3.judge_calls == 0
    assert n_first[0] > 0


def test_judge_probes_live_in_their_own_namespace() -> None:
    with JudgedAgent(lambda p: "a", Judge(lambda p: "correct", labels=LABELS)) as ja:
        probe = ja.judge_probe("q?", "a", None)
    assert probe.fp.startswith("judge:")
    assert probe.fp != Probe.make(probe.text).fp
    assert probe.fp.removeprefix("judge:") == Probe.make(probe.text).fp


# -- the noise arithmetic -------------------------------------------------------------------


@pytest.mark.parametrize("labels", [2, 3, 5])
@pytest.mark.parametrize("e", [0.0, 0.05, 0.15, 0.3])
def test_error_rate_inverts_the_pair_disagreement(e: float, labels: int) -> None:
    d = 1 - (1 - e) ** 2 - e ** 2 / (labels - 1)
    assert error_rate_of(d, labels) == pytest.approx(e, abs=1e-9)


def test_the_consensus_lead_meets_its_target() -> None:
    for e in (0.01, 0.1, 0.2, 0.3):
        m = lead_for(e, 1e-4)
        assert consensus_error(e, m) <= 1e-4 < consensus_error(e, m - 1) or m == 1


def test_noise_reads_pairs_among_each_answers_labels() -> None:
    noise = judge_noise([["a", "a", "b"], ["a", "a"], ["b"]], labels=None)
    assert noise.answers == 2
    assert noise.pairs == 4
    assert noise.disagreement == pytest.approx((2 / 3 + 0) / 2)
    assert noise.interval[0] <= noise.disagreement <= noise.interval[1]
    empty = judge_noise([], labels=None)
    assert not empty.measured
    assert "not measured" in empty.statement(0.1)


# -- calibration ----------------------------------------------------------------------------


def _gold(tmp_path: Path, wrong: int, n: int = 20) -> Path:
    rows = []
    for i, q in enumerate(qa_inputs(n)):
        country = q.removeprefix("What is the capital of ").rstrip("?")
        good = i % 2 == 0
        from agentverity_props.examples.judged_qa import CAPITALS
        city = CAPITALS[country] if good else "Atlantis"
        label = "correct" if good else "incorrect"
        if i < wrong:  # gold labels the judge will disagree with
            label = "incorrect" if good else "correct"
        rows.append({"prompt": q, "answer": f"It is {city}.", "label": label})
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_calibration_gives_agreement_interval_and_confusion(tmp_path: Path) -> None:
    cal = calibrate(Judge(make_judge(0, error=0.0), labels=LABELS), _gold(tmp_path, 2))
    assert (cal.rows, cal.agreed) == (20, 18)
    assert cal.agreement == 0.9
    lo, hi = cal.interval
    assert lo < 0.9 < hi
    assert lo == pytest.approx(0.683, abs=0.001)
    assert cal.confusion == {"incorrect": {"correct": 1, "incorrect": 9},
                             "correct": {"correct": 9, "incorrect": 1}}
    assert cal.passed
    assert cal.to_dict()["basis"] == "point estimate"


def test_a_csv_gold_file_reads_like_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "gold.csv"
    path.write_text("prompt,answer,label\nWhat is the capital of Peru?,Lima,correct\n"
                    "What is the capital of Chile?,Lima,incorrect\n", encoding="utf-8")
    cal = calibrate(Judge(make_judge(0, error=0.0), labels=LABELS), path)
    assert (cal.rows, cal.agreed) == (2, 2)


@pytest.mark.parametrize(("content", "message"), [
    ('{"prompt": "q", "answer": "a"}\n', "no label"), ("not json\n", "not valid JSON"),
    ("", "no rows"),
])
def test_a_bad_gold_file_is_one_line_bad_input(tmp_path: Path, content: str,
                                                message: str) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInput, match=message):
        calibrate(Judge(lambda p: "correct", labels=LABELS), path)


def test_a_run_refuses_a_judge_below_its_agreement(tmp_path: Path) -> None:
    judge = Judge(make_judge(0, error=0.0), labels=LABELS, gold=_gold(tmp_path, 8))
    agent, n_agent = _counted(make_qa_agent(0))
    with pytest.raises(BadInput, match=r"below the required 0\.8, the run refuses"):
        run(agent, qa_inputs(3), [], config=RunConfig(judge=judge))
    assert n_agent[0] == 0  # refused before the agent's first call


def test_a_run_warned_about_its_judge_goes_on_and_says_so(tmp_path: Path) -> None:
    judge = Judge(make_judge(0, error=0.0), labels=LABELS, gold=_gold(tmp_path, 8),
                  on_low_agreement="warn")
    res = run(make_qa_agent(0), qa_inputs(3), [], config=RunConfig(judge=judge))
    cal = res.to_dict()["judge"]["calibration"]
    assert not cal["passed"]
    assert cal["action"] == "warn"
    assert "goes on" in cal["statement"]
    assert any("goes on" in line for line in res.advice)


# -- the run's hooks ------------------------------------------------------------------------


def test_a_judged_run_reports_both_noises_and_the_judges_calls() -> None:
    res = run(make_qa_agent(3, paraphrase_bug=True), qa_inputs(4), [PARAPHRASE],
              config=RunConfig(seed=3, judge=make_judge(3, error=0.1),
                               judge_labels="correct,incorrect"))
    d = res.to_dict()
    j = d["judge"]
    assert j["labels"] == list(LABELS)
    assert j["noise"]["answers"] > 0
    assert j["dominant"] == "judge"
    assert "dominates" in j["statement"]
    assert d["calls"]["judge"] == j["calls"]["judge"] > 0
    assert j["calls"]["agent"] == d["calls"]["total"]
    assert "judge's consensus" in d["guarantee"]
    from agentverity_props.results import RunDocument
    RunDocument.model_validate(json.loads(json.dumps(d)))  # the published format
    assert "Judge " in res.summary()
    assert res.relations[0].status == "VIOLATED"


def test_judge_labels_without_a_judge_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="needs judge="):
        RunConfig(judge_labels="a,b")


def test_plan_prices_the_judge_in_its_own_row() -> None:
    from agentverity_props import plan
    p = plan(qa_inputs(3), [], config=RunConfig(judge=Judge(lambda p: "correct",
                                                            labels=LABELS)), seeds=1,
             default_noises=False, noises=[0.0], judge_error=0.1)
    level = p.to_dict()["levels"][0]
    assert level["judge"]["per_answer"] > 3
    assert level["judge"]["calls"]["mean"] == pytest.approx(
        level["calls"]["total"]["mean"] * level["judge"]["per_answer"])
    from agentverity_props.report import render
    assert "judge (own calls)" in render(p.to_dict(), "text")


# -- the judge tested like an agent ---------------------------------------------------------


def test_swapping_answers_swaps_the_tagged_sections_only() -> None:
    j = Judge.pairwise(lambda p: "A")
    [probe] = judge_probes(j, [("q?", "first", "second")])
    swapped = swap_answers(probe)
    assert "<answer_a>\nsecond\n</answer_a>" in swapped
    assert "<answer_b>\nfirst\n</answer_b>" in swapped
    assert swap_answers(swapped) == probe
    assert swap_answers("no tags") == "no tags"


def test_grader_relations_edit_the_answer_not_the_question() -> None:
    [probe] = judge_probes(Judge(lambda p: "x", labels=LABELS), [("Why so?", "It is Paris.")])
    rels = {r.name: r for r in judge_relations()}
    case = rels["judge-case"].apply(probe)
    assert "<question>\nWhy so?\n</question>" in case
    assert "IT IS PARIS." in case
    assert rels["judge-padding"].apply(probe).count("It is Paris. To restate") == 1
    assert rels["judge-order"].apply(probe) == probe  # not pairwise: unchanged (skipped)
    order = rels["judge-order"]
    assert order.holds("A", "B")
    assert order.holds("tie", "tie")
    assert not order.holds("A", "A")
    with pytest.raises(InvalidArgument):
        judge_relations("judge-mood")


def test_judge_probes_check_their_items() -> None:
    with pytest.raises(InvalidArgument, match="fields"):
        judge_probes(Judge.pairwise(lambda p: "A"), [("q", "only one")])
    with pytest.raises(InvalidArgument, match="tuple"):
        judge_probes(Judge(lambda p: "A"), ["a string"])


def test_the_judge_under_test_gives_labels_or_no_decisions() -> None:
    adapter = judge_under_test(lambda p: "correct" if "Paris" in p else "hmm", "correct,wrong")
    assert adapter.invoke("Paris").verdict == "correct"
    from agentverity_props.observation import DEFAULT_EXTRACTOR
    assert DEFAULT_EXTRACTOR.apply(adapter.invoke("Rome")).no_decision is not None


def test_an_order_biased_judge_breaks_the_order_relation() -> None:
    from agentverity_props.examples.judged_qa import CAPITALS
    items = []
    for i, (country, city) in enumerate(list(CAPITALS.items())[:12]):
        wrong = "Atlantis"
        pair = (city, wrong) if i % 2 else (wrong, city)
        items.append((f"What is the capital of {country}?", f"It is {pair[0]}.",
                      f"It is {pair[1]}."))
    judge = Judge.pairwise(make_judge(7, error=0.0, order_bias=0.5))
    res = run(judge_under_test(judge), judge_probes(judge, items),
              judge_relations("judge-order"), config=RunConfig(seed=7))
    assert res.relations[0].status == "VIOLATED"


# -- the CLI --------------------------------------------------------------------------------


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    from agentverity_props.cli import main
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_cli_judge_options_need_a_judge(tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("What is the capital of Peru?\n", encoding="utf-8")
    code, out = _cli(capsys, "run", "--agent", "agentverity_props.examples.judged_qa:qa_agent",
                     "--inputs", str(inputs), "--judge-labels", "a,b")
    assert code == 2
    assert "--judge-labels given without --judge" in out


def test_cli_refuses_a_judge_below_its_gold_agreement_in_one_line(tmp_path: Path,
                                                                  capsys) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("What is the capital of Peru?\n", encoding="utf-8")
    code, out = _cli(capsys, "run", "--agent", "agentverity_props.examples.judged_qa:qa_agent",
                     "--inputs", str(inputs), "--no-relations",
                     "--judge", "agentverity_props.examples.judged_qa:noisy_judge",
                     "--judge-labels", "correct,incorrect",
                     "--judge-gold", str(_gold(tmp_path, 10)))
    assert code == 2
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert len(lines) == 1, out
    assert "--judge-min-agreement" in lines[0]


def test_cli_run_with_a_judge_writes_the_judge_section(tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("What is the capital of Peru?\nWhat is the capital of Chile?\n",
                      encoding="utf-8")
    code, out = _cli(capsys, "run", "--agent", "agentverity_props.examples.judged_qa:qa_agent",
                     "--inputs", str(inputs), "--no-relations", "--format", "json",
                     "--judge", "agentverity_props.examples.judged_qa:noisy_judge",
                     "--judge-labels", "correct,incorrect")
    d = json.loads(out[out.index("{"):])
    assert d["judge"]["labels"] == list(LABELS)
    assert d["calls"]["judge"] > 0
    assert code in (0, 1, 2)


# -- bench ------------------------------------------------------------------------------------


def test_a_benchmark_task_graded_by_a_judge(tmp_path: Path) -> None:
    from agentverity_props.bench import load_benchmark, run_benchmark
    path = tmp_path / "b.yaml"
    path.write_text(
        'version: "1"\nname: judged\nruns: 4\ntasks:\n  - id: peru\n'
        "    prompt: What is the capital of Peru?\n    evaluation:\n      type: judge\n"
        "      judge: agentverity_props.examples.judged_qa:noisy_judge\n"
        "      labels: [correct, incorrect]\n      passing: [correct]\n", encoding="utf-8")
    bench = load_benchmark(path)
    good = run_benchmark(make_qa_agent(1), bench).to_dict()
    bad = run_benchmark(lambda p: "It is Atlantis.", bench).to_dict()
    assert good["tasks"][0]["status"] == "PASS"
    assert bad["tasks"][0]["status"] == "FAIL"
    # the judge's calls are counted apart from the agent's, per run of the benchmark (the
    # same loaded benchmark run twice: the second run counts only its own)
    for d in (good, bad):
        assert d["calls"]["judge_calls"] >= 1
        assert d["calls"]["ledger_calls"] == d["calls"]["attempts"]
    # counted per run, not summed over the benchmark's life: the same answer again is
    # graded from the judge's cache, so a second run of the constant agent calls no judge
    again = run_benchmark(lambda p: "It is Atlantis.", bench).to_dict()
    assert again["calls"]["judge_calls"] == 0
    assert again["tasks"][0]["status"] == "FAIL"
    from agentverity_props.report import render_bench_text
    assert f"{bad['calls']['judge_calls']} judge calls" in render_bench_text(bad, color=False)


def test_a_benchmark_judge_passing_label_must_be_a_label(tmp_path: Path) -> None:
    from agentverity_props.bench import load_benchmark
    path = tmp_path / "b.yaml"
    path.write_text(
        'version: "1"\nname: judged\ntasks:\n  - id: peru\n    prompt: q\n'
        "    evaluation:\n      type: judge\n      judge: m:f\n"
        "      labels: [correct, incorrect]\n      passing: [right]\n", encoding="utf-8")
    with pytest.raises(BadInput, match="passing"):
        load_benchmark(path)


def test_the_example_agents_draw_from_their_own_generators() -> None:
    random.seed(0)
    a = [make_qa_agent(5)("What is the capital of Peru?") for _ in range(5)]
    random.seed(99)
    b = [make_qa_agent(5)("What is the capital of Peru?") for _ in range(5)]
    assert a == b


def test_agent_property_takes_a_judge() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from agentverity_props import PropertyViolation, agent_property
    from agentverity_props.property import PropertyConfig

    assert PropertyConfig(judge=make_judge(1)).judge is not None

    @agent_property(agent=make_qa_agent(1, paraphrase_bug=True), budget=2000,
                    judge=Judge(make_judge(1, error=0.15), labels=LABELS))
    @settings(max_examples=3)
    @given(q=st.sampled_from(qa_inputs(2)))
    def paraphrase(q: str, check) -> None:
        check.relation(PARAPHRASE, q)

    with pytest.raises(PropertyViolation, match="paraphrase"):
        paraphrase()


def test_a_judged_run_replays_from_its_store_without_any_call(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    agent, n_agent = _counted(make_qa_agent(2, paraphrase_bug=True))
    judge, n_judge = _counted(make_judge(2, error=0.15))
    cfg = {"seed": 2, "judge": Judge(judge, labels=LABELS), "store_path": store}
    first = run(agent, qa_inputs(3), [PARAPHRASE], config=RunConfig(**cfg, store_mode="record"))
    calls = (n_agent[0], n_judge[0])
    again = run(agent, qa_inputs(3), [PARAPHRASE], config=RunConfig(**cfg, store_mode="replay"))
    assert (n_agent[0], n_judge[0]) == calls  # nothing called
    assert again.relations[0].status == first.relations[0].status == "VIOLATED"
    assert again.judge["calls"]["agent_replayed"] == first.judge["calls"]["agent"]


def test_cli_plan_prices_a_judge(tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "in.txt"
    inputs.write_text("What is the capital of Peru?\n", encoding="utf-8")
    code, out = _cli(capsys, "plan", "--inputs", str(inputs), "--no-relations", "--seeds", "1",
                     "--noise", "0.1", "--judge-error", "0.15", "--format", "json")
    assert code == 0
    d = json.loads(out[out.index("{"):])
    assert all(level["judge"]["per_answer"] > 3 for level in d["levels"])
