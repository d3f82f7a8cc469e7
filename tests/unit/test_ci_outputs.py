"""CI outputs without an agent: GitHub workflow-command escaping, one annotation per finding,
the changed / flaky split of a check, Markdown values as data, and where ``publish`` writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentverity_props.report import Finding, check_moves, findings, github_commands
from agentverity_props.report._md import code, esc, table


def _unescape(value: str) -> str:
    return value.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":") \
        .replace("%2C", ",").replace("%25", "%")


@given(title=st.text(), message=st.text())
def test_a_workflow_command_is_one_line_and_round_trips(title: str, message: str) -> None:
    [line] = github_commands([Finding("error", title, message)])
    assert "\n" not in line
    assert "\r" not in line
    head, _, body = line.partition("::")[2].partition("::")
    assert head.startswith("error title=")
    prop = head.removeprefix("error title=")
    assert ":" not in prop
    assert "," not in prop
    from agentverity_props._internal.shown import visible
    assert _unescape(prop) == visible(f"agentverity-props: {title}")
    shown = visible(message or title)
    assert _unescape(body) == (shown if len(shown) <= 4000 else _unescape(body))


def test_an_answer_cannot_inject_a_command_of_its_own() -> None:
    [line] = github_commands([Finding("error", "x", "ok\n::add-mask::secret\r\n::error::y")])
    # CR is written out (visible), LF escaped: the runner sees one line
    assert line == "::error title=agentverity-props%3A x::ok%0A::add-mask::secret\\x0d%0A::error::y"


def _check(statuses: list[tuple[str, str]]) -> dict[str, Any]:
    return {"schema": "agentverity_props.check/2", "inputs": [
        {"fp": f"sha256:{i:064x}", "status": st_, "reference": "allow",
         "current": "block" if st_ == "drift" else None, "snapshot_status": snap,
         "screen": {"draws": 1, "matches": 0 if st_ != "clean" else 1, "failures": 0},
         "confirmation": {"draws": 9 if st_ == "drift" else 3, "mismatches":
                          9 if st_ == "drift" else 1, "p_family": 0.01 if st_ == "drift"
                          else None},
         "calibration": {"draws": 6, "mismatches": 1 if snap == "borderline" else 0}}
        for i, (st_, snap) in enumerate(statuses)], "inadmissible": [],
        "stationarity": {"status": "not detected"}}


def test_check_moves_tells_changed_from_flaky_and_says_by_how_much() -> None:
    d = _check([("clean", "stable"), ("noise", "borderline"), ("drift", "stable"),
                ("incomplete", "stable")])
    moves = check_moves(d)
    assert [m["kind"] for m in moves] == ["changed", "flaky", "incomplete"]
    changed, flaky, _ = moves
    assert (changed["then"], changed["now"]) == ((0, 6), (9, 9))
    assert (flaky["then"], flaky["now"], flaky["borderline"]) == ((1, 6), (1, 3), True)
    got = findings(d)
    assert [f.level for f in got] == ["error", "warning"]  # changed: error; no decision: warning
    assert "9/9 draws differ (recorded 0/6)" in got[0].message


def test_findings_of_a_clean_result_are_none_and_of_a_refused_snapshot_each_rule() -> None:
    assert findings(_check([("clean", "stable")] * 3)) == []
    refused = {"schema": "agentverity_props.snapshot/2", "admission": {"admitted": False,
               "rules": [{"rule": "complete", "passed": True, "message": "ok"},
                         {"rule": "not-blind", "passed": False, "message": "blind"},
                         {"rule": "accepted", "passed": False, "message": "no"}]}}
    assert [f.title for f in findings(refused)] == ["snapshot refused: not-blind",
                                                    "snapshot refused: accepted"]


@given(st.text())
def test_a_code_span_shows_any_value_literally(value: str) -> None:
    from markdown_it import MarkdownIt

    from agentverity_props._internal.shown import visible
    tokens = MarkdownIt("commonmark").parseInline(f"x {code(value)} y")[0].children or []
    spans = [t.content for t in tokens if t.type == "code_inline"]
    flat = visible(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " ") \
        .replace("\t", " ")
    if not flat:
        assert spans == []
    elif len(flat) <= 160 and flat.strip(" "):
        assert spans == [flat]  # exactly the value, whatever backticks or markup it holds


@given(st.text())
def test_escaped_text_makes_no_markup(value: str) -> None:
    from markdown_it import MarkdownIt
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(
        f"said: {esc(value)}")
    kinds = {c.type for t in tokens for c in (t.children or ())}
    assert kinds <= {"text", "code_inline", "softbreak"}, kinds
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]


def test_table_cells_keep_their_column_whatever_they_hold() -> None:
    rows = table(("a", "b"), [[code("x|y`z"), "p|q"], ["only one"]])
    assert all(line.count("|") - line.count("\\|") == 3 for line in rows)


def test_publish_writes_the_summary_and_annotations_only_under_github(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    from agentverity_props.cli._ci import publish

    d = _check([("drift", "stable")])
    d.update(agent="a", snapshot={"inputs": 1}, admission={}, drift={"inputs": 1},
             calls={}, exit_code=1)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    publish(d, annotations="auto")  # not on GitHub: no command, but the summary it was given
    assert capsys.readouterr().out == ""
    assert summary.read_text().count("### agentverity-props check") == 1
    summary.unlink()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    publish(d, annotations="auto", fmt="json")  # the report is on stdout: commands to stderr
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err.startswith("::error title=agentverity-props%3A snapshot input changed")
    assert "What moved: 1 changed" in summary.read_text()
    publish(d, annotations="none")
    assert capsys.readouterr().err == ""
    publish(d, annotations="github", fmt="markdown", output=str(summary))  # already there
    assert summary.read_text().count("### agentverity-props check") == 1
    json.dumps(d)


def test_a_long_table_says_how_many_rows_it_left_out() -> None:
    rows = table(("a",), [[str(i)] for i in range(250)], limit=100)
    assert len([r for r in rows if r.startswith("| ")]) == 102  # header, rule, 100 rows
    assert rows[-1] == "*… and 150 more rows: the JSON result has every one*"


def test_annotations_are_capped_with_one_warning_for_the_rest(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from agentverity_props.cli._ci import MOST_ANNOTATIONS, publish

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    d = _check([("drift", "stable")] * 45)
    publish(d, annotations="github")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == MOST_ANNOTATIONS
    assert lines[-1].startswith("::warning title=agentverity-props%3A 16 more findings")
