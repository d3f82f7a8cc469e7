"""Benchmark files, evaluators, the runner's stopping modes and metrics."""

from __future__ import annotations

import json
import threading
from itertools import combinations
from pathlib import Path

import pytest

from agentverity_props.bench import (
    BenchConfig,
    CompareConfig,
    json_schema,
    load_benchmark,
    parse_benchmark,
    pass_at_k,
    pass_hat_k,
    run_benchmark,
)
from agentverity_props.decide import clopper_pearson, wilson
from agentverity_props.engine import EngineConfig
from agentverity_props.errors import BadInput, InvalidArgument
from agentverity_props.report._json import dumps

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"


def validate(d: dict, name: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.validate(json.loads(dumps(d)), schema)


def bench(text: str, **kw) -> object:
    return parse_benchmark(text, **kw)


ONE = """
version: "1"
name: demo
tasks:
  - id: t
    name: T
    prompt: "q"
    evaluation:
      type: exact_match
      expected: "4"
"""


class Counting:
    """A deterministic agent that fails on chosen call numbers (thread-safe)."""

    def __init__(self, fail_at=(), *, answer="4", wrong="5", raise_at=()):
        self.n = 0
        self.fail_at, self.raise_at = set(fail_at), set(raise_at)
        self.answer, self.wrong = answer, wrong
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self.lock:
            i = self.n
            self.n += 1
        if i in self.raise_at:
            raise RuntimeError("agent broke")
        return self.wrong if i in self.fail_at else self.answer


# ------------------------------------------------------------------ the file format


def test_agentverdict_bundled_benchmark_loads_unchanged():
    agentverdict = pytest.importorskip("agentverdict")
    path = Path(agentverdict.__file__).parent / "benchmark_data" / "general.yaml"
    b = load_benchmark(path)
    assert b.name == "General Agent Benchmark"
    assert len(b.tasks) == 10
    assert {t.spec.evaluation.type for t in b.tasks} == {"exact_match", "regex", "contains"}
    assert all(t.runs == 1 and t.threshold == 1.0 for t in b.tasks)


@pytest.mark.parametrize(("text", "needle"), [
    ('version: "1"\nname: x\ntaks: []\n', "unknown key 'taks' in (top level); did you mean "
                                          "'tasks'?"),
    ('version: "1"\nname: x\ntasks:\n  - id: a\n    promt: q\n'
     "    evaluation: {type: contains, expected: q}\n", ":5: unknown key 'promt' in tasks[0]"),
    ('version: "1"\nname: x\ntasks:\n  - id: a\n    prompt: q\n    evaluation:\n'
     "      type: exact_match\n      expcted: q\n",
     ":8: unknown key 'expcted' in tasks[0].evaluation; did you mean 'expected'?"),
    ('version: "1"\nname: x\ntasks:\n  - id: a\n    prompt: q\n    evaluation:\n'
     "      type: tool_called\n      tools: [a]\n      args:\n        - {tool: a, arg: x, "
     "equal: 1}\n", ":10: unknown key 'equal' in tasks[0].evaluation.args[0]"),
])
def test_unknown_keys_name_the_key_and_the_line(text, needle):
    with pytest.raises(BadInput) as exc:
        bench(text, path="b.yaml")
    assert needle in str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize(("text", "needle"), [
    ('version: "2"\nname: x\ntasks: []\n', "version"),
    ('version: "1"\nname: x\ntasks:\n  - id: a\n    prompt: q\n'
     "    evaluation: {type: fuzzy, expected: q}\n", "unknown evaluation type 'fuzzy'"),
    ('version: "1"\nname: x\ntasks:\n  - id: a\n    prompt: q\n'
     "    evaluation: {type: regex, pattern: '('}\n", "invalid regular expression"),
    ('version: "1"\nname: x\nruns: many\ntasks: []\n', "b.yaml:3: runs"),
    ('version: "1"\nname: x\ntasks:\n  - {id: a, prompt: q, evaluation: {type: exact_match, '
     "expected: 12}}\n", "YAML read 12 as an int: quote it"),
    ('version: "1"\nname: x\ntasks:\n  - {id: a, prompt: q, evaluation: {type: contains, '
     "expected: q}}\n  - {id: a, prompt: r, evaluation: {type: contains, expected: r}}\n",
     "duplicate task id 'a'"),
    ('version: "1"\nname: x\ntasks:\n  - {id: a, prompt: q}\n', "exactly one of 'evaluation'"),
    ("version: [\n", "b.yaml:2:1: YAML syntax error"),
    ("", "empty"),
    ("- 1\n", "top level must be a mapping"),
    ('version: "1"\nname: x\ntasks:\n  - {id: a, prompt: q, evaluation: {type: custom, '
     "function: nowhere.py:f}}\n", "not found"),
])
def test_bad_files_are_one_line_bad_input(text, needle):
    with pytest.raises(BadInput) as exc:
        bench(text, path="b.yaml")
    assert needle in str(exc.value)
    assert "\n" not in str(exc.value)


def test_missing_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="not found"):
        load_benchmark(tmp_path / "nope.yaml")


def test_published_benchmark_schema_is_generated_from_the_model():
    published = json.loads((SCHEMAS / "benchmark.schema.json").read_text())
    assert published == json.loads(json.dumps(json_schema()))


def test_version_as_int_and_extensions():
    b = bench('version: 1\nname: x\nruns: 4\nthreshold: 0.5\ntasks:\n'
              "  - {id: a, prompt: q, runs: 2, evaluation: {type: contains, expected: q}}\n"
              "  - {id: b, prompt: r, threshold: 1, evaluations: [{type: contains, expected: r},"
              " {type: not_contains, expected: z}]}\n")
    a, b2 = b.tasks
    assert (a.runs, a.threshold, a.name) == (2, 0.5, "a")
    assert (b2.runs, b2.threshold) == (4, 1.0)
    assert "AND" in b2.describe_evaluation()


# ------------------------------------------------------------------ evaluators


def _eval(ev_yaml: str, output, tmp_path=None):
    b = bench('version: "1"\nname: x\ntasks:\n  - id: a\n    prompt: q\n    evaluation: '
              + ev_yaml + "\n", base_dir=tmp_path)
    res = run_benchmark(lambda p: output, b)
    return res.tasks[0]


@pytest.mark.parametrize(("ev", "output", "status"), [
    ("{type: exact_match, expected: '4'}", "4", "PASS"),
    ("{type: exact_match, expected: '4'}", "4 ", "FAIL"),  # agentverdict: no trimming
    ("{type: contains, expected: Paris}", "It is Paris.", "PASS"),
    ("{type: regex, pattern: '^[A-Z]{3}-\\d{4}$'}", "ABC-1234", "PASS"),
    ("{type: regex, pattern: '^[A-Z]{3}-\\d{4}$'}", "abc-1234", "FAIL"),
    ("{type: not_contains, expected: sorry}", "Sure.", "PASS"),
    ("{type: not_contains, expected: sorry}", "I am sorry", "FAIL"),
    ("{type: one_of, expected: ['yes', y]}", "y", "PASS"),
    ("{type: one_of, expected: ['yes', y]}", "no", "FAIL"),
    ("{type: json_path, path: '$.a.b[1]', equals: 2}", '{"a": {"b": [1, 2.0]}}', "PASS"),
    ("{type: json_path, path: a.b.0, equals: 2}", '{"a": {"b": [1, 2]}}', "FAIL"),
    ("{type: json_path, path: a.c, equals: null}", '{"a": {"b": 1}}', "FAIL"),
    ("{type: json_path, path: a, equals: x}", "not json", "FAIL"),
    ("{type: json_path, path: verdict, equals: block}", {"verdict": "block", "text": "no"},
     "PASS"),
    ("{type: tool_called, tools: [lookup, refund], order: ordered}",
     {"text": "ok", "tools": ["lookup", "refund"]}, "PASS"),
    ("{type: tool_called, tools: [lookup, refund], order: ordered}",
     {"text": "ok", "tools": ["refund", "lookup"]}, "FAIL"),
    ("{type: tool_called, tools: [lookup, refund]}",
     {"text": "ok", "tools": ["refund", "lookup"]}, "PASS"),
    ("{type: tool_called, forbidden: [escalate]}", {"text": "ok", "tools": ["escalate"]}, "FAIL"),
    ("{type: tool_called, tools: [refund], args: [{tool: refund, arg: amount, lt: 100}]}",
     {"text": "ok", "tools": [{"name": "refund", "arguments": {"amount": 50}}]}, "PASS"),
    ("{type: tool_called, tools: [refund], args: [{tool: refund, arg: amount, lt: 100}]}",
     {"text": "ok", "tools": [{"name": "refund", "arguments": {"amount": 500}}]}, "FAIL"),
])
def test_evaluators(ev, output, status):
    assert _eval(ev, output).status == status


def test_custom_evaluators(tmp_path):
    (tmp_path / "checks.py").write_text(
        "def short(text, obs):\n    return len(text) < 5\n"
        "def one_arg(text):\n    return text.startswith('4')\n"
        "def boom(text, obs):\n    raise ValueError('bad check')\n"
        "def not_bool(text, obs):\n    return 'yes'\n"
        "def with_reason(text, obs):\n    return False, 'too polite'\n")
    assert _eval("{type: custom, function: checks.py:short}", "4", tmp_path).status == "PASS"
    assert _eval("{type: custom, function: checks:one_arg}", "42", tmp_path).status == "PASS"
    t = _eval("{type: custom, function: checks.py:boom}", "4", tmp_path)
    assert t.status == "ERROR"
    assert "bad check" in t.stats.attempts[0].message
    t = _eval("{type: custom, function: checks.py:not_bool}", "4", tmp_path)
    assert t.status == "ERROR"
    assert "return True or False" in t.stats.attempts[0].message
    t = _eval("{type: custom, function: checks.py:with_reason}", "4", tmp_path)
    assert t.status == "FAIL"
    assert t.stats.attempts[0].message == "too polite"
    with pytest.raises(BadInput, match="no attribute 'missing'"):
        _eval("{type: custom, function: checks.py:missing}", "4", tmp_path)


# ------------------------------------------------------------------ running


def test_agent_errors_are_error_runs_not_crashes():
    b = bench(ONE)
    res = run_benchmark(Counting(raise_at={0, 1, 2}), b,
                        config=BenchConfig(runs=3, early_stop="off"))
    t = res.tasks[0]
    assert (t.status, t.stats.errors, t.stats.passes) == ("ERROR", 3, 0)
    assert "agent broke" in t.stats.attempts[0].message
    assert res.exit_code == 2  # a failed agent call is missing evidence (issue 7)
    assert not res.complete


def test_exact_early_stop_keeps_the_full_run_verdict_and_saves_calls():
    text = ('version: "1"\nname: x\ntasks:\n'
            + "".join(f"  - {{id: t{i}, prompt: 'p{i}', evaluation: {{type: exact_match, "
                      f"expected: '4'}}}}\n" for i in range(4)))
    b = bench(text)
    # every prompt sees the same call-number pattern per agent instance
    off = run_benchmark(lambda p: "5" if p in ("p1", "p3") else "4", b,
                        config=BenchConfig(runs=10, early_stop="off"))
    ex = run_benchmark(lambda p: "5" if p in ("p1", "p3") else "4", b,
                       config=BenchConfig(runs=10, early_stop="exact"))
    assert [t.status for t in off.tasks] == [t.status for t in ex.tasks] == \
        ["PASS", "FAIL", "PASS", "FAIL"]
    d = ex.to_dict()
    assert d["calls"] == {"attempts": 22, "planned": 40, "saved": 18, "ledger_calls": 22,
                          "judge_calls": 0}
    assert d["tasks"][1]["decided_by"] == "exact (curtailed)"
    assert "anytime-valid" in d["tasks"][1]["ci_method"]
    assert off.to_dict()["tasks"][0]["ci_method"] == "clopper-pearson (exact)"
    validate(d, "bench")
    validate(off.to_dict(), "bench")


def test_threshold_curtailment_counts():
    b = bench('version: "1"\nname: x\nthreshold: 0.7\ntasks:\n'
              "  - {id: a, prompt: q, evaluation: {type: exact_match, expected: '4'}}\n")
    # needs 7 of 10: passes on calls 0..6 decide after 7 runs
    res = run_benchmark(Counting(), b, config=BenchConfig(runs=10))
    assert (res.tasks[0].status, res.tasks[0].stats.runs) == ("PASS", 7)
    # 4 failures out of 10 make 7 passes impossible: decided at the 4th failure
    res = run_benchmark(Counting(fail_at={0, 1, 2, 3}), b, config=BenchConfig(runs=10))
    assert (res.tasks[0].status, res.tasks[0].stats.runs) == ("FAIL", 4)
    res = run_benchmark(Counting(fail_at={0, 1, 2}), b,
                        config=BenchConfig(runs=10, early_stop="off"))
    assert (res.tasks[0].status, res.tasks[0].stats.passes) == ("PASS", 7)


def test_sequential_mode_decides_and_caps():
    b = bench(ONE)
    res = run_benchmark(Counting(), b, config=BenchConfig(runs=500, early_stop="sequential"))
    t = res.tasks[0]
    assert t.status == "PASS"
    assert t.decided_by.startswith("sequential")
    assert t.stats.runs < 200
    # 5 clean runs cannot certify a pass rate >= 0.95 at alpha 0.05: undecided, exit 2,
    # never PASS on the point estimate
    res = run_benchmark(Counting(), b, config=BenchConfig(runs=5, early_stop="sequential"))
    t = res.tasks[0]
    assert (t.status, t.decision, t.stats.runs) == ("UNDECIDED", "undecided", 5)
    assert "no PASS possible in 5 runs" in t.decided_by
    assert "PASS by run 59" in t.decided_by
    assert res.complete
    assert res.exit_code == 2
    d = res.to_dict()
    validate(d, "bench")
    assert d["summary"]["undecided"] == 1
    assert "UNDECIDED" in res.summary()
    assert "whatever the cap on runs" in d["guarantee"]
    res = run_benchmark(Counting(fail_at={2}), b,
                        config=BenchConfig(runs=500, early_stop="sequential"))
    assert res.tasks[0].status == "FAIL"
    assert res.tasks[0].stats.runs == 3


def test_sequential_cap_decides_by_its_exact_final_test():
    # threshold 0.9, cap 20: the SPRT alone cannot decide so soon; 15 of 20 is rare enough at
    # 0.95 (0.016 <= 0.05) for a FAIL; 19 clean runs are rare enough at a pass rate of 0.85
    # (0.85^19 = 0.046 <= 0.05) for a PASS before the cap (clean_pass_runs)
    b = bench(ONE.replace("tasks:", "threshold: 0.9\ntasks:"))
    cfg = BenchConfig(runs=20, early_stop="sequential")
    t = run_benchmark(Counting(), b, config=cfg).tasks[0]
    assert (t.status, t.stats.runs) == ("PASS", 19)
    assert t.decided_by.startswith("sequential (all of the first 19 runs passed: exact")
    t = run_benchmark(Counting(fail_at={10}), b, config=cfg).tasks[0]
    assert t.status == "UNDECIDED"
    assert "19/20 passed; a PASS here needs >= 20, a FAIL <= 16" in t.decided_by
    t = run_benchmark(Counting(fail_at={1, 5, 9, 13, 17}), b, config=cfg).tasks[0]
    assert t.status == "FAIL"


def test_sequential_clean_runs_pass_in_the_fewest_runs_the_guarantee_allows():
    """A deterministic passing agent at threshold 0.9, margin 0.05, 5 tasks (alpha/tasks =
    0.01): no test with P(PASS) <= 0.01 at pass rate 0.85 can pass before
    ceil(ln 0.01 / ln 0.85) = 29 clean runs; the rule passes at 34 (the SPRT alone: 42), and
    at threshold 1.0 at 90, where the SPRT is already the fewest."""
    import math

    from agentverity_props.decide import clean_pass_runs, runs_to_pass

    assert math.ceil(math.log(0.01) / math.log(0.85)) == 29
    assert (clean_pass_runs(100, 0.9, 0.01, 0.05), runs_to_pass(0.9, 0.01, 0.05)) == (34, 42)
    five = ONE.replace("tasks:", "threshold: 0.9\ntasks:") + "".join(
        f"  - {{id: t{i}, prompt: 'q{i}', evaluation: {{type: exact_match, expected: '4'}}}}\n"
        for i in range(4))
    res = run_benchmark(lambda p: "4", bench(five),
                        config=BenchConfig(runs=100, early_stop="sequential"))
    assert [t.stats.runs for t in res.tasks] == [34] * 5
    assert all(t.status == "PASS" for t in res.tasks)
    one = run_benchmark(lambda p: "4", bench(ONE + "".join(
        f"  - {{id: t{i}, prompt: 'q{i}', evaluation: {{type: exact_match, expected: '4'}}}}\n"
        for i in range(4))), config=BenchConfig(runs=100, early_stop="sequential"))
    assert [t.stats.runs for t in one.tasks] == [90] * 5


def test_budget_end_is_incomplete_exit_2():
    b = bench(ONE)
    res = run_benchmark(Counting(), b, config=BenchConfig(runs=10, engine=EngineConfig(budget=3)))
    assert res.tasks[0].status == "INCOMPLETE"
    assert res.exit_code == 2
    assert res.tasks[0].stop_reason == "call budget exhausted"


def test_metrics_match_their_definitions():
    # brute-force pass@k / pass^k: average over all k-subsets of the n runs
    n, c = 7, 4
    runs = [1] * c + [0] * (n - c)
    for k in range(1, n + 1):
        subsets = list(combinations(runs, k))
        assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
        assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))
    lo, hi = clopper_pearson(0, 10, alpha=0.05)
    assert lo == 0.0
    assert hi == pytest.approx(1 - 0.025 ** 0.1)
    lo, hi = wilson(5, 10)
    assert (lo, hi) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    b = bench(ONE)
    res = run_benchmark(lambda p: {"text": "4", "usage": None}, b,
                        config=BenchConfig(runs=4, early_stop="off", include_outputs=True))
    d = res.to_dict()["tasks"][0]
    assert d["consistency"] == 1.0
    assert d["attempts"][0]["output"] == "4"
    assert d["pass_at_k"] == {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0}
    assert d["prompt"] == "q"


def test_outputs_are_fingerprints_unless_included():
    res = run_benchmark(lambda p: "the secret answer", bench(ONE.replace('"q"', '"secret q"')))
    d = res.to_dict()
    assert "secret" not in dumps(d)
    assert d["tasks"][0]["prompt"] is None
    assert d["tasks"][0]["attempts"][0]["output"] is None
    assert d["tasks"][0]["attempts"][0]["output_fp"].startswith("sha256:")


def test_bad_config_is_invalid_argument():
    with pytest.raises(InvalidArgument):
        BenchConfig(early_stop="sometimes")
    with pytest.raises(InvalidArgument):
        CompareConfig(max_runs=5, min_runs=6)


# ------------------------------------------------------------------ issue 13: undecided, n/a


def test_undecided_is_consistent_in_text_json_junit_and_html():
    from agentverity_props.report import render_bench_junit
    from agentverity_props.report._html import render_html

    res = run_benchmark(Counting(), bench(ONE),
                        config=BenchConfig(runs=10, early_stop="sequential"))
    d = res.to_dict()
    validate(d, "bench")
    assert (d["exit_code"], d["complete"], d["tasks"][0]["status"]) == (2, True, "UNDECIDED")
    text = res.summary()
    assert "UNDECIDED" in text
    assert "1 undecided" in text
    assert "Exit 2: incomplete evidence (budget, interrupt, failed call) or a task undecided" \
        in text
    junit = render_bench_junit(d)
    assert 'type="undecided"' in junit
    assert "PASS by run 59" in junit
    html = render_html(d)
    assert "UNDECIDED" in html
    assert "whatever the cap on runs" in html


def test_pass_at_k_above_the_runs_made_is_na_never_dropped():
    from agentverity_props.report._html import render_html

    # threshold 1.0, curtailed: the first run fails and the task stops after one run
    res = run_benchmark(Counting(fail_at={0}), bench(ONE), config=BenchConfig(runs=5))
    d = res.to_dict()
    validate(d, "bench")
    t, s = d["tasks"][0], d["summary"]
    assert (t["runs"], t["status"]) == (1, "FAIL")
    assert t["pass_hat_k"] == {"1": 0.0, "2": 0.0, "3": 0.0, "5": 0.0}  # settled by run 1
    assert t["pass_at_k"] == {"1": 0.0, "2": None, "3": None, "5": None}
    assert s["pass_at_k"]["2"] is None
    assert s["pass_k_tasks"] == {"pass@1": 1, "pass^1": 1, "pass@2": 0, "pass^2": 1,
                                 "pass@3": 0, "pass^3": 1, "pass@5": 0, "pass^5": 1}
    text = res.summary()
    assert "pass@2 n/a (k > runs for 1 of 1 tasks)" in text
    assert "pass^5 0.00" in text
    assert "n/a (k &gt; runs: 1 of 1 tasks" in render_html(d)


def test_estimates_differ_from_the_observed_share_after_a_curtailed_stop():
    # 4 passes then a failure at threshold 1.0: every path to (5 runs, 4 passes) starts with
    # 4 passes, so pass^1..pass^3 are 1 (unbiased: the first runs were not chosen by the
    # rule); the observed share 0.8 is what the text table shows, labelled descriptive
    res = run_benchmark(Counting(fail_at={4}), bench(ONE), config=BenchConfig(runs=10))
    t = res.to_dict()["tasks"][0]
    assert (t["observed_rate"], t["reliability"]) == (0.8, 1.0)
    assert t["pass_hat_k"]["3"] == 1.0
    assert t["pass_hat_k"]["5"] == 0.0
    assert t["pass_hat_k"]["10"] == 0.0
    assert "descriptive" in res.summary()
    # without early stopping the estimates are the usual C(c, k) / C(n, k)
    res = run_benchmark(Counting(fail_at={1, 4}), bench(ONE),
                        config=BenchConfig(runs=6, early_stop="off"))
    t = res.to_dict()["tasks"][0]
    assert t["reliability"] == t["observed_rate"] == pytest.approx(4 / 6)
    assert t["pass_hat_k"]["2"] == pytest.approx(pass_hat_k(6, 4, 2))
    assert t["pass_at_k"]["5"] == pytest.approx(pass_at_k(6, 4, 5))


def test_too_many_states_for_the_exact_estimator_says_so(monkeypatch):
    import agentverity_props.decide._estimate as est

    monkeypatch.setattr(est, "MAX_STATES", 3)
    b = bench(ONE.replace("tasks:", "threshold: 0.5\ntasks:"))
    res = run_benchmark(Counting(fail_at={0}), b, config=BenchConfig(runs=8))
    d = res.to_dict()
    validate(d, "bench")
    assert d["tasks"][0]["estimator"] == est.PLAIN
    assert d["tasks"][0]["reliability"] == d["tasks"][0]["observed_rate"]
    assert "some are biased plain proportions" in res.summary()


def test_a_version_1_bench_file_is_migrated_and_renders(tmp_path):
    from agentverity_props.report import load_result, render_bench_junit, render_bench_text
    from agentverity_props.report._html import render_html

    d = run_benchmark(Counting(), bench(ONE),
                      config=BenchConfig(runs=4, early_stop="sequential")).to_dict()
    v1 = {k: v for k, v in d.items() if k != "guarantee"}
    v1["schema"] = "agentverity_props.bench/1"
    v1["tasks"] = [{**{k: v for k, v in t.items() if k not in ("observed_rate", "estimator")},
                    "status": "PASS", "decision": "pass",
                    "decided_by": "run cap (point estimate)"} for t in d["tasks"]]
    v1["summary"] = {k: v for k, v in d["summary"].items()
                     if k not in ("undecided", "observed_rate", "reliability_method",
                                  "pass_k_tasks", "estimator")}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(v1))
    got = load_result(path)
    validate(got, "bench")
    assert got["schema"] == "agentverity_props.bench/2"
    assert got["tasks"][0]["status"] == "PASS"  # kept as version 1 decided it
    assert "point estimate" in got["guarantee"]
    assert "version 1" in render_bench_text(got)
    render_bench_junit(got)
    assert "version 1" in render_html(got)


def test_cli_bench_sequential_at_a_short_cap_is_undecided_exit_2(tmp_path):
    import subprocess
    import sys

    (tmp_path / "b.yaml").write_text(ONE)
    (tmp_path / "agent.py").write_text("def agent(prompt):\n    return '4'\n")
    base = [sys.executable, "-m", "agentverity_props", "bench", "--agent", "agent.py:agent",
            "--benchmark", "b.yaml", "--early-stop", "sequential"]
    res = subprocess.run([*base, "--runs", "20"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "UNDECIDED" in res.stdout
    assert "PASS by run 59" in res.stdout
    # a wider margin decides within the same cap: ln 20 / -ln 0.8 = 13.4 -> 14 runs
    res = subprocess.run([*base, "--runs", "20", "--margin", "0.2", "--format", "json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads(res.stdout)["tasks"][0]["runs"] == 14


# compare: tests/unit/test_compare.py

